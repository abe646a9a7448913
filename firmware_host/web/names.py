"""The table's own names and addresses: what a request's `Host` and a WebSocket's `Origin` must
name (docs/web.md, "Security"). A page on another site whose name was pointed at the table (DNS
rebinding) asks for it by that other name, and a page of another site that opens a WebSocket to
the table says so in `Origin`: both are refused, so no other site can read the table.

Its own: this machine's addresses (any interface, IPv4 and IPv6, loopback), the address the
connection came in on (the service has no network of its own, PrivateNetwork=yes, so it sees
only that one), `localhost`, its hostname and HOSTNAME.local (mDNS), and the names `[web] names`
adds; `[web] url`'s name too, and its origin as it is written.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import socket
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .gate import address

SIOCGIFADDR = 0x8915  # linux/sockios.h: an interface's IPv4 address
NOT_IN_A_NAME = set("@/\\?# \t")


def machine_addresses() -> set[str]:
    """Every address this machine's network has now: IPv6 from /proc/net/if_inet6, IPv4 one an
    interface (SIOCGIFADDR). What cannot be read is left out (the service's network is its own:
    only the loopback)."""
    found: set[str] = set()
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            found.add(str(ipaddress.IPv6Address(bytes.fromhex(line.split()[0]))))
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            with contextlib.suppress(OSError):
                answer = fcntl.ioctl(probe.fileno(), SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
                found.add(socket.inet_ntoa(answer[20:24]))
    return found


def _origin(scheme: str, host: str, port: int | None) -> tuple[str, str, int]:
    return scheme, host, port if port is not None else {"http": 80, "https": 443}.get(scheme, 0)


class OwnNames:
    """The names and addresses a browser may reach the table by."""

    def __init__(self, names: Iterable[str] = (), url: str = "") -> None:
        hostname = socket.gethostname().lower().rstrip(".")
        self.names = {"localhost", hostname, f"{hostname}.local"}
        self.names |= {n.lower().rstrip(".") for n in names}
        self.origins: set[tuple[str, str, int]] = set()
        if url:
            parts = urlsplit(url)
            if parts.hostname:
                self.names.add(parts.hostname.rstrip("."))
                with contextlib.suppress(ValueError):
                    self.origins.add(_origin(parts.scheme, parts.hostname.rstrip("."), parts.port))
        self.addresses = {address(a) for a in machine_addresses()}

    def named(self, host: str, transport: Any) -> bool:
        """`host` (a URL's host, brackets gone) is one of the table's names or addresses."""
        host = host.lower().rstrip(".")
        if host in self.names:
            return True
        try:
            ip = ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return False
        own = transport.get_extra_info("sockname") if transport is not None else None
        key = address(str(ip))
        return ip.is_loopback or ipaddress.ip_address(key).is_loopback or key in self.addresses \
            or (bool(own) and key == address(str(own[0])))

    def host_ok(self, host: str, transport: Any) -> bool:
        """A request's Host header names the table (its port is not asked: a forwarded port is
        the table still)."""
        if not host or NOT_IN_A_NAME & set(host):
            return False
        try:
            parts = urlsplit(f"http://{host}")
            _ = parts.port  # a port that is not a number raises here
        except ValueError:
            return False
        return parts.hostname is not None and self.named(parts.hostname, transport)

    def origin_ok(self, origin: str, transport: Any) -> bool:
        """A page's origin is the table's own: http, one of its names, the port it serves on (or
        exactly `[web] url`'s origin)."""
        try:
            parts = urlsplit(origin)
            port = parts.port
        except ValueError:
            return False
        if not parts.hostname or parts.path or NOT_IN_A_NAME & set(parts.netloc):
            return False
        seen = _origin(parts.scheme.lower(), parts.hostname.rstrip("."), port)
        if seen in self.origins:
            return True
        own = transport.get_extra_info("sockname") if transport is not None else None
        return seen[0] == "http" and bool(own) and seen[2] == own[1] and self.named(seen[1], transport)
