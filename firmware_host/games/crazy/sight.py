"""What one player of Ligretto Crazy can see, and nothing more.

Bots decide from this, so a bot cannot peek at another player's hand. The sight reads the live
round; it holds no copy. Pure, as the rules are: the engine and the standard library only.
"""

from __future__ import annotations

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

    def hand(self) -> list[CrazyCard]:
        return list(self._r.seats[self.seat].hand)

    def pile_tops(self) -> dict[int, int]:
        return {pid: p.top for pid, p in self._r.piles.items()}

    @property
    def players(self) -> int:
        return self._r.players

    def pile_sizes(self) -> dict[int, int]:
        """How many cards each pile holds (a pile's height is plain to see at the table)."""
        return {pid: len(p.cards) for pid, p in self._r.piles.items()}

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
