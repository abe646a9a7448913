"""The LED controller's firmware this table-host carries: its files and its version. Small on
purpose (os and hashlib only): `table-host --version` names it, and that command is timed
(`table-host bench startup`). The flash itself: firmware.py."""

from __future__ import annotations

import hashlib
import os

from ... import __version__

SHARED_DIR = os.path.dirname(os.path.abspath(__file__))
BOARD_DIR = os.path.join(os.path.dirname(os.path.dirname(SHARED_DIR)), "data", "led_controller")
BOARD_FILES = ("main.py", "board.py", "ws2812.py")
SHARED_FILES = ("ledproto.py", "ledctl.py", "ledviper.py")
_expected: list[str] = []


def files() -> dict[str, bytes]:
    """The firmware's files, by the name they get on the board."""
    out = {}
    for folder, names in ((BOARD_DIR, BOARD_FILES), (SHARED_DIR, SHARED_FILES)):
        for name in names:
            with open(os.path.join(folder, name), "rb") as f:
                out[name] = f.read()
    return out


def expected() -> str:
    """This table-host's version and the first eight hex digits of a SHA-256 over the files'
    names and bytes: any change to a firmware file is another firmware."""
    if not _expected:
        digest = hashlib.sha256()
        for name, data in sorted(files().items()):
            digest.update(name.encode() + b"\0" + data + b"\0")
        _expected.append(f"{__version__}+{digest.hexdigest()[:8]}")
    return _expected[0]
