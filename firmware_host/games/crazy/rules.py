"""Ligretto Crazy (docs/rules.md, "Ligretto Crazy"): values 1 to 5 in five styles, Crazy cards as jokers.

The split of a colour's 36 cards into values and styles is data (`DeckSpec`,
loaded from `games/crazy/deck.toml` by `games/crazy/deck.py`), not code.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar, NamedTuple

from ...engine.round import Ending, Reason, Refusal, RoundBase, RoundResult, RulesError, Seat, TableColour

MIN_PLAYERS, MAX_PLAYERS = 2, 5
HAND_SIZE = 3
TOP, BOTTOM = 5, 1
STYLES = ("pips", "tally", "digit", "word", "fingers")


class CrazyColour(TableColour):
    RED = 0
    YELLOW = 1
    GREEN = 2
    BLUE = 3
    PURPLE = 4


class CrazyCard(NamedTuple):
    """`value` 0 is a Crazy card; `serial` tells apart equal cards of one colour."""

    colour: CrazyColour
    value: int
    style: str
    serial: int

    @property
    def crazy(self) -> bool:
        return self.value == 0

    def __str__(self) -> str:
        if self.crazy:
            return f"{self.colour.letter}*"
        return f"{self.colour.letter}{self.value}{self.style[0]}"


@dataclass(frozen=True, slots=True)
class DeckSpec:
    """How many cards of each value a colour has, and how many Crazy cards."""

    counts: tuple[tuple[int, int], ...]  # (value, copies)
    crazy: int
    styles: tuple[str, ...] = STYLES

    def cards(self, colour: CrazyColour) -> list[CrazyCard]:
        """Styles are dealt round-robin so every value is spread evenly over them. The cards
        are made once per deck and colour (they never change), then copied for each round."""
        return list(_cards(self, colour))

    def size(self) -> int:
        return sum(n for _, n in self.counts) + self.crazy


@lru_cache(maxsize=64)
def _cards(spec: DeckSpec, colour: CrazyColour) -> tuple[CrazyCard, ...]:
    out: list[CrazyCard] = []
    for value, copies in spec.counts:
        for i in range(copies):
            out.append(CrazyCard(colour, value, spec.styles[i % len(spec.styles)], len(out)))
    for _ in range(spec.crazy):
        out.append(CrazyCard(colour, 0, "crazy", len(out)))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class CrazyOptions:
    target: int = 100
    """The match ends after the round in which a total reaches this."""


class PlayCrazy(NamedTuple):
    """Play a hand card onto pile `pile` (a pile id), or start a pile when `pile` is None.

    `value` is what a Crazy card stands for (top ± 1 on a pile; a new pile counts it as 1).
    """

    seat: Seat
    card: CrazyCard
    pile: int | None
    value: int | None = None
    ts: int = 0


class DiscardCrazy(NamedTuple):
    """Put a hand card face down on your own discard pile and draw again."""

    seat: Seat
    card: CrazyCard
    ts: int = 0


CrazyAction = PlayCrazy | DiscardCrazy


@dataclass(slots=True)
class CrazySetup:
    """One seat at the start of a round: lists bottom first (the last is the top)."""

    draw: list[CrazyCard]
    hand: list[CrazyCard]
    discard: list[CrazyCard]


class CrazySeat:
    __slots__ = ("discard", "draw", "hand", "score")

    def __init__(self, setup: CrazySetup) -> None:
        self.draw = list(setup.draw)
        self.hand = list(setup.hand)
        self.discard = list(setup.discard)
        self.score: list[CrazyCard] = []

    def refill(self) -> int:
        """Draw back up to a full hand; how many cards that took."""
        drawn = 0
        while len(self.hand) < HAND_SIZE and self.draw:
            self.hand.append(self.draw.pop())
            drawn += 1
        return drawn


class Pile(NamedTuple):
    id: int
    cards: list[tuple[Seat, CrazyCard, int]]  # who played it, the card, the value it counts as

    @property
    def top(self) -> int:
        return self.cards[-1][2]


class CrazyRound(RoundBase):
    game = "crazy"

    def __init__(
        self,
        players: int,
        options: CrazyOptions,
        rng: random.Random,
        spec: DeckSpec,
        setups: Sequence[CrazySetup] | None = None,
        piles: Sequence[Sequence[tuple[Seat, CrazyCard, int]]] | None = None,
    ) -> None:
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise RulesError(f"Ligretto Crazy takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
        self.players = players
        self.options = options
        self.spec = spec
        if setups is None:
            setups = []
            for seat in range(players):
                deck = spec.cards(CrazyColour(seat))
                rng.shuffle(deck)
                setups.append(CrazySetup(draw=deck, hand=[], discard=[]))
        if len(setups) != players:
            raise RulesError(f"cards given for {len(setups)} seats, {players} are playing")
        self.seats = [CrazySeat(s) for s in setups]
        for st in self.seats:
            st.refill()
        self.piles: dict[int, Pile] = {i: Pile(i, list(p)) for i, p in enumerate(piles or ())}
        """Pile number (in the order piles were started): its cards; a scenario may start with some."""
        self.board: dict[int, tuple[int, int]] = {pid: (p.top, len(p.cards)) for pid, p in self.piles.items()}
        """What every player sees of the piles, in the same order: pile number -> (the value on top,
        how many cards). Kept with each play and undo rather than worked out per look: the bots look
        at it one and a half times per action (`CrazySight.piles`), the rules at every play."""
        self._next_pile = len(self.piles)
        self.result: RoundResult | None = None
        for seat in range(players):
            self._check_out(seat)

    @property
    def pile_limit(self) -> int:
        return self.players

    def placements(self, card: CrazyCard) -> Iterator[tuple[int | None, int | None]]:
        """Every (pile, value) this card may go to now; pile None starts a new pile."""
        if (card.crazy or card.value == BOTTOM) and len(self.piles) < self.pile_limit:
            yield None, (BOTTOM if card.crazy else None)
        for pid, (top, _) in self.board.items():
            if card.crazy:
                for v in (top - 1, top + 1):
                    if BOTTOM <= v <= TOP:
                        yield pid, v
            elif abs(card.value - top) == 1:
                yield pid, None

    def legal_actions(self, seat: Seat) -> Iterator[CrazyAction]:
        if self.result is not None:
            return
        for card in self.seats[seat].hand:
            for pid, value in self.placements(card):
                yield PlayCrazy(seat, card, pid, value)
        for card in self.seats[seat].hand:
            yield DiscardCrazy(seat, card)

    def _discard(self, action: DiscardCrazy) -> Refusal | None:
        st = self.seats[action.seat]
        if action.card not in st.hand:
            return Refusal(Reason.NOT_HELD, f"{action.card} is not in your hand")
        i = st.hand.index(action.card)
        del st.hand[i]
        st.discard.append(action.card)
        self._undo.append((CrazyRound._undiscard, action.seat, i, self._after_play(action.seat)))
        return None

    def _after_play(self, seat: Seat) -> int:
        """Draw back up to 3 (how many were drawn); an empty hand and draw pile ends the round."""
        st = self.seats[seat]
        drawn = st.refill()
        if not st.hand:  # (`_check_out`, asked only when it can be so: this runs for every action)
            self._check_out(seat)
        return drawn

    def _play(self, action: PlayCrazy) -> Refusal | None:
        seat, card, pid, value, _ = action
        st = self.seats[seat]
        if card not in st.hand:
            return Refusal(Reason.NOT_HELD, f"{card} is not in your hand")
        number = card.value
        crazy = number == 0  # `CrazyCard.crazy`, spelt out: this runs for every play
        finishes = False
        if pid is None:
            if not (crazy or number == BOTTOM) or value not in (None, BOTTOM):
                return Refusal(Reason.NO_FIT, "only a 1 or Crazy starts a pile")
            if len(self.piles) >= self.pile_limit:
                return Refusal(Reason.PILE_LIMIT, f"{self.pile_limit} piles already")
            pid = self._next_pile
            self._next_pile += 1
            self.piles[pid] = Pile(pid, [])
            counts_as = BOTTOM
        else:
            shown = self.board.get(pid)
            if shown is None:
                return Refusal(Reason.NO_PILE)
            top = shown[0]
            if crazy:
                if value is None or abs(value - top) != 1 or not BOTTOM <= value <= TOP:
                    return Refusal(Reason.BAD_VALUE)
                counts_as = value
            else:
                if abs(number - top) != 1:
                    return Refusal(Reason.NO_FIT)
                counts_as = number
            finishes = counts_as == TOP and top == TOP - 1
        i = st.hand.index(card)
        del st.hand[i]
        pile = self.piles[pid]
        pile.cards.append((seat, card, counts_as))
        won = None
        if finishes:  # "Crazy!": a 5 on a 4 wins the whole pile
            won = (tuple(self.piles), tuple(pile.cards))
            del self.piles[pid]
            del self.board[pid]
            st.score.extend(c for _, c, _ in pile.cards)
        else:
            self.board[pid] = (counts_as, len(pile.cards))
        self._undo.append((CrazyRound._unplay, seat, i, card, pid, action.pile is None, won,
                           self._after_play(seat)))
        return None

    _handlers: ClassVar[dict[type, Callable[[Any, Any], Refusal | None]]] = {
        PlayCrazy: _play, DiscardCrazy: _discard}

    # ------------------------------------------------------------ taking back (RoundBase._lost_race)

    _timeless = True

    def _affects(self, entry: CrazyAction, action: CrazyAction) -> bool:
        """Only a card played to a pile changes the piles; a discard stays in its seat's cards."""
        return type(action) is PlayCrazy and type(entry) is PlayCrazy

    def _unshare(self, action: Any) -> None:
        seats = []
        for st in self.seats:
            new = CrazySeat.__new__(CrazySeat)
            new.draw, new.hand, new.discard, new.score = st.draw[:], st.hand[:], st.discard[:], st.score[:]
            seats.append(new)
        self.seats = seats
        self.piles = {pid: Pile(pid, pile.cards[:]) for pid, pile in self.piles.items()}
        self.board = dict(self.board)

    def _redraw(self, seat: Seat, drawn: int) -> None:
        st = self.seats[seat]
        self.result = None
        for _ in range(drawn):
            st.draw.append(st.hand.pop())

    def _unplay(self, seat: Seat, i: int, card: CrazyCard, pid: int, new_pile: bool,
                won: tuple[tuple[int, ...], tuple[tuple[Seat, CrazyCard, int], ...]] | None,
                drawn: int) -> None:
        self._redraw(seat, drawn)
        st = self.seats[seat]
        if won is not None:  # the pile comes back where it stood among the others
            order, cards = won
            del st.score[len(st.score) - len(cards):]
            piles, board = self.piles, self.board
            self.piles = {p: Pile(p, list(cards)) if p == pid else piles[p] for p in order}
            self.board = {p: (cards[-1][2], len(cards)) if p == pid else board[p] for p in order}
        cards_left = self.piles[pid].cards
        cards_left.pop()
        if new_pile:
            del self.piles[pid]
            del self.board[pid]
            self._next_pile -= 1
        else:
            self.board[pid] = (cards_left[-1][2], len(cards_left))
        st.hand.insert(i, card)

    def _undiscard(self, seat: Seat, i: int, drawn: int) -> None:
        self._redraw(seat, drawn)
        st = self.seats[seat]
        st.hand.insert(i, st.discard.pop())

    def _check_out(self, seat: Seat) -> None:
        st = self.seats[seat]
        if self.result is None and not st.hand and not st.draw:
            self._end(RoundResult(Ending.LIGRETTO_STOP, (seat,), self.scores()))

    def to_centre(self) -> tuple[int, int]:
        return sum(len(s.score) for s in self.seats), self.players * self.spec.size()

    def scores(self) -> tuple[int, ...]:
        return tuple(len(s.score) - len(s.draw) - len(s.discard) - len(s.hand) for s in self.seats)

    def cards_of(self, seat: Seat) -> list[CrazyCard]:
        st = self.seats[seat]
        centre = [c for p in self.piles.values() for s, c, _ in p.cards if c.colour == seat]
        everywhere = [c for s in self.seats for c in s.score if c.colour == seat]
        return st.draw + st.hand + st.discard + everywhere + centre

    def snapshot(self) -> dict[str, object]:
        return {
            "piles": [
                {"id": p.id, "cards": [str(c) for _, c, _ in p.cards], "top": p.top,
                 "players": [s for s, _, _ in p.cards]}
                for p in self.piles.values()
            ],
            "seats": [
                {"hand": [str(c) for c in st.hand], "draw": len(st.draw),
                 "discard": len(st.discard), "score_pile": len(st.score)}
                for st in self.seats
            ],
        }


CRAZY_ROUNDS = None
"""The rulebook has no round cap: by default a match ends only when a total reaches the target.
`rounds` is a house rule a table may opt into (docs/rules.md, "Ligretto Crazy")."""


def crazy_card_name(card: CrazyCard) -> str:
    """`R3p#4`: colour, value (or * for Crazy), style initial, serial in its colour."""
    return f"{card}#{card.serial}"


def parse_crazy_card(text: str, spec_cards: dict[str, CrazyCard]) -> CrazyCard:
    try:
        return spec_cards[text.strip()]
    except KeyError:
        raise RulesError(f"not a Crazy card: {text!r} (write e.g. R3p#8 or Y*#34)") from None


def crazy_index(deck: list[list[CrazyCard]]) -> dict[str, CrazyCard]:
    return {crazy_card_name(c): c for cards in deck for c in cards}
