"""Seat OLEDs (SSD1306 / SH1106, 128x64) through luma.oled, one worker per physical bus.

A view is just a PIL image; `SeatDisplays.show(seat, image)` queues it if it
differs from what that seat shows, and returns at once. Each bus has its own
worker thread, so a slow or dead display holds up only its own bus, never the
game. A display that fails (OSError 121, DeviceNotFoundError) is marked
offline, retried with growing pauses, and redrawn with its latest frame when it
answers again.

For tests and emulation, `devices/emulated/oled.py`'s `RecordingInterface` stands where
luma's I2C interface would and keeps the bytes the real driver sends; `controllers.py` plays
them into models of the SSD1306 and SH1106 as their datasheets define them, so the whole path
down to the bus is checked.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image

from ...config import SPI_SWITCH
from ...system.logs import logger
from ..i2cmux import SYSFS, check_i2c_dev, resolve_bus
from ..parts import MISSING, OK, Check, Part

if TYPE_CHECKING:
    from ...config import TableConfig

log = logger("displays")

SCREEN_TIMEOUT_S = 2.0  # a frame on a 400 kHz bus takes ~25 ms; the self-test gives a hung bus this long
BACKOFF_FIRST_S = 0.25
BACKOFF_MAX_S = 8.0
@dataclass(frozen=True, slots=True)
class DisplaySpec:
    seat: int
    kind: str = "ssd1306"  # or "sh1106"
    bus: str = "i2c-1"  # the physical bus: one worker each
    address: int = 0x3C


def controller_bytes(image: Image.Image) -> list[bytes]:
    """The frame as the controller stores it: 8 pages of 128 bytes, each byte a column of
    8 pixels with the top one in bit 0. A 270-degree turn makes PIL pack exactly that."""
    data = image.transpose(Image.Transpose.ROTATE_270).tobytes()
    pages = image.height // 8
    return [data[pages - 1 - p :: pages] for p in range(pages)]


@cache
def _drivers() -> dict[str, type]:
    """luma.oled's drivers with a faster `display`, made once (luma is imported late, so
    machines without displays never load it).

    luma's own `display` packs pixels in a Python loop (several ms, holding the
    GIL against the game); ours packs them with PIL and sends the same bytes
    (tests compare the two byte for byte)."""
    from luma.oled.device import sh1106, ssd1306

    class FastSSD1306(ssd1306):
        def display(self, image: Image.Image) -> None:
            image = self.preprocess(image)
            self.command(self._const.COLUMNADDR, self._colstart, self._colend - 1,
                         self._const.PAGEADDR, 0x00, self._pages - 1)
            self.data(list(b"".join(controller_bytes(image))))

    class FastSH1106(sh1106):
        def display(self, image: Image.Image) -> None:
            image = self.preprocess(image)
            for page, data in enumerate(controller_bytes(image)):
                self.command(0xB0 + page, self._page_address_offset, 0x10)
                self.data(list(data))

    return {"ssd1306": FastSSD1306, "sh1106": FastSH1106}


def open_luma(spec: DisplaySpec, interface: Any) -> Any:
    """The luma.oled driver for a display, on the given serial interface (luma's, or an emulated
    one: the driver cannot tell them apart)."""
    device = _drivers()[spec.kind](interface, width=128, height=64)
    device.persist = True  # leave the last frame up when the daemon stops
    return device


@dataclass
class _Screen:
    spec: DisplaySpec
    opener: Callable[[DisplaySpec], Any]
    device: Any = None
    frame: Image.Image | None = None
    shown: bytes | None = None
    dirty: bool = False
    online: bool = False
    retry_at: float = 0.0
    backoff: float = BACKOFF_FIRST_S
    frames_sent: int = 0
    failures: int = 0
    problem: str = ""  # why it is offline, as last logged ("" once a frame goes through)
    tried: Image.Image | None = None  # the frame of the last attempt, drawn or failed (a probe waits for it)


class BusWorker(threading.Thread):
    """Draws the screens on one physical bus, newest frame only, one at a time."""

    def __init__(self, name: str) -> None:
        super().__init__(name=f"display-{name}", daemon=True)
        self.screens: dict[int, _Screen] = {}
        self._wake = threading.Condition()
        self._stopping = False

    def submit(self, seat: int, frame: Image.Image) -> None:
        with self._wake:
            screen = self.screens[seat]
            screen.frame = frame
            screen.dirty = True
            self._wake.notify()

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify()

    def probe(self, seat: int, frame: Image.Image) -> None:
        """Draw `frame` now, offline or not (no backoff); `probed` waits for the attempt."""
        with self._wake:
            screen = self.screens[seat]
            screen.frame, screen.dirty, screen.retry_at = frame, True, 0.0
            self._wake.notify_all()

    def probed(self, seat: int, frame: Image.Image, until: float) -> str:
        """"" when `frame` reached the display, else why not (the self-test asks this)."""
        with self._wake:
            screen = self.screens[seat]
            if not self._wake.wait_for(lambda: screen.tried is frame or screen.frame is not frame,
                                       max(0.0, until - time.monotonic())):
                return "no answer in time (the bus is busy or hung)"
            return screen.problem

    def run(self) -> None:
        while True:
            with self._wake:
                while not self._stopping and not self._work_due():
                    self._wake.wait(self._until_retry())
                if self._stopping:
                    return
                todo = [s for s in self.screens.values() if s.dirty or not s.online]
            for screen in todo:
                self._draw(screen)

    def _work_due(self) -> bool:
        now = time.monotonic()
        return any((s.dirty and s.online) or (not s.online and now >= s.retry_at and s.frame is not None)
                   for s in self.screens.values())

    def _until_retry(self) -> float | None:
        """Sleep until the next retry of an offline screen that has something to show;
        with nothing to retry, until woken (no polling)."""
        waits = [s.retry_at - time.monotonic() for s in self.screens.values()
                 if not s.online and s.frame is not None]
        return max(0.0, min(waits)) if waits else None

    def _draw(self, screen: _Screen) -> None:
        if not screen.online and time.monotonic() < screen.retry_at:
            return
        with self._wake:
            frame, screen.dirty = screen.frame, False
        if frame is None:
            return
        try:
            if screen.device is None:
                screen.device = screen.opener(screen.spec)
            screen.device.display(frame)
        except Exception as exc:  # OSError 121, DeviceNotFoundError, a driver's own error
            self._offline(screen, exc)
            self._attempted(screen, frame)
            return
        screen.problem = ""
        self._attempted(screen, frame)
        screen.frames_sent += 1
        if not screen.online and screen.failures:
            log.info("Seat %d's display is back", screen.spec.seat + 1)
        screen.online = True
        screen.backoff = BACKOFF_FIRST_S
        screen.shown = frame.tobytes()

    def _attempted(self, screen: _Screen, frame: Image.Image) -> None:
        with self._wake:
            screen.tried = frame
            self._wake.notify_all()

    def _offline(self, screen: _Screen, exc: Exception) -> None:
        """Said once per reason: a screen that never opened is reported too (a degraded seat,
        not a silent one), and its retries stay quiet until the reason changes."""
        screen.failures += 1
        problem = str(exc) or type(exc).__name__
        spec = screen.spec
        where = spec.bus if spec.bus.startswith("spi-") else f"{spec.bus} at {spec.address:#04x}"
        if screen.online or screen.device is not None:
            log.warning("Seat %d's display is not answering (%s: %s); retrying",
                        spec.seat + 1, where, problem)
        elif problem != screen.problem:
            log.warning("Seat %d's display is not answering (%s: %s); retried every %g s at most",
                        spec.seat + 1, where, problem, BACKOFF_MAX_S)
        screen.problem = problem
        screen.online = False
        if screen.device is not None:  # close its bus: a display that keeps failing must not
            with contextlib.suppress(Exception):  # leak a file every retry
                screen.device.cleanup()  # persist = True: only the interface closes
        screen.device = None
        screen.dirty = True  # redraw the newest frame when it comes back
        screen.retry_at = time.monotonic() + screen.backoff
        screen.backoff = min(screen.backoff * 2, BACKOFF_MAX_S)


def screen_frame(seat: int) -> Image.Image:
    """The probe's frame, and the picture the walk asks the builder to confirm: a border on all
    four edges. An SH1106 driven as an SSD1306 (or the reverse) takes every byte and shows it
    wrong: the SSD1306's horizontal addressing means nothing to an SH1106, which writes the whole
    frame into its first page; an SSD1306 shows the SH1106's 132-column frame two pixels to the
    right, its right edge lost. No read-back both datasheets define tells the two apart (neither
    can be read over SPI), so the builder is asked."""
    from PIL import ImageDraw

    from ...views.seat import render_banner

    img = render_banner(f"seat {seat + 1}", "is the border whole?", "slap: yes, alt: no", big="SELF-TEST")
    ImageDraw.Draw(img).rectangle((0, 0, img.width - 1, img.height - 1), outline=1)
    return img


class SeatDisplays(Part):
    """Every seat's OLED. `show` never blocks on a bus."""

    name = "seat screens"

    def __init__(self, specs: list[DisplaySpec], opener: Callable[[DisplaySpec], Any]) -> None:
        self._workers: dict[str, BusWorker] = {}
        self._last: dict[int, bytes] = {}
        self._bus_of: dict[int, BusWorker] = {}
        for spec in specs:
            worker = self._workers.get(spec.bus)
            if worker is None:
                worker = self._workers[spec.bus] = BusWorker(spec.bus)
            worker.screens[spec.seat] = _Screen(spec, opener, retry_at=0.0)
            self._bus_of[spec.seat] = worker
        for worker in self._workers.values():
            worker.start()

    def show(self, seat: int, frame: Image.Image) -> bool:
        """Queue the seat's new view; False (and nothing queued) if it did not change."""
        key = frame.tobytes()
        if self._last.get(seat) == key:
            return False
        worker = self._bus_of.get(seat)
        if worker is None:  # a seat built without a screen
            return False
        self._last[seat] = key
        worker.submit(seat, frame)
        return True

    def probe_frames(self, frames: dict[int, Image.Image], timeout: float = 2.0) -> dict[int, str]:
        """Draw each seat's frame now and say, per seat, "" (it answered) or why not. The
        buses work in parallel; this waits for the slowest, `timeout` at most."""
        seats = [s for s in frames if s in self._bus_of]
        for seat in seats:
            self._last[seat] = frames[seat].tobytes()
            self._bus_of[seat].probe(seat, frames[seat])
        until = time.monotonic() + timeout
        return {seat: self._bus_of[seat].probed(seat, frames[seat], until) for seat in seats}

    def missing(self) -> list[str]:
        return [f"seat {seat + 1} screen ({s['bus']})" for seat, s in sorted(self.status().items())
                if not s["online"] and s.get("failures")]

    def probe(self, config: TableConfig) -> list[Check]:
        """A frame through each screen's real driver and bus, its seat's number on it."""
        specs = sorted((s.spec for w in self._workers.values() for s in w.screens.values()),
                       key=lambda spec: spec.seat)
        frames = {spec.seat: screen_frame(spec.seat) for spec in specs}
        answers = self.probe_frames(frames, SCREEN_TIMEOUT_S)
        checks = []
        for spec in specs:
            problem = answers.get(spec.seat, "no screen worker")
            checks.append(Check(f"seat {spec.seat + 1} screen", f"{spec.bus}, 0x{spec.address:02x}",
                                MISSING if problem else OK,
                                problem or f"{spec.kind}: a frame went through (whether it shows right, "
                                           "only the builder sees: the walk asks)"))
        return checks

    def report(self) -> dict[str, Any]:
        return {"displays": {str(k): v for k, v in self.status().items()}}

    def status(self) -> dict[int, dict[str, Any]]:
        out = {}
        for worker in self._workers.values():
            for seat, s in worker.screens.items():
                out[seat] = {"online": s.online, "frames_sent": s.frames_sent, "bus": s.spec.bus,
                             "failures": s.failures, "problem": s.problem}
        return out

    def close(self) -> None:
        for worker in self._workers.values():
            worker.stop()
        for worker in self._workers.values():
            worker.join(timeout=2)


def specs_for(screens: list[Any]) -> list[DisplaySpec]:
    """DisplaySpecs from the configuration's screens (config.SeatScreen), seat by seat. The
    worker's bus is named by where the screen is wired (`mux 0x70 channel 0`, `i2c-22`,
    `spi-0`), since a mux channel's bus number is known only once the display is opened."""
    return [DisplaySpec(seat, s.kind, f"spi-{s.spi_port}" if s.interface == "spi" else s.place(),
                        s.address if s.interface == "i2c" else s.spi_device)
            for seat, s in enumerate(screens)]


class FactoryGPIO:
    """The `gpio=` object luma's SPI interface drives D/C and reset with, on the board's own
    gpiozero pin factory (lgpio on a Pi: /dev/gpiochip, so a Pi 5 works and no /dev/gpiomem).

    luma.core 2.x (interface/serial.py) asks of it exactly what it asks of RPi.GPIO: the
    constants OUT, LOW and HIGH; `setup(pin, OUT)` for D/C and reset (`initial=` from
    gpio_cs_spi); `output(pin, level)` with any truthy or falsy level; and, only for a GPIO
    module it imported itself, `cleanup(pins)`. Handed one, it never calls cleanup, so the
    interface made by `BoardSPI` calls it when it closes: a retried display must not find its
    pins still taken (gpiozero's GPIOPinInUse)."""

    OUT = 0
    IN = 1
    LOW = 0
    HIGH = 1
    BCM = 11

    def __init__(self, factory: Any) -> None:
        self._factory = factory
        self._pins: dict[int, Any] = {}

    def setmode(self, mode: int) -> None:
        if mode != self.BCM:
            raise ValueError("FactoryGPIO numbers pins as BCM GPIOs only")

    def setup(self, pin: int, direction: int, initial: int | None = None) -> None:
        from gpiozero import DigitalOutputDevice

        if direction != self.OUT:
            raise ValueError(f"GPIO{pin}: only outputs (D/C, reset) are driven for a display")
        if pin in self._pins:
            self._pins[pin].value = bool(initial)
            return
        self._pins[pin] = DigitalOutputDevice(pin, initial_value=bool(initial), pin_factory=self._factory)

    def output(self, pin: int, level: Any) -> None:
        self._pins[pin].value = bool(level)

    def input(self, pin: int) -> int:
        return int(self._pins[pin].value)

    def cleanup(self, pins: int | Sequence[int] | None = None) -> None:
        """Let go of `pins` (all when None), each closed even if another fails."""
        chosen = list(self._pins) if pins is None else [pins] if isinstance(pins, int) else list(pins)
        for pin in chosen:
            device = self._pins.pop(pin, None)
            if device is not None:
                with contextlib.suppress(Exception):
                    device.close()


SPI_HZ = {"ssd1306": 8_000_000, "sh1106": 2_000_000}
"""Each controller's SPI clock, from its datasheet and what luma takes (0.5, 1, 2, 4, 8, 16 or 32
MHz): the SSD1306 asks a clock cycle of at least 100 ns (rev 1.1, Table 13-4: 10 MHz), so 8 MHz;
the SH1106's serial timing is slower (the Linux kernel's fbtft SH1106 driver reads its datasheet
as 2 MHz), so 2 MHz. It was 8 MHz for both, four times what the SH1106 is specified for."""
RESET_HOLD_S = 0.001
"""Reset held low this long: the SSD1306 asks 3 us at least (rev 1.1 §8.9, power-on step 2)."""


@cache
def _board_spi() -> type:
    """luma's SPI interface that also lets go of the board's D/C and reset pins on cleanup."""
    from luma.core.interface.serial import spi

    class BoardSPI(spi):  # type: ignore[misc, valid-type]
        def cleanup(self) -> None:
            try:
                super().cleanup()
            finally:
                self._gpio.cleanup()

    return BoardSPI


def open_spi(spec: DisplaySpec, cfg: Any, factory: Any, spidev: Callable[[], Any] | None = None,
             sysfs: Path = SYSFS) -> Any:
    """A display on /dev/spidevP.D, D/C and reset on the board's pin factory. `spidev` makes
    the SpiDev object (the spidev package's by default; tests give a fake)."""
    port, device = cfg.spi_port, cfg.spi_device
    where = f"spi{port}.{device}"
    if not (sysfs / "class" / "spidev" / f"spidev{port}.{device}").exists():
        switch = SPI_SWITCH.get(port, f"an overlay for SPI{port}")
        raise OSError(f"{where}: no /dev/spidev{port}.{device} ({sysfs}/class/spidev/spidev{port}.{device} "
                      f"missing): is `{switch}` in config.txt and the box rebooted?")
    if factory is None:
        raise OSError(f"{where}: this board has no GPIO for the display's D/C and reset lines")
    if spidev is None:
        try:
            from spidev import SpiDev
        except ImportError as exc:
            raise OSError(f"{where}: the spidev library is not installed ({exc}): "
                          "pip install 'table-host[pi]'") from None
        spidev = SpiDev
    gpio = FactoryGPIO(factory)
    try:
        interface = _board_spi()(spi=spidev(), gpio=gpio, port=port, device=device, gpio_DC=cfg.dc_gpio,
                                 gpio_RST=cfg.reset_gpio, bus_speed_hz=SPI_HZ[spec.kind],
                                 reset_hold_time=RESET_HOLD_S if cfg.reset_gpio is not None else 0)
    except Exception as exc:  # a pin in use, /dev/spidev not there or not ours (EACCES)
        gpio.cleanup()
        raise OSError(f"{where} (D/C GPIO{cfg.dc_gpio}, reset "
                      f"{'GPIO' + str(cfg.reset_gpio) if cfg.reset_gpio is not None else 'not wired'}): "
                      f"{exc or type(exc).__name__}") from exc
    try:
        return open_luma(spec, interface)
    except Exception as exc:
        interface.cleanup()
        raise OSError(f"{where}: {exc}") from exc


def hardware_opener(screens: Sequence[Any], muxes: Sequence[Any] = (), sysfs: Path = SYSFS,
                    factory: Any = None, spidev: Callable[[], Any] | None = None
                    ) -> Callable[[DisplaySpec], Any]:
    """Opens the real display of a seat: luma's I2C interface on /dev/i2c-N, N looked up in
    sysfs at every attempt (firmware_host/devices/i2cmux.py: a mux whose driver loads after the
    daemon is found at the next retry), or SPI with its data/command and reset lines on the
    board's gpiozero `factory` (`open_spi`)."""

    def open_display(spec: DisplaySpec) -> Any:
        from luma.core.interface.serial import i2c

        cfg = screens[spec.seat]
        if cfg.interface == "spi":
            return open_spi(spec, cfg, factory, spidev, sysfs)
        bus = resolve_bus(cfg, muxes, sysfs)
        check_i2c_dev(bus, sysfs)
        where = f"i2c-{bus}" if cfg.bus is not None else f"i2c-{bus} ({cfg.place()})"
        try:
            interface = smbus_blocks_if_needed(i2c(port=bus, address=cfg.address), cfg.address)
        except Exception as exc:  # luma's DeviceNotFoundError and the like do not say which bus
            raise OSError(f"{where}, address 0x{cfg.address:02x}: {exc}") from exc
        try:
            return open_luma(spec, interface)
        except Exception as exc:
            interface.cleanup()  # its /dev/i2c-N file: smbus2 never closes it by itself
            raise OSError(f"{where}, address 0x{cfg.address:02x}: {exc}") from exc

    return open_display


I2C_FUNC_I2C = 0x00000001
"""linux/i2c.h: the adapter does plain I2C transfers (the I2C_RDWR ioctl), beyond SMBus ones."""


def smbus_blocks_if_needed(interface: Any, address: int) -> Any:
    """luma's I2C interface as it opened /dev/i2c-N, or, on an adapter that does SMBus transfers
    only, one that sends the frame as 32-byte SMBus I2C-block writes.

    luma sends a frame as one plain I2C write (I2C_RDWR, up to 4 KiB) on a bus it opened itself;
    an adapter whose I2C_FUNCS lack I2C_FUNC_I2C (the kernel's i2c-stub, some USB adapters)
    refuses that with EOPNOTSUPP, and the screen would never show a frame. On a bus it was
    handed, luma writes the same data in blocks of 32 after the control byte 0x40, each an I2C
    block write: the controller stores the same bytes (horizontal addressing carries its column
    pointer from one block to the next). A Pi's own I2C controllers do plain I2C: nothing changes
    there."""
    smbus = getattr(interface, "_bus", None)
    funcs = getattr(smbus, "funcs", None)
    if funcs is None or int(funcs) & I2C_FUNC_I2C:
        return interface
    return _smbus_block_interface()(bus=smbus, address=address)


@cache
def _smbus_block_interface() -> type:
    from luma.core.interface.serial import i2c

    class SMBusBlocks(i2c):  # type: ignore[misc]
        """luma's I2C interface on a bus handed to it, which it then closes as its own."""

        def cleanup(self) -> None:
            self._bus.close()

    return SMBusBlocks
