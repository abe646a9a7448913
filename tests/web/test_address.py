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
