"""Ligretto, the card game, with every variant of docs/rules.md, "Ligretto".

Cards are small ints (colour * 16 + value) so that the hot path, "does this
card fit any pile", is a list lookup. The round keeps two counters per card
key: how many piles would take it (`_need`) and how many copies of it some
player could still bring to the centre (`_avail`). `_fits` counts keys where
both are positive, so the exact deadlock ("nobody can ever play again") is
simply `_fits == 0`, kept up to date in O(1) per play.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from itertools import pairwise
from typing import Any, ClassVar, Literal, NamedTuple

from ...engine.round import (
    Ending,
    Reason,
    Refusal,
    RoundBase,
    RoundResult,
    RulesError,
    Seat,
    TableColour,
    is_digits,
    journal_kinds,
)

MIN_PLAYERS, MAX_PLAYERS = 2, 12
STACK_SIZE = 10
TURN_COUNT = 3
STACK_PENALTY = 2
_KEYS = 64
_STARTER_NEED = 1 << 30  # a 1 (or a 10 when descending) always fits


class Colour(TableColour):
    RED = 0
    GREEN = 1
    BLUE = 2
    YELLOW = 3


class Card(int):
    """One card of a player's deck; the deck's back (its owner) is kept by the holder."""

    __slots__ = ()

    def __new__(cls, colour: Colour | int, value: int) -> Card:
        if not 0 <= colour <= 3 or not 1 <= value <= 10:
            raise RulesError(f"no such Ligretto card: colour {colour}, value {value}")
        return super().__new__(cls, int(colour) * 16 + value)

    @property
    def colour(self) -> Colour:
        return Colour(self >> 4)

    @property
    def value(self) -> int:
        return self & 15

    def __str__(self) -> str:
        return f"{self.colour.letter}{self.value}"

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Card:
        """`R7`, `g10`, `Blue 3`: colour letter or name, then the value."""
        split = Colour.split(text)
        if split is not None and is_digits(split[1]):
            return Card(split[0], int(split[1]))
        raise RulesError(f"not a Ligretto card: {text!r} (write e.g. R7, G10, B1, Y3)")


DECK: tuple[Card, ...] = tuple(Card(c, v) for c in Colour for v in range(1, 11))
"""One player's 40 cards in a fixed order."""
_BY_KEY: dict[int, Card] = {int(c): c for c in DECK}


def card(colour: Colour | int, value: int) -> Card:
    """The shared instance of a card, so the hot path never builds new ones."""
    return _BY_KEY[int(colour) * 16 + value]


def _turn_tops(hand: list[Card]) -> list[Card]:
    """The cards that end on top of the discard pile, turn by turn, for a hand (top last)."""
    return [hand[max(i - 2, 0)] for i in range(len(hand) - 1, -1, -TURN_COUNT)]


def row_size(players: int) -> int:
    return 5 if players == 2 else 4 if players == 3 else 3


@dataclass(frozen=True, slots=True)
class ClassicOptions:
    recycle: Literal["shuffle", "turn_over"] = "shuffle"
    pro_row: bool = False
    descending: bool = False
    alternate_colours: bool = False
    stack_face_down: bool = False


# ---------------------------------------------------------------- actions


class PlayCard(NamedTuple):
    """Play a visible card (row top, stack top or discard top) to the centre."""

    seat: Seat
    card: Card
    ts: int = 0


class TurnHand(NamedTuple):
    """Turn up the next 3 hand cards; an empty hand first takes the discard pile back."""

    seat: Seat
    ts: int = 0


class MoveToRow(NamedTuple):
    """pro_row: lay the stack top or discard top onto row place `place`."""

    seat: Seat
    card: Card
    place: int
    ts: int = 0


class VoteStuck(NamedTuple):
    """pro_row: this seat agrees the round is stuck."""

    seat: Seat
    ts: int = 0


ClassicAction = PlayCard | TurnHand | MoveToRow | VoteStuck


# ---------------------------------------------------------------- state


@dataclass(slots=True)
class Deal:
    """One seat's cards at the start of a round. Piles are listed bottom first."""

    row: list[list[Card]]
    stack: list[Card]
    hand: list[Card]
    discard: list[Card] = field(default_factory=list)

    def cards(self) -> list[Card]:
        return [c for place in self.row for c in place] + self.stack + self.hand + self.discard


def deal_from(deck: Sequence[Card], players: int) -> Deal:
    """Lay out a shuffled deck: row from the top, then the stack, the rest is the hand."""
    n = row_size(players)
    top_first = list(deck)
    row = [[c] for c in top_first[:n]]
    stack = list(reversed(top_first[n : n + STACK_SIZE]))
    hand = list(reversed(top_first[n + STACK_SIZE :]))
    return Deal(row=row, stack=stack, hand=hand)


class SeatState:
    __slots__ = ("centre", "discard", "hand", "row", "stack")

    def __init__(self, deal: Deal) -> None:
        self.row: list[list[Card]] = [list(p) for p in deal.row]
        self.stack: list[Card] = list(deal.stack)
        self.hand: list[Card] = list(deal.hand)
        self.discard: list[Card] = list(deal.discard)
        self.centre = 0

    def copy(self) -> SeatState:
        new = SeatState.__new__(SeatState)
        new.row = [p[:] for p in self.row]
        new.stack, new.hand, new.discard = self.stack[:], self.hand[:], self.discard[:]
        new.centre = self.centre
        return new


def shuffle(rng: random.Random, cards: list[Card]) -> None:
    """Shuffle in place: sorting by fresh random keys is uniform and several times
    faster than `random.shuffle`, which draws every index in Python.

    The sort asks for the cards' keys in the list's order, and each is the generator's next
    draw (`next` on an endless iterator of draws; the card, passed as `next`'s default, is never
    used): the deal a key function `lambda card: rng.random()` gave, bit for bit, without a
    Python call per card (a quarter of the shuffle's instructions)."""
    cards.sort(key=partial(next, iter(rng.random, None)))


@cache
def _tables(opts: ClassicOptions) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]], set[int]]:
    """For each pile top: the cards it takes; for each card: the tops that take it; the cards
    that start a pile. Cards by their numbers, plain ints: `_play` looks every one up in a list,
    and CPython indexes a list by an int several times faster than by a `Card` (an int subclass)."""
    accepts: list[tuple[int, ...]] = [() for _ in range(_KEYS)]
    step = -1 if opts.descending else 1
    last = 1 if opts.descending else 10
    for top in DECK:
        if top.value == last:
            continue
        v = top.value + step
        if opts.alternate_colours:
            accepts[top] = tuple(int(card(c, v)) for c in Colour if c != top.colour)
        else:
            accepts[top] = (int(card(top.colour, v)),)
    preds: list[list[int]] = [[] for _ in range(_KEYS)]
    for top in DECK:
        for k in accepts[top]:
            preds[k].append(int(top))
    first = 10 if opts.descending else 1
    starters = {int(card(c, first)) for c in Colour}
    return accepts, [tuple(p) for p in preds], starters


@cache
def _competing(opts: ClassicOptions) -> list[frozenset[int]]:
    """For each card: the cards that can take a pile it could go on (another seat's copy of it;
    with alternate colours, its value in the other colours too). Only their plays can have
    stopped it: a play turns a pile topped by one of its own preds into one topped by itself."""
    _, preds, _ = _tables(opts)
    competing: list[frozenset[int]] = [frozenset() for _ in range(_KEYS)]
    for c in DECK:
        wanted = set(preds[c])
        competing[c] = frozenset(k for k in DECK if not wanted.isdisjoint(preds[k]))
    return competing


class ClassicRound(RoundBase):
    """One round of Ligretto. `apply` is the one way to change it."""

    game = "classic"

    def __init__(
        self,
        players: int,
        options: ClassicOptions,
        rng: random.Random,
        deals: Sequence[Deal] | None = None,
        piles: Sequence[Sequence[tuple[Seat, Card]]] = (),
    ) -> None:
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise RulesError(f"Ligretto takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
        self.players = players
        self.options = options
        self._rng = rng
        if deals is None:
            deals = []
            for _ in range(players):
                deck = list(DECK)
                shuffle(rng, deck)
                deals.append(deal_from(deck, players))
        if len(deals) != players:
            raise RulesError(f"{len(deals)} deals for {players} players")
        self.seats = [SeatState(d) for d in deals]
        self.piles: list[list[tuple[Seat, Card]]] = []
        self.result: RoundResult | None = None
        self.stuck_votes: set[Seat] = set()
        self._order_kept = options.recycle == "turn_over"
        self._accepts, self._preds, self._starters = _tables(options)
        self._competing = _competing(options)
        self._need = [0] * _KEYS
        self._avail = [0] * _KEYS
        self._open: dict[int, list[int]] = {}
        """Open piles by their top card, oldest first."""
        for k in self._starters:
            self._need[k] = _STARTER_NEED
        for pile in piles:
            self._preset_pile(list(pile))
        avail = self._avail
        face_down = options.stack_face_down
        for st in self.seats:
            for place in st.row:
                if place:
                    avail[place[-1]] += 1
            if st.stack and not face_down:
                avail[st.stack[-1]] += 1
            for k in st.hand:
                avail[k] += 1
            for k in st.discard:
                avail[k] += 1
        need = self._need
        self._fits = sum([need[k] > 0 and avail[k] > 0 for k in DECK])
        for seat, st in enumerate(self.seats):
            if not st.stack:
                self._finish(Ending.LIGRETTO, (seat,))
                return
        self._check_deadlock()

    def _preset_pile(self, pile: list[tuple[Seat, Card]]) -> None:
        """A scenario may start with piles already in the centre; each must be legal."""
        if not pile:
            raise RulesError("an empty centre pile")
        if pile[0][1] not in self._starters:
            raise RulesError(f"a centre pile cannot start with {pile[0][1]}")
        for (_, below), (_, above) in pairwise(pile):
            if above not in self._accepts[below]:
                raise RulesError(f"{above} cannot lie on {below} in a centre pile")
        for seat, _ in pile:
            if not 0 <= seat < self.players:
                raise RulesError(f"centre card owned by seat {seat + 1}, which is not playing")
            self.seats[seat].centre += 1
        top = pile[-1][1]
        idx = len(self.piles)
        self.piles.append(pile)
        if self._accepts[top]:
            self._open.setdefault(top, []).append(idx)
            for k in self._accepts[top]:
                self._need[k] += 1

    # ------------------------------------------------------------ queries

    def fits(self, card: int) -> bool:
        """Would some centre pile take this card now? Uses only what is on the table."""
        return self._need[card] > 0

    def pile_tops(self) -> list[Card]:
        """The top of every open pile (complete piles excluded)."""
        return [p[-1][1] for p in self.piles if self._accepts[p[-1][1]]]

    def complete_tops(self) -> list[Card]:
        """The top of every complete pile (it takes no more cards; it stays until the round ends)."""
        return [p[-1][1] for p in self.piles if not self._accepts[p[-1][1]]]

    def visible(self, seat: Seat) -> list[Card]:
        """The seat's cards it may play to the centre right now."""
        st = self.seats[seat]
        cards = [place[-1] for place in st.row if place]
        if st.stack and not self.options.stack_face_down:
            cards.append(st.stack[-1])
        if st.discard:
            cards.append(st.discard[-1])
        return cards

    def row_takes(self, row_top: Card, card: Card) -> bool:
        """pro_row: a row card takes one lower in another colour."""
        return card.value == row_top.value - 1 and card.colour != row_top.colour

    def legal_actions(self, seat: Seat) -> Iterator[ClassicAction]:
        if self.result is not None:
            return
        st = self.seats[seat]
        for card in self.visible(seat):
            if self._need[card] > 0:
                yield PlayCard(seat, card)
        if self.options.pro_row:
            movers = [st.discard[-1]] if st.discard else []
            if st.stack and not self.options.stack_face_down:
                movers.append(st.stack[-1])
            for i, place in enumerate(st.row):
                for card in movers:
                    if place and self.row_takes(place[-1], card):
                        yield MoveToRow(seat, card, i)
            if seat not in self.stuck_votes:
                yield VoteStuck(seat)
        if st.hand or st.discard:
            yield TurnHand(seat)

    def to_centre(self) -> tuple[int, int]:
        return sum(len(p) for p in self.piles), self.players * len(DECK)

    def scores(self) -> tuple[int, ...]:
        return tuple(st.centre - STACK_PENALTY * len(st.stack) for st in self.seats)

    def cards_of(self, seat: Seat) -> list[Card]:
        """Every card of this seat's deck that is in play, wherever it lies."""
        st = self.seats[seat]
        held = [c for place in st.row for c in place] + st.stack + st.hand + st.discard
        return held + [c for pile in self.piles for owner, c in pile if owner == seat]

    # ------------------------------------------------------------ changes

    def _play(self, action: PlayCard) -> Refusal | None:
        seat, card, _ = action
        key = int(card)  # the card's number, by which the tables (`_tables`) are looked up fastest
        st = self.seats[seat]
        avail = self._avail
        need = self._need
        # Where is it? Row tops first, then the stack top, then the discard top.
        source = -1
        for i, place in enumerate(st.row):
            if place and place[-1] == card:
                source = i
                break
        else:
            if st.stack and st.stack[-1] == card:
                if self.options.stack_face_down:
                    return Refusal(Reason.NOT_PLAYABLE, "the stack is face down")
                source = -2
            elif st.discard and st.discard[-1] == card:
                source = -3
            else:
                return Refusal(Reason.NOT_PLAYABLE, f"{card} is not on top")
        if need[key] <= 0:
            return Refusal(Reason.NO_FIT)

        # Take it from where it lies; the row refills from the stack. Every card that
        # becomes reachable or unreachable updates _avail (and _fits) on the spot.
        fits_before = self._fits
        made_reachable: Card | None = None
        refilled = False
        if source >= 0:
            place = st.row[source]
            place.pop()
            if place:
                made_reachable = place[-1]
            elif st.stack:
                moved = st.stack.pop()
                place.append(moved)
                refilled = True
                if self.options.stack_face_down:
                    made_reachable = moved
                elif st.stack:
                    made_reachable = st.stack[-1]
        elif source == -2:
            st.stack.pop()
            if st.stack:
                made_reachable = st.stack[-1]
        else:
            st.discard.pop()
        a = avail[key]
        avail[key] = a - 1
        if a == 1:  # need[key] > 0 here
            self._fits -= 1
        if made_reachable is not None:
            a = avail[made_reachable]
            avail[made_reachable] = a + 1
            if a == 0 and need[made_reachable] > 0:
                self._fits += 1

        # Onto a pile: the oldest of the equivalent piles, or a new one.
        accepts = self._accepts
        top: int | None = None
        if key in self._starters:
            idx = len(self.piles)
            self.piles.append([(seat, card)])
        else:
            open_piles = self._open
            for top in self._preds[key]:
                bucket = open_piles.get(top)
                if bucket:
                    idx = bucket.pop(0)
                    break
            else:  # pragma: no cover - need[card] > 0 guarantees a pile
                raise AssertionError("need count out of step with piles")
            for k in accepts[top]:
                n = need[k]
                need[k] = n - 1
                if n == 1 and avail[k] > 0:
                    self._fits -= 1
            self.piles[idx].append((seat, card))
        bucket = None
        if accepts[key]:
            bucket = self._open.get(key)
            if bucket is None:
                self._open[key] = [idx]
            else:
                bucket.append(idx)
            for k in accepts[key]:
                n = need[k]
                need[k] = n + 1
                if n == 0 and avail[k] > 0:
                    self._fits += 1
        st.centre += 1
        votes = None
        if self.stuck_votes:
            votes = frozenset(self.stuck_votes)
            self.stuck_votes.clear()
        self._undo.append((ClassicRound._unplay, seat, card, source, refilled, made_reachable, idx, top,
                           bool(accepts[key]) and bucket is None, votes, fits_before))

        if not st.stack:
            self._finish(Ending.LIGRETTO, (seat,))
        elif self._fits == 0 or self._order_kept:
            self._check_deadlock()
        return None

    def _turn(self, action: TurnHand) -> Refusal | None:
        seat = action[0]
        st = self.seats[seat]
        recycled = None
        if not st.hand:
            if not st.discard:
                return Refusal(Reason.NO_CARDS)
            recycled = tuple(st.discard)
            st.hand = st.discard
            st.discard = []
            if self._order_kept:
                st.hand.reverse()
            else:
                shuffle(self._rng, st.hand)
        hand = st.hand
        turned = hand[:-TURN_COUNT - 1:-1]  # the last 3 as a block turned over: its bottom card on top
        del hand[-TURN_COUNT:]
        st.discard += turned
        self._undo.append(_PLAIN_TURNS[seat] if recycled is None and len(turned) == TURN_COUNT
                          else (ClassicRound._unturn, seat, len(turned), recycled))
        if self._order_kept and not hand:
            self._check_deadlock()  # a pass through the hand ended: is everyone frozen?
        return None

    def _move_to_row(self, action: MoveToRow) -> Refusal | None:
        seat, card, place_no, _ = action
        if not self.options.pro_row:
            return Refusal(Reason.NOT_IN_VARIANT, "the row is no buffer")
        st = self.seats[seat]
        if not 0 <= place_no < len(st.row):
            return Refusal(Reason.ROW_FULL, f"no row place {place_no + 1}")
        place = st.row[place_no]
        from_stack = bool(st.stack) and st.stack[-1] == card and not self.options.stack_face_down
        if not from_stack and not (st.discard and st.discard[-1] == card):
            return Refusal(Reason.NOT_PLAYABLE, "only the stack or discard top moves")
        if not place or not self.row_takes(place[-1], card):
            return Refusal(Reason.ROW_FULL)
        self._undo.append((ClassicRound._unmove, seat, card, place_no, from_stack,
                           frozenset(self.stuck_votes), self._fits))
        self._avail_add(place[-1], -1)
        if from_stack:
            st.stack.pop()
            if st.stack:
                self._avail_add(st.stack[-1], 1)
        else:
            st.discard.pop()
        place.append(card)
        self.stuck_votes.clear()
        if not st.stack:
            self._finish(Ending.LIGRETTO, (seat,))
        else:
            self._check_deadlock()
        return None

    def _vote(self, action: VoteStuck) -> Refusal | None:
        seat = action.seat
        if not self.options.pro_row:
            return Refusal(Reason.NOT_IN_VARIANT, "the table finds deadlocks itself")
        if seat in self.stuck_votes:
            return Refusal(Reason.ALREADY_VOTED)
        self.stuck_votes.add(seat)
        self._undo.append((ClassicRound._unvote, seat))
        if len(self.stuck_votes) == self.players:
            self._finish(Ending.STUCK_VOTE, ())
        return None

    _handlers: ClassVar[dict[type, Callable[[Any, Any], Refusal | None]]] = {
        PlayCard: _play, TurnHand: _turn, MoveToRow: _move_to_row, VoteStuck: _vote}

    # ------------------------------------------------------------ the journal a match keeps

    @classmethod
    def pack_journal(cls, journal: Sequence[Any]) -> tuple[Any, ...]:
        """As `RoundBase.pack_journal`, with each card as its number: a tuple holding a `Card` (an
        object of a class of ours) would be walked by the collector for as long as it is kept."""
        packed: list[Any] = []
        for a in journal:
            kind = type(a)
            if kind is TurnHand:
                packed += (_TURN, a[0], a[1])
            elif kind is PlayCard:
                packed += (_PLAY, a[0], int(a[1]), a[2])
            elif kind is MoveToRow:
                packed += (_MOVE, a[0], int(a[1]), a[2], a[3])
            else:
                packed += cls._pack_plain(a)
        return tuple(packed)

    @classmethod
    def unpack_journal(cls, packed: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        i = 0
        while i < len(packed):
            kind = packed[i]
            if kind == _TURN:
                out.append(TurnHand(packed[i + 1], packed[i + 2]))
                i += 3
            elif kind == _PLAY:
                out.append(PlayCard(packed[i + 1], _BY_KEY[packed[i + 2]], packed[i + 3]))
                i += 4
            elif kind == _MOVE:
                out.append(MoveToRow(packed[i + 1], _BY_KEY[packed[i + 2]], packed[i + 3], packed[i + 4]))
                i += 5
            else:
                action, i = cls._unpack_plain(packed, i)
                out.append(action)
        return out

    # ------------------------------------------------------------ taking back (RoundBase._lost_race)

    _timeless = True

    def _affects(self, entry: ClassicAction, action: ClassicAction) -> bool:
        """A card refused for want of a pile can only have lost it to a card competing for the
        same piles (`_competing`); only a card played anywhere clears the votes. What else
        another seat does stays in its own cards."""
        kind = type(action)
        if kind is PlayCard:
            return type(entry) is PlayCard and entry.card in self._competing[action.card]
        if kind is VoteStuck:
            return type(entry) is PlayCard or type(entry) is MoveToRow
        return False

    def _unshare(self, action: ClassicAction) -> None:
        self.seats = self.seats[:]  # a seat is copied when first changed (`_own`): most are not
        self._owned = {action.seat}
        self.seats[action.seat] = self.seats[action.seat].copy()
        self.piles = [p[:] for p in self.piles]
        self._need, self._avail = self._need[:], self._avail[:]
        self._open = {top: bucket[:] for top, bucket in self._open.items()}
        self.stuck_votes = set(self.stuck_votes)

    def _own(self, seat: Seat) -> SeatState:
        """On a scratch copy: this seat's own cards, copied the first time an undo changes them."""
        if seat not in self._owned:
            self._owned.add(seat)
            self.seats[seat] = self.seats[seat].copy()
        return self.seats[seat]

    def _unplay(self, seat: Seat, card: Card, source: int, refilled: bool, made_reachable: Card | None,
                idx: int, top: int | None, new_bucket: bool, votes: frozenset[Seat] | None,
                fits: int) -> None:
        """`_play` backwards, step by step; `_fits` as it was (it follows from the counts)."""
        st, need, avail, accepts = self._own(seat), self._need, self._avail, self._accepts
        self.result = None
        if votes:
            self.stuck_votes.update(votes)
        st.centre -= 1
        if accepts[card]:
            self._open[card].pop()
            if new_bucket:
                del self._open[card]
            for k in accepts[card]:
                need[k] -= 1
        self.piles[idx].pop()
        if top is None:
            self.piles.pop()
        else:
            self._open[top].insert(0, idx)
            for k in accepts[top]:
                need[k] += 1
        avail[card] += 1
        if made_reachable is not None:
            avail[made_reachable] -= 1
        self._fits = fits
        if source >= 0:
            place = st.row[source]
            if refilled:
                st.stack.append(place.pop())
            place.append(card)
        elif source == -2:
            st.stack.append(card)
        else:
            st.discard.append(card)

    def _unturn(self, seat: Seat, turned: int, recycled: tuple[Card, ...] | None) -> None:
        st = self._own(seat)
        self.result = None
        back = st.discard[-turned:]
        del st.discard[-turned:]
        back.reverse()
        st.hand += back
        if recycled is not None:
            st.hand, st.discard = [], list(recycled)

    def _unmove(self, seat: Seat, card: Card, place_no: int, from_stack: bool, votes: frozenset[Seat],
                fits: int) -> None:
        st = self._own(seat)
        self.result = None
        self.stuck_votes.update(votes)
        place = st.row[place_no]
        place.pop()
        if from_stack:
            if st.stack:
                self._avail[st.stack[-1]] -= 1
            st.stack.append(card)
        else:
            st.discard.append(card)
        self._avail[place[-1]] += 1
        self._fits = fits

    def _unvote(self, seat: Seat) -> None:
        self.result = None
        self.stuck_votes.discard(seat)

    # ------------------------------------------------------------ bookkeeping

    def _avail_add(self, k: int, d: int) -> None:
        a = self._avail[k]
        if self._need[k] > 0:
            self._fits += (a + d > 0) - (a > 0)
        self._avail[k] = a + d

    def _need_add(self, k: int, d: int) -> None:
        n = self._need[k]
        if self._avail[k] > 0:
            self._fits += (n + d > 0) - (n > 0)
        self._need[k] = n + d

    def reachable_hand_cards(self, seat: Seat) -> list[Card]:
        """Hand and discard cards that can still reach the discard top with nothing else moving.

        Shuffling makes every order possible, so every card counts. Turning the pile
        over keeps the order, so only the cards that land on top of a 3-card turn
        during one pass through the hand ever show.
        """
        st = self.seats[seat]
        if self.options.recycle == "shuffle":
            return st.hand + st.discard
        tops = [st.discard[-1]] if st.discard else []
        tops += _turn_tops(st.hand)
        recycled = (st.discard + st.hand[::-1])[::-1]
        tops += _turn_tops(recycled)
        return tops

    def can_progress(self, seat: Seat) -> bool:
        """Could this seat ever play a card to the centre if nobody else moved?"""
        st = self.seats[seat]
        need = self._need
        if any(place and need[place[-1]] > 0 for place in st.row):
            return True
        if st.stack and not self.options.stack_face_down and need[st.stack[-1]] > 0:
            return True
        return any(need[c] > 0 for c in self.reachable_hand_cards(seat))

    def buffer_move_possible(self) -> bool:
        """pro_row: could any stack or hand card still go onto a row card?"""
        for seat, st in enumerate(self.seats):
            tops = [place[-1] for place in st.row if place]
            cards = self.reachable_hand_cards(seat)
            if st.stack and not self.options.stack_face_down:
                cards = [*cards, st.stack[-1]]
            if any(self.row_takes(top, c) for top in tops for c in cards):
                return True
        return False

    def _check_deadlock(self) -> None:
        """End the round when nobody can ever play again (exact: docs/rules.md, "Ligretto")."""
        if self._fits > 0 and self.options.recycle == "shuffle":
            return
        if any(self.can_progress(seat) for seat in range(self.players)):
            return
        if self.options.pro_row and self.buffer_move_possible():
            return
        self._finish(Ending.DEADLOCK, ())

    def _finish(self, ending: Ending, finishers: tuple[Seat, ...]) -> None:
        self._end(RoundResult(ending, finishers, self.scores()))

    # ------------------------------------------------------------ output

    def snapshot(self) -> dict[str, object]:
        """Everything on the table, as plain data (scenario output, debugging)."""

        def names(cards: Sequence[Card]) -> list[str]:
            return [str(c) for c in cards]

        return {
            "piles": [
                {"cards": names([c for _, c in p]), "owners": [s for s, _ in p],
                 "complete": not self._accepts[p[-1][1]]}
                for p in self.piles
            ],
            "seats": [
                {
                    "row": [names(place) for place in st.row],
                    "stack": names(st.stack[::-1]),
                    "hand": names(st.hand[::-1]),
                    "discard": names(st.discard[::-1]),
                    "centre": st.centre,
                }
                for st in self.seats
            ],
            "stuck_votes": sorted(self.stuck_votes),
        }


_PLAY, _TURN, _MOVE = (journal_kinds(ClassicRound)[1][kind] for kind in (PlayCard, TurnHand, MoveToRow))
"""The numbers `RoundBase.pack_journal` gives these actions, which `ClassicRound` packs itself."""

_PLAIN_TURNS = tuple((ClassicRound._unturn, seat, TURN_COUNT, None) for seat in range(MAX_PLAYERS))
"""The undo of each seat's turn of 3 from a hand that needed no recycling: two actions in three
are such turns, and their undo is the same every time, so it is made once, not per turn."""
