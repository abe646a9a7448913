"""Keyboard seats for emulation: keys press the seat's emulated pins, never the engine.

A key goes to `EmulatedButtons`, so it runs the Pi's path: mock pin with the
key's time stamp, edge filter, arbiter, seat, engine. Two seats can share one
keyboard.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from ...config import InputsConfig, Line
from ...table.presses import SELECTS
from .pins import EmulatedButtons

# Key names as terminals (and Textual) report them.
SEAT_KEYS: tuple[Mapping[str, str], ...] = (
    {"left": "left", "right": "right", "up": "up", "down": "down", "space": "slap",
     "enter": "alt", **{str(i): f"select{i}" for i in range(1, 6)}},
    {"a": "left", "d": "right", "w": "up", "s": "down", "f": "slap", "e": "alt"},
)
HOLD_NS = 60_000_000  # a key press is a 60 ms tap: longer than any bounce, shorter than a stuck button
WAITING_MAX = 8
"""Taps a keyboard keeps waiting for their line. A held key repeats faster than a button can be
pressed and let go; more than this would keep moving the cursor long after the key is let go."""


def with_direct_buttons(inputs: InputsConfig, seat: int, spare_gpios: tuple[int, ...]) -> InputsConfig:
    """The wiring with `seat`'s direct buttons (select1..5: play row place N at once) on spare
    GPIOs, where the build has none. Neither wiring file has them (a 5-way switch has five
    contacts), but on a laptop keys 1-5 are there to be pressed; they take the same path as
    every other button: a mock pin, the edge filter, the arbiter."""
    wiring = inputs.seats[seat]
    missing = [name for name in SELECTS if getattr(wiring, name) is None]
    if len(missing) < len(SELECTS):
        return inputs  # the build wires them: its own lines are the keys'
    lines = {name: Line(gpio=gpio) for name, gpio in zip(missing, spare_gpios, strict=False)}
    seats = list(inputs.seats)
    seats[seat] = wiring.model_copy(update=lines)
    return inputs.model_copy(update={"seats": seats})


class KeyboardSeats:
    """Keys never bounce, but the line a key presses is debounced like any button: a second tap
    inside the first one's hold and quiet window would be dropped as bounce. So each key press
    is a tap of its own, in the order typed, on a line that is free again: a burst of three
    Right presses moves the choice three places, the later ones a few tens of ms later."""

    def __init__(self, buttons: EmulatedButtons, seats: tuple[int, ...] = (0,),
                 spare_gpios: tuple[int, ...] = ()) -> None:
        """`spare_gpios`: GPIOs the build leaves free, for the direct buttons its seats lack."""
        if len(seats) > len(SEAT_KEYS):
            raise ValueError(f"a keyboard can play {len(SEAT_KEYS)} seats at most")
        self.buttons = buttons
        self.keys = {key: (seat, control) for seat, keys in zip(seats, SEAT_KEYS, strict=False)
                     for key, control in keys.items()}
        self.wiring = with_direct_buttons(buttons.config, seats[0], spare_gpios) if seats else buttons.config
        buttons.rewire(self.wiring)
        self.quiet_ns = round(buttons.config.debounce_ms * 1e6)
        self.waiting: deque[tuple[int, int, str]] = deque()  # (when, seat, control), in order typed
        self._free: dict[tuple[int, str], int] = {}  # when each line's last tap has settled
        self._last = -(1 << 62)  # the latest tap's press, so taps keep the order they were typed in

    def has(self, seat: int, control: str) -> bool:
        """Whether this build gives the seat that button (select1..5 only where wired)."""
        return control in self.buttons.config.seats[seat].lines()

    def key(self, name: str, at_ns: int) -> bool:
        """A key went down at `at_ns`: tap the button it stands for, now or as soon as its line
        is free (`due`, `tick`). False if unmapped, or the seat has no such button."""
        mapped = self.keys.get(name)
        if mapped is None or not self.has(*mapped) or len(self.waiting) >= WAITING_MAX:
            return False
        when = max(at_ns, self._free.get(mapped, at_ns), self._last + 1)
        self._free[mapped] = when + HOLD_NS + self.quiet_ns + 1
        self._last = when
        if when <= at_ns and not self.waiting:
            self.buttons.press(*mapped, when, HOLD_NS)
        else:
            self.waiting.append((when, *mapped))
        return True

    def due(self) -> int | None:
        """When the next waiting tap is to be pressed (for the caller's timer)."""
        return self.waiting[0][0] if self.waiting else None

    def tick(self, now: int) -> None:
        """Press the waiting taps whose time has come, stamped with that time."""
        while self.waiting and self.waiting[0][0] <= now:
            when, seat, control = self.waiting.popleft()
            self.buttons.press(seat, control, when, HOLD_NS)
