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
import time
import tty
from pathlib import Path

from ..displays import ledproto
from ..displays.firmware import expected
from ..displays.ledctl import Controller, led_index

BIT_S = 1.25e-6  # WS2812B datasheet: T0H + T0L = T1H + T1L = 1.25 us a bit, 24 bits an LED


class Strip:
    """A WS2812 chain in memory, kept as MicroPython's neopixel keeps it (micropython-lib
    neopixel.py): `buf` holds G, R, B for each LED in chain order (ORDER places r, g, b
    at offsets 1, 0, 2); write() is when the LEDs take it up, and it takes as long as the
    bitstream does on the board (machine.bitstream holds the CPU): 15.4 ms for 512 LEDs."""

    ORDER = (1, 0, 2, 3)

    def __init__(self, count: int, clocked: bool = True) -> None:
        self.buf = bytearray(count * 3)
        self.shown = bytes(count * 3)  # what the LEDs show: buf as of the last write()
        self.writes = 0
        self.clocked = clocked

    def write(self) -> None:
        if self.clocked:
            time.sleep(len(self.buf) * 8 * BIT_S)
        self.shown = bytes(self.buf)
        self.writes += 1

    def __getitem__(self, i: int) -> tuple[int, int, int]:
        g, r, b = self.shown[i * 3 : i * 3 + 3]
        return r, g, b

    @property
    def pixels(self) -> list[tuple[int, int, int]]:
        return [self[i] for i in range(len(self.shown) // 3)]


class EmulatedLedController:
    def __init__(self, directory: str | Path, width: int = 32, height: int = 16) -> None:
        self.path = Path(directory) / "table-led"
        self.width, self.height = width, height
        self.strip = Strip(width * height)
        self.corrupt_next = 0  # damage this many incoming reads (flip a byte in each)
        self.drop_next = 0  # lose this many incoming frame blocks without a word
        self._master: int | None = None
        self._thread: threading.Thread | None = None
        self._plugged = threading.Event()
        # Emulation runs the firmware this host carries: it reports the version the host expects.
        self.controller = Controller(self._write, self.strip, width, height, data_pin=2, firmware=expected())
        self._take = self.controller.take
        self.controller.take = self._take_or_drop  # type: ignore[method-assign]
        self.plug()

    def _take_or_drop(self, seq: int, kind: int | None, payload: memoryview | None) -> None:
        if self.drop_next and kind == ledproto.FRAME:
            self.drop_next -= 1  # lost on the way: no picture, no ack
            return
        self._take(seq, kind, payload)

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
        def readinto(buf: memoryview) -> int:
            """The firmware's blocking read of USB serial: waits for bytes, or for unplug()."""
            while True:
                ready, _, _ = select.select([master, self._wake_r], [], [])
                if self._wake_r in ready or not self._plugged.is_set():
                    raise EOFError("unplugged")
                try:
                    data = os.read(master, len(buf))
                except OSError:  # the host closed its end: wait for it to come back
                    self._plugged.wait(0.01)
                    continue
                if data:
                    data = self._inject(data)
                    buf[: len(data)] = data
                    return len(data)

        with contextlib.suppress(EOFError, OSError):
            self.controller.serve(readinto)

    def _inject(self, data: bytes) -> bytes:
        if self.corrupt_next and len(data) > 8:
            self.corrupt_next -= 1
            damaged = bytearray(data)
            damaged[len(damaged) // 2] ^= 0x5A
            return bytes(damaged)
        return data

    # ------------------------------------------------------------ what it shows

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        return self.strip[led_index(x, y, self.width)]

    def frame_bytes(self) -> bytes:
        """The shown picture back in row order, to compare with the image sent."""
        shown = self.strip.shown
        out = bytearray()
        for y in range(self.height):
            for x in range(self.width):
                i = led_index(x, y, self.width) * 3
                out += bytes((shown[i + 1], shown[i], shown[i + 2]))
        return bytes(out)


def main() -> None:
    """`python -m firmware_host.devices.emulated.led DIR [WIDTH HEIGHT]`: an emulated
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

