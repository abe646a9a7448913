"""What one player of Ligretto Domino can see, and nothing more.

Bots decide from this, so a bot cannot peek at the face-down rest of a hand. The sight reads the
live round; it holds no copy. Pure, as the rules are: the engine and the standard library only.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...engine.round import Seat
from .rules import DominoCard, DominoRound, PlaceDomino, PlayJoker, Square


class DominoSight:
    __slots__ = ("_r", "seat")
    game = DominoRound.game

    def __init__(self, rnd: DominoRound, seat: Seat) -> None:
        self._r = rnd
        self.seat = seat

    @property
    def over(self) -> bool:
        return self._r.result is not None

    def top_card(self) -> DominoCard | None:
        """The card this player has turned up; the rest of the hand is face down."""
        return self._r.top_card(self.seat)

    def jokers(self) -> int:
        return self._r.seats[self.seat].jokers

    def placements(self, ts: int = 0) -> list[PlaceDomino] | None:
        """Where the turned-up card may be laid now: empty at once for a card that fits at no
        token (two actions in three are discards); None with no card turned up."""
        hand = self._r.seats[self.seat].hand
        return self._r.placement_list(self.seat, hand[-1], ts) if hand else None

    def joker_squares(self, ts: int = 0) -> Iterator[tuple[int, Square]]:
        r = self._r
        for i, tok in enumerate(r.tokens):
            if not r._reserved_against(tok, self.seat, ts):
                for sq in r.joker_squares(i):
                    yield i, sq

    def held(self) -> int:
        st = self._r.seats[self.seat]
        return len(st.hand) + len(st.discard)

    def joker_needed(self) -> bool:
        """The seat's screen says UP: JOKER: the round waits for a joker this seat could play
        (a bot asks at every card it discards, and mostly the round waits for none)."""
        r = self._r
        return r.waiting_since is not None and r.joker_needed(self.seat)

    def joker_for_top(self, ts: int = 0) -> PlayJoker | None:
        """A joker (or two in a row) that would let the turned-up card be laid."""
        card = self.top_card()
        return None if card is None else self._r.joker_for(self.seat, card, ts)
