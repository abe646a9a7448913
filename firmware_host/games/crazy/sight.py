"""What one player of Ligretto Crazy can see, and nothing more.

Bots decide from this, so a bot cannot peek at another player's hand. The sight reads the live
round and hands out the round's own containers, not copies (a bot looks one and a half times per
action, far more often than the table changes): what it hands out is read, never changed. Pure, as
the rules are: the engine and the standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...engine.round import Seat
from .rules import CrazyCard, CrazyRound


class CrazySight:
    __slots__ = ("_r", "seat")
    game = CrazyRound.game

    def __init__(self, rnd: CrazyRound, seat: Seat) -> None:
        self._r = rnd
        self.seat = seat

    @property
    def over(self) -> bool:
        return self._r.result is not None

    def hand(self) -> Sequence[CrazyCard]:
        """This seat's hand, in the order it was drawn."""
        return self._r.seats[self.seat].hand

    def piles(self) -> Mapping[int, tuple[int, int]]:
        """Each pile's top value and how many cards it holds (a pile's height is plain to see at
        the table), by pile number in the order the piles were started (`CrazyRound.board`)."""
        return self._r.board

    def look(self) -> tuple[Sequence[CrazyCard], Mapping[int, tuple[int, int]], int, int, int]:
        """What a look at the table takes in, in one call (a call costs about what reading all
        of it does, and a bot looks one and a half times per action): `hand()`, `piles()`,
        `draw_size()`, `pile_room()` and `actions()`."""
        rnd = self._r
        st = rnd.seats[self.seat]
        return st.hand, rnd.board, len(st.draw), rnd.pile_limit - len(rnd.piles), len(rnd.journal)

    def actions(self) -> int:
        """How many actions the round has taken: the table changes with each, and only then."""
        return len(self._r.journal)

    @property
    def players(self) -> int:
        return self._r.players

    def pile_room(self) -> int:
        return self._r.pile_limit - len(self._r.piles)

    def draw_size(self) -> int:
        return len(self._r.seats[self.seat].draw)

    def won(self) -> int:
        """Cards in this seat's own score pile (it lies in front of the player)."""
        return len(self._r.seats[self.seat].score)

    def laid(self) -> list[int]:
        """Cards each seat has laid onto the centre piles this round: each seat plays its own
        colour, so every player sees whose card went down."""
        size = self._r.spec.size()
        return [size - len(st.draw) - len(st.hand) - len(st.discard) for st in self._r.seats]
