"""Emulated seat buttons: gpiozero mock pins whose edges carry a chosen timestamp, and the
buttons and expanders behind them (as gpiozero keeps its own mock pins in `pins/mock.py`).

On a Pi the lgpio pin factory hands `when_changed(ticks, state)` the kernel's hard-IRQ timestamp
of the edge; `TimedMockPin` lets a test, a keyboard seat or a bot choose that timestamp, so
everything after the pin (devices/inputs/pins.py) runs exactly as on the Pi.
"""

from __future__ import annotations

import heapq
from functools import partial
from time import monotonic_ns
from typing import Any

from gpiozero.exc import PinInvalidState
from gpiozero.pins.mock import MockFactory, MockPin, MockPWMPin, PinState

from ...config import InputsConfig, pin_index
from ...system.recent import Recent
from .mcp23017 import EmulatedBus, EmulatedMCP23017

HISTORY = 100
"""Edges and PWM settings an emulated pin remembers (the newest)."""
PWM_HZ = (0.1, 10_000.0)
"""lgpio's software PWM range (lgpio.h, lgTxPwm: "PWM frequency in Hz (0=off, 0.1-10000)")."""


class TimedMockPin(MockPWMPin):
    """A mock pin whose edges carry the timestamp (ns) the caller gives, as the kernel's do.

    Like a Pi's line under lgpio it can also be a software PWM output (any GPIO can, lgpio.h
    lgTxPwm): `pwm` records each (frequency Hz, duty %) lgpio would be handed, as gpiozero's
    LGPIOPin hands it (gpiozero/pins/lgpio.py: `tx_pwm(handle, gpio, freq, int(value * 100))`,
    so the duty is a whole percent, cut down, not rounded); (0, 0) is PWM stopped. A frequency
    lgpio would refuse (LG_BAD_PWM_FREQ) is refused here too.

    `states` (gpiozero's history of the pin's levels) and `pwm` keep the newest `HISTORY`
    entries only (and `states` its first): the daemon runs on these pins for days."""

    _at: float | None = None

    def __init__(self, factory: Any, info: Any) -> None:
        super().__init__(factory, info)
        self.pwm: list[tuple[float, int]] = Recent(keep=HISTORY)

    def clear_states(self) -> None:
        self._last_change = monotonic_ns() / 1e9
        self.states = Recent([PinState(0.0, self._state)], keep=HISTORY, head=1)

    def _set_frequency(self, value: float | None) -> None:
        running = self._frequency is not None
        if value is not None and value > 0:
            if not PWM_HZ[0] <= value <= PWM_HZ[1]:
                raise PinInvalidState(f"bad PWM frequency ({value} Hz): lgpio takes "
                                      f"{PWM_HZ[0]:g} to {PWM_HZ[1]:g} Hz")
            super()._set_frequency(value)
            if not running:  # LGPIOPin starts PWM at duty 0: tx_pwm(handle, gpio, freq, 0)
                self._change_state(0.0)
            self.pwm.append((value, self._duty()))
        elif running:
            super()._set_frequency(None)
            self.pwm.append((0, 0))

    def _set_state(self, value: float) -> None:
        super()._set_state(value)
        if self._frequency is not None:
            self.pwm.append((self._frequency, self._duty()))

    def _duty(self) -> int:
        return int(float(self._state) * 100)

    def close(self) -> None:
        if self._frequency is not None:  # an input line closing is no edge (MockPWMPin would drive it low)
            self.frequency = None
        MockPin.close(self)

    def set_level(self, high: bool, at_ns: int) -> None:
        self._at = at_ns / 1e9
        try:
            if high:
                self.drive_high()
            else:
                self.drive_low()
        finally:
            self._at = None

    def press(self, at_ns: int) -> None:
        """Buttons pull their line low against the pull-up."""
        self.set_level(False, at_ns)

    def release(self, at_ns: int) -> None:
        self.set_level(True, at_ns)

    def _change_state(self, value: bool) -> bool:
        if self._state == value:
            return False
        t = self._at if self._at is not None else monotonic_ns() / 1e9
        self._state = value
        self.states.append(PinState(t - self._last_change, value))
        self._last_change = t
        return True


def emulated_factory() -> MockFactory:
    """Mock pins whose edges carry chosen timestamps (board.EmulatedBoard, tests, benchmarks)."""
    return MockFactory(pin_class=TimedMockPin)


class EmulatedButtons:
    """Press and release any seat's buttons in emulation, through the real pins and chips."""

    def __init__(self, config: InputsConfig, factory: MockFactory) -> None:
        self.config = config
        self.factory = factory
        self.buses: dict[int, EmulatedBus] = {}
        self.chips: dict[str, EmulatedMCP23017] = {}
        self.held: list[tuple[int, int, str]] = []  # (let go at, seat, control): a heap (`press`)
        for spec in config.expanders:
            int_pin = factory.pin(spec.interrupt_gpio)
            chip = EmulatedMCP23017(interrupt=partial(self._interrupt_line, int_pin))
            self.chips[spec.name] = chip
            self.buses.setdefault(spec.bus, EmulatedBus()).devices[spec.address] = chip

    @staticmethod
    def _interrupt_line(pin: TimedMockPin, low: bool, at_ns: int) -> None:
        pin.set_level(not low, at_ns)

    def rewire(self, config: InputsConfig) -> None:
        """More lines on the same pins and chips (a laptop keyboard's direct buttons)."""
        self.config = config

    def set(self, seat: int, control: str, pressed: bool, at_ns: int) -> None:
        line = self.config.seats[seat].lines().get(control)
        if line is None:
            raise KeyError(f"seat {seat + 1} has no {control} button")
        if line.gpio is not None:
            self.factory.pin(line.gpio).set_level(not pressed, at_ns)
        else:
            self.chips[str(line.expander)].set_input(pin_index(str(line.pin)), pressed, at_ns)

    def tap(self, seat: int, control: str, at_ns: int, hold_ns: int = 80_000_000) -> None:
        """Press and let go at once, the release stamped `hold_ns` later (tests, benchmarks)."""
        self.set(seat, control, True, at_ns)
        self.set(seat, control, False, at_ns + hold_ns)

    def press(self, seat: int, control: str, at_ns: int, hold_ns: int) -> None:
        """Press at `at_ns` (now, on the loop's clock) and let go once `hold_ns` has passed
        (`let_go`). Unlike `tap`, no edge reaches the table before the moment it carries: the
        bots' and the keyboard's releases were taken tens of ms before their own stamps, and
        `tablectl inputs` showed them with a negative "after"."""
        self.let_go(at_ns)  # a line let go earlier, whoever's timer comes first
        self.set(seat, control, True, at_ns)
        heapq.heappush(self.held, (at_ns + hold_ns, seat, control))

    def let_go(self, now: int) -> int | None:
        """Let go of the buttons whose hold is over, each at its own time; when the next is due."""
        while self.held and self.held[0][0] <= now:
            at, seat, control = heapq.heappop(self.held)
            self.set(seat, control, False, at)
        return self.letting_go

    @property
    def letting_go(self) -> int | None:
        """When the next button pressed by `press` is let go (None: none is held)."""
        return self.held[0][0] if self.held else None
