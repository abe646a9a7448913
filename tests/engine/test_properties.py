"""Properties that hold for every game, every option and every order of play.

Random seats take random legal actions mixed with random illegal ones. After
every step: every card or die is in exactly one place, nothing illegal is on
the table, a refusal changed nothing, and at the end the journal replays to
the same state and the scores obey their identities.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from itertools import pairwise
from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_host.engine.round import RACE_HORIZON_NS, Reason, RoundBase, Wake
from firmware_host.games.classic.rules import (
    DECK,
    Card,
    ClassicOptions,
    ClassicRound,
    MoveToRow,
    PlayCard,
    VoteStuck,
)
from firmware_host.games.crazy.deck import crazy_deck
from firmware_host.games.crazy.rules import CrazyColour, CrazyOptions, CrazyRound, DiscardCrazy, PlayCrazy
from firmware_host.games.dice.rules import DICE_PER_COLOUR, DiceOptions, DiceRound, DieColour, PlaceDie
from firmware_host.games.domino.layouts import board_for
from firmware_host.games.domino.rules import SET, DominoOptions, DominoRound, PlaceDomino, PlayJoker

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
STEPS = 400


def drive(rnd: Any, make: Any, junk: Any, rng: random.Random, check: Any) -> list[Any]:
    """Play random legal and illegal actions; return the accepted ones."""
    accepted = []
    for step in range(STEPS):
        if rnd.result is not None:
            break
        seat = rng.randrange(rnd.players)
        legal = [a for a in rnd.legal_actions(seat) if type(a) is not VoteStuck or rng.random() < 0.05]
        if legal and rng.random() < 0.85:
            action = rng.choice(legal)._replace(ts=step * 1000)
            assert rnd.apply(action) is None, action  # legal_actions never lies
            accepted.append(action)
        else:
            action = junk(seat, rng)._replace(ts=step * 1000)
            before = rnd.snapshot()
            if rnd.apply(action) is None:
                accepted.append(action)
            else:
                assert rnd.snapshot() == before, action  # a refusal changes nothing
        check(rnd)
    return accepted


def replays_to_same_state(rnd: Any, fresh: Any, accepted: list[Any]) -> None:
    for action in accepted:
        assert fresh.apply(action) is None
    assert fresh.snapshot() == rnd.snapshot()
    assert fresh.result == rnd.result


# ---------------------------------------------------------------- Ligretto

classic_options = st.builds(
    ClassicOptions,
    recycle=st.sampled_from(["shuffle", "turn_over"]),
    pro_row=st.booleans(),
    descending=st.booleans(),
    alternate_colours=st.booleans(),
    stack_face_down=st.booleans(),
)


def check_classic(rnd: ClassicRound) -> None:
    for seat in range(rnd.players):
        assert Counter(rnd.cards_of(seat)) == Counter(DECK)  # every card in one place
    accepts, _, starters = rnd._accepts, rnd._preds, rnd._starters
    for pile in rnd.piles:
        assert pile[0][1] in starters
        assert all(b in accepts[a] for (_, a), (_, b) in pairwise(pile))
    for st_ in rnd.seats:
        assert all(place or not st_.stack for place in st_.row)  # gaps only with no stack
        if not rnd.options.pro_row:
            assert all(len(place) <= 1 for place in st_.row)
    need = rnd._need
    fits = sum(1 for k in DECK if need[k] > 0 and rnd._avail[k] > 0)
    assert fits == rnd._fits  # the incremental count never drifts


@SETTINGS
@given(players=st.integers(2, 12), seed=st.integers(0, 10**6), options=classic_options)
def test_ligretto_invariants_and_replay(players: int, seed: int, options: ClassicOptions) -> None:
    rng = random.Random(seed)

    def junk(seat: int, r: random.Random) -> Any:
        card = r.choice(DECK)
        if options.pro_row and r.random() < 0.3:
            return MoveToRow(seat, card, r.randrange(-1, 6))
        return PlayCard(r.randrange(-1, players + 1), card)

    rnd = ClassicRound(players, options, random.Random(seed))
    accepted = drive(rnd, None, junk, rng, check_classic)
    replays_to_same_state(rnd, ClassicRound(players, options, random.Random(seed)), accepted)
    if rnd.result is not None:
        for seat, st_ in enumerate(rnd.seats):
            assert rnd.result.scores[seat] == st_.centre - 2 * len(st_.stack)
        assert sum(st_.centre for st_ in rnd.seats) == sum(len(p) for p in rnd.piles)


# ---------------------------------------------------------------- Dice


def check_dice(rnd: DiceRound, in_play: Counter[int]) -> None:
    held = Counter(d.colour for hand in rnd.dice for d in hand)
    for colour in DieColour:
        assert rnd.board[colour] + held[colour] == in_play[colour] <= DICE_PER_COLOUR
        assert len(rnd.placed_by[colour]) == rnd.board[colour]


@SETTINGS
@given(players=st.integers(2, 4), seed=st.integers(0, 10**6), handicap=st.booleans())
def test_dice_conservation_replay_and_zero_sum(players: int, seed: int, handicap: bool) -> None:
    counts = tuple(random.Random(seed).randint(1, 24 // players) for _ in range(players))
    options = DiceOptions(counts if handicap else ())
    rnd = DiceRound(players, options, random.Random(seed))
    in_play = Counter(d.colour for hand in rnd.dice for d in hand)

    def junk(seat: int, r: random.Random) -> Any:
        return PlaceDie(seat, DieColour(r.randrange(4)), r.randint(1, 6))

    accepted = drive(rnd, None, junk, random.Random(seed + 1), lambda r: check_dice(r, in_play))
    replays_to_same_state(rnd, DiceRound(players, options, random.Random(seed)), accepted)
    if rnd.result is not None:
        assert sum(rnd.result.scores) == 0  # the finisher wins what the others lose


# ---------------------------------------------------------------- Domino


def check_domino(rnd: DominoRound) -> None:
    placed: Counter[int] = Counter()
    halves: dict[tuple[int, Any], list[tuple[int, int]]] = {}
    for sq, (seat, card) in rnd.covered.items():
        assert sq in rnd.board.colours
        if card != "joker":
            placed[seat] += 1
            halves.setdefault((seat, card), []).append(sq)
    for (_, card), squares in halves.items():
        (r1, c1), (r2, c2) = squares  # each card covers exactly two squares...
        assert abs(r1 - r2) + abs(c1 - c2) == 1  # ...that share an edge...
        assert rnd.matches(card, squares[0], squares[1])  # ...in the card's colours
    for seat, st_ in enumerate(rnd.seats):
        assert placed[seat] == 2 * st_.placed
        assert st_.placed + len(st_.held()) + len(rnd.aside[seat]) == len(SET)
        assert st_.hand or not st_.discard  # an empty hand takes the discard pile back
    squares = [t.square for t in rnd.tokens]
    assert len(set(squares)) == 4


@SETTINGS
@given(players=st.integers(2, 4), seed=st.integers(0, 10**6), tokens=st.sampled_from(
    ["recommended", "random"]))
def test_domino_conservation_and_replay(players: int, seed: int, tokens: str) -> None:
    board = board_for(players)
    options = DominoOptions(tokens=tokens, joker_hold_s=0.002)
    rnd = DominoRound(players, options, random.Random(seed), board)
    squares = sorted(board.colours)

    def junk(seat: int, r: random.Random) -> Any:
        if r.random() < 0.5:
            return PlayJoker(seat, r.randrange(-1, 5), r.choice(squares))
        near, far = r.choice(squares), r.choice(squares)
        return PlaceDomino(seat, r.choice(SET), r.randrange(4), near, far)

    accepted = drive(rnd, None, junk, random.Random(seed + 1), check_domino)
    replays_to_same_state(rnd, DominoRound(players, options, random.Random(seed), board), accepted)


# ---------------------------------------------------------------- Crazy


def check_crazy(rnd: CrazyRound) -> None:
    spec = rnd.spec
    for seat in range(rnd.players):
        assert Counter(rnd.cards_of(seat)) == Counter(spec.cards(CrazyColour(seat)))
        assert len(rnd.seats[seat].hand) <= 3
    assert len(rnd.piles) <= rnd.players
    for pile in rnd.piles.values():
        values = [v for _, _, v in pile.cards]
        assert values[0] == 1 and all(abs(a - b) == 1 for a, b in pairwise(values))
        assert 5 not in values  # a 5 always finishes its pile


@SETTINGS
@given(players=st.integers(2, 5), seed=st.integers(0, 10**6))
def test_crazy_conservation_replay_and_score_identity(players: int, seed: int) -> None:
    spec = crazy_deck()
    rnd = CrazyRound(players, CrazyOptions(), random.Random(seed), spec)
    every = [c for s in range(players) for c in spec.cards(CrazyColour(s))]

    def junk(seat: int, r: random.Random) -> Any:
        card = r.choice(every)
        if r.random() < 0.2:
            return DiscardCrazy(seat, card)
        return PlayCrazy(seat, card, r.choice([None, *range(-1, 6)]), r.choice([None, 0, 2, 6]))

    accepted = drive(rnd, None, junk, random.Random(seed + 1), check_crazy)
    replays_to_same_state(rnd, CrazyRound(players, CrazyOptions(), random.Random(seed), spec),
                          accepted)
    scores = rnd.scores()
    won = sum(len(s.score) for s in rnd.seats)
    left = sum(len(s.draw) + len(s.hand) + len(s.discard) for s in rnd.seats)
    assert sum(scores) == won - left


def test_cards_used_in_properties_are_the_real_ones() -> None:
    assert len(DECK) == 40 and all(isinstance(c, Card) for c in DECK)


# ---------------------------------------------------------------- lost races, every game

GAPS = (100_000, 300_000, 20_000_000, 600_000_000, 1_500_000_000)
"""ns between presses: a tie, a close race, bots, a slow hand, past the race horizon."""


def builder(game: str, players: int, seed: int) -> Any:
    """A function that deals the same round again each time it is called."""
    if game == "classic":
        return lambda: ClassicRound(players, ClassicOptions(), random.Random(seed))
    if game == "dice":
        return lambda: DiceRound(players, DiceOptions(), random.Random(seed))
    if game == "domino":
        board = board_for(players)
        return lambda: DominoRound(players, DominoOptions(), random.Random(seed), board)
    spec = crazy_deck()
    return lambda: CrazyRound(players, CrazyOptions(), random.Random(seed), spec)


def varied(game: str, players: int, seed: int) -> Any:
    """Like `builder`, with the options that bring every kind of action and undo: Ligretto's
    variants (turned-over hands, the pro row and its votes), Domino's jokers and their holds
    lapsing (wakes)."""
    r = random.Random(seed)
    if game == "classic":
        opts = ClassicOptions(r.choice(["shuffle", "turn_over"]), r.random() < 0.5, r.random() < 0.3,
                              r.random() < 0.3, r.random() < 0.3)
        return lambda: ClassicRound(players, opts, random.Random(seed))
    if game == "domino":
        board = board_for(players)
        opts_d = DominoOptions(joker_hold_s=0.05, joker_wait_s=0.1)
        return lambda: DominoRound(players, opts_d, random.Random(seed), board)
    return builder(game, players, seed)


def takes_without(build: Any, journal: list[Any], since: int, action: Any) -> bool:
    """Dealt again and played without the seats' plays from journal[since:] (time running on
    as it did: the wakes among them stay): is `action` taken?"""
    again = build()
    for done in journal[:since]:
        assert again.apply(done) is None
    for done in journal[since:]:
        if type(done) is Wake:
            again.apply(done)
    return again.apply(action) is None


ROUTINE = ("TurnHand", "Reroll", "DiscardDomino", "DiscardCrazy", "VoteStuck")


def reach(actions: list[Any], rng: random.Random) -> Any:
    """Mostly a card or die to the centre, now and then a turn, roll or discard."""
    spots = [a for a in actions if type(a).__name__ not in ROUTINE]
    return rng.choice(spots if spots and rng.random() < 0.8 else actions)


def races(build: Any, rng: random.Random, steps: int = 80) -> Counter[str]:
    """Seats reach for what they saw while others may play first; every refusal is checked:
    "too late" iff the round, dealt again and played without the other seats' plays since this
    seat's own last one and within the horizon, takes the action; the winner is the latest play
    whose removal (with the ones after it) does, and the gap is the two stamps'."""
    rnd = build()
    now, seen_reasons = 0, Counter[str]()
    refused: dict[int, Any] = {}  # each seat's last refused action: pressed again now and then
    saw: dict[int, list[Any]] = {}  # what each seat saw last time: a slow seat still reaches for it
    for _ in range(steps):
        if rnd.result is not None:
            break
        due = rnd.deadline()
        if due is not None and due <= now:
            assert rnd.apply(Wake(now)) is None
            continue
        seat = rng.randrange(rnd.players)
        dice = rng.random()
        if seat in refused and dice < 0.3:
            seen = [refused[seat]]
        elif seat in saw and dice < 0.5:
            seen = saw[seat]
        else:
            seen = saw[seat] = list(rnd.legal_actions(seat))
        for _ in range(rng.randrange(3)):
            other = (seat + rng.randrange(1, rnd.players)) % rnd.players
            moves = list(rnd.legal_actions(other))
            if moves and rnd.result is None:
                now += rng.choice(GAPS)
                rnd.apply(reach(moves, rng)._replace(ts=now))
        if not seen or rnd.result is not None:
            continue
        stamp = now - rng.choice(GAPS[:2]) if rng.random() < 0.2 else now + rng.choice(GAPS)
        now = max(now, stamp)
        action = reach(seen, rng)._replace(ts=stamp)
        journal = list(rnd.journal)
        before = state_of(rnd)
        refusal = rnd.apply(action)
        if refusal is None:
            refused.pop(seat, None)
            continue
        refused[seat] = action
        assert state_of(rnd) == before  # telling a lost race apart touched nothing of the round
        seen_reasons[refusal.reason.name] += 1
        rivals = []
        for i in range(len(journal) - 1, -1, -1):
            if type(journal[i]) is Wake:
                continue
            if journal[i].seat == seat:
                break
            if journal[i].ts >= stamp - RACE_HORIZON_NS:
                rivals.append(i)
        winner = next((i for i in rivals if takes_without(build, journal, i, action)), None)
        assert (refusal.reason is Reason.TOO_LATE) == (winner is not None), (action, refusal)
        if winner is not None:
            assert refusal.by_seat == journal[winner].seat != seat
            assert refusal.delta_ns == stamp - journal[winner].ts
    return seen_reasons


@SETTINGS
@given(game=st.sampled_from(["classic", "dice", "domino", "crazy"]), players=st.integers(2, 4),
       seed=st.integers(0, 10**6), options=st.booleans())
def test_a_refusal_is_too_late_iff_the_round_without_the_other_seats_plays_takes_it(
        game: str, players: int, seed: int, options: bool) -> None:
    """`options`: the variants (Ligretto's, Domino's short joker holds) instead of the defaults."""
    races((varied if options else builder)(game, players, seed), random.Random(seed))


def test_the_races_above_do_lose_races_and_refuse_otherwise_in_every_game() -> None:
    others: Counter[str] = Counter()
    for game in ("classic", "dice", "domino", "crazy"):
        reasons = sum((races(builder(game, 3, seed), random.Random(seed)) for seed in range(8)), Counter())
        assert reasons.pop("TOO_LATE", 0) > 0, (game, reasons)
        others += reasons
    assert others.total() > 0


# ---------------------------------------------------------------- taking plays back

_NOT_STATE = {"journal", "_undo", "_latest", "_asked", "_owned", "on_end", "_known", "_local"}
"""The journal and its companions, the memo of refused actions, a scratch copy's note of what it
owns, who is told of the end, and caches worked out on demand."""


def plain(value: Any) -> Any:
    """Any part of a round as plain data, order kept where the round keeps one (lists, dicts)."""
    if isinstance(value, random.Random):
        return "generator"
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, Mapping):
        return [(plain(k), plain(v)) for k, v in value.items()]
    if isinstance(value, set | frozenset):
        return sorted(map(repr, value))
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if is_dataclass(value):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    if slots := getattr(type(value), "__slots__", None):
        return {name: plain(getattr(value, name)) for name in slots}
    return {k: plain(v) for k, v in vars(value).items()}


def state_of(rnd: RoundBase) -> Any:
    """Everything a round is, its generator's state included."""
    rngs = [v.getstate() for v in vars(rnd).values() if isinstance(v, random.Random)]
    return {k: plain(v) for k, v in vars(rnd).items() if k not in _NOT_STATE}, rngs


def play_on(rnd: Any, rng: random.Random, steps: int) -> None:
    """Legal actions of random seats 20 ms apart; time runs on (wakes) where something is due."""
    now = 0
    for _ in range(steps):
        if rnd.result is not None:
            return
        now += 20_000_000
        due = rnd.deadline()
        if due is not None and due <= now:
            assert rnd.apply(Wake(now)) is None
            continue
        seat = rng.randrange(rnd.players)
        moves = list(rnd.legal_actions(seat))
        if moves:
            assert rnd.apply(rng.choice(moves)._replace(ts=now)) is None


@SETTINGS
@given(game=st.sampled_from(["classic", "dice", "domino", "crazy"]), players=st.integers(2, 5),
       seed=st.integers(0, 10**6))
def test_taking_back_the_latest_entries_leaves_the_round_as_it_was_before_them(
        game: str, players: int, seed: int) -> None:
    if game in ("dice", "domino"):
        players = min(players, 4)
    build = varied(game, players, seed)
    rnd, rng = build(), random.Random(seed)
    play_on(rnd, rng, 150)
    journal, live = list(rnd.journal), state_of(rnd)
    for since in sorted(rng.sample(range(len(journal) + 1), min(6, len(journal) + 1)), reverse=True):
        scratch = rnd._scratch(SimpleNamespace(seat=0, ts=0))  # as if seat 1 were refused
        for j in range(len(journal) - 1, since - 1, -1):
            undo = rnd._undo[j]
            undo[0](scratch, *undo[1:])
        again = build()
        for entry in journal[:since]:
            assert again.apply(entry) is None
        assert state_of(scratch)[0] == state_of(again)[0], since
    assert state_of(rnd) == live  # nothing done to a scratch copy reaches the round
