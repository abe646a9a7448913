"""What one player at the table can see, and nothing more.

Bots decide from these, so a bot cannot peek at a face-down hand or another
player's stack. Each sight reads the live round; it holds no copy.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .classic import Card, ClassicRound
from .crazy import CrazyCard, CrazyRound
from .dice import DiceRound, Die
from .domino import DominoCard, DominoRound, PlaceDomino, PlayJoker, Square
from .game import find
from .round import Seat


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

    def row_takes(self, row_top: Card, card: Card) -> bool:
        return self._r.row_takes(row_top, card)

    def pile_tops(self) -> list[Card]:
        return self._r.pile_tops()

    def voted_stuck(self) -> bool:
        return self.seat in self._r.stuck_votes


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

    def placements(self, ts: int = 0) -> list[PlaceDomino]:
        card = self.top_card()
        return [] if card is None else list(self._r.placements(self.seat, card, ts))

    def joker_squares(self, ts: int = 0) -> Iterator[tuple[int, Square]]:
        r = self._r
        for i, tok in enumerate(r.tokens):
            if not r._reserved_against(tok, self.seat, ts):
                for sq in r.joker_squares(i):
                    yield i, sq

    def held(self) -> int:
        return len(self._r.seats[self.seat].held())

    def joker_needed(self) -> bool:
        """The seat's screen says UP: JOKER: the round waits for a joker this seat could play."""
        return self._r.joker_needed(self.seat)

    def joker_for_top(self, ts: int = 0) -> PlayJoker | None:
        """A joker (or two in a row) that would let the turned-up card be laid."""
        card = self.top_card()
        return None if card is None else self._r.joker_route(self.seat, [card], ts=ts)


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


Sight = ClassicSight | DiceSight | DominoSight | CrazySight


def sight_of(rnd: Any, seat: Seat) -> Sight:
    """What `seat` sees of any game's round (its rules make the sight)."""
    return find(rnd.game).sight(rnd, seat)
