"""The hardware the table drives: one object, chosen by the configuration's `[hardware]` table.

As gpiozero swaps pin factories, the daemon swaps boards and never asks which one it has:

- `PiBoard` ("pi"): the Raspberry Pi's GPIO chip through lgpio (kernel edge timestamps), its I2C
  buses through smbus2, the OLEDs through luma.oled, the LED controller on USB serial.
- `ChipBoard` ("gpiochip"): the same real drivers on a GPIO chip named in the configuration (a
  board that is not a Pi, or the kernel's gpio-sim in the virtual Pi). gpiozero is told which Pi's
  numbering the lines follow, since it cannot read that from such a board.
- `EmulatedBoard` ("emulated"): every part simulated in this process, each model following its
  datasheet (emulated/mcp23017.py, emulated/oled.py, emulated/led.py); keyboard seats and
  bots press its buttons through the same pins and expanders the Pi path reads.

Nothing falls back: GPIO that cannot be opened raises `HardwareUnavailable` naming what failed;
a part that is missing later (an expander, a screen) is reported by the part that found it, and
the table runs on without it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ..config import TableConfig, gpios_used
from ..system import paths
from ..system.errors import HardwareUnavailable
from .displays.oled import DisplaySpec, hardware_opener
from .emulated.keyboard import KeyboardSeats
from .emulated.oled import RecordingInterface, recording_opener
from .emulated.pins import EmulatedButtons, TimedMockPin
from .i2cmux import SYSFS, I2CMuxes
from .inputs.mcp23017 import Bus
from .parts import OK, Check, Part, Parts, Timers

if TYPE_CHECKING:
    from gpiozero import Factory  # gpiozero has no types: its classes are Any to mypy
    from smbus2 import SMBus  # the same

    from .buzzer import Buzzer
    from .displays.ledlink import LedLink
    from .displays.oled import SeatDisplays
    from .inputs.pins import TableInputs

ScreenOpener = Callable[[DisplaySpec], object]
"""What opens one seat's screen: a luma device, or the emulator's recording one (luma has no
types); the board only hands it to `SeatDisplays`."""
Put = Callable[[object], None]
"""Where the inputs' events go (the loop's `put`, service/loop.py, from any thread)."""

Presser = EmulatedButtons
"""What presses an emulated board's buttons (bots, a terminal's keys), as the service names it:
only this module chooses an emulated part."""

DEV = Path("/dev")
EX_UNAVAILABLE = 69
"""sysexits.h: a service it needs is not there. systemd shows it as status=69/UNAVAILABLE."""


class Board(Part):
    """What every backend gives the daemon. The board is the first part (the GPIO chip) and
    builds the others (`open_parts`)."""

    name = "board"
    factory: Factory
    """gpiozero's pin factory: lgpio's on a Pi, its mock one emulated."""
    presser: EmulatedButtons | None = None
    """Only an emulated board can press its own buttons (keyboard seats, bots)."""
    sysfs: Path | None = None
    """Where the kernel's I2C multiplexers show (the self-test reads their idle_state); None: the
    board has none (emulated)."""

    def i2c(self, bus: int) -> Bus:
        raise NotImplementedError

    def screen_opener(self, config: TableConfig) -> ScreenOpener:
        raise NotImplementedError

    def led_port(self, config: TableConfig) -> str:
        return config.centre.port

    def keyboard(self, config: TableConfig) -> KeyboardSeats | None:
        """Keys that press seat 1's buttons (a terminal's), where the board can press them."""
        return None

    def describe(self) -> str:
        return self.name

    def chip_info(self) -> dict[str, str]:
        """The GPIO chip the board drives and how it was found (`tablectl status`); {} if none."""
        return {}

    def probe(self, config: TableConfig) -> list[Check]:
        """It opened (or the table would not have started): say which chip, found how."""
        return [Check("GPIO chip", self.describe(), OK, "opened")]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.factory.close()


class TableParts(Parts):
    """The parts one board built, by name for the components that drive one (the screens, the
    sounds, the keys), and in probe order for those that only go round them all."""

    def __init__(self, board: Board, inputs: TableInputs, muxes: I2CMuxes, screens: SeatDisplays,
                 led: LedLink, buzzer: Buzzer, keyboard: KeyboardSeats | None) -> None:
        super().__init__(board, inputs, muxes, screens, led, buzzer)
        self.board, self.inputs, self.screens, self.led, self.buzzer = board, inputs, screens, led, buzzer
        self.keyboard = keyboard
        """A terminal's keys on seat 1's emulated buttons (None on real hardware or headless)."""


def open_parts(board: Board, config: TableConfig, put: Put,
               wake: Callable[[], None] | None = None, keys: bool = False,
               on_error: Callable[[str], None] | None = None) -> TableParts:
    """Every part of the table on `board`, each opened (a part that cannot open says so in its
    `problem`). `put`: where the inputs' events go (the loop's queue, from any thread); `wake`:
    wakes the loop with no event (an input's deadline came earlier). `keys`: a terminal plays
    seat 1 on an emulated board (its direct buttons on GPIOs the build leaves free)."""
    from .buzzer import open_buzzer
    from .displays.ledlink import LedLink
    from .displays.oled import SeatDisplays, specs_for
    from .inputs.pins import TableInputs

    keyboard = board.keyboard(config) if keys else None
    buses = {e.bus: board.i2c(e.bus) for e in config.inputs.expanders}
    wiring = keyboard.wiring if keyboard is not None else config.inputs
    inputs = TableInputs(wiring, board.factory, buses, put, wake=wake)
    muxes = I2CMuxes(config.i2c_muxes, board.sysfs)
    screens = SeatDisplays(specs_for(list(config.screens)), board.screen_opener(config))
    led = LedLink(board.led_port(config), config.centre.width, config.centre.height)
    buzzer = open_buzzer(config.buzzer, board.factory, on_error=on_error)
    return TableParts(board, inputs, muxes, screens, led, buzzer, keyboard)


class SMBusLine:
    """An I2C bus opened on first use and again after a failure, so an expander on a bus that
    is missing at start (I2C not enabled, a cable out) is a fault that retries, not a crash."""

    def __init__(self, number: int) -> None:
        self.number = number
        self._bus: SMBus | None = None

    def _open(self) -> SMBus:
        if self._bus is None:
            import smbus2

            try:
                self._bus = smbus2.SMBus(self.number)
            except OSError as exc:
                hint = " (is dtparam=i2c_arm=on in config.txt?)" if exc.errno == errno.ENOENT else ""
                raise OSError(exc.errno, f"cannot open /dev/i2c-{self.number}: "
                                         f"{exc.strerror or exc}{hint}") from None
        return self._bus

    def read_byte_data(self, i2c_addr: int, register: int) -> int:
        try:
            return int(self._open().read_byte_data(i2c_addr, register))
        except OSError:
            self._forget()
            raise

    def write_byte_data(self, i2c_addr: int, register: int, value: int) -> None:
        try:
            self._open().write_byte_data(i2c_addr, register, value)
        except OSError:
            self._forget()
            raise

    def _forget(self) -> None:
        if self._bus is not None:
            with contextlib.suppress(OSError):
                self._bus.close()
            self._bus = None


def prepare_lgpio() -> None:
    """lgpio makes its notification FIFO (.lgd-nfyN) in $LG_WD, else the working directory,
    when it is imported; under the unit that is `/`, read-only (ProtectSystem=strict), and the
    import fails (gpiozero issue #1106, lg issue #22). Give it the runtime directory."""
    if os.environ.get("LG_WD"):
        return
    for candidate in (paths.directory("RUNTIME_DIRECTORY"), Path(os.environ.get("TMPDIR", "/tmp"))):
        if candidate.is_dir() and os.access(candidate, os.W_OK | os.X_OK):
            os.environ["LG_WD"] = str(candidate)
            return


def _import_lgpio() -> ModuleType:
    """lgpio's library changes the process's working directory to $LG_WD when it starts:
    put it back, so relative paths given to the daemon keep their meaning."""
    prepare_lgpio()
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = None
    try:
        import lgpio
    except ImportError as exc:
        raise HardwareUnavailable(f"the lgpio library is not installed ({exc}): "
                                  "pip install 'table-host[pi]'") from None
    except OSError as exc:  # its FIFO could not be made or opened
        raise HardwareUnavailable(f"lgpio cannot start: {exc} (LG_WD={os.environ.get('LG_WD')!r} "
                                  "must be a writable directory)") from None
    finally:
        if cwd is not None:
            with contextlib.suppress(OSError):
                os.chdir(cwd)
    module: ModuleType = lgpio  # lgpio has no types: Any to mypy, a module all the same
    return module


HEADER_LABELS = {
    "BCM2712": "pinctrl-rp1",
    "BCM2711": "pinctrl-bcm2711",
    "BCM2837": "pinctrl-bcm2835",
    "BCM2836": "pinctrl-bcm2835",
    "BCM2835": "pinctrl-bcm2835",
}
"""The label of the GPIO chip that carries the 40-pin header, by the SoC gpiozero reads from the
board's revision code. The kernel names chips by the order they register, and that order has
changed (a Pi 5's RP1 chip was gpiochip4 until kernel 6.6.45, gpiochip0 after, and later kernels
list it from gpiochip11 on), but the labels come from the drivers and stay:
- Pi 5, CM5, Pi 500 (BCM2712): the RP1's GPIO, drivers/pinctrl/pinctrl-rp1.c, whose `rp1_gpio_chip`
  has `.label = MODULE_NAME` and `#define MODULE_NAME "pinctrl-rp1"`;
- Pi 4, Pi 400, CM4 (BCM2711): drivers/pinctrl/bcm/pinctrl-bcm2835.c, `bcm2711_gpio_chip`,
  `.label = "pinctrl-bcm2711"`;
- older boards (BCM2835/6/7): the same file's `bcm2835_gpio_chip`, `.label = MODULE_NAME`,
  `#define MODULE_NAME "pinctrl-bcm2835"`.
"""


def list_chips(dev: Path | None = None) -> list[tuple[int, str]]:
    """Every /dev/gpiochipN with its label as the GPIO character device reports it (lgpio's
    gpio_get_chip_info), by number; a chip that cannot be opened says why in place of a label."""
    dev = dev or DEV
    lgpio = _import_lgpio()
    found = []
    for path in dev.glob("gpiochip*"):
        if not path.name[8:].isdigit():
            continue
        number = int(path.name[8:])
        try:
            handle = lgpio.gpiochip_open(number)
        except Exception as exc:  # lgpio raises its own error type
            found.append((number, f"cannot open: {exc}"))
            continue
        try:
            _, _, _, label = lgpio.gpio_get_chip_info(handle)
        finally:
            lgpio.gpiochip_close(handle)
        found.append((number, str(label)))
    return sorted(found)


def _chip_list(chips: list[tuple[int, str]], dev: Path) -> str:
    return ", ".join(f"gpiochip{n} ({label})" for n, label in chips) or f"no GPIO chips in {dev}"


def find_chip(chip: int | str | None, dev: Path | None = None) -> int | None:
    """A chip given as N, "gpiochipN", "/dev/gpiochipN" or its label -> its number."""
    if chip is None or isinstance(chip, int):
        return chip
    dev = dev or DEV
    text = chip.strip()
    name = text.removeprefix(str(dev) + "/").removeprefix("/dev/")
    if text.isdigit():
        return int(text)
    if name.startswith("gpiochip") and name[8:].isdigit():
        return int(name[8:])
    chips = list_chips(dev)
    for number, label in chips:
        if label == text:
            return number
    raise HardwareUnavailable(f"no GPIO chip labelled {text!r}: {_chip_list(chips, dev)}")


def header_chip(revision: int, dev: Path | None = None) -> tuple[int, str, str]:
    """The chip with the header's GPIOs on this Pi, found by its label (HEADER_LABELS): its
    number, its label and the board as gpiozero names it from the revision code. A SoC the table
    does not know: whichever known header label is there."""
    from gpiozero.pins.pi import PiBoardInfo

    info = PiBoardInfo.from_revision(revision)
    board = f"Raspberry Pi {info.model} ({info.soc}, revision {revision:04x})"
    known = list(dict.fromkeys(HEADER_LABELS.values()))
    wanted = [HEADER_LABELS[info.soc]] if info.soc in HEADER_LABELS else known
    dev = dev or DEV
    chips = list_chips(dev)
    for label in wanted:
        for number, found in chips:
            if found == label:
                return number, label, board
    labels = " or ".join(repr(label) for label in wanted)
    raise HardwareUnavailable(f"no GPIO chip labelled {labels} for the header of this {board}: "
                              f"{_chip_list(chips, dev)}; name the chip in [hardware] chip = N or its label")


def chip_label(number: int, dev: Path | None = None) -> str:
    """The label of /dev/gpiochipN, for the log and `tablectl status` ("" if it cannot be read)."""
    with contextlib.suppress(HardwareUnavailable):
        return dict(list_chips(dev)).get(number, "")
    return ""


class PiBoard(Board):
    name = "pi"

    def __init__(self, config: TableConfig) -> None:
        revision = self._revision()  # first: gpiozero needs it for its pin numbering in any case
        if config.hardware.chip in (None, ""):
            self.chip: int | None
            self.chip, self.chip_label, board = header_chip(revision)
            self.chip_found = f"by its label on this {board}"
        else:
            self.chip = find_chip(config.hardware.chip)
            self.chip_label = chip_label(self.chip) if self.chip is not None else ""
            self.chip_found = "as [hardware] chip names it"
        self.factory = self._factory(self.chip)
        self._buses: dict[int, SMBusLine] = {}
        self.sysfs = SYSFS

    def _revision(self) -> int:
        """The board's revision code as gpiozero reads it (gpiozero.pins.local.get_pi_revision:
        /proc/device-tree/system/linux,revision, else /proc/cpuinfo's Revision), so the chip found
        here is the one for the board whose numbering gpiozero will use."""
        _import_lgpio()
        from gpiozero.exc import PinUnknownPi
        from gpiozero.pins.local import get_pi_revision

        try:
            return int(get_pi_revision())
        except (PinUnknownPi, OSError, ValueError) as exc:
            raise HardwareUnavailable(
                f"cannot tell which Raspberry Pi this is ({exc}): gpiozero reads "
                "/proc/device-tree/system/linux,revision or /proc/cpuinfo; is this a Pi, and can the "
                "service see /proc (no ProcSubset=pid)? Another board: [hardware] backend = \"gpiochip\"") \
                from None

    def _factory(self, chip: int | None) -> Factory:
        _import_lgpio()
        from gpiozero.pins.lgpio import LGPIOFactory

        where = f"/dev/gpiochip{chip}" if chip is not None else "the Pi's GPIO chip"
        try:  # given a chip, LGPIOFactory opens that one, never its own guess (gpiochip4 or 0)
            return self._factory_class(LGPIOFactory)(chip=chip)
        except Exception as exc:  # lgpio.error, OSError: no chip, no permission
            raise HardwareUnavailable(f"cannot open {where}: {exc}{_chip_hint(chip)}") from None

    def _factory_class(self, base: type) -> type:
        return base

    def i2c(self, bus: int) -> Bus:
        return self._buses.setdefault(bus, SMBusLine(bus))

    def screen_opener(self, config: TableConfig) -> ScreenOpener:
        """Each screen's bus is looked up in /sys when it opens (i2cmux.resolve_bus); an SPI
        screen's D/C and reset lines are this board's pins (lgpio: no /dev/gpiomem)."""
        return hardware_opener(list(config.screens), list(config.i2c_muxes), factory=self.factory)

    def chip_info(self) -> dict[str, str]:
        chip = self.factory.chip if hasattr(self.factory, "chip") else self.chip
        return {"chip": f"/dev/gpiochip{chip}", "chip_label": self.chip_label, "chip_found": self.chip_found}

    def describe(self) -> str:
        info = self.chip_info()
        label = f" {info['chip_label']!r}" if info["chip_label"] else ""
        return f"{self.name} ({info['chip']}{label}, found {info['chip_found']})"

    def close(self) -> None:
        for bus in self._buses.values():
            bus._forget()
        super().close()


class ChipBoard(PiBoard):
    name = "gpiochip"

    def __init__(self, config: TableConfig) -> None:
        self.revision = int(config.hardware.board_revision, 16)
        super().__init__(config)

    def _revision(self) -> int:
        return self.revision

    def _factory_class(self, base: type) -> type:
        revision = self.revision

        class NamedChipFactory(base):
            """gpiozero asks /proc which Pi this is; a plain chip cannot say, the file does."""

            def _get_revision(self) -> int:
                return revision

        return NamedChipFactory


class EmulatedBoard(Board):
    name = "emulated"

    def __init__(self, config: TableConfig) -> None:
        from gpiozero.pins.mock import MockFactory

        from .emulated.led import EmulatedLedController

        self.factory = MockFactory(pin_class=TimedMockPin)
        self.presser = EmulatedButtons(config.inputs, self.factory)
        self._led_dir = tempfile.TemporaryDirectory(prefix="table-led-")
        self.led = EmulatedLedController(self._led_dir.name, config.centre.width, config.centre.height)
        self.screens: dict[int, RecordingInterface] = {}
        """Each seat's emulated OLED bus, by seat (0-based): a test unplugs one with `fail`."""

    def i2c(self, bus: int) -> Bus:
        assert self.presser is not None
        return self.presser.buses[bus]

    def screen_opener(self, config: TableConfig) -> ScreenOpener:
        return recording_opener(self.screens)

    def led_port(self, config: TableConfig) -> str:
        return str(self.led.path)

    def keyboard(self, config: TableConfig) -> KeyboardSeats | None:
        """Seat 1 on the keys, and keys 1-5 as its direct buttons on GPIOs the build leaves free."""
        assert self.presser is not None
        spare = tuple(g for g in range(4, 28) if g not in gpios_used(config))
        return KeyboardSeats(self.presser, (0,), spare)

    def start(self, timers: Timers) -> None:
        """The bots' and the keys' buttons are let go when their hold is over, on a timer."""
        buttons = self.presser
        assert buttons is not None
        let_go = timers.register_timer(buttons.let_go)
        timers.after_each(lambda _now: timers.update_timer(let_go, buttons.letting_go))

    def close(self) -> None:
        super().close()
        self.led.close()
        self._led_dir.cleanup()


BOARDS: dict[str, type[Board]] = {"pi": PiBoard, "gpiochip": ChipBoard, "emulated": EmulatedBoard}


def open_board(config: TableConfig) -> Board:
    """The board the configuration names; `HardwareUnavailable` says exactly why it cannot open."""
    return BOARDS[config.hardware.backend](config)  # type: ignore[call-arg]


def _chip_hint(chip: int | None) -> str:
    path = Path(f"/dev/gpiochip{chip if chip is not None else 0}")
    if not path.exists():
        return f" ({path} does not exist: not a Pi, or the kernel has no GPIO character device)"
    if not os.access(path, os.R_OK | os.W_OK):
        return f" (no read/write access to {path}: is the user in the gpio group?)"
    return ""
