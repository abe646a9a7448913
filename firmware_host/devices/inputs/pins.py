"""Seat buttons on gpiozero pins: the same code on a Pi (lgpio) and in emulation (mock pins).

On a Pi the lgpio pin factory hands `when_changed(ticks, state)` the kernel's
hard-IRQ timestamp of the edge (CLOCK_MONOTONIC, in seconds); that is the
press's time, never the moment the callback happened to run. In emulation
`devices/emulated/pins.py`'s `TimedMockPin` lets a test, a keyboard seat or a bot choose that
timestamp, and everything after the pin runs exactly as on the Pi.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from functools import partial
from time import monotonic_ns
from typing import TYPE_CHECKING, Any

from ...config import InputsConfig, pin_index
from ...table.presses import ARBITRATED, Event, InputEvent, LineFilter, StartGate
from ..parts import Check, Part, Timers
from .mcp23017 import MCP23017, Bus, probe_expander, unserved_interrupt

if TYPE_CHECKING:
    from ...config import TableConfig

SPIKE_REPORT_NS = 1_000_000_000
"""A line's spikes reach the table at most once this often (a noisy line must not flood the loop);
the event's detail counts those in between."""
RETRY_FIRST_NS = 100_000_000
RETRY_MAX_NS = 2_000_000_000
STUCK_INT_ROUNDS = 3  # reads in a row that find nothing while INT stays low: a fault


def ticks_to_ns(ticks: float) -> int:
    return round(ticks * 1e9)


class TableInputs(Part):
    """Every seat's buttons, from configuration to clean, timestamped events.

    Events go to `sink` from whichever thread delivered the edge (lgpio's
    callback thread on a Pi): the sink must be thread-safe, a queue in the table.
    Nothing here polls: stuck buttons are found at `next_deadline()` by `tick`.
    """

    def __init__(self, config: InputsConfig, factory: Any, buses: Mapping[int, Bus],
                 sink: Callable[[InputEvent], None], clock: Callable[[], int] = monotonic_ns,
                 wake: Callable[[], None] | None = None) -> None:
        """`clock`: CLOCK_MONOTONIC, the kernel stamps' clock (a test passes its own). `wake`: tells
        the caller's loop that `next_deadline()` came earlier though no event was sunk (a press
        now waits for its minimum time), so it sets its timer anew instead of sleeping on."""
        self.config = config
        self.sink = sink
        self.clock = clock
        self.wake = wake
        self.gate = StartGate(int(config.false_start_lockout_ms * 1e6))
        self._lock = threading.Lock()
        self._filters: dict[tuple[int, str], LineFilter] = {}
        self._pins: list[Any] = []
        self._callbacks: list[Callable[[float, int], None]] = []
        """gpiozero holds `when_changed` only weakly: these keep ours alive."""
        self._chips: dict[str, MCP23017] = {}
        self._chip_lines: dict[str, dict[int, tuple[int, str]]] = {}
        self._chip_ok: dict[str, bool] = {}  # absent until the chip was first set up
        self._chip_retry: dict[str, tuple[int, int]] = {}  # name -> (when, backoff)
        self._chip_int: dict[str, tuple[int, Any]] = {}  # name -> (GPIO, its interrupt pin)
        self._chip_guard = threading.Lock()
        self._chip_busy: set[str] = set()
        self._chip_asked: dict[str, int] = {}  # an edge that came while the chip was being read
        self._line_pins: dict[tuple[int, str], Any] = {}  # the GPIO lines: read when a press waits
        self._spikes_told: dict[tuple[int, str], tuple[int, int]] = {}  # (when, count) told last
        debounce, stuck = int(config.debounce_ms * 1e6), int(config.stuck_s * 1e9)
        min_press = int(config.min_press_us * 1e3)
        now = clock()
        for seat, wiring in enumerate(config.seats):
            for control, line in wiring.lines().items():
                # The minimum press is the GPIO lines' (the slaps): their edges come straight from
                # the wire. An expander reports what it latched, read after its interrupt.
                flt = LineFilter(debounce, stuck, min_press if line.gpio is not None else 0)
                self._filters[(seat, control)] = flt
                if line.gpio is not None:
                    pin = self._input_pin(factory, line.gpio, "both")
                    self._line_pins[(seat, control)] = pin
                    flt.start(not pin.state, now)
                    self._listen(pin, partial(self._gpio_edge, seat, control))
                else:
                    self._chip_lines.setdefault(str(line.expander), {})[pin_index(str(line.pin))] = (
                        seat, control)
        for spec in config.expanders:
            lines = self._chip_lines.get(spec.name, {})
            self._chips[spec.name] = MCP23017(buses[spec.bus], spec.address, list(lines))
            # Armed before setup clears the chip: an edge after that clear and before arming
            # would leave INT low for good, and a falling-edge alert never fires again.
            int_pin = self._input_pin(factory, spec.interrupt_gpio, "falling")
            self._chip_int[spec.name] = (spec.interrupt_gpio, int_pin)
            self._listen(int_pin, partial(self._interrupt, spec.name))
            self._service(spec.name, now)

    def _listen(self, pin: Any, callback: Callable[[float, int], None]) -> None:
        self._callbacks.append(callback)
        pin.when_changed = callback

    def _input_pin(self, factory: Any, gpio: int, edges: str) -> Any:
        pin = factory.pin(gpio)
        pin.function = "input"
        pin.pull = "up"
        pin.bounce = None  # debounce is ours: the kernel's would hide the first contact's time
        pin.edges = edges
        self._pins.append(pin)
        return pin

    def _setup_chip(self, name: str, now: int) -> None:
        try:
            self._chips[name].setup()
        except OSError as exc:
            self._chip_failed(name, now, exc)
            return
        self._chip_ok[name] = True
        levels = self._chips[name].levels()
        for p, (seat, control) in self._chip_lines.get(name, {}).items():
            self._filters[(seat, control)].start(not levels >> p & 1, now)

    def _chip_failed(self, name: str, now: int, exc: OSError) -> None:
        """Report once, then retry with backoff: a failed read leaves the chip's interrupt
        line low, so no new edge will come to wake us."""
        _, backoff = self._chip_retry.get(name, (0, RETRY_FIRST_NS // 2))
        backoff = min(backoff * 2, RETRY_MAX_NS)
        if self._chip_ok.get(name, True):
            self.sink(InputEvent("fault", -1, name, now, f"expander {name}: {exc}"))
        self._chip_ok[name] = False
        self._chip_retry[name] = (now + backoff, backoff)

    def _recover(self, name: str, now: int) -> None:
        """Set the chip up again; buttons that changed meanwhile count from `now`."""
        before = {key: self._filters[key].down for key in self._chip_lines.get(name, {}).values()}
        try:
            self._chips[name].setup()
            if self._int_stuck(name):  # a change just after setup's read is no fault: INTF says so
                raise OSError(self._stuck_message(name))
        except OSError as exc:
            self._chip_failed(name, now, exc)
            return
        self._chip_ok[name] = True
        del self._chip_retry[name]
        self.sink(InputEvent("recovered", -1, name, now, f"expander {name} is back"))
        levels = self._chips[name].levels()
        for p, (seat, control) in self._chip_lines.get(name, {}).items():
            down = not levels >> p & 1
            if down != before[(seat, control)]:
                self._edge(seat, control, down, now)

    # ------------------------------------------------------------ edges

    def _gpio_edge(self, seat: int, control: str, ticks: float, state: int) -> None:
        self._edge(seat, control, not state, ticks_to_ns(ticks))

    def _interrupt(self, name: str, ticks: float, state: int) -> None:
        self._service(name, ticks_to_ns(ticks))

    def _service(self, name: str, ts: int) -> None:
        """Set up, recover or read the chip, then again while its INT line is low.

        One thread reads a chip at a time; an edge that comes meanwhile (lgpio's
        thread, or this one re-entered from a mock pin) is left to that reader, which
        looks again before it lets go. A line still low after a read means a change
        came during the read (its edge may be gone); a line that stays low with
        nothing latched is a fault, retried like a chip that does not answer.
        """
        with self._chip_guard:
            if name in self._chip_busy:
                self._chip_asked.setdefault(name, ts)
                return
            self._chip_busy.add(name)
        idle, first_ts = 0, ts
        try:
            while True:
                if name not in self._chip_ok:
                    self._setup_chip(name, ts)
                elif not self._chip_ok[name]:
                    self._recover(name, ts)
                elif self._read_chip(name, ts):
                    idle = 0
                else:
                    idle += 1
                with self._chip_guard:
                    asked = self._chip_asked.pop(name, None)
                    low = self._chip_ok.get(name, False) and not self._chip_int[name][1].state
                    if asked is None and not low:
                        self._chip_busy.discard(name)
                        return
                if asked is None and idle >= STUCK_INT_ROUNDS:
                    self._chip_failed(name, first_ts, OSError(self._stuck_message(name)))
                    with self._chip_guard:  # the retry timer takes it from here
                        self._chip_asked.pop(name, None)
                        self._chip_busy.discard(name)
                    return
                # Low with no edge: the change came after the last read, so it is from now.
                ts = asked if asked is not None else self.clock()
        except BaseException:
            with self._chip_guard:
                self._chip_busy.discard(name)
            raise

    def _int_stuck(self, name: str) -> bool:
        """Is INT low while neither port has an interrupt latched? Then it is not the chip
        pulling it (DS20001952C §3.6.1: INT is active only while a port is pending)."""
        pin = self._chip_int[name][1]
        return not pin.state and not self._chips[name].flags() and not pin.state

    def _stuck_message(self, name: str) -> str:
        return f"its interrupt line GPIO{self._chip_int[name][0]} stays low with nothing latched"

    def _read_chip(self, name: str, ts: int) -> bool:
        """One interrupt service; False if the chip had nothing latched and nothing changed."""
        try:
            flags, changes = self._chips[name].on_interrupt()
        except OSError as exc:
            self._chip_failed(name, ts, exc)
            return True
        lines = self._chip_lines.get(name, {})
        for pin, pressed in changes:
            if pin in lines:
                seat, control = lines[pin]
                self._edge(seat, control, pressed, ts)  # stamped with the interrupt's edge
        return bool(flags or changes)

    def _edge(self, seat: int, control: str, down: bool, ts: int) -> None:
        with self._lock:
            flt = self._filters[(seat, control)]
            found = [self._gated(seat, control, *settled)] if (settled := flt.settle(ts, edge=True)) else []
            pending, spikes = flt.pending, flt.spikes
            if (confirmed := flt.confirm(ts, down, edge=True)) is not None:
                found.append(self._gated(seat, control, *confirmed))
            found += self._spiked(seat, control, flt, pending, spikes, ts)
            event = flt.edge(down, ts)
            if event is not None:
                found.append(self._gated(seat, control, event, ts))
            if flt.pending is not None:  # delivered late: its minimum time may be over already
                found += self._confirm(seat, control, flt, self.clock())
            waits = flt.pending is not None and flt.pending != pending  # a press now waits its minimum
        for item in found:
            self.sink(item)
        if waits and not found and self.wake is not None:
            self.wake()

    def _confirm(self, seat: int, control: str, flt: LineFilter, now: int) -> list[InputEvent]:
        """The clock's look at a waiting press, once its minimum time may be over: is its line
        still down? (Under the lock.)"""
        due = flt.confirm_due()
        if due is None or now < due:
            return []
        pending, spikes = flt.pending, flt.spikes
        confirmed = flt.confirm(now, not self._line_pins[(seat, control)].state)
        if confirmed is not None:
            return [self._gated(seat, control, *confirmed)]
        return self._spiked(seat, control, flt, pending, spikes, now)

    def _spiked(self, seat: int, control: str, flt: LineFilter, pending: int | None, before: int,
                now: int) -> list[InputEvent]:
        """A contact just dropped as too short: told to the table (its trace, `tablectl inputs`)
        with its first edge's stamp, at most once per SPIKE_REPORT_NS a line. (Under the lock.)"""
        if flt.spikes == before or pending is None:
            return []
        told, count = self._spikes_told.get((seat, control), (-(1 << 62), 0))
        if now - told < SPIKE_REPORT_NS:
            return []
        self._spikes_told[(seat, control)] = (now, flt.spikes)
        shorter = f"shorter than {flt.min_press_ns / 1e3:g} µs"
        detail = f"{flt.spikes - count} contacts {shorter} since the last told" if flt.spikes - count > 1 \
            else f"a contact {shorter}"
        return [InputEvent(Event.SPIKE, seat, control, pending, detail)]

    def _gated(self, seat: int, control: str, event: Event, ts: int) -> InputEvent:
        """A press of an arbitrated control passes the start gate (false starts); under the lock."""
        if event is Event.PRESS and control in ARBITRATED:
            event = self.gate.admit(seat, ts) or event
        return InputEvent(event, seat, control, ts)

    name = "seat inputs"

    def start(self, timers: Timers) -> None:
        """Stuck buttons and expanders to retry on a timer of their own, set again after each
        turn of the loop (an edge from lgpio's thread may have moved it)."""
        def tick(now: int) -> int | None:
            self.tick(now)
            return self.next_deadline()

        timer = timers.register_timer(tick)
        timers.after_each(lambda _now: timers.update_timer(timer, self.next_deadline()))

    def missing(self) -> list[str]:
        return [f"expander {name}" for name in self.expanders_down()]

    def probe(self, config: TableConfig) -> list[Check]:
        """Each expander's registers, read as the table set them up."""
        return [probe_expander(self._chips[spec.name].bus, spec.name, spec.bus, spec.address)
                for spec in self.config.expanders]

    def why_silent(self, expander: str) -> str:
        """An interrupt the expander holds that never reached its GPIO ("": none, or not ours)."""
        spec = next((e for e in self.config.expanders if e.name == expander), None)
        if spec is None:
            return ""
        return unserved_interrupt(self._chips[expander].bus, spec.name, spec.address, spec.interrupt_gpio)

    def expanders_down(self) -> list[str]:
        """The expanders that do not answer now (their seats' navigation is out until they do)."""
        return [name for name, ok in self._chip_ok.items() if not ok]

    # ------------------------------------------------------------ timers

    def next_deadline(self) -> int | None:
        """When `tick` next has something to check (a button that may become stuck)."""
        with self._lock:
            dues = [d for f in self._filters.values()
                    for d in (f.stuck_due(), f.settle_due(), f.confirm_due()) if d is not None]
        dues += [when for when, _ in self._chip_retry.values()]
        return min(dues, default=None)

    def tick(self, now: int) -> None:
        found = []
        with self._lock:
            for (seat, control), flt in self._filters.items():
                if flt.pending is not None:
                    found += self._confirm(seat, control, flt, now)
                settled = flt.settle(now)
                if settled is not None:
                    found.append(self._gated(seat, control, *settled))
                if flt.check(now) is Event.STUCK:
                    found.append(InputEvent(Event.STUCK, seat, control, now))
        for event in found:
            self.sink(event)
        for name, (when, _) in list(self._chip_retry.items()):
            if now >= when:
                self._service(name, now)

    def close(self) -> None:
        for pin in self._pins:
            pin.when_changed = None
            pin.close()
        self._pins.clear()
