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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PIL import Image

from ..config import TableConfig
from ..control.protocol import SELFTEST_MAX_TIMEOUT_S
from ..devices.displays.ledlink import matrix_pattern
from ..devices.displays.oled import screen_frame
from ..devices.i2cmux import probe_mux
from ..devices.inputs.mcp23017 import probe_expander, unserved_interrupt
from ..devices.parts import (
    MISSING,
    MISWIRED,
    NOT_PRESSED,
    NOT_TESTED,
    OK,
    PROBLEMS,
    UNEXPECTED,
    WAITING,
    Check,
    Parts,
)
from ..system.logs import logger
from ..system.realtime import join_the_rest
from ..table.machine import Phase, Table
from ..table.presses import Event, InputEvent
from ..views.seat import render_banner
from .events import Probed
from .registry import Call, Commands

if TYPE_CHECKING:
    from .configuration import Configuration
    from .loop import Loop
    from .screen_feed import Screens

__all__ = ["MISSING", "MISWIRED", "NOT_PRESSED", "NOT_TESTED", "OK", "PROBLEMS", "UNEXPECTED", "WAITING",
           "Check", "SelfTest", "SelfTests", "matrix_pattern", "probe_expander", "probe_mux", "screen_frame",
           "unserved_interrupt"]

S = 1_000_000_000
DEFAULT_TIMEOUT_S = 10.0

PICTURE = "picture"
"""The walk's last step on a seat whose screen answered: the builder confirms its picture."""
ASK_PICTURE = ("look at its screen: is the border around the test picture whole, on all four edges? "
               "SLAP = yes, ALT = no (garbled, cut off or shifted)")
OTHER_KIND = {"ssd1306": "sh1106", "sh1106": "ssd1306"}
MODULES = {"ssd1306": "0.96-inch modules", "sh1106": "1.3-inch modules"}


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

    def __init__(self, config: TableConfig, parts: Parts, wake: Callable[[Any], None],
                 show_seat: Callable[[int, Image.Image], None], seats: Sequence[int] | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, probe_only: bool = False,
                 note: Callable[[str], None] = lambda _line: None) -> None:
        """`parts`: what the probe goes round (devices/parts.py: each part probes itself)."""
        wired = len(config.inputs.seats)
        seats = list(range(wired)) if seats is None else list(dict.fromkeys(seats))
        for seat in seats:
            if not 0 <= seat < wired:
                raise ValueError(f"seat {seat + 1} is not wired (this table has seats 1 to {wired})")
        if not 0 < timeout_s <= SELFTEST_MAX_TIMEOUT_S:
            raise ValueError(f"timeout_s must be above 0 and at most {SELFTEST_MAX_TIMEOUT_S:g} seconds")
        self.config, self.devices = config, parts
        self.wake, self.show_seat, self.note = wake, show_seat, note
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
        self._lock = threading.Lock()

    # ------------------------------------------------------------ probing (its own thread)

    def start(self) -> None:
        self._say("self-test: probing the parts")
        threading.Thread(target=self._probe, name="selftest-probe", daemon=True).start()

    def _probe(self) -> None:
        join_the_rest()  # started by the game thread: beside it, like the daemon's others
        try:
            self.devices.probe(self.config, self._found)
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
                why = self.devices.why_silent(step.expander)
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

    def __init__(self, loop: Loop, table: Table, parts: Parts, configuration: Configuration,
                 screens: Screens) -> None:
        """`parts`: what the test probes; the walk follows the running configuration's wiring and
        draws on the seats through `screens`, which it holds while it runs."""
        self.loop, self.table, self.parts = loop, table, parts
        self.configuration, self.screens = configuration, screens
        self.test: SelfTest | None = None  # the running or last self-test
        self._timer = loop.register_timer(self.tick)
        loop.on(InputEvent, self.on_input, at="selftest")
        loop.on(Probed, self.on_probed)
        screens.held_by(self)

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
        table = self.table
        if table.phase in (Phase.COUNTDOWN, Phase.PLAYING, Phase.ROUND_RESULT):
            raise ValueError(f"a match is running ({table.phase}): the self-test runs between "
                             "matches; let it end or tablectl abort")
        seats = call.get("seats")
        if seats is not None and not (isinstance(seats, list) and all(isinstance(s, int) for s in seats)):
            raise ValueError("seats must be a list of seat numbers, e.g. [1, 3]")
        timeout = call.get("timeout_s", DEFAULT_TIMEOUT_S)
        if not isinstance(timeout, int | float):
            raise ValueError("timeout_s must be a number of seconds")
        config = self.configuration.config
        test = SelfTest(config, self.parts, self.loop.put, self.screens.show_test_frame,
                        None if seats is None else [s - 1 for s in seats], float(timeout),
                        bool(call.get("probe_only")), note=logger("selftest").info)
        self.test = test
        centre = config.centre
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
