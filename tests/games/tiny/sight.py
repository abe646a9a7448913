"""What one player of Tiny sees: its own hand and the number in the middle. Pure, as a game's
sight is: the engine and the standard library only."""

from __future__ import annotations

from firmware_host.engine.round import Seat

from .rules import TinyRound


class TinySight:
    game = "tiny"

    def __init__(self, rnd: TinyRound, seat: Seat) -> None:
        self._r, self.seat = rnd, seat

    @property
    def over(self) -> bool:
        return self._r.result is not None

    def hand(self) -> list[int]:
        return list(self._r.hands[self.seat])

    def centre(self) -> int:
        return self._r.centre
