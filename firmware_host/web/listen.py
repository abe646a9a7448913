"""Where the web view listens: the socket systemd passed (LISTEN_FDS, socket activation, so the
service takes port 80 with no capability), or one it opens itself (a laptop: 127.0.0.1 and a
free port); and the address people type, shown on the attract screen and as a QR code."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
from pathlib import Path

from ..system.systemd import under_systemd

SD_LISTEN_FDS_START = 3  # sd_listen_fds(3): the first passed descriptor
NAME = "web"  # FileDescriptorName= in systemd/table-web.socket


def passed_socket(name: str = NAME) -> socket.socket | None:
    """The listening socket systemd handed this process under `name`, if any (sd_listen_fds(3):
    LISTEN_PID must be ours; LISTEN_FDNAMES names the descriptors in order)."""
    if os.environ.get("LISTEN_PID", "") != str(os.getpid()):
        return None
    count = os.environ.get("LISTEN_FDS", "")
    if not count.isdigit():
        return None
    names = os.environ.get("LISTEN_FDNAMES", "")
    named = names.split(":") if names else []
    for i in range(int(count)):
        if named and (i >= len(named) or named[i] != name):
            continue  # another socket of the unit's: not ours
        fd = SD_LISTEN_FDS_START + i
        with contextlib.suppress(OSError):
            sock = socket.socket(fileno=fd)
            if sock.type == socket.SOCK_STREAM and sock.family in (socket.AF_INET, socket.AF_INET6):
                os.set_inheritable(fd, False)
                sock.setblocking(False)
                return sock
            sock.detach()
    return None


def open_socket(bind: str, port: int, backlog: int = 64) -> socket.socket:
    """A listening TCP socket of our own (port 0: the kernel picks a free one)."""
    family = socket.AF_INET6 if ipaddress.ip_address(bind).version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((bind, port))
        sock.listen(backlog)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def open_remembered(bind: str, remembered: Path) -> tuple[socket.socket, str]:
    """Port 0 ([web] port's default): the port this table had last time, so a bookmark or a QR
    code photographed yesterday still opens it; the kernel's choice if there is none or it is
    taken (then said, in the second value). The port chosen is remembered in `remembered`."""
    said = ""
    try:
        last = int(remembered.read_text().strip())
    except (OSError, ValueError):
        last = 0
    sock = None
    if 1024 <= last <= 65535:
        try:
            sock = open_socket(bind, last)
        except OSError as exc:
            said = f"port {last}, the web view's last time, is taken ({exc.strerror or exc})"
    if sock is None:
        sock = open_socket(bind, 0)
    port = sock.getsockname()[1]
    if port != last:
        try:
            remembered.write_text(f"{port}\n")
        except OSError as exc:
            said = (said + "; " if said else "") + f"cannot remember port {port} in {remembered}: " \
                f"{exc.strerror or exc}"
    if said and last:
        said += f": it listens on {port} now"
    return sock, said



def take_socket(bind: str, port: int, remembered: Path | None) -> tuple[socket.socket, str]:
    """The web's listening socket: systemd's (table-web.socket), else one of its own on `bind`
    and `port` (port 0 kept in `remembered` across restarts); and what taking it had to say (a
    remembered port taken). OSError names where it tried, and on systemd what to check."""
    sock = passed_socket()
    if sock is not None:
        return sock, ""
    try:
        if port == 0 and remembered is not None:
            return open_remembered(bind, remembered)
        return open_socket(bind, port), ""
    except OSError as exc:
        hint = " (no socket from systemd: is table-web.socket enabled?)" if under_systemd() else ""
        raise OSError(exc.errno, f"cannot listen on {bind}:{port}: {exc.strerror or exc}{hint}") from None

def url_of(sock: socket.socket) -> str:
    """What a person types: the bound address, or this machine's own when bound to every one."""
    host, port = sock.getsockname()[:2]
    if ipaddress.ip_address(host).is_unspecified:
        host = own_address()
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}/" if port == 80 else f"http://{host}:{port}/"


def own_address() -> str:
    """The address other machines on the network reach us at: the source address the kernel
    would use for a route outside (a UDP connect sends nothing). The service has no network of
    its own (PrivateNetwork=yes, AF_UNIX only: it serves on the socket systemd passed), so there
    it finds none and names itself as mDNS does (avahi, on Raspberry Pi OS): HOSTNAME.local."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # TEST-NET-1 (RFC 5737): only the routing table is asked
        found = str(s.getsockname()[0])
        if not ipaddress.ip_address(found).is_loopback:
            return found
    return f"{socket.gethostname()}.local"


GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")
"""IPv6 global unicast (RFC 4291 §2.4), which table-web.socket's IPAddressAllow= admits."""
GLOBAL_V6_PREFIX = 64
"""The length of a LAN's IPv6 prefix: SLAAC addresses (RFC 4862 with RFC 4291's 64-bit
interface identifiers) share their first 64 bits on one link."""


def on_our_network(peer: str, local: str) -> bool:
    """Whether a browser at `peer`, connected to our address `local`, is on the table's own
    network as far as this server decides it. systemd's list on table-web.socket admits the
    private ranges and link-local (the kernel refuses the rest) and global IPv6, whose prefix
    the ISP chooses, so no fixed list can name the table's own: a global IPv6 peer counts only
    when it shares the /64 of the address it reached. Everything else was the socket's to refuse."""
    try:
        ours, theirs = (ipaddress.ip_address(a.split("%")[0]) for a in (local, peer))
    except ValueError:
        return False
    if isinstance(theirs, ipaddress.IPv6Address) and theirs.ipv4_mapped is not None:
        return True  # an IPv4 browser on the dual-stack socket
    if theirs not in GLOBAL_UNICAST:
        return True
    if ours.version != 6:
        return False
    return theirs in ipaddress.ip_network(f"{ours}/{GLOBAL_V6_PREFIX}", strict=False)
