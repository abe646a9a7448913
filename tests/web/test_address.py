"""The table's address on the seats' attract screen: a QR code a real decoder reads (zbarimg,
from zbar-tools), the words beside it, and where the web view says it listens."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from PIL import Image
from plumbing import ROOT, qr_read, wait_for

from firmware_host.views.address import qr_code, render_attract
from firmware_host.views.seat import SIZE
from firmware_host.web.listen import open_socket, own_address, url_of


def decoded(img: Image.Image, tmp: Path) -> list[str]:
    """What zbarimg reads off a frame exactly as the OLED shows it (1 px a pixel, lit = white)."""
    path = tmp / "frame.png"
    img.convert("L").save(path)
    return qr_read(path)


@pytest.mark.parametrize("url", ["http://192.168.178.23/", "http://127.0.0.1:46667/",
                                 "http://10.0.0.1:8080/", "http://[fe80::1234:5678:9abc:def0]:8080/"])
def test_the_attract_screens_code_reads_back_as_the_address(url: str, tmp_path: Path) -> None:
    frame = render_attract(url)
    assert frame.size == SIZE and frame.mode == "1"
    assert decoded(frame, tmp_path) == [url]
    code = qr_code(url)
    assert code is not None and code.getpixel((0, 0)) == 1  # a lit margin: dark modules on light


def test_without_the_code_the_words_alone_and_nothing_to_scan(tmp_path: Path) -> None:
    frame = render_attract("http://192.168.178.23/", qr=False)
    assert decoded(frame, tmp_path) == []
    assert frame.getbbox() is not None


def test_the_seats_show_it_on_the_attract_screen_of_the_emulated_daemon(dirs: Path, tmp_path: Path) -> None:
    import threading

    from firmware_host.config import emulated_config
    from firmware_host.service.daemon import Daemon

    daemon = Daemon(emulated_config(2))
    daemon.address = "http://192.168.1.50/"
    thread = threading.Thread(target=daemon.serve, daemon=True)
    thread.start()
    try:
        wait_for(lambda: 1 in daemon.screens.phase_seats)
        assert decoded(daemon.screens.phase_seats[1], tmp_path) == ["http://192.168.1.50/"]
        daemon.buttons.tap(0, "slap", time.monotonic_ns(), 35_000_000)  # the lobby: no code
        wait_for(lambda: daemon.table.joined == [0])
        wait_for(lambda: decoded(daemon.screens.phase_seats[1], tmp_path) == [])
    finally:
        daemon.loop.stop()
        daemon.loop.put(object())
        thread.join(10)


def test_where_it_listens_is_the_address_people_type() -> None:
    sock = open_socket("127.0.0.1", 0)
    try:
        assert url_of(sock) == f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        sock.close()
    everywhere = open_socket("0.0.0.0", 0)
    try:
        assert url_of(everywhere) == f"http://{own_address()}:{everywhere.getsockname()[1]}/"
        assert own_address() != "0.0.0.0"
    finally:
        everywhere.close()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError):
            open_socket("127.0.0.1", taken.getsockname()[1])


def test_with_no_network_of_its_own_it_names_itself_as_mdns_does() -> None:
    """As the service runs (PrivateNetwork=yes): a network namespace with only a loopback
    device (unshare(1), as root), where no route leads out."""
    import sys

    assert shutil.which("unshare"), "unshare (util-linux) is needed"
    done = subprocess.run(["unshare", "--net", sys.executable, "-c",
                           "from firmware_host.web.listen import own_address; print(own_address())"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{socket.gethostname()}.local"


@pytest.mark.parametrize(("peer", "local", "answered"), [
    ("2a02:8071:1:2::55", "2a02:8071:1:2::1", True),  # a phone on the table's /64
    ("2a02:8071:1:2:a:b:c:d%wlan0", "2a02:8071:1:2::1", True),
    ("2a02:8071:1:3::55", "2a02:8071:1:2::1", False),  # another /64: not the table's link
    ("2600:1f18::7", "2a02:8071:1:2::1", False),  # the internet
    ("2a02:8071:1:2::55", "192.168.1.5", False),  # a global IPv6 peer on an IPv4 address: no link to share
    ("fd12:3456:789a::9", "fd12:3456:789a::1", True),  # ULA, link-local, private IPv4: the socket's list
    ("fe80::1%eth0", "fe80::2%eth0", True),
    ("::ffff:192.168.1.7", "::ffff:192.168.1.5", True),  # IPv4 on the dual-stack socket
    ("192.168.1.7", "192.168.1.5", True),
    ("not an address", "192.168.1.5", False),
])
def test_a_global_ipv6_browser_is_answered_from_the_tables_own_64_only(peer: str, local: str,
                                                                         answered: bool) -> None:
    from firmware_host.web.listen import on_our_network

    assert on_our_network(peer, local) is answered


SERVE_AND_ASK = r"""
import asyncio, socket, subprocess
from aiohttp import web
from firmware_host.web.gate import Gate, Limits
from firmware_host.web.server import Hub, build_app

for address in ("2a02:8071:1:2::1/64", "2a02:8071:1:2::55/64", "2a02:8071:9:9::55/64"):
    subprocess.run(["ip", "-6", "addr", "add", address, "dev", "lo", "nodad"], check=True)
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)

def ask(source, port):
    with socket.socket(socket.AF_INET6 if ":" in source else socket.AF_INET) as s:
        s.bind((source, 0))
        s.connect(("2a02:8071:1:2::1" if ":" in source else "127.0.0.1", port))
        s.settimeout(0.5)  # a refusal comes at once, unasked (and asking first would meet a reset)
        try:
            said = s.recv(4096)
        except TimeoutError:
            said = b""
        s.settimeout(10)
        if not said:
            s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        while chunk := s.recv(4096):
            said += chunk
        head, _, body = said.partition(b"\r\n\r\n")
        return head.split(b"\r\n")[0].decode() + " / " + body.decode().splitlines()[0]

async def main():
    runner = web.AppRunner(build_app(Hub(4)), handle_signals=False)
    await runner.setup()
    sock = socket.socket(socket.AF_INET6)
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # BindIPv6Only=both
    sock.bind(("::", 0))
    sock.listen(16)
    gate = Gate(sock, runner.server, Limits.of(4))  # as the daemon serves it (web/frontend.py)
    gate.start()
    port = sock.getsockname()[1]
    for source in ("2a02:8071:1:2::55", "2a02:8071:9:9::55", "127.0.0.1"):
        print(source, await asyncio.to_thread(ask, source, port))
    print("refused", gate.refused)
    gate.stop()
    await runner.cleanup()

asyncio.run(main())
"""


def test_on_a_dual_stack_socket_the_tables_64_and_ipv4_are_served_another_prefix_refused() -> None:
    """The real server behind its gate, in a network namespace of its own (unshare(1), as root) with
    two global IPv6 prefixes on its loopback: a browser from the table's /64 and one over IPv4
    get the page; one from another prefix is refused as it is accepted, 403, nothing read."""
    import sys

    assert shutil.which("unshare") and shutil.which("ip"), "unshare (util-linux) and ip (iproute2) are needed"
    done = subprocess.run(["unshare", "--net", sys.executable, "-c", SERVE_AND_ASK],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("2a02:8071:1:2::55 HTTP/1.1 200 OK / <!DOCTYPE html>")
    assert lines[1] == ("2a02:8071:9:9::55 HTTP/1.1 403 Forbidden / "
                        "the table's web view answers its own network only")
    assert lines[2].startswith("127.0.0.1 HTTP/1.1 200 OK / <!DOCTYPE html>")
    assert lines[3] == "refused {'full': 0, 'per_address': 0, 'network': 1}"
