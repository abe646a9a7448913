"""The LED controller, emulated: the firmware's own `Controller` on a pseudo-terminal.

The host opens `path` with pyserial exactly as it opens /dev/ttyACM0, so tests
and emulation exercise the real serial path. Faults can be injected: damaged
bytes, dropped blocks, a cable pulled out and put back (the path is a link
that follows the new pseudo-terminal, as a udev rule does on the Pi).
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import tty
from pathlib import Path

from . import ledproto
from .ledctl import Controller, led_index

QUIET_S = 0.02  # this long without a byte mid-block: the rest is not coming


class Strip:
    """A WS2812 chain in memory."""

    def __init__(self, count: int) -> None:
        self.pixels = [(0, 0, 0)] * count
        self.writes = 0

    def __setitem__(self, i: int, rgb: tuple[int, int, int]) -> None:
        self.pixels[i] = rgb

    def write(self) -> None:
        self.writes += 1


class EmulatedLedController:
    def __init__(self, directory: str | Path, width: int = 32, height: int = 16) -> None:
        self.path = Path(directory) / "table-led"
        self.width, self.height = width, height
        self.strip = Strip(width * height)
        self.corrupt_next = 0  # damage this many incoming blocks (flip a byte in each)
        self.drop_next = 0  # lose this many incoming frame blocks without a word
        self._lock = threading.Lock()
        self._master: int | None = None
        self._thread: threading.Thread | None = None
        self._plugged = threading.Event()
        self.controller = Controller(self._write, self.strip, width, height)
        self._handle = self.controller.handle
        self.controller.handle = self._handle_or_drop  # type: ignore[method-assign]
        self.plug()

    def _handle_or_drop(self, seq: int, kind: int, payload: bytes) -> None:
        if self.drop_next and kind == ledproto.FRAME:
            self.drop_next -= 1  # lost on the way: no picture, no ack
            return
        self._handle(seq, kind, payload)

    # ------------------------------------------------------------ the cable

    def plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        name = os.ttyname(slave)
        os.close(slave)  # the host opens it by name, as a real device
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self.path.symlink_to(name)
        self._master = master
        self._wake_r, self._wake_w = os.pipe()  # unplug() writes here to wake the reader
        self._plugged.set()
        self._thread = threading.Thread(target=self._run, args=(master,), daemon=True,
                                        name="emulated-led")
        self._thread.start()

    def unplug(self) -> None:
        self._plugged.clear()
        master, self._master = self._master, None
        if self._thread is not None:
            os.write(self._wake_w, b"x")
            self._thread.join(timeout=2)
            self._thread = None
            os.close(self._wake_r)
            os.close(self._wake_w)
        if master is not None:
            os.close(master)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def close(self) -> None:
        self.unplug()

    # ------------------------------------------------------------ traffic

    def _write(self, data: bytes) -> None:
        master = self._master
        if master is not None:
            with contextlib.suppress(OSError):
                os.write(master, data)

    def _run(self, master: int) -> None:
        while self._plugged.is_set():
            try:
                # Woken only by bytes, or after a quiet spell in the middle of a block.
                quiet = QUIET_S if self.controller.decoder.buf else None
                ready, _, _ = select.select([master, self._wake_r], [], [], quiet)
                if self._wake_r in ready:
                    return
                if not ready:
                    with self._lock:
                        self.controller.idle()
                    continue
                data = os.read(master, 65536)
            except OSError:  # closed under us: unplugged, or the host hung up
                if not self._plugged.is_set():
                    return
                continue
            if data:
                with self._lock:
                    self.controller.feed(self._inject(data))

    def _inject(self, data: bytes) -> bytes:
        if self.corrupt_next and len(data) > 8:
            self.corrupt_next -= 1
            damaged = bytearray(data)
            damaged[len(damaged) // 2] ^= 0x5A
            return bytes(damaged)
        return data

    # ------------------------------------------------------------ what it shows

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        return self.strip.pixels[led_index(x, y, self.width)]

    def frame_bytes(self) -> bytes:
        """The shown picture back in row order, to compare with the image sent."""
        out = bytearray()
        for y in range(self.height):
            for x in range(self.width):
                out.extend(self.pixel(x, y))
        return bytes(out)


def main() -> None:
    """`python -m firmware_host.displays.emulated_led DIR [WIDTH HEIGHT]`: an emulated
    controller in a process of its own (as the real one is a chip of its own), until
    its standard input closes."""
    import sys

    directory = sys.argv[1]
    width, height = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (32, 16)
    emulator = EmulatedLedController(directory, width, height)
    print(emulator.path, flush=True)
    try:
        sys.stdin.read()
    finally:
        emulator.close()


if __name__ == "__main__":
    main()

