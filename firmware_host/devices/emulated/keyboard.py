"""Keyboard seats for emulation: keys press the seat's emulated pins, never the engine.

A key goes to `EmulatedButtons`, so it runs the Pi's path: mock pin with the
key's time stamp, edge filter, arbiter, seat, engine. Two seats can share one
keyboard.
"""

from __future__ import annotations

from collections.abc import Mapping

from .pins import EmulatedButtons

# Key names as terminals (and Textual) report them.
SEAT_KEYS: tuple[Mapping[str, str], ...] = (
    {"left": "left", "right": "right", "up": "up", "down": "down", "space": "slap",
     "enter": "alt", **{str(i): f"select{i}" for i in range(1, 6)}},
    {"a": "left", "d": "right", "w": "up", "s": "down", "f": "slap", "e": "alt"},
)
HOLD_NS = 60_000_000  # a key press is a 60 ms tap: longer than any bounce, shorter than a stuck button


class KeyboardSeats:
    def __init__(self, buttons: EmulatedButtons, seats: tuple[int, ...] = (0,)) -> None:
        if len(seats) > len(SEAT_KEYS):
            raise ValueError(f"a keyboard can play {len(SEAT_KEYS)} seats at most")
        self.buttons = buttons
        self.keys = {key: (seat, control) for seat, keys in zip(seats, SEAT_KEYS, strict=False)
                     for key, control in keys.items()}

    def key(self, name: str, at_ns: int) -> bool:
        """A key went down at `at_ns`: tap the button it stands for. False if unmapped
        (or the seat has no such button, like select1 on a seat without direct buttons)."""
        mapped = self.keys.get(name)
        if mapped is None:
            return False
        seat, control = mapped
        try:
            self.buttons.tap(seat, control, at_ns, HOLD_NS)
        except KeyError:
            return False
        return True
