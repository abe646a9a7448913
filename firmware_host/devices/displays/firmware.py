"""The LED controller's firmware as this table-host carries it, and how it gets onto the board.

The firmware is files: main.py, board.py and ws2812.py (firmware_host/data/led_controller/,
which hardware/led_controller/ links to), and the protocol files the host itself runs
(ledproto.py, ledctl.py, ledviper.py). Its version is this table-host's version and the first
eight hex digits of a SHA-256 over those files, so any change to them is another firmware;
`flash` writes it into ledversion.py beside them and the board says it in every hello reply.

`flash` is `sudo tablectl firmware flash`, as Klipper's `make flash`: the LED link paused (the
daemon asked to let go of the port, if one runs), the port locked (flock, which the daemon's
link honours: it opens the port exclusively), the controller asked to STOP (protocol 3: it
leaves its loop for the REPL, where mpremote works), the files copied by mpremote from the
table's own environment (mpremote holds the port exclusively too), the board reset, and the
version it then reports checked.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import ledproto
from .carried import BOARD_DIR, BOARD_FILES, SHARED_DIR, SHARED_FILES, expected, files

__all__ = ["BOARD_DIR", "BOARD_FILES", "SHARED_DIR", "SHARED_FILES", "Flash", "FlashError", "expected",
           "files", "flash", "hello", "open_locked", "stop", "version_module", "version_of"]

VERSION_FILE = "ledversion.py"
HELLO_WAIT_S = 1.0
HELLO_TRIES = 3  # a board busy booting answers late; one at its REPL never does (3 s lost, once)
STOP_WAIT_S = 3.0
MPREMOTE_TIMEOUT_S = 120.0
BACK_WAIT_S = 20.0  # after the reset: USB enumerates again, MicroPython boots, main.py imports
HANDS_OFF = "tablectl firmware flash"  # who holds the port, as the daemon's link says it
OLD_FIRMWARE = ("the controller runs {name}, protocol {protocol}, which has no STOP and keeps Ctrl-C off: it "
                "cannot be stopped from here. Once, by hand: unplug it, hold BOOTSEL, plug it in, copy "
                "flash_nuke.uf2 and then MicroPython's UF2 for the board to the RPI-RP2 drive "
                "(hardware/led_controller/README.md), then run this again")


def version_module(version: str) -> bytes:
    return (f"# Written by `tablectl firmware flash`: the version of the firmware beside it.\n"
            f"FIRMWARE = {version!r}\n").encode()


def version_of(name: str) -> str:
    """The firmware version in a hello reply's name ("table-led 0.1.0+1a2b3c4d")."""
    prefix = ledproto.NAME + " "
    return name[len(prefix):] if name.startswith(prefix) else name


class FlashError(Exception):
    """A step of the flash failed: the message says which and what to do."""


@dataclass
class Flash:
    """What `tablectl firmware flash` did, for the person and for --json."""

    port: str
    expected: str = field(default_factory=expected)
    before: str = ""  # the firmware that answered before (its version, or what it was)
    after: str = ""  # the version the board reported after the reset
    steps: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.after == self.expected

    def as_dict(self) -> dict[str, Any]:
        return {"port": self.port, "before": self.before, "after": self.after, "expected": self.expected,
                "current": self.ok, "steps": self.steps}


def open_locked(port: str, wait_s: float = 3.0) -> Any:
    """The port, opened and locked (flock, as pyserial's `exclusive`): the daemon's link, which
    opens it exclusively too, stays off it while this is open. Waits a little for a daemon
    that was just asked to let go."""
    import serial

    deadline = time.monotonic() + wait_s
    while True:
        try:
            return serial.Serial(port, baudrate=921600, timeout=0.05, write_timeout=1.0, exclusive=True)
        except (OSError, ValueError) as exc:  # SerialException is an OSError
            if time.monotonic() >= deadline:
                raise FlashError(f"cannot open {port} for itself: {exc}") from None
            time.sleep(0.1)


def hello(port: Any, width: int, height: int, wait_s: float = HELLO_WAIT_S) -> tuple[int, str] | None:
    """(protocol, name) from the controller's hello reply, or None if nothing answered."""
    decoder = ledproto.Decoder()
    port.reset_input_buffer()
    pad = bytes(2 + width * height * 3 - 3)  # as LedLink pads it: completes a block cut short
    port.write(ledproto.encode(0, ledproto.HELLO, bytes((ledproto.VERSION, width, height)) + pad))
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        for _, kind, payload in decoder.feed(port.read(port.in_waiting or 1))[0]:
            if kind == ledproto.HELLO_REPLY and len(payload) >= 5:
                return payload[0], bytes(payload[5:]).decode("ascii", "replace")
    return None


def stop(port: Any, wait_s: float = STOP_WAIT_S) -> bool:
    """Ask the controller to STOP (protocol 3); True once it says STOPPING."""
    decoder = ledproto.Decoder()
    port.write(ledproto.encode(7, ledproto.STOP))
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if any(kind == ledproto.STOPPING for _, kind, _ in decoder.feed(port.read(port.in_waiting or 1))[0]):
            return True
    return False


def mpremote_command(port: str, folder: Path, names: list[str]) -> list[str]:
    """mpremote from the table's own environment (the `pi` extra installs it into the venv):
    `resume` (no soft reset first: the board is at its REPL already), the files to the root of
    the board's filesystem, then a hard reset, which runs the new main.py."""
    copies = [arg for n in names for arg in ("cp", str(folder / n), f":{n}", "+")]  # each to its own name
    return [sys.executable, "-m", "mpremote", "connect", port, "resume", *copies, "reset"]


def flash(port: str, size: tuple[int, int], say: Callable[[str], None] = lambda _line: None,
          pause: Callable[[], None] | None = None, resume: Callable[[], None] | None = None,
          reported: Callable[[], str | None] | None = None, force: bool = False,
          run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run) -> Flash:
    """Put this table-host's firmware on the controller at `port` (module docstring). `pause`,
    `resume` and `reported` reach a running daemon's link (None: no daemon runs, so this opens
    the port itself afterwards to hear the new firmware's hello). A controller that already says
    this version is left as it is, unless `force`. Raises FlashError."""
    result = Flash(port)

    def step(line: str) -> None:
        result.steps.append(line)
        say(line)

    if pause is not None:
        pause()
        step("the daemon's LED link let go of the port and waits")
    try:
        locked = open_locked(port)
        try:
            step(f"{port} opened and locked (the daemon's link stays off it)")
            heard = next((h for _ in range(HELLO_TRIES) if (h := hello(locked, *size)) is not None), None)
            if heard is None:
                result.before = "nothing answered"
                step("no hello answered: taken for a board at its REPL (MicroPython without this firmware)")
            else:
                protocol, name = heard
                result.before = version_of(name) if protocol >= 3 else f"{name} (protocol {protocol})"
                if protocol < 3:
                    raise FlashError(OLD_FIRMWARE.format(name=name, protocol=protocol))
                if result.before == result.expected and not force:
                    result.after = result.before
                    step(f"the controller runs {result.before} already: nothing copied (--force copies it "
                         "again)")
                    return result
                if not stop(locked):
                    raise FlashError(f"the controller ({name}) did not answer STOP: unplug it and plug "
                                     "it in, then run this again")
                step(f"the controller ({result.before}) stopped: its REPL is free")
            # mpremote opens the port exclusively itself (flock, as the daemon's link does), so the
            # lock is handed over: let go here, mpremote takes it within milliseconds. A daemon
            # that runs is paused (above); only a start from nothing could fall in between.
            locked.close()
            with tempfile.TemporaryDirectory(prefix="table-led-firmware-") as tmp:
                folder = Path(tmp)
                for name, data in files().items():
                    (folder / name).write_bytes(data)
                (folder / VERSION_FILE).write_bytes(version_module(result.expected))
                names = [*files(), VERSION_FILE]
                try:
                    done = run(mpremote_command(port, folder, names), capture_output=True, text=True,
                               timeout=MPREMOTE_TIMEOUT_S)
                except FileNotFoundError as exc:
                    raise FlashError(f"cannot run mpremote: {exc}") from None
                except subprocess.TimeoutExpired:
                    raise FlashError(f"mpremote did not finish in {MPREMOTE_TIMEOUT_S:g} s") from None
                said = (done.stderr or done.stdout or "").strip().splitlines()
                if done.returncode != 0:
                    missing = "No module named mpremote" in (done.stderr or "")
                    raise FlashError("mpremote is not in the table's environment: sudo systemd/install.sh "
                                     "(the pi extra brings it)" if missing else
                                     f"mpremote failed (exit {done.returncode}): {' '.join(said[-2:])}")
            step(f"copied {', '.join(names)} with mpremote and reset the board")
        finally:
            with contextlib.suppress(Exception):
                locked.close()
    finally:
        if resume is not None:
            resume()
    if not result.after:
        result.after = _reported_after(port, size, reported)
    step(f"the controller reports {result.after or 'nothing'}; this table-host carries {result.expected}")
    return result


def _reported_after(port: str, size: tuple[int, int], reported: Callable[[], str | None] | None) -> str:
    """The version the reset board says: through the daemon's link, or by asking it here."""
    deadline = time.monotonic() + BACK_WAIT_S
    while time.monotonic() < deadline:
        if reported is not None:
            version = reported()
            if version:
                return version
            time.sleep(0.2)
            continue
        try:
            locked = open_locked(port, wait_s=0)
        except FlashError:  # not back from the reset yet
            time.sleep(0.2)
            continue
        try:
            heard = hello(locked, *size)
        finally:
            with contextlib.suppress(Exception):
                locked.close()
        if heard is not None:
            return version_of(heard[1]) if heard[0] >= 3 else f"{heard[1]} (protocol {heard[0]})"
        time.sleep(0.2)
    return ""
