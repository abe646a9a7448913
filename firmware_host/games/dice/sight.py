"""What one player of Dice Ligretto can see, and nothing more.

Bots decide from this, so a bot cannot peek at what it has not been shown. The sight reads the live
round; it holds no copy. Pure, as the rules are: the engine and the standard library only.
"""

from __future__ import annotations

from ...engine.round import Seat
from .rules import DiceRound, Die


class DiceSight:
    __slots__ = ("_r", "seat")
    game = DiceRound.game

    def __init__(self, rnd: DiceRound, seat: Seat) -> None:
        self._r = rnd
        self.seat = seat

    @property
    def over(self) -> bool:
        return self._r.result is not None

    def dice(self) -> list[Die]:
        return list(self._r.dice[self.seat])

    def board(self) -> list[int]:
        return list(self._r.board)

    def fits(self, die: Die) -> bool:
        return self._r.fits(die)
