"""What the Domino round keeps as the board changes (`_free` as a set and as bits, `_pairs`, each
token's colour pairs kept per pattern of free squares, each seat's held cards as bits, the cards
that fit for anyone) equals what is worked out from the board from scratch, after any legal
sequence of plays, jokers, wakes and undos. A count left one off by a play or its undo would make
a card seem to fit (a refused discard) or not (a card lost to the discard pile)."""

from __future__ import annotations

import random
from collections import Counter
from types import SimpleNamespace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest import MonkeyPatch

from firmware_host.engine.round import Wake
from firmware_host.games.domino import rules
from firmware_host.games.domino.layouts import board_for
from firmware_host.games.domino.rules import ANY_SEAT, SET, Board, DominoOptions, DominoRound


def _fresh_free(rnd: DominoRound) -> set[tuple[int, int]]:
    return set(rnd.board.colours) - set(rnd.covered) - {t.square for t in rnd.tokens}


def _fresh_pairs(rnd: DominoRound) -> Counter[tuple[int, int]]:
    """Every pair of touching free squares, once, by the colour pair a card covering it shows."""
    free, cols = _fresh_free(rnd), rnd.board.colours
    found: Counter[tuple[int, int]] = Counter(dict.fromkeys(SET, 0))
    for r, c in free:
        for other in ((r + 1, c), (r, c + 1)):
            if other in free:
                a, b = sorted((cols[(r, c)], cols[other]))
                found[(a, b)] += 1
    return found


def _fresh_fit(rnd: DominoRound, seat: int, ts: int) -> int | None:
    """The first token the seat's top card could be laid at, from the placements' definition."""
    card = rnd.top_card(seat)
    assert card is not None
    owed = rnd.owed(seat)
    cols = rnd.board.colours
    free = _fresh_free(rnd)
    pairs = [(n, f) for n in free for f in free if abs(n[0] - f[0]) + abs(n[1] - f[1]) == 1
             and tuple(sorted((cols[n], cols[f]))) == card]
    for i, tok in enumerate(rnd.tokens):
        if owed and i not in owed:
            continue
        if tok.blocked_for is not None:
            if tok.blocked_for in (seat, ANY_SEAT) and pairs:
                return i
            continue
        if rnd._reserved_against(tok, seat, ts):
            continue
        if any(abs(n[0] - tok.square[0]) + abs(n[1] - tok.square[1]) == 1 for n, _ in pairs):
            return i
    return None


def _check(rnd: DominoRound, ts: int) -> None:
    assert rnd._free == _fresh_free(rnd)
    assert dict(zip(SET, rnd._pairs, strict=True)) == _fresh_pairs(rnd)
    assert rnd._free_bits == sum(1 << i for i, sq in enumerate(rnd.board.colours) if sq in rnd._free)
    for i, tok in enumerate(rnd.tokens):
        fresh = {tuple(sorted((rnd.board.colours[n], rnd.board.colours[f]))) for n, f in rnd.places_at(i)}
        assert {card for n, card in enumerate(SET) if rnd._colours(i) >> n & 1} == fresh, (i, tok)
    for seat_state in rnd.seats:
        assert {card for n, card in enumerate(SET) if seat_state.holds >> n & 1} == set(seat_state.held())
    for seat in range(rnd.players):
        if rnd.top_card(seat) is not None:
            asked = rnd._fitting_token(seat, rnd.top_card(seat), ts)  # type: ignore[arg-type]
            assert asked == _fresh_fit(rnd, seat, ts)
            assert rnd._fitting_token(seat, rnd.top_card(seat), ts) == asked  # asked again


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 4), seed=st.integers(0, 10**6), random_tokens=st.booleans())
def test_what_the_round_keeps_is_what_the_board_shows_through_plays_and_undos(
        players: int, seed: int, random_tokens: bool) -> None:
    options = DominoOptions(tokens="random" if random_tokens else "recommended",
                            joker_hold_s=0.05, joker_wait_s=0.1)
    board = board_for(players)
    rnd = DominoRound(players, options, random.Random(seed), board)
    rng = random.Random(seed)
    now = 0
    _check(rnd, now)
    for _ in range(120):
        if rnd.result is not None:
            break
        now += 20_000_000
        due = rnd.deadline()
        if due is not None and due <= now:
            # Asked just before the wake, at a moment the hold was still in force, then after it:
            # the hold's end is seen (the kept answer went with the wake).
            earlier = due - 1
            asked = [(s, rnd._fitting_token(s, rnd.top_card(s), earlier))  # type: ignore[arg-type]
                     for s in range(players) if rnd.top_card(s) is not None]
            assert rnd.apply(Wake(now)) is None
            for s, _ in asked[-1:]:
                assert rnd._fitting_token(s, rnd.top_card(s), earlier) == _fresh_fit(rnd, s, earlier)  # type: ignore[arg-type]
        else:
            seat = rng.randrange(players)
            moves = list(rnd.legal_actions(seat, now))
            if moves:
                assert rnd.apply(rng.choice(moves)._replace(ts=now)) is None
        _check(rnd, now)
        if rng.random() < 0.15 and rnd.journal:  # take the latest few back on a copy, as a lost race does
            scratch = rnd._scratch(SimpleNamespace(seat=0, ts=0))
            for undo in reversed(rnd._undo[-rng.randint(1, min(5, len(rnd._undo))):]):
                undo[0](scratch, *undo[1:])
            _check(scratch, now)
    _check(rnd, now)


def test_the_patterns_kept_stay_within_their_bound_the_oldest_going_first(monkeypatch: MonkeyPatch) -> None:
    """A long-running table meets ever more patterns of free squares: each token square keeps at
    most `_PATTERNS_KEPT`, and the answers stay the board's own whatever was let go."""
    monkeypatch.setattr(rules, "_PATTERNS_KEPT", 3)
    four = board_for(4)
    board = Board(four.name, dict(four.colours), four.tokens)  # its own geometry, kept from empty
    rnd = DominoRound(4, DominoOptions(), random.Random(7), board)
    rng = random.Random(7)
    met: dict[tuple[int, int], set[int]] = {}
    for step in range(150):
        if rnd.result is not None:
            break
        seat = rng.randrange(4)
        moves = list(rnd.legal_actions(seat, step))
        if moves:
            assert rnd.apply(rng.choice(moves)._replace(ts=step)) is None
        _check(rnd, step)
        for sq, (_, kept, _) in rnd._local.items():
            assert len(kept) <= 3
            met.setdefault(sq, set()).update(kept)
    assert any(len(patterns) > 3 for patterns in met.values())  # some square let patterns go
    # The oldest goes first: three made-up patterns (no pattern is negative), then a real one.
    zone, kept, _ = rnd._local[rnd.tokens[0].square]
    kept.clear()
    kept.update({-1: 0, -2: 0, -3: 0})
    rnd._known.clear()
    rnd._colours(0)
    assert list(kept) == [-2, -3, rnd._free_bits & zone]
