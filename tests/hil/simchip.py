"""A gpio-sim chip, made through configfs, and its lines pressed through sysfs.

Follows the kernel's Documentation/admin-guide/gpio/gpio-sim.rst (Linux 6.x-7.x):
- configfs: `/sys/kernel/config/gpio-sim/<device>/` holds `live` and `dev_name`; a bank
  `<device>/<bank>/` holds `num_lines`, `label` and (read-only, once live) `chip_name`; a line
  `<bank>/line<N>/` holds `name`. Writing 1 to `live` creates the platform device.
- sysfs: `/sys/devices/platform/<dev_name>/<chip_name>/sim_gpio<N>/` holds `pull` ("pull-up" or
  "pull-down": what drives a line nobody outputs on) and `value` (the line's level). A consumer's
  bias setting sets the pull too, so a button is pressed by writing "pull-down" after the
  table has switched its pull-up on, and released by writing "pull-up".

The writer takes the two roots as arguments so tests can point it at a plain folder.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

CONFIGFS = Path("/sys/kernel/config/gpio-sim")
PLATFORM = Path("/sys/devices/platform")
PI_LINES = 28  # a Pi's header GPIOs, BCM 0..27: line offset = BCM number
RP1_LINES = 54  # a Pi 5's RP1 chip (drivers/pinctrl/pinctrl-rp1.c: RP1_NUM_GPIOS), GPIO0-27 first


@dataclass
class SimChip:
    name: str = "hil"
    lines: int = PI_LINES
    label: str = "hil-pi-gpio"
    configfs: Path = CONFIGFS
    platform: Path = PLATFORM
    dev_name: str = ""
    chip_name: str = ""
    writes: list[tuple[int, str, int, int]] = field(default_factory=list)
    """Every pull written: (line, pull, monotonic ns before the write, after it)."""

    @property
    def device(self) -> Path:
        return self.configfs / self.name

    @property
    def bank(self) -> Path:
        return self.device / "bank0"

    def create(self) -> SimChip:
        """Lay out the device with one bank of `lines` lines named GPIO0.., and switch it live."""
        self.bank.mkdir(parents=True, exist_ok=True)
        (self.bank / "num_lines").write_text(f"{self.lines}\n")
        (self.bank / "label").write_text(f"{self.label}\n")
        for n in range(self.lines):
            line = self.bank / f"line{n}"
            line.mkdir(exist_ok=True)
            (line / "name").write_text(f"GPIO{n}\n")
        (self.device / "live").write_text("1\n")
        self.dev_name = (self.device / "dev_name").read_text().strip()
        self.chip_name = (self.bank / "chip_name").read_text().strip()
        if not self.chip_name:
            raise OSError(f"gpio-sim made no chip for {self.device} (live written, chip_name empty)")
        return self

    def remove(self) -> None:
        """Switch off and take the configfs tree down again (configfs wants rmdir, leaf first)."""
        (self.device / "live").write_text("0\n")
        for n in range(self.lines):
            (self.bank / f"line{n}").rmdir()
        self.bank.rmdir()
        self.device.rmdir()

    def line_dir(self, offset: int) -> Path:
        return self.platform / self.dev_name / self.chip_name / f"sim_gpio{offset}"

    def set_pull(self, offset: int, pull: str) -> tuple[int, int]:
        """Write the line's pull; the monotonic time just before and just after the write."""
        path = self.line_dir(offset) / "pull"
        data = pull.encode()
        before = time.monotonic_ns()
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)  # as `echo pull-down > .../pull` does; lean under TCG
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        after = time.monotonic_ns()
        self.writes.append((offset, pull, before, after))
        return before, after

    def spike(self, offset: int, seconds: float) -> tuple[tuple[int, int], tuple[int, int]]:
        """Pull the line down and up again `seconds` after the first write began (or as soon as
        it returns, if it took longer), both files opened first: the narrowest contact the bench
        can make. The (before, after) of each write."""
        path = self.line_dir(offset) / "pull"
        down, up = os.open(path, os.O_WRONLY | os.O_TRUNC), os.open(path, os.O_WRONLY | os.O_TRUNC)
        try:
            before = time.monotonic_ns()
            os.write(down, b"pull-down")
            after = time.monotonic_ns()
            end = before + round(seconds * 1e9)
            while time.monotonic_ns() < end:
                pass
            up_before = time.monotonic_ns()
            os.write(up, b"pull-up")
            up_after = time.monotonic_ns()
        finally:
            os.close(down)
            os.close(up)
        self.writes += [(offset, "pull-down", before, after), (offset, "pull-up", up_before, up_after)]
        return (before, after), (up_before, up_after)

    def press(self, offset: int) -> tuple[int, int]:
        return self.set_pull(offset, "pull-down")

    def release(self, offset: int) -> tuple[int, int]:
        return self.set_pull(offset, "pull-up")

    def value(self, offset: int) -> int:
        return int((self.line_dir(offset) / "value").read_text())


def make_spares(count: int, configfs: Path = CONFIGFS, platform: Path = PLATFORM) -> list[SimChip]:
    """Chips of one line each, live one after the other before the board's own: the kernel gives a
    new chip the lowest free number (drivers/gpio/gpiolib.c, `ida_alloc`), so the next chip made
    is numbered after them, as a Pi 5's RP1 is on recent kernels (gpiochip11, not 0 or 4)."""
    return [SimChip(name=f"spare{n}", lines=1, label=f"hil-spare-{n}", configfs=configfs,
                    platform=platform).create() for n in range(count)]
