"""`tablectl selftest`: is the box wired right? Part by part, then seat by seat.

A mode of the running daemon (it owns the hardware), entered between matches:

1. Probe, on a worker thread (the daemon's loop keeps serving): the GPIO chip, each expander
   (an I2C read of registers whose reset values the MCP23017 datasheet gives), each seat's
   screen (a frame through its real driver and bus), the LED controller (its hello) and a
   test pattern on the matrix (acked or not), a tune on the buzzer (through the table's own
   sound player, which holds its pin).
2. Walk the seats, on the daemon's thread: each seat's screen asks for each control in turn
   (slap, then the navigation and select buttons as wired) and shows what arrived. Presses
   come through the normal input path (pins, expanders, debounce), so the walk proves it:
   another control arriving is a miswiring ("seat 2's left arrived as seat 3's up"), nothing
   within the timeout is "not pressed".
3. A report: ok / missing / unexpected / miswired / not pressed, per part and per control.

Nothing here sleeps on the daemon's thread: the walk is driven by input events and its
`deadline()`, like everything else the loop does. Its one bus transfer there is a read of an
expander's interrupt flags when one of its controls times out (a few hundred microseconds).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image, ImageDraw

from ..config import TableConfig
from ..control.protocol import SELFTEST_MAX_TIMEOUT_S
from ..devices.displays.oled import specs_for
from ..devices.i2cmux import IDLE_AS_IS, IDLE_DISCONNECT, idle_state, mux_device
from ..devices.inputs.mcp23017 import (
    INTFA,
    INTFB,
    IOCON,
    IOCON_MIRROR,
    IODIR_SET,
    IODIRA,
    IODIRB,
    RESET_VALUES,
)
from ..system.errors import I2CBusMissing
from ..system.logs import logger
from ..system.realtime import join_the_rest
from ..table.machine import Phase
from ..table.presses import Event, InputEvent
from ..views.centre import cap, seat_colour
from ..views.font import draw_centred
from ..views.seat import render_banner
from .events import Probed
from .registry import Call, Commands

if TYPE_CHECKING:
    from .loop import Loop
    from .screen_feed import Screens

S = 1_000_000_000
DEFAULT_TIMEOUT_S = 10.0
SCREEN_TIMEOUT_S = 2.0  # a frame on a 400 kHz bus takes ~25 ms; a hung bus gets this long
LED_HELLO_WAIT_S = 2.0  # the link reopens every 0.2 s and waits 0.5 s for a hello
LED_ACK_WAIT_S = 2.0
BEEP_WAIT_S = 2.0  # every tune is shorter than a second (sounds.LONGEST_MS)

OK, MISSING, UNEXPECTED = "ok", "missing", "unexpected"
MISWIRED, NOT_PRESSED, NOT_TESTED, WAITING = "miswired", "not pressed", "not tested", "waiting"
PROBLEMS = (MISSING, UNEXPECTED, MISWIRED, NOT_PRESSED)


@dataclass
class Check:
    """One part or one seat's control, and what the self-test found."""

    part: str  # "expander nav1", "seat 2 left"
    where: str  # "bus 1, 0x20", "nav1:B0"
    result: str = WAITING
    detail: str = ""

    def line(self) -> str:
        label = self.result.upper() if self.result in PROBLEMS else self.result
        text = f"{label:<12} {self.part:<17} {self.where}"
        return text + (f": {self.detail}" if self.detail else "")

    def as_dict(self) -> dict[str, str]:
        return {"part": self.part, "where": self.where, "result": self.result, "detail": self.detail}


# ---------------------------------------------------------------- the probes


def probe_expander(bus: Any, name: str, bus_number: int, address: int) -> Check:
    """MCP23017 datasheet (DS20001952C) Table 3-5 and Register 3-1: IODIRA and IODIRB are
    0xFF after reset; the driver writes 0x7F (GPx7 an output: output only, DS20001952D). IOCON
    (0x0A) is 0x00 after reset; the driver sets MIRROR (0x40). Both at their reset values: the
    chip was reset or plugged in since it was set up, and gives no interrupts until it is set
    up again. Any other answer is some other device at that address."""
    check = Check(f"expander {name}", f"bus {bus_number}, 0x{address:02x}")
    try:
        iodir = bus.read_byte_data(address, IODIRA), bus.read_byte_data(address, IODIRB)
        iocon = bus.read_byte_data(address, IOCON)
    except OSError as exc:
        check.result, check.detail = MISSING, str(exc) or type(exc).__name__
        return check
    seen = f"IODIRA 0x{iodir[0]:02x}, IODIRB 0x{iodir[1]:02x}, IOCON 0x{iocon:02x}"
    if iodir == (RESET_VALUES[IODIRA], RESET_VALUES[IODIRB]) and iocon == RESET_VALUES[IOCON]:
        check.result = UNEXPECTED
        check.detail = (f"{seen}: the chip was reset since the table set it up (IODIR 0x{IODIR_SET:02x}, "
                        f"IOCON 0x{IOCON_MIRROR:02x}); its buttons give no interrupts until the daemon "
                        "restarts (power, cable?)")
    elif iodir != (IODIR_SET, IODIR_SET):
        check.result = UNEXPECTED
        check.detail = (f"{seen}: not an MCP23017 as the table sets it up (IODIR 0x{IODIR_SET:02x}): "
                        "another device?")
    elif iocon != IOCON_MIRROR:
        check.result = UNEXPECTED
        check.detail = f"{seen}: IOCON is not what the table set (0x{IOCON_MIRROR:02x}): another device?"
    else:
        check.result, check.detail = OK, seen
    return check


def unserved_interrupt(bus: Any, name: str, address: int, interrupt_gpio: int) -> str:
    """Why an expander's button may never arrive: INTFA/INTFB (DS20001952C §3.5.8) flag the pins
    whose change raised the interrupt, and stay set until INTCAP or GPIO is read (§3.6.4),
    which the table does as soon as INT's edge reaches its GPIO. Flags still set long after
    a press: the edge never came (the INTA wire, or its GPIO). Reading INTF clears nothing."""
    try:
        flags = bus.read_byte_data(address, INTFA) | bus.read_byte_data(address, INTFB) << 8
    except OSError as exc:
        return f"expander {name} does not answer now: {exc}"
    if not flags:
        return ""
    pins = ", ".join(f"{'AB'[p // 8]}{p % 8}" for p in range(16) if flags >> p & 1)
    return (f"expander {name} holds an interrupt for {pins} (INTF 0x{flags:04x}) that never reached "
            f"GPIO{interrupt_gpio}: check its INTA wire")


def probe_mux(mux: Any, sharing: Sequence[int], sysfs: Path) -> Check:
    """A TCA9548A's `idle_state` as the kernel runs it. Alone on its bus it may stay on its last
    channel; beside another mux on the same bus it must disconnect after every transfer (-2, the
    overlay's disconnect_on_idle, hardware/README.md), or each keeps a channel open and a screen
    at 0x3C behind one takes the frames meant for the 0x3C behind the other."""
    check = Check(f"mux 0x{mux.address:02x}", f"i2c-{mux.bus}")
    try:
        state = idle_state(mux.bus, mux.address, sysfs)
    except I2CBusMissing as exc:
        check.result, check.detail = MISSING, str(exc)
        return check
    what = {IDLE_AS_IS: "stays on its last channel", IDLE_DISCONNECT: "disconnects after every transfer"}.get(
        state, f"parks on channel {state}")
    seen = f"idle_state {state}: {what}"
    if state == IDLE_DISCONNECT or not sharing:
        check.result = OK
        check.detail = seen + ("" if sharing else " (alone on its bus)")
        return check
    others = ", ".join(f"0x{a:02x}" for a in sharing)
    path = mux_device(mux.bus, mux.address, sysfs) / "idle_state"
    check.result = UNEXPECTED
    line = f"dtoverlay=i2c-mux,pca9548,addr=0x{mux.address:02x},disconnect_on_idle"
    check.detail = (f"{seen}, but it shares i2c-{mux.bus} with the mux at {others}: a screen behind one "
                    "takes the frames for the screen at its address behind the other. config.txt needs "
                    f"`{line}` (install.sh writes it; reboot), which a Raspberry Pi OS kernel has since "
                    f"2024 (update it); until the next boot: echo -2 | sudo tee {path}")
    return check


def screen_frame(seat: int) -> Image.Image:
    """The probe's frame, and the picture the walk asks the builder to confirm: a border on all
    four edges. An SH1106 driven as an SSD1306 (or the reverse) takes every byte and shows it
    wrong: the SSD1306's horizontal addressing means nothing to an SH1106, which writes the whole
    frame into its first page; an SSD1306 shows the SH1106's 132-column frame two pixels to the
    right, its right edge lost. No read-back both datasheets define tells the two apart (neither
    can be read over SPI), so the builder is asked."""
    img = render_banner(f"seat {seat + 1}", "is the border whole?", "slap: yes, alt: no", big="SELF-TEST")
    ImageDraw.Draw(img).rectangle((0, 0, img.width - 1, img.height - 1), outline=1)
    return img


PICTURE = "picture"
"""The walk's last step on a seat whose screen answered: the builder confirms its picture."""
ASK_PICTURE = ("look at its screen: is the border around the test picture whole, on all four edges? "
               "SLAP = yes, ALT = no (garbled, cut off or shifted)")
OTHER_KIND = {"ssd1306": "sh1106", "sh1106": "ssd1306"}
MODULES = {"ssd1306": "0.96-inch modules", "sh1106": "1.3-inch modules"}


def matrix_pattern(size: tuple[int, int], brightness: float, panel: int = 16) -> Image.Image:
    """Each 16x16 panel outlined in its own colour with its number (in chain order: left to
    right, then down, as the controller wires them), and a red pixel at the matrix's top left:
    a panel out of place, turned, or dark is seen at once."""
    img = Image.new("RGB", size, (0, 0, 0))
    draw = ImageDraw.Draw(img)
    across = size[0] // panel
    for y0 in range(0, size[1], panel):
        for x0 in range(0, size[0], panel):
            number = (y0 // panel) * across + x0 // panel
            colour = seat_colour(number + 1)
            draw.rectangle((x0, y0, x0 + panel - 1, y0 + panel - 1), outline=colour)
            draw_centred(img, y0 + (panel - 6) // 2, str(number + 1), fill=(255, 255, 255),
                         x0=x0, x1=x0 + panel)
    img.putpixel((0, 0), (255, 0, 0))
    return cap(img, brightness)


def probe_led(led: Any, size: tuple[int, int], brightness: float) -> list[Check]:
    """The controller's hello (name, protocol, size), then a test pattern it must ack."""
    controller = Check("LED controller", led.path)
    matrix = Check("matrix", f"{size[0]}x{size[1]}")
    until = time.monotonic() + LED_HELLO_WAIT_S
    while not led.stats.online and time.monotonic() < until:
        time.sleep(0.05)
    stats = led.stats
    if not stats.online:
        controller.result = UNEXPECTED if stats.wrong else MISSING
        controller.detail = stats.last_error or "no answer"
        matrix.result, matrix.detail = NOT_TESTED, "no LED controller"
        return [controller, matrix]
    controller.result = OK  # online: its hello said this protocol and the configured size
    controller.detail = (f"{stats.controller}, protocol {stats.protocol}, {size[0]}x{size[1]}, "
                         f"data on GP{stats.data_pin}"
                         + ("" if stats.native else ", CRC and pixel copy as Python loops (slow)"))
    if not stats.firmware_current:  # it plays, but not the firmware this table-host carries
        controller.result = UNEXPECTED
        controller.detail += (f"; its firmware is {stats.firmware}, this table-host carries "
                              f"{stats.firmware_expected}: sudo tablectl firmware flash")
    generation = led.show(matrix_pattern(size, brightness))
    until = time.monotonic() + LED_ACK_WAIT_S
    while led.stats.acked_generation < generation and time.monotonic() < until:
        time.sleep(0.01)
    if led.stats.acked_generation >= generation:
        matrix.result = OK
        matrix.detail = "test pattern acked: panels outlined and numbered, red pixel top left"
    else:
        matrix.result = MISSING
        matrix.detail = (f"the test pattern was not acked in {LED_ACK_WAIT_S:g} s "
                         f"({led.stats.last_error or 'no ack'})")
    return [controller, matrix]


def ask_buzzer(player: Any, buzzer: Any) -> Check:
    """The table's sound player (sounds.py) holds the buzzer's pin: ask it for a tune (its
    "go", one long note on the transducer's resonance, unless the configuration mutes it) and
    wait for the end. Nobody can hear it but the builder: the report asks."""
    from ..table.cues import TUNES, tune_ms

    if buzzer is None:
        return Check("buzzer", "-", NOT_TESTED, "no [buzzer] in the configuration")
    check = Check("buzzer", f"GPIO{buzzer.gpio}")
    if not player.on:
        check.result = MISSING if player.problem else NOT_TESTED
        check.detail = player.problem or "switched off (enabled = false or volume = 0)"
        return check
    name = next((n for n in ("go", *TUNES) if n not in player.muted), None)
    if name is None:
        check.result, check.detail = NOT_TESTED, "every sound is muted ([buzzer] mute)"
        return check
    player.play(name)
    done = player.wait_idle(BEEP_WAIT_S)
    if player.problem:
        check.result, check.detail = MISSING, player.problem
    elif not done:
        check.result, check.detail = UNEXPECTED, f"still playing {name!r} after {BEEP_WAIT_S:g} s"
    else:
        check.result = OK
        check.detail = (f"played {name!r} ({tune_ms(TUNES[name])} ms, duty {player.duty:.0%}): "
                        "did you hear it?")
    return check


# ---------------------------------------------------------------- the self-test


@dataclass
class Step:
    seat: int
    control: str
    check: Check
    expander: str | None = None  # the expander the control is wired to, if any
    strays: list[str] = field(default_factory=list)  # presses of controls already found ok


class SelfTest:
    """One run of the self-test. The daemon's thread calls `on_probed`, `on_input`, `tick`
    and `abort`; the probe runs on its own thread and reports through `wake`."""

    def __init__(self, config: TableConfig, board: Any, oleds: Any, led: Any,
                 wake: Callable[[Any], None], show_seat: Callable[[int, Image.Image], None],
                 seats: Sequence[int] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 probe_only: bool = False, note: Callable[[str], None] = lambda _line: None,
                 buzzer: Any = None) -> None:
        """`buzzer`: the daemon's sound player (sounds.BuzzerPlayer), asked for a tune."""
        wired = len(config.inputs.seats)
        seats = list(range(wired)) if seats is None else list(dict.fromkeys(seats))
        for seat in seats:
            if not 0 <= seat < wired:
                raise ValueError(f"seat {seat + 1} is not wired (this table has seats 1 to {wired})")
        if not 0 < timeout_s <= SELFTEST_MAX_TIMEOUT_S:
            raise ValueError(f"timeout_s must be above 0 and at most {SELFTEST_MAX_TIMEOUT_S:g} seconds")
        self.config, self.board, self.oleds, self.led = config, board, oleds, led
        self.wake, self.show_seat, self.note = wake, show_seat, note
        self.buzzer = buzzer
        self.seats, self.timeout_ns, self.probe_only = seats, round(timeout_s * S), probe_only
        self.state = "probing"
        self.parts: list[Check] = []
        self.walk: list[Step] = []
        self.log: list[str] = []
        self._step = 0
        self._step_due = 0
        self._redraw_at = 0
        self._abort_asked = ""
        self._last_word: dict[int, str] = {}
        self._expanders = {e.name: e for e in config.inputs.expanders}
        self._lock = threading.Lock()

    # ------------------------------------------------------------ probing (its own thread)

    def start(self) -> None:
        self._say("self-test: probing the parts")
        threading.Thread(target=self._probe, name="selftest-probe", daemon=True).start()

    def _probe(self) -> None:
        join_the_rest()  # started by the game thread: beside it, like the daemon's others
        try:
            self._found(Check("GPIO chip", self.board.describe(), OK, "opened"))
            for spec in self.config.inputs.expanders:
                self._found(probe_expander(self.board.i2c(spec.bus), spec.name, spec.bus, spec.address))
            sysfs = getattr(self.board, "sysfs", None)
            for mux in self.config.i2c_muxes if sysfs is not None else ():  # an emulated board has none
                sharing = [m.address for m in self.config.i2c_muxes if m.bus == mux.bus and m is not mux]
                self._found(probe_mux(mux, sharing, sysfs))
            specs = specs_for(list(self.config.screens))
            answers = self.oleds.probe({s.seat: screen_frame(s.seat) for s in specs}, SCREEN_TIMEOUT_S)
            for spec in specs:
                problem = answers.get(spec.seat, "no screen worker")
                self._found(Check(f"seat {spec.seat + 1} screen", f"{spec.bus}, 0x{spec.address:02x}",
                                  MISSING if problem else OK,
                                  problem or f"{spec.kind}: a frame went through (whether it shows right, "
                                             "only the builder sees: the walk asks)"))
            centre = self.config.centre
            for check in probe_led(self.led, (centre.width, centre.height), centre.brightness):
                self._found(check)
            if self.buzzer is not None:
                self._found(ask_buzzer(self.buzzer, self.config.buzzer))
        except Exception as exc:  # a probe that breaks must end the test, not hang it
            self._found(Check("self-test", "probe", UNEXPECTED, f"{type(exc).__name__}: {exc}"))
        self.wake(Probed())

    def _found(self, check: Check) -> None:
        with self._lock:
            self.parts.append(check)
        self._say(check.line())

    # ------------------------------------------------------------ the walk (the daemon's thread)

    def on_probed(self, now: int) -> None:
        if self._abort_asked:
            self._finish("aborted", self._abort_asked)
            return
        if self.probe_only:
            self._finish("done")
            return
        down = {c.part.removeprefix("expander "): c for c in self.parts
                if c.part.startswith("expander ") and c.result != OK}
        screens = {c.part: c for c in self.parts if c.part.endswith(" screen")}
        for seat in self.seats:
            for control, line in self.config.inputs.seats[seat].lines().items():
                check = Check(f"seat {seat + 1} {control}", line.key())
                chip = down.get(str(line.expander)) if line.expander is not None else None
                if chip is not None:
                    check.result, check.detail = NOT_TESTED, f"expander {line.expander} is {chip.result}"
                self.walk.append(Step(seat, control, check, line.expander))
            screen = screens.get(f"seat {seat + 1} screen")
            if screen is not None and screen.result == OK:  # it took a frame: does it show it right?
                where = f"{self.config.screens[seat].kind}, {screen.where}"
                self.walk.append(Step(seat, PICTURE, Check(f"seat {seat + 1} {PICTURE}", where)))
        self.state = "walking"
        self._say("self-test: walking the seats " + ", ".join(str(s + 1) for s in self.seats)
                  + f" ({self.timeout_ns / S:g} s a control; hold a slap {self.config.inputs.stuck_s:g} s "
                    "or tablectl selftest --abort to stop)")
        self._step = -1
        self._next(now)

    def _current(self) -> Step | None:
        return self.walk[self._step] if 0 <= self._step < len(self.walk) else None

    def _next(self, now: int) -> None:
        self._step += 1
        while (step := self._current()) is not None and step.check.result != WAITING:
            self._say(step.check.line())
            self._step += 1
        if step is None:
            self._finish("done")
            return
        self._step_due = now + self.timeout_ns
        if step.control == PICTURE:
            self._say(f"seat {step.seat + 1}: {ASK_PICTURE} ({step.check.where})")
        else:
            self._say(f"seat {step.seat + 1}: press {step.control.upper()} ({step.check.where})")
        self._draw(now)

    def on_input(self, event: InputEvent, now: int) -> None:
        if event.seat < 0:  # an expander fault or recovery
            self._say(f"during the self-test: {event.detail}")
            return
        if event.kind is Event.STUCK and event.control == "slap":
            self.abort(f"seat {event.seat + 1}'s slap held down", now)
            return
        step = self._current()
        if self.state != "walking" or step is None or event.kind not in (Event.PRESS, Event.FALSE_START):
            return
        came = f"seat {event.seat + 1}'s {event.control}"
        if step.control == PICTURE:
            if event.seat != step.seat:
                return  # another seat's press says nothing about this screen
            self._picture(step, event.control == "slap")
            self._say(step.check.line())
            self._next(now)
            return
        if (event.seat, event.control) == (step.seat, step.control):
            step.check.result = OK
            self._last_word[step.seat] = f"{step.control} ok"
        elif any(s.check.result == OK and (s.seat, s.control) == (event.seat, event.control)
                 for s in self.walk):
            step.strays.append(came)  # a slip of the finger, or the wire: the timeout tells
            return
        else:
            step.check.result = MISWIRED
            step.check.detail = f"arrived as {came}"
            self._last_word[step.seat] = f"{step.control}: got {came}"
        self._say(step.check.line())
        self._next(now)

    def _picture(self, step: Step, whole: bool) -> None:
        """The builder's answer about a seat's test picture."""
        kind = self.config.screens[step.seat].kind
        if whole:
            step.check.result, step.check.detail = OK, "the builder saw the border whole"
            self._last_word[step.seat] = "picture ok"
            return
        other = OTHER_KIND[kind]
        step.check.result = UNEXPECTED
        step.check.detail = (f"the builder saw it garbled or cut off. Driven as {kind}: {MODULES[other]} "
                             f"usually carry an {other.upper()} ({MODULES[kind]} an {kind.upper()}): "
                             f"sudo tablectl config set screens.{step.seat + 1}.kind '\"{other}\"' and run "
                             "the self-test again")
        self._last_word[step.seat] = f"picture: not {kind}?"

    def deadline(self) -> int | None:
        """The current control's timeout, or the next second of its countdown on the screen."""
        if self.state != "walking" or self._current() is None:
            return None
        return min(self._step_due, self._redraw_at)

    def tick(self, now: int) -> None:
        step = self._current()
        if self.state != "walking" or step is None:
            return
        if now >= self._step_due:
            step.check.result = NOT_PRESSED
            step.check.detail = f"nothing in {self.timeout_ns / S:g} s"
            if step.control == PICTURE:
                step.check.detail += "; not confirmed (SLAP if its border is whole, ALT if not)"
            if step.expander is not None:
                spec = self._expanders[step.expander]
                why = unserved_interrupt(self.board.i2c(spec.bus), spec.name, spec.address,
                                         spec.interrupt_gpio)
                step.check.detail += f"; {why}" if why else ""
            if step.strays:
                step.check.detail += f"; meanwhile {', '.join(dict.fromkeys(step.strays))} (tested ok before)"
            self._last_word[step.seat] = f"{step.control} not pressed"
            self._say(step.check.line())
            self._next(now)
        elif now >= self._redraw_at:
            self._draw(now)

    def abort(self, why: str, now: int) -> None:
        if self.state == "probing":
            self._abort_asked = why  # the probe thread is out on the buses: end when it is back
            self._say(f"self-test: aborting ({why}) once the probe is done")
            return
        if self.active:
            self._finish("aborted", why)

    def _finish(self, state: str, why: str = "") -> None:
        for step in self.walk:
            if step.check.result == WAITING:
                step.check.result = NOT_TESTED
                step.check.detail = "aborted"
        self.state = state
        if why:
            self._say(f"self-test aborted: {why}")
        problems = self.problems()
        self._say(f"self-test {state}: "
                  + (f"{len(problems)} problem(s)" if problems else "everything answered"))

    @property
    def active(self) -> bool:
        return self.state in ("probing", "walking")

    # ------------------------------------------------------------ the screens

    def _draw(self, now: int) -> None:
        step = self._current()
        if step is None:
            return
        left = max(1, -(-(self._step_due - now) // S))
        self._redraw_at = self._step_due - (left - 1) * S  # when the seconds shown change
        for seat in range(len(self.config.inputs.seats)):
            if seat == step.seat and step.control == PICTURE:
                frame = screen_frame(seat)  # the picture itself: nothing drawn over it
            elif seat == step.seat:
                mine = [s for s in self.walk if s.seat == seat]
                number = mine.index(step) + 1
                frame = render_banner(f"seat {seat + 1}: press", f"{number} of {len(mine)}   {left} s",
                                      self._last_word.get(seat, ""), big=step.control.upper())
            elif seat in self.seats:
                frame = render_banner(f"seat {seat + 1}", f"now testing seat {step.seat + 1}",
                                      self._seat_summary(seat), big="SELF-TEST")
            else:
                frame = render_banner(f"seat {seat + 1}", "skipped", big="SELF-TEST")
            self.show_seat(seat, frame)

    def _seat_summary(self, seat: int) -> str:
        mine = [s.check for s in self.walk if s.seat == seat]
        if any(c.result == WAITING for c in mine):
            return "waiting"
        bad = [c for c in mine if c.result != OK]
        return f"{len(bad)} problem(s)" if bad else "all ok"

    # ------------------------------------------------------------ the report

    def _say(self, line: str) -> None:
        with self._lock:
            self.log.append(line)
        self.note(line)

    def problems(self) -> list[str]:
        with self._lock:
            checks = [*self.parts, *(s.check for s in self.walk)]
        return [c.line() for c in checks if c.result in PROBLEMS]

    def prompt(self) -> str:
        step = self._current()
        if self.state != "walking" or step is None:
            return ""
        if step.control == PICTURE:
            return f"seat {step.seat + 1}: {ASK_PICTURE}"
        return f"seat {step.seat + 1}: press {step.control.upper()}"

    def report(self) -> dict[str, Any]:
        with self._lock:
            parts = [c.as_dict() for c in self.parts]
            log = list(self.log)
        seats = [{"seat": seat + 1, "controls": [s.check.as_dict() for s in self.walk if s.seat == seat]}
                 for seat in self.seats] if self.walk else []
        problems = self.problems()
        return {"state": self.state, "passed": not self.active and not problems and self.state == "done",
                "probe_only": self.probe_only, "prompt": self.prompt(), "parts": parts, "seats": seats,
                "problems": problems, "log": log}


class SelfTests:
    """`tablectl selftest` in the service: starts a test between matches, takes every press
    while it walks (the table waits), ticks on its timer, and holds back start, new and next."""

    def __init__(self, loop: Loop, daemon: Any, screens: Screens) -> None:
        """`daemon`: its config, board, oleds, led and buzzer are what the test probes."""
        self.loop, self.daemon, self.screens = loop, daemon, screens
        self.test: SelfTest | None = None  # the running or last self-test
        self._timer = loop.register_timer(self.tick)
        loop.on(InputEvent, self.on_input, first=True)
        loop.on(Probed, self.on_probed)

    @property
    def active(self) -> bool:
        return self.test is not None and self.test.active

    def state(self) -> str | None:
        """The running test's state, None when none runs."""
        return self.test.state if self.test is not None and self.test.active else None

    def register(self, commands: Commands) -> None:
        commands.register("selftest", self.start, action="start")
        commands.register("selftest", self.abort, action="abort")
        commands.register("selftest", self.status, action="status")
        commands.refuse_while(("start", "new", "next"), lambda: "the self-test is running: wait for its "
                              "report or tablectl selftest --abort" if self.active else None)

    def on_input(self, event: InputEvent, now: int) -> bool:
        if not self.active:
            return False
        assert self.test is not None
        self.test.on_input(event, now)  # the walk takes every press; the table waits
        self._rearm()
        return True

    def on_probed(self, _event: Probed, now: int) -> None:
        if self.test is not None:
            self.test.on_probed(now)
            self._rearm()

    def tick(self, now: int) -> int | None:
        if self.test is None:
            return None
        self.test.tick(now)
        return self.test.deadline()

    def _rearm(self) -> None:
        self.loop.update_timer(self._timer, self.test.deadline() if self.test is not None else None)

    def start(self, call: Call) -> dict[str, Any]:
        """Between matches only."""
        if self.active:
            raise ValueError("a self-test is running already: tablectl selftest --abort stops it")
        table = self.daemon.table
        if table.phase in (Phase.COUNTDOWN, Phase.PLAYING, Phase.ROUND_RESULT):
            raise ValueError(f"a match is running ({table.phase}): the self-test runs between "
                             "matches; let it end or tablectl abort")
        seats = call.get("seats")
        if seats is not None and not (isinstance(seats, list) and all(isinstance(s, int) for s in seats)):
            raise ValueError("seats must be a list of seat numbers, e.g. [1, 3]")
        timeout = call.get("timeout_s", DEFAULT_TIMEOUT_S)
        if not isinstance(timeout, int | float):
            raise ValueError("timeout_s must be a number of seconds")
        d = self.daemon
        test = SelfTest(d.config, d.board, d.oleds, d.led, self.loop.put, self.screens.show_test_frame,
                        None if seats is None else [s - 1 for s in seats], float(timeout),
                        bool(call.get("probe_only")), note=logger("selftest").info, buzzer=d.buzzer)
        self.test = test
        centre = d.config.centre
        self.screens.phase_centre = matrix_pattern((centre.width, centre.height), centre.brightness)
        test.start()
        self._rearm()
        return {"selftest": test.report()}

    def abort(self, call: Call) -> dict[str, Any]:
        if self.test is None or not self.test.active:
            raise ValueError("no self-test is running")
        self.test.abort("tablectl selftest --abort", call.now)
        self._rearm()
        return {"selftest": self.test.report()}

    def status(self, _call: Call) -> dict[str, Any]:
        if self.test is None:
            raise ValueError("no self-test since the daemon started: tablectl selftest runs one")
        return {"selftest": self.test.report()}
