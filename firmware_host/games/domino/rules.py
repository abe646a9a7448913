"""Ligretto Domino (docs/rules.md, "Ligretto Domino"): two-coloured cards laid next to four tokens.

Squares are (row, column) pairs. A square is free when it is on the board,
not covered by a card or joker, and no token stands on it. The board's shape
and colours are data (`Board`, built from `games/domino/data/` by `games/domino/layouts.py`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations_with_replacement
from typing import Any, ClassVar, NamedTuple

from ...engine.round import (
    Ending,
    Reason,
    Refusal,
    RoundBase,
    RoundResult,
    RulesError,
    Seat,
    TableColour,
    journal_kinds,
)

MIN_PLAYERS, MAX_PLAYERS = 2, 4
TOKENS = 4
JOKERS = 2
ASIDE = 2  # cards a loser puts onto the player board, and a winner-free round takes back

Square = tuple[int, int]
_STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))


class DominoColour(TableColour):
    RED = 0
    YELLOW = 1
    GREEN = 2
    BLUE = 3
    PURPLE = 4

    @classmethod
    def parse(cls, letter: str) -> DominoColour:
        for c in cls:
            if letter.upper() in (c.letter, c.name):
                return c
        raise RulesError(f"not a domino colour: {letter!r} (use R, Y, G, B, P)")


class DominoCard(NamedTuple):
    """A card's two halves, lower colour first, so equal cards compare equal."""

    a: DominoColour
    b: DominoColour

    def __str__(self) -> str:
        return f"{self.a.letter}{self.b.letter}"

    @classmethod
    def parse(cls, text: str) -> DominoCard:
        t = text.strip()
        if len(t) != 2:
            raise RulesError(f"not a domino card: {text!r} (write two colour letters, e.g. RB)")
        a, b = sorted((DominoColour.parse(t[0]), DominoColour.parse(t[1])))
        return cls(a, b)


SET: tuple[DominoCard, ...] = tuple(
    DominoCard(a, b) for a, b in combinations_with_replacement(DominoColour, 2)
)
"""A player's 15 cards: every pair of the 5 colours, doubles included."""


_CARD_NUMBER: dict[DominoCard, int] = {card: number for number, card in enumerate(SET)}
"""A card's place in `SET`: the round keeps colour pairs by it (`_pairs[n]`; bit n of a token's
colours), and `DominoRound.pack_journal` packs a card as it."""
_CARD_BIT: dict[DominoCard, int] = {card: 1 << number for card, number in _CARD_NUMBER.items()}


def _bits(cards: Iterable[DominoCard]) -> int:
    """The cards as one number, bit n for `SET[n]`: sets of colour pairs that `|` joins and `&`
    meets in one step each."""
    return sum(map(_CARD_BIT.__getitem__, set(cards)))


def _is_square(value: object) -> bool:
    """A (row, column) pair of whole numbers (True is not one: its type is bool)."""
    return type(value) is tuple and len(value) == 2 and type(value[0]) is int and type(value[1]) is int


def _as_square(value: object) -> Square:
    """Lists from JSON become tuples; anything else is left for `_is_square` to refuse."""
    return tuple(value) if isinstance(value, list) else value  # type: ignore[return-value]


def _touch(a: Square, b: Square) -> bool:
    """Edge to edge (a corner is not enough)."""
    return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1


def neighbours(sq: Square) -> Iterator[Square]:
    r, c = sq
    for dr, dc in _STEPS:
        yield (r + dr, c + dc)


@dataclass(frozen=True, slots=True)
class Board:
    name: str
    colours: Mapping[Square, DominoColour]
    tokens: tuple[Square, ...]
    """The layout's recommended token squares."""

    def __post_init__(self) -> None:
        if len(self.tokens) != TOKENS or len(set(self.tokens)) != TOKENS:
            raise RulesError(f"layout {self.name}: needs {TOKENS} distinct token squares")
        for sq in self.tokens:
            if sq not in self.colours:
                raise RulesError(f"layout {self.name}: token square {sq} is off the board")


Cells = dict[Square, tuple[int, tuple[tuple[Square, int], ...]]]
Around = tuple[tuple[Square, tuple[tuple[Square, int], ...]], ...]
Local = dict[Square, tuple[int, dict[int, int], Around]]
Reach = dict[Square, tuple[tuple[tuple[Square, Square], ...], ...]]
ByPair = tuple[tuple[tuple[Square, Square], ...], ...]
Geometry = tuple[dict[Square, tuple[Square, ...]], Cells, Local, Reach, ByPair, list[int]]
_PATTERNS_KEPT = 128
"""A token square's colour pairs are kept for at most this many patterns of the free squares
around it (`DominoRound._colours`), the oldest going first: over 3,000 rounds of the bench's
bots, 15 % of the asks meet a pattern not kept (10 % with no bound, every one of them new; 32 %
keeping only the first 128), and the memory stays near 2 MB for the largest layout."""
_GEOMETRY: dict[int, tuple[Board, Geometry]] = {}


def _within_two(sq: Square, bit: Mapping[Square, int]) -> int:
    """The bits of the squares at most two steps from `sq` (not itself): a token's places."""
    return sum(b for other, b in bit.items() if 0 < abs(other[0] - sq[0]) + abs(other[1] - sq[1]) <= 2)


def _geometry(board: Board) -> Geometry:
    """Worked out once per layout (the last few are kept), since every action asks: each
    square's neighbours on the board; each square's bit in a round's `_free_bits` and, with
    each neighbour, the number in `SET` of the colour pair a card covering both shows
    (`cells`); for a token on each square, the bits of the squares within two steps (its places
    lie there), the colour pairs found there for each pattern of free squares met so far
    (`DominoRound._colours`, shared by every round on the layout), and its places neighbour by
    neighbour, each with its colour pair's bit, so that a covered neighbour's squares beyond it
    are never looked at (`local`); the same places per colour pair, by its number, as
    (near, far) pairs in that order (`reach`: a bot lists where its card fits with no other
    pair looked at; far is never the token's own square, which is not free); per colour pair,
    every (near, far) pair of touching squares showing it, in the board's order (a blocked
    token may move to any of them); and how many pairs of touching squares show each colour
    pair on the empty board (a round's `_pairs` starts from it)."""
    kept = _GEOMETRY.get(id(board))
    if kept is None or kept[0] is not board:
        cols = board.colours
        adj = {sq: tuple(n for n in neighbours(sq) if n in cols) for sq in cols}
        steps = {sq: tuple((n, _CARD_NUMBER[DominoCard(min(cols[sq], cols[n]), max(cols[sq], cols[n]))])
                           for n in near) for sq, near in adj.items()}
        bit = {sq: 1 << i for i, sq in enumerate(cols)}
        cells = {sq: (bit[sq], steps[sq]) for sq in cols}
        local = {sq: (_within_two(sq, bit),
                      {}, tuple((near, tuple((far, 1 << n) for far, n in steps[near] if far != sq))
                                for near in adj[sq]))
                 for sq in cols}
        reach = {sq: tuple(tuple((near, far) for near in adj[sq] for far, n in steps[near]
                                 if far != sq and n == number) for number in range(len(SET)))
                 for sq in cols}
        by_pair: list[list[tuple[Square, Square]]] = [[] for _ in SET]
        for sq in cols:
            for n, number in steps[sq]:
                by_pair[number].append((sq, n))
        empty = [len(found) // 2 for found in by_pair]  # each pair of squares is listed both ways round
        while len(_GEOMETRY) >= 8:
            del _GEOMETRY[next(iter(_GEOMETRY))]
        kept = _GEOMETRY[id(board)] = (board, (adj, cells, local, reach,
                                               tuple(tuple(found) for found in by_pair), empty))
    return kept[1]


@dataclass(frozen=True, slots=True)
class DominoOptions:
    tokens: str = "recommended"  # or "random"
    joker_hold_s: float = 5.0
    joker_wait_s: float = 10.0
    """No card fits anywhere and only a joker could help: the round ends when none is played this long."""


class PlaceDomino(NamedTuple):
    """Lay the top card on `near` (touching the token) and `far`; the token moves to `far`.

    For a token this seat blocked, `near` and `far` may be any free pair on the board.
    """

    seat: Seat
    card: DominoCard
    token: int
    near: Square
    far: Square
    ts: int = 0


class PlayJoker(NamedTuple):
    seat: Seat
    token: int
    square: Square
    ts: int = 0


class DiscardDomino(NamedTuple):
    """The top card fits nowhere this seat may place it now: onto the discard pile."""

    seat: Seat
    ts: int = 0


DominoAction = PlaceDomino | PlayJoker | DiscardDomino

JOKER = "joker"
_DEADLINE = "deadline"
"""`DominoRound.deadline`'s answer, kept with the rest of `DominoRound._known`."""
_FITTING = "fitting"
"""The colour pairs that fit at some token, whoever asks and whenever (`_fitting_token`), kept
with the rest of `DominoRound._known`."""
ANY_SEAT = -1
"""A token blocked before anyone played (a cramped layout): whoever places first frees it."""


@dataclass(slots=True)
class Token:
    square: Square
    reserved_by: Seat | None = None
    reserved_until: int = 0
    blocked_for: Seat | None = None


@dataclass(slots=True)
class DominoSeat:
    hand: list[DominoCard]  # face down, top last
    discard: list[DominoCard] = field(default_factory=list)
    jokers: int = JOKERS
    placed: int = 0
    holds: int = -1
    """The held cards (hand and discard) as bits (`_bits`): whether a card some seat holds fits
    near a token is then one `&`, asked after every card laid. A card leaves them only when it
    is laid (a player has each card once) and comes back with its undo."""

    def __post_init__(self) -> None:
        if self.holds < 0:
            self.holds = _bits(self.hand) | _bits(self.discard)

    def held(self) -> list[DominoCard]:
        return self.hand + self.discard


class DominoRound(RoundBase):
    game = "domino"

    def __init__(
        self,
        players: int,
        options: DominoOptions,
        rng: random.Random,
        board: Board,
        aside: Sequence[Sequence[DominoCard]] | None = None,
        hands: Sequence[Sequence[DominoCard]] | None = None,
        tokens: Sequence[Square] | None = None,
        jokers: Sequence[int] | None = None,
        covered: Mapping[Square, tuple[Seat, DominoCard | str]] | None = None,
    ) -> None:
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise RulesError(f"Ligretto Domino takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
        self.players = players
        self.options = options
        self.board = board
        self.aside = [list(a) for a in aside] if aside is not None else [[] for _ in range(players)]
        if hands is None:
            hands = []
            for seat in range(players):
                cards = list(SET)
                for c in self.aside[seat]:
                    cards.remove(c)
                rng.shuffle(cards)
                hands.append(cards)
        if len(hands) != players:
            raise RulesError(f"cards given for {len(hands)} seats, {players} are playing")
        for seat, hand in enumerate(hands):
            if len(set(hand)) != len(hand):
                twice = sorted({str(c) for c in hand if list(hand).count(c) > 1})
                raise RulesError(f"seat {seat + 1} holds {', '.join(twice)} twice: "
                                 "a player has each card once")
        self.seats = [DominoSeat(hand=list(h)) for h in hands]
        if jokers is not None:
            for st, n in zip(self.seats, jokers, strict=True):
                st.jokers = n
        if tokens is None and options.tokens == "random":
            tokens = rng.sample(sorted(board.colours), TOKENS)
        elif tokens is None:
            tokens = board.tokens
        if len(tokens) != TOKENS or len(set(tokens)) != TOKENS:
            raise RulesError(f"{TOKENS} tokens on distinct squares are needed")
        for sq in tokens:
            if sq not in board.colours:
                raise RulesError(f"token square {list(sq)} is off the board")
        self.tokens = [Token(tuple(sq)) for sq in tokens]  # type: ignore[arg-type]
        self.covered: dict[Square, tuple[Seat, DominoCard | str]] = dict(covered or {})
        """Square: the seat and the card (or JOKER) on it; a scenario may start with some."""
        self._adj, self._cells, self._local, self._reach, self._by_pair, empty = _geometry(board)
        self._free = set(board.colours)
        """The free squares, kept as cards, jokers and tokens move (`free` is asked very often)."""
        self._free_bits = (1 << len(board.colours)) - 1
        """The same, a bit a square (`_cells`): the free squares around a token as one number."""
        self._pairs: list[int] = empty[:]
        """Per colour pair (by its number in `SET`), how many pairs of touching free squares
        show it: whether a card fits anywhere on the board is then one look-up. Kept as squares
        are freed and taken (`_set_free`, `_set_taken`), so undo restores it too."""
        for sq in {t.square for t in self.tokens} | set(self.covered):  # from the empty board's
            self._set_taken(sq)
        self._known: dict[Any, Any] = {}
        """What was worked out from the board and the tokens as they are now, cleared at every
        change: `placements`' answers by (seat, card), `joker_for`'s, the colour pairs that fit
        for anyone (`_fitting_token`), the deadline, and each token's colour pairs by its number
        (`_colours`)."""
        self._hold_ns = int(options.joker_hold_s * 1e9)
        self._wait_ns = int(options.joker_wait_s * 1e9)
        self.waiting_since: int | None = None
        """Set while no card can be placed but a joker could open a place: when that began."""
        self.result: RoundResult | None = None
        for seat, st in enumerate(self.seats):
            if not st.hand:
                self._finish(Ending.LIGRETTO_STOP, (seat,))
                return
        self._check_blocked(None)
        self._check_no_placement(0)

    # ------------------------------------------------------------ geometry

    def free(self, sq: Square) -> bool:
        """On the board, not covered by a card or joker, no token on it."""
        return sq in self._free

    def places_at(self, token: int) -> Iterator[tuple[Square, Square]]:
        """Every (near, far) pair of free squares a card could cover next to this token."""
        free, adj = self._free, self._adj
        for near in adj[self.tokens[token].square]:
            if near in free:
                for far in adj[near]:
                    if far in free:
                        yield near, far

    def free_pairs(self) -> Iterator[tuple[Square, Square]]:
        """Every ordered pair of edge-adjacent free squares on the board."""
        free, adj = self._free, self._adj
        for sq in self.board.colours:
            if sq in free:
                for other in adj[sq]:
                    if other in free:
                        yield sq, other

    def _set_free(self, sq: Square) -> None:
        """`sq` is free from now on: its edges to free squares count in `_pairs`."""
        free = self._free
        if sq not in free:
            pairs = self._pairs
            bit, steps = self._cells[sq]
            for other, n in steps:
                if other in free:
                    pairs[n] += 1
            free.add(sq)
            self._free_bits |= bit

    def _set_taken(self, sq: Square) -> None:
        """`sq` is covered or a token stands on it: its edges leave `_pairs`."""
        free = self._free
        if sq in free:
            free.discard(sq)
            pairs = self._pairs
            bit, steps = self._cells[sq]
            self._free_bits &= ~bit
            for other, n in steps:
                if other in free:
                    pairs[n] -= 1

    def _lay(self, near: Square, far: Square, number: int) -> None:
        """`_set_taken` for both halves of a card laid on two free touching squares, in one
        call (every card laid comes here): the pair they formed shows the card's colours."""
        free, pairs, cells = self._free, self._pairs, self._cells
        free.discard(near)
        free.discard(far)
        pairs[number] -= 1
        near_bit, steps = cells[near]
        for other, n in steps:
            if other in free:
                pairs[n] -= 1
        far_bit, steps = cells[far]
        for other, n in steps:
            if other in free:
                pairs[n] -= 1
        self._free_bits &= ~(near_bit | far_bit)

    def _colours(self, token: int) -> int:
        """The colour pairs a card could cover at `token` now, as bits (`_bits`): whether a card
        fits there is then one `&`, and whether a card some seat holds fits one more.

        They depend only on which squares within two steps of the token are free, so they are
        kept per token square and pattern of those squares (`_geometry`'s `local`, shared by
        every round on the layout): asked after every card laid, for every token, they are
        found again with one look-up, and nothing kept ever goes stale (a round that undoes a
        play, or tries a joker, just asks again). Worked out neighbour by neighbour the first
        time a pattern is met. Kept with `_known` too, as every token is asked again and again
        while nothing changes (a discard changes nothing on the board)."""
        known = self._known
        found: int | None = known.get(token)
        if found is None:
            sq = self.tokens[token].square
            zone, seen, around = self._local[sq]
            pattern = self._free_bits & zone
            found = seen.get(pattern)
            if found is None:
                free = self._free
                found = 0
                for near, beyond in around:
                    if near in free:
                        for far, bit in beyond:
                            if far in free:
                                found |= bit
                if len(seen) >= _PATTERNS_KEPT:
                    del seen[next(iter(seen))]  # the oldest pattern goes
                seen[pattern] = found
            known[token] = found
        return found

    def _move(self, tok: Token, to: Square) -> None:
        if tok.square not in self.covered:
            self._set_free(tok.square)
        self._set_taken(to)
        tok.square = to

    def _cover(self, sq: Square, what: tuple[Seat, DominoCard | str]) -> None:
        self.covered[sq] = what
        self._set_taken(sq)

    def matches(self, card: DominoCard, near: Square, far: Square) -> bool:
        cols = self.board.colours
        x, y = cols[near], cols[far]
        return (x, y) == card if x <= y else (y, x) == card

    def placements(self, seat: Seat, card: DominoCard, ts: int | None = None) -> Iterator[PlaceDomino]:
        """Every legal placement of `card` for `seat` (reservations checked when `ts` is given).

        Without `ts` (screens and cursors ask often) the answer is kept until the board
        or a token changes."""
        if ts is not None:
            return iter(self.placement_list(seat, card, ts))
        key = (seat, card)
        found = self._known.get(key)
        if found is None:
            found = self._known[key] = tuple(self.placement_list(seat, card, None))
        return iter(found)

    def owed(self, seat: Seat) -> list[int]:
        """Tokens this seat blocked: its next card must move one of them (rulebook 002)."""
        t0, t1, t2, t3 = self.tokens  # TOKENS: every action asks, so no loop
        if t0.blocked_for is t1.blocked_for is t2.blocked_for is t3.blocked_for is None:
            return []
        return [i for i, tok in enumerate(self.tokens) if tok.blocked_for == seat]

    def placement_list(self, seat: Seat, card: DominoCard, ts: int | None) -> list[PlaceDomino]:
        """`placements` as a list, in its order (token by token, `places_at`'s order or, for a
        blocked token, `free_pairs`'), built in one pass: a bot asks at every card it turns up.
        A card that fits at no token is answered at once, as `_fitting_token` answers it (two
        in three fit nowhere). The pairs showing the card's colours are kept per token square
        (`_reach`); a token whose colour pairs lack the card is skipped unscanned, and so is a
        blocked token when no pair on the whole board shows the card (`_pairs`)."""
        number = _CARD_NUMBER[card]
        bit = 1 << number
        known = self._known
        fitting = known.get(_FITTING)
        if fitting is None:
            fitting = known[_FITTING] = self._fitting_anywhere()
        if not fitting & bit:
            return []  # it fits at no token, whoever asks and whenever (`_fitting_token`)
        owed = self.owed(seat)
        free, reach = self._free, self._reach
        new = tuple.__new__
        out: list[PlaceDomino] = []
        for i, tok in enumerate(self.tokens):
            if owed and i not in owed:
                continue
            blocked = tok.blocked_for
            if blocked is not None:
                if blocked in (seat, ANY_SEAT):
                    if not self._pairs[number]:
                        continue
                    for near, far in self._by_pair[number]:
                        if near in free and far in free:
                            out.append(new(PlaceDomino, (seat, card, i, near, far, 0)))
                continue
            if ts is not None and tok.reserved_by is not None and tok.reserved_by != seat \
                    and ts < tok.reserved_until:
                continue
            colours = known.get(i)  # `_colours`, spelt out for the usual answer (kept)
            if not (self._colours(i) if colours is None else colours) & bit:
                continue
            for near, far in reach[tok.square][number]:
                if near in free and far in free:
                    out.append(new(PlaceDomino, (seat, card, i, near, far, 0)))
        return out

    def joker_squares(self, token: int) -> list[Square]:
        tok = self.tokens[token]
        if tok.blocked_for is not None:
            return []
        return [sq for sq in self._adj[tok.square] if sq in self._free]

    def top_card(self, seat: Seat) -> DominoCard | None:
        hand = self.seats[seat].hand
        return hand[-1] if hand else None

    def legal_actions(self, seat: Seat, ts: int = 0) -> Iterator[DominoAction]:
        if self.result is not None:
            return
        top = self.top_card(seat)
        if top is not None:
            fits = False
            for place in self.placements(seat, top, ts):
                fits = True
                yield place
            if not fits:
                yield DiscardDomino(seat)
        if self.seats[seat].jokers and not self.owed(seat):
            for i, tok in enumerate(self.tokens):
                if not self._reserved_against(tok, seat, ts):
                    for sq in self.joker_squares(i):
                        yield PlayJoker(seat, i, sq)

    def _reserved_against(self, tok: Token, seat: Seat, ts: int) -> bool:
        return tok.reserved_by is not None and tok.reserved_by != seat and ts < tok.reserved_until

    # ------------------------------------------------------------ changes

    def _discard(self, action: DiscardDomino) -> Refusal | None:
        st = self.seats[action.seat]
        if not st.hand:
            return Refusal(Reason.NOT_HELD, "no card turned up")
        token = self._fitting_token(action.seat, st.hand[-1], action.ts)
        if token is not None:  # the rulebook: a card that matches is put down
            return Refusal(Reason.FITS, f"token {token + 1}")
        st.discard.append(st.hand.pop())
        turned = None if st.hand else self._turn_over_if_empty(st)
        self._undo.append((DominoRound._undiscard, action.seat, turned))
        return None

    def _fitting_token(self, seat: Seat, card: DominoCard, ts: int) -> int | None:
        """The first token `card` could be laid at by `seat` now (as `placements` finds them).

        A bot asks at every card it turns up, and two in three fit nowhere: the colour pairs
        that fit at any token, whichever seat asks and whenever, are kept until the board or a
        token changes (with every free pair's while a token is blocked: its seat may use any),
        and a card outside them is answered at once. Only a discard asks (a bot asks for its
        placements instead), once, so no other answer is kept."""
        seen = self._known
        fitting = seen.get(_FITTING)
        if fitting is None:
            fitting = seen[_FITTING] = self._fitting_anywhere()
        if not fitting & _CARD_BIT[card]:
            return None
        owed = self.owed(seat)
        number = _CARD_NUMBER[card]
        bit = 1 << number
        for i, tok in enumerate(self.tokens):
            if owed and i not in owed:
                continue
            if tok.blocked_for is not None:
                if tok.blocked_for in (seat, ANY_SEAT) and self._pairs[number]:
                    return i
                continue
            if tok.reserved_by is not None and tok.reserved_by != seat and ts < tok.reserved_until:
                continue
            if bit & self._colours(i):
                return i
        return None

    def _fitting_anywhere(self) -> int:
        """The colour pairs of every token's places, as bits; while a token is blocked, those
        of every free pair on the board too (its seat may lay a card on any)."""
        fitting = 0
        blocked = False
        for i, tok in enumerate(self.tokens):
            if tok.blocked_for is None:
                fitting |= self._colours(i)
            else:
                blocked = True
        if blocked:
            for n, count in enumerate(self._pairs):
                if count:
                    fitting |= 1 << n
        return fitting

    def _claimable(self, seat: Seat, token: int, ts: int) -> Refusal | None:
        if not 0 <= token < TOKENS:
            return Refusal(Reason.NO_SUCH_TOKEN)
        tok = self.tokens[token]
        t0, t1, t2, t3 = self.tokens  # TOKENS: the usual answer (no token blocked, none held) first
        if t0.blocked_for is t1.blocked_for is t2.blocked_for is t3.blocked_for is None \
                and tok.reserved_by is None:
            return None
        owed = self.owed(seat)
        if owed and token not in owed:
            return Refusal(Reason.BLOCKED, f"move token {owed[0] + 1} first")
        if tok.blocked_for not in (None, seat, ANY_SEAT):
            return Refusal(Reason.BLOCKED, f"seat {tok.blocked_for + 1} must free it")
        if self._reserved_against(tok, seat, ts):
            return Refusal(Reason.RESERVED, f"joker of seat {tok.reserved_by + 1}")  # type: ignore[operator]
        return None

    def _place(self, action: PlaceDomino) -> Refusal | None:
        seat, card, token, near, far, ts = action
        if type(near) is not tuple or type(far) is not tuple:
            near, far = _as_square(near), _as_square(far)
        st = self.seats[seat]
        if not st.hand or st.hand[-1] != card:
            return Refusal(Reason.NOT_HELD, "not your top card")
        # `_is_square` for both, `_touch` and `matches`, spelt out: every card laid comes here
        if not (len(near) == 2 == len(far)
                and type(near[0]) is type(near[1]) is type(far[0]) is type(far[1]) is int):
            return Refusal(Reason.NO_FIT, "squares are (row, column)")
        refusal = self._claimable(seat, token, ts)
        if refusal is not None:
            return refusal
        tok = self.tokens[token]
        if abs(near[0] - far[0]) + abs(near[1] - far[1]) != 1:
            return Refusal(Reason.NO_FIT, "the halves must touch")
        if near not in self._free or far not in self._free:
            for sq in (near, far):
                if sq not in self.board.colours:
                    return Refusal(Reason.OFF_BOARD, f"square {list(sq)}")
            return Refusal(Reason.SQUARE_TAKEN)
        at = tok.square
        if tok.blocked_for is None and abs(at[0] - near[0]) + abs(at[1] - near[1]) != 1:
            return Refusal(Reason.NOT_ADJACENT)
        cols = self.board.colours
        x, y = cols[near], cols[far]
        if ((x, y) if x <= y else (y, x)) != card:
            return Refusal(Reason.NO_FIT, "colours differ")
        freed = tok.square  # the card covers both squares and the token moves to far (_cover, _move)
        # A token's colour pairs depend on the squares within two steps of it. Near, far and the
        # square the token leaves lie within a step of near (unless the token was blocked, when
        # it may come from anywhere), so a token more than three steps from near keeps its own.
        known = self._known
        kept = (known.get(0), known.get(1), known.get(2), known.get(3)) if tok.blocked_for is None \
            else (None,) * TOKENS
        before = self._before()
        covered = self.covered
        covered[near] = covered[far] = (seat, card)
        number = _CARD_NUMBER[card]
        self._lay(near, far, number)
        freed_now = freed not in covered
        if freed_now:
            self._set_free(freed)
        tok.square = far
        tok.blocked_for = None
        t0, t1, t2, t3 = tokens = self.tokens  # TOKENS; mostly no joker holds one
        if not t0.reserved_by is t1.reserved_by is t2.reserved_by is t3.reserved_by is None:
            for other in tokens:  # a joker holds its token only until its player's next card
                if other.reserved_by == seat:
                    other.reserved_by = None
            tok.reserved_by = None
        self._known.clear()
        st.hand.pop()
        st.holds &= ~(1 << number)
        st.placed += 1
        self._undo.append((DominoRound._unplace, seat, card, near, far, freed if freed_now else None,
                           None if st.hand else self._turn_over_if_empty(st), before))
        if not st.hand:
            self._finish(Ending.LIGRETTO_STOP, (seat,))
            return None
        # _check_blocked(seat), then _check_no_placement(ts) in one look at the tokens: most
        # of the time some seat holds a card that fits at some token, and that is all.
        fitting = 0
        blocked = False
        row, column = near
        for i, other in enumerate(self.tokens):
            if other.blocked_for is None:
                found = kept[i]
                at = other.square
                if found is None or i == token or abs(at[0] - row) + abs(at[1] - column) <= 3:
                    found = self._colours(i)
                else:
                    known[i] = found
                if found:
                    fitting |= found
                    continue
                other.blocked_for = seat
                other.reserved_by = None
                self._known.clear()
            blocked = True
        if not blocked:  # `_fitting_anywhere`, which the next seat asks
            self._known[_FITTING] = fitting
        for held in self.seats:
            if fitting & held.holds:
                self.waiting_since = None
                return None
        self._check_no_placement(ts)
        return None

    def _joker(self, action: PlayJoker) -> Refusal | None:
        seat, token, square, ts = action
        square = _as_square(square)
        st = self.seats[seat]
        if not _is_square(square):
            return Refusal(Reason.NOT_ADJACENT, "a square is (row, column)")
        if st.jokers <= 0:
            return Refusal(Reason.NO_JOKERS)
        refusal = self._claimable(seat, token, ts)
        if refusal is not None:
            return refusal
        tok = self.tokens[token]
        if tok.blocked_for is not None:
            return Refusal(Reason.BLOCKED, "place a card anywhere first")
        if not _touch(tok.square, square):
            return Refusal(Reason.NOT_ADJACENT)
        if square not in self.board.colours:
            return Refusal(Reason.OFF_BOARD, f"square {list(square)}")
        if not self.free(square):
            return Refusal(Reason.SQUARE_TAKEN)
        before = self._before()
        st.jokers -= 1
        freed = tok.square
        self._undo.append((DominoRound._unjoker, seat, square, freed if freed not in self.covered else None,
                           before))
        self._cover(square, (seat, JOKER))
        self._move(tok, square)
        self._known.clear()
        tok.reserved_by = seat
        tok.reserved_until = ts + self._hold_ns
        self._check_blocked(seat)
        self._check_no_placement(ts)
        return None

    def _turn_over_if_empty(self, st: DominoSeat) -> tuple[DominoCard, ...] | None:
        """The discard pile, as it lay, when it became the hand (for the undo), else None."""
        if not st.hand and st.discard:
            turned = tuple(st.discard)
            st.hand = st.discard[::-1]
            st.discard = []
            return turned
        return None

    def _check_blocked(self, seat: Seat | None) -> None:
        """A token with no place left is blocked; the seat that blocked it must free it."""
        for i, tok in enumerate(self.tokens):
            if tok.blocked_for is None and not self._colours(i):
                # At set-up nobody blocked it: the first seat to place anywhere frees it.
                tok.blocked_for = seat if seat is not None else ANY_SEAT
                tok.reserved_by = None
                self._known.clear()

    def can_place_any(self, seat: Seat, cards: Sequence[DominoCard]) -> bool:
        """Could `seat` lay one of `cards` now (reservations aside, as they lapse)?

        A token with no place left counts as one this seat may relocate, since
        a joker that just blocked it would make it this seat's to free.
        """
        return self._opens(seat, [_CARD_NUMBER[card] for card in cards], _bits(cards))

    def _opens(self, seat: Seat, numbers: list[int], wanted: int) -> bool:
        """`can_place_any` for the cards given by their numbers in `SET` and as bits, worked
        out once for a whole joker search."""
        anywhere = False
        for i, tok in enumerate(self.tokens):
            if tok.blocked_for is None:
                near = self._colours(i)
                if not near:
                    anywhere = True
                elif wanted & near:
                    return True
            elif tok.blocked_for in (seat, ANY_SEAT):
                anywhere = True
        if anywhere:
            pairs = self._pairs
            return any(pairs[n] for n in numbers)
        return False

    def joker_for(self, seat: Seat, card: DominoCard, ts: int) -> PlayJoker | None:
        """`joker_route` for one card at `ts`, kept with `placements`' answers until the board or
        a token changes (the reservations in force at `ts` are part of the question): a bot with
        no place for its cards asks at every card it turns up."""
        key = (JOKER, seat, card, self.seats[seat].jokers,
               tuple([t.reserved_by is not None and t.reserved_by != seat and ts < t.reserved_until
                      for t in self.tokens]))  # `_reserved_against`, spelt out
        seen: dict[Any, Any] = self._known
        if key in seen:
            return seen[key]  # type: ignore[no-any-return]
        found = seen[key] = self.joker_route(seat, [card], ts=ts)
        return found

    def joker_route(self, seat: Seat, cards: Sequence[DominoCard], depth: int | None = None,
                    ts: int | None = None) -> PlayJoker | None:
        """A joker after which (with up to `depth` jokers in all) one of `cards` can be laid."""
        depth = self.seats[seat].jokers if depth is None else depth
        return self._route(seat, [_CARD_NUMBER[card] for card in cards], _bits(cards), depth, ts)

    def _route(self, seat: Seat, numbers: list[int], wanted: int, depth: int,
               ts: int | None) -> PlayJoker | None:
        """`joker_route`: each joker this seat may play, in `legal_actions`' order, is laid for a
        trial and taken back. A joker frees no square but the one its token leaves, and only a
        token that never moved stands on an uncovered square; so when no free pair on the board
        shows one of the cards and every token stands on a card or joker, no joker can make
        room for one, and none is tried (half the trials the bots asked for)."""
        if depth <= 0:
            return None
        covered, tokens, free = self.covered, self.tokens, self._free
        t0, t1, t2, t3 = tokens  # TOKENS; looked at in every trial, so no generators
        if not any(map(self._pairs.__getitem__, numbers)) and t0.square in covered \
                and t1.square in covered and t2.square in covered and t3.square in covered:
            return None
        for i, tok in enumerate(tokens):
            if tok.blocked_for is not None:
                continue
            if ts is not None and self._reserved_against(tok, seat, ts):
                continue
            old = tok.square
            for sq in [sq for sq in self._adj[old] if sq in free]:  # `joker_squares`
                # The joker is laid as `_joker` lays it (its token moves onto it, the square it
                # leaves is freed unless a card lies there) and taken back after the trial.
                covered[sq] = (seat, JOKER)
                self._set_taken(sq)
                freed = old not in covered
                if freed:
                    self._set_free(old)
                tok.square = sq
                known, self._known = self._known, {}
                try:
                    if self._opens(seat, numbers, wanted) \
                            or self._route(seat, numbers, wanted, depth - 1, None):
                        return PlayJoker(seat, i, sq)
                finally:
                    self._known = known
                    tok.square = old
                    if freed:
                        self._set_taken(old)
                    del covered[sq]
                    self._set_free(sq)
        return None

    def _check_no_placement(self, ts: int) -> None:
        """End the round when no seat can ever place a card again, jokers included (exact).

        When only a joker could open a place, the round waits `joker_wait_s` from `ts`
        for one (`deadline`), then ends the same way."""
        self.waiting_since = None
        if self.result is not None:
            return
        if self._someone_can_place():
            return
        if any(self._joker_helps(seat) for seat in range(self.players)):
            self.waiting_since = ts
            return
        self._no_placement()

    def _someone_can_place(self) -> bool:
        """`can_place_any` for every seat and its held cards, asked after every card placed:
        the usual answer (a card some seat holds fits at an unblocked token) without building
        a list or a set per seat."""
        fitting = 0
        for i, tok in enumerate(self.tokens):
            if tok.blocked_for is None:
                fitting |= self._colours(i)
        for st in self.seats:
            if fitting & st.holds:
                return True
        return any(self.can_place_any(seat, st.held()) for seat, st in enumerate(self.seats))

    def _joker_helps(self, seat: Seat) -> bool:
        """A joker this seat may play would open a place for one of its cards (a seat that owes
        a blocked token may play no joker before moving it)."""
        st = self.seats[seat]
        return bool(st.jokers) and not self.owed(seat) and self.joker_route(seat, st.held()) is not None

    def joker_needed(self, seat: Seat) -> bool:
        """Is the round waiting for a joker this seat could play (its screen says so)?"""
        return self.waiting_since is not None and self._joker_helps(seat)

    def deadline(self) -> int | None:
        """The first hold to lapse, or the end of the wait for a joker. Asked before every
        action, and a joker holds its token for thousands of them: kept with `_known`, which
        every change to a hold or the wait clears (a discard changes neither)."""
        if self.result is not None:
            return None
        known = self._known
        if _DEADLINE in known:
            return known[_DEADLINE]  # type: ignore[no-any-return]
        found = None if self.waiting_since is None else self.waiting_since + self._wait_ns
        for t in self.tokens:
            if t.reserved_by is not None and (found is None or t.reserved_until < found):
                found = t.reserved_until
        known[_DEADLINE] = found
        return found

    def _due(self, now: int) -> None:
        self._undo.append((DominoRound._unwake, self._before()))
        self._known.clear()  # `_fitting_token`'s answer depends on the reservations
        for tok in self.tokens:
            if tok.reserved_by is not None and tok.reserved_until <= now:
                tok.reserved_by = None
        if self.waiting_since is not None and now >= self.waiting_since + self._wait_ns:
            self._no_placement()

    _handlers: ClassVar[dict[type, Callable[[Any, Any], Refusal | None]]] = {
        PlaceDomino: _place, PlayJoker: _joker, DiscardDomino: _discard}

    # ------------------------------------------------------------ the journal kept (Match)

    @classmethod
    def pack_journal(cls, journal: Sequence[Any]) -> tuple[Any, ...]:
        """As `RoundBase.pack_journal`, with each card as its place in `SET` and each square as
        its row and column: a `DominoCard` holds colours (objects of a class of ours), so a tuple
        holding one would be walked by the collector for as long as the match keeps it. An
        action the bots would never send (a square given as a list) is packed as it came."""
        packed: list[Any] = []
        for a in journal:
            kind = type(a)
            if kind is DiscardDomino:  # the most common entry: packed here, not one at a time below
                packed += (_DISCARD, a[0], a[1])
                continue
            if kind is PlaceDomino:
                seat, card, token, near, far, ts = a
                if type(card) is DominoCard and type(near) is tuple and type(far) is tuple:
                    packed += (_PLACE_PACKED, seat, _CARD_NUMBER[card], token,
                               near[0], near[1], far[0], far[1], ts)
                    continue
            elif kind is PlayJoker:
                seat, token, square, ts = a
                if type(square) is tuple:
                    packed += (_JOKER_PACKED, seat, token, square[0], square[1], ts)
                    continue
            packed += cls._pack_plain(a)
        return tuple(packed)

    @classmethod
    def unpack_journal(cls, packed: Sequence[Any]) -> list[Any]:
        """The actions `pack_journal` packed, equal to its journal; cards are `SET`'s own."""
        out: list[Any] = []
        new = tuple.__new__
        i = 0
        while i < len(packed):
            kind = packed[i]
            if kind == _DISCARD:
                out.append(new(DiscardDomino, (packed[i + 1], packed[i + 2])))
                i += 3
            elif kind == _PLACE_PACKED:
                out.append(new(PlaceDomino, (packed[i + 1], SET[packed[i + 2]], packed[i + 3],
                                             (packed[i + 4], packed[i + 5]), (packed[i + 6], packed[i + 7]),
                                             packed[i + 8])))
                i += 9
            elif kind == _JOKER_PACKED:
                seat, token, r, c, ts = packed[i + 1:i + 6]
                out.append(new(PlayJoker, (seat, token, (r, c), ts)))
                i += 6
            else:
                action, i = cls._unpack_plain(packed, i)
                out.append(action)
        return out

    # ------------------------------------------------------------ taking back (RoundBase._lost_race)

    def _unshare(self, action: Any) -> None:
        self.seats = [DominoSeat(st.hand[:], st.discard[:], st.jokers, st.placed, st.holds)
                      for st in self.seats]
        self.tokens = [Token(t.square, t.reserved_by, t.reserved_until, t.blocked_for) for t in self.tokens]
        self.covered = dict(self.covered)
        self._free = set(self._free)
        self._pairs = self._pairs[:]
        self._known = {}

    def _before(self) -> tuple[Any, ...]:
        """What an action may change besides the squares it covers: every token, and the wait
        (every card laid asks, so the tokens are taken one by one, not in a loop)."""
        t0, t1, t2, t3 = self.tokens  # TOKENS
        return (((t0.square, t0.reserved_by, t0.reserved_until, t0.blocked_for),
                 (t1.square, t1.reserved_by, t1.reserved_until, t1.blocked_for),
                 (t2.square, t2.reserved_by, t2.reserved_until, t2.blocked_for),
                 (t3.square, t3.reserved_by, t3.reserved_until, t3.blocked_for)), self.waiting_since)

    def _restore(self, before: tuple[Any, ...]) -> None:
        tokens, self.waiting_since = before
        for tok, (square, reserved_by, reserved_until, blocked_for) in zip(self.tokens, tokens, strict=True):
            tok.square, tok.reserved_by, tok.reserved_until, tok.blocked_for = (
                square, reserved_by, reserved_until, blocked_for)
        self.result = None
        self._known.clear()

    def _unplace(self, seat: Seat, card: DominoCard, near: Square, far: Square, freed: Square | None,
                 turned: tuple[DominoCard, ...] | None, before: tuple[Any, ...]) -> None:
        st = self.seats[seat]
        if turned is not None:
            st.hand, st.discard = [], list(turned)
        st.hand.append(card)
        st.holds |= _CARD_BIT[card]
        st.placed -= 1
        del self.covered[near], self.covered[far]
        if freed is not None:
            self._set_taken(freed)
        self._set_free(near)
        self._set_free(far)
        self._restore(before)

    def _unjoker(self, seat: Seat, square: Square, freed: Square | None, before: tuple[Any, ...]) -> None:
        self.seats[seat].jokers += 1
        del self.covered[square]
        if freed is not None:
            self._set_taken(freed)
        self._set_free(square)
        self._restore(before)

    def _undiscard(self, seat: Seat, turned: tuple[DominoCard, ...] | None) -> None:
        st = self.seats[seat]
        if turned is not None:
            st.hand, st.discard = [], list(turned)
        st.hand.append(st.discard.pop())

    def _unwake(self, before: tuple[Any, ...]) -> None:
        self._restore(before)

    # ------------------------------------------------------------ the end

    def _no_placement(self) -> None:
        most = max(st.placed for st in self.seats)
        self._finish(Ending.NO_PLACEMENT, tuple(s for s, st in enumerate(self.seats) if st.placed == most))

    def _finish(self, ending: Ending, finishers: tuple[Seat, ...]) -> None:
        scores, aside = score_round(self.players, finishers, self.held_counts())
        self._end(RoundResult(ending, finishers, scores, {"put_aside": list(aside)}))

    def to_centre(self) -> tuple[int, int]:
        placed = sum(st.placed for st in self.seats)
        return placed, placed + sum(len(st.hand) + len(st.discard) for st in self.seats)

    def held_counts(self) -> list[int]:
        return [len(st.held()) for st in self.seats]

    def snapshot(self) -> dict[str, object]:
        return {
            "layout": self.board.name,
            "tokens": [
                {"square": list(t.square), "reserved_by": t.reserved_by,
                 "blocked_for": t.blocked_for}
                for t in self.tokens
            ],
            "covered": sorted([list(sq), seat, str(c)] for sq, (seat, c) in self.covered.items()),
            "seats": [
                {"hand": [str(c) for c in st.hand[::-1]], "discard": [str(c) for c in st.discard[::-1]],
                 "jokers": st.jokers, "placed": st.placed, "aside": [str(c) for c in self.aside[s]]}
                for s, st in enumerate(self.seats)
            ],
        }


_DISCARD = journal_kinds(DominoRound)[1][DiscardDomino]
"""The number `RoundBase.pack_journal` gives a discard, which `DominoRound.pack_journal` packs itself."""
_PLACE_PACKED, _JOKER_PACKED = (len(journal_kinds(DominoRound)[0]) + n for n in range(2))
"""The numbers `DominoRound.pack_journal` gives a placement and a joker packed as plain numbers,
after those `RoundBase.pack_journal` gives each kind (which it still uses for the rest)."""


def score_round(
    players: int, finishers: Sequence[Seat], held: Sequence[int]
) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """Points per seat, and which seats must put 2 cards aside (docs/rules.md, "Ligretto Domino", Scoring)."""
    scores = [0] * players
    aside = [False] * players
    others = [s for s in range(players) if s not in finishers]
    for s in finishers:
        scores[s] = 2
    if players >= 3 and others:
        fewest = min(held[s] for s in others)
        for s in others:
            if held[s] == fewest:
                scores[s] = 1
            else:
                aside[s] = True
    else:
        for s in others:
            aside[s] = True
    return tuple(scores), tuple(aside)


def next_boards(
    boards: Sequence[Sequence[DominoCard]],
    must_put_aside: Sequence[bool],
    held: Sequence[Sequence[DominoCard]],
) -> list[list[DominoCard]]:
    """Player boards after a round: losers put 2 cards aside, held cards first; then, if
    every board has cards, each takes exactly 2 back."""
    out = [list(b) for b in boards]
    for seat, must in enumerate(must_put_aside):
        if must:
            passed = set(out[seat]).union(held[seat])  # on the board already, or offered first
            candidates = [*held[seat], *(c for c in SET if c not in passed)]
            out[seat].extend(candidates[:ASIDE])
    if all(out):
        for board in out:
            del board[:ASIDE]
    return out
