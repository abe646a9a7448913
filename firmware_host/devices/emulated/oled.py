"""Emulated seat OLEDs: a luma serial interface that records what the real driver sends.

The driver is luma.oled's own (devices/displays/oled.py `open_luma`); what it sends is played into
models of the SSD1306 and SH1106 as their datasheets define them (controllers.py), so the whole
path down to the bus is checked. The bytes on the wire follow luma's I2C interface
(luma/core/interface/serial.py `i2c`: one address byte and one control byte, 0x00 for commands
and 0x40 for data, per transaction, data in blocks of 32 bytes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ...system.recent import Recent
from ..displays.oled import DisplaySpec, open_luma

I2C_CHUNK = 32  # luma's i2c interface sends data in blocks of this many bytes
RECORDED = 32
"""Transfers a recording interface keeps after the start-up commands: 16 SSD1306 frames, 2 SH1106."""
UNOPENED = 1 << 62  # a driver not opened through `open_recorded`: everything is kept


class RecordingInterface:
    """A luma serial interface that keeps the commands and data a driver sends: what it sent
    while opening the display (`open_recorded`: the start-up commands and first clear) and the
    newest `RECORDED` transfers after that, so a controller model fed with them shows the
    newest frame, and an emulated table that runs for days does not keep every frame it drew."""

    def __init__(self) -> None:
        self.transfers: Recent[tuple[str, bytes]] = Recent(keep=RECORDED, head=UNOPENED)
        self.fail = False  # an unplugged display: every transfer fails as on the bus

    def starting(self) -> None:
        """A driver opens the display (again): the chip starts afresh, so does the record."""
        self.transfers = Recent(keep=RECORDED, head=UNOPENED)

    def started(self) -> None:
        """The driver has opened the display: its start-up is kept, then the newest transfers."""
        self.transfers.head = len(self.transfers)

    def command(self, *cmd: int) -> None:
        self._check()
        self.transfers.append(("command", bytes(cmd)))

    def data(self, data: Any) -> None:
        self._check()
        self.transfers.append(("data", bytes(data)))

    def cleanup(self) -> None:
        pass

    def _check(self) -> None:
        if self.fail:
            raise OSError(121, "Remote I/O error")

    def i2c_bytes(self, transfers: list[tuple[str, bytes]] | None = None) -> int:
        """Bytes on the wire as luma's I2C interface sends them: address and control
        byte per transaction, data in blocks of 32."""
        total = 0
        for kind, payload in self.transfers if transfers is None else transfers:
            if kind == "command":
                total += 2 + len(payload)
            else:
                blocks = -(-len(payload) // I2C_CHUNK)
                total += 2 * blocks + len(payload)
        return total

    @contextmanager
    def opening(self) -> Iterator[None]:
        """While a driver opens the display: what it sends then is kept apart, for good."""
        self.starting()
        yield
        self.started()


def open_recorded(spec: DisplaySpec, interface: RecordingInterface) -> Any:
    """The real driver on a recording interface, its start-up kept apart from the frames."""
    with interface.opening():
        return open_luma(spec, interface)


def recording_opener(interfaces: dict[int, RecordingInterface]) -> Callable[[DisplaySpec], Any]:
    """Emulated displays: the real drivers writing into recording interfaces."""

    def open_display(spec: DisplaySpec) -> Any:
        interface = interfaces.setdefault(spec.seat, RecordingInterface())
        return open_recorded(spec, interface)

    return open_display

