"""What one player of Ligretto can see, and nothing more.

Bots decide from this, so a bot cannot peek at a face-down hand or another player's stack. The sight
reads the live round; it holds no copy. Pure, as the rules are: the engine and the standard library
only.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...engine.round import Seat
from .rules import Card, ClassicRound, _tables


class ClassicSight:
    __slots__ = ("_face_down", "_r", "_st", "needs", "options", "seat")
    game = ClassicRound.game

    def __init__(self, rnd: ClassicRound, seat: Seat) -> None:
        self._r = rnd
        self._st = rnd.seats[seat]
        self._face_down = rnd.options.stack_face_down
        self.seat = seat
        self.options = rnd.options
        self.needs: Sequence[int] = rnd._need
        """How many open piles take each card (by card number): the pile tops, counted."""

    def playable(self) -> list[Card]:
        """Cards this seat may play now: stack top first, then row tops, then discard top."""
        st = self._st
        out = [st.stack[-1]] if st.stack and not self._face_down else []
        out += [place[-1] for place in st.row if place]
        if st.discard:
            out.append(st.discard[-1])
        return out

    @property
    def over(self) -> bool:
        return self._r.result is not None

    def first_fitting(self) -> Card | None:
        """The first playable card (in `playable` order) that some pile takes: one glance."""
        st = self._st
        needs = self.needs
        if st.stack and not self._face_down:
            card = st.stack[-1]
            if needs[card] > 0:
                return card
        for place in st.row:
            if place:
                card = place[-1]
                if needs[card] > 0:
                    return card
        if st.discard:
            card = st.discard[-1]
            if needs[card] > 0:
                return card
        return None

    def row_tops(self) -> list[Card | None]:
        return [place[-1] if place else None for place in self._st.row]

    def stack_top(self) -> Card | None:
        st = self._st
        return st.stack[-1] if st.stack and not self._r.options.stack_face_down else None

    def stack_size(self) -> int:
        return len(self._st.stack)

    def discard_top(self) -> Card | None:
        return self._st.discard[-1] if self._st.discard else None

    def hand_size(self) -> int:
        return len(self._st.hand)

    def can_turn(self) -> bool:
        return bool(self._st.hand or self._st.discard)

    def fits(self, card: Card) -> bool:
        """Decided from the open piles' tops alone, which everyone sees."""
        return self._r.fits(card)

    def takes_after(self, card: Card) -> tuple[int, ...]:
        """The cards a pile takes once `card` tops it: a run a player sees coming."""
        return _tables(self.options)[0][card]

    def row_takes(self, row_top: Card, card: Card) -> bool:
        return self._r.row_takes(row_top, card)

    def pile_tops(self) -> list[Card]:
        return self._r.pile_tops()

    def voted_stuck(self) -> bool:
        return self.seat in self._r.stuck_votes
