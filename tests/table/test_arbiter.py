"""The arbiter: timestamp order, ties drawn and logged, late presses, and its properties."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_host.table.arbiter import Arbiter

MS = 1_000_000


def test_presses_are_released_in_timestamp_order_whatever_the_arrival_order() -> None:
    arb = Arbiter()
    arb.push(2, "slap", 1003 * MS)  # arrives first, pressed last
    arb.push(0, "slap", 1000 * MS)
    arb.push(1, "slap", 1001 * MS)
    assert arb.release(1004 * MS) == []  # held for the window
    released = arb.release(1003 * MS + 5 * MS + arb.epsilon_ns)
    assert [p.seat for p in released] == [0, 1, 2]


def test_a_press_is_held_exactly_the_window_to_the_nanosecond() -> None:
    arb = Arbiter(window_ns=5 * MS, epsilon_ns=MS // 5)
    arb.push(0, "slap", 100 * MS + 7)
    assert arb.due() == 100 * MS + 7 + 5 * MS  # the window, not the window plus epsilon
    assert arb.release(100 * MS + 7 + 5 * MS - 1) == []
    assert len(arb.release(100 * MS + 7 + 5 * MS)) == 1
    assert arb.due() is None


def test_a_tie_is_drawn_among_the_presses_there_when_the_window_closes() -> None:
    logged = []
    arb = Arbiter(window_ns=5 * MS, epsilon_ns=MS // 5, seed=3, on_decision=logged.append)
    arb.push(0, "slap", 100 * MS)
    arb.push(1, "slap", 100 * MS + 150_000)
    assert {p.seat for p in arb.release(105 * MS)} == {0, 1}  # both there: a tie, drawn
    assert logged[-1].kind == "tie"
    # A press between the two, delivered 4.99 ms after its edge: inside the window, but after the draw
    # it belonged to. It comes out at once, after the presses it ties with, and is logged.
    arb.push(2, "slap", 100 * MS + 100_000)
    assert [p.seat for p in arb.release(105 * MS + 90_000)] == [2]
    assert logged[-1].kind == "late" and logged[-1].delta_ns == 50_000
    # A press after the tie's newest is not late: it waits its own window.
    arb.push(3, "slap", 100 * MS + 180_000)
    assert arb.release(105 * MS + 179_999) == [] and arb.due() == 105 * MS + 180_000


def test_presses_closer_than_epsilon_are_a_tie_drawn_and_logged() -> None:
    logged = []
    arb = Arbiter(seed=7, on_decision=logged.append)
    arb.push(4, "slap", 500 * MS + 100_000)
    arb.push(1, "slap", 500 * MS)
    released = arb.flush()
    assert {p.seat for p in released} == {1, 4}
    assert len(logged) == 1 and logged[0].kind == "tie"
    assert logged[0].delta_ns == 100_000 and sorted(logged[0].draw) == [0, 1]
    assert "tie within 0.100 ms" in logged[0].describe()


def test_ties_are_won_by_each_seat_about_equally_not_by_pin_or_seat_number() -> None:
    wins = {0: 0, 1: 0}
    for seed in range(400):
        arb = Arbiter(seed=seed)
        # Seat 0 is always stamped and delivered first, as a lower pin would be.
        arb.push(0, "slap", 10 * MS)
        arb.push(1, "slap", 10 * MS + 50_000)
        wins[arb.flush()[0].seat] += 1
    assert 150 < wins[0] < 250 and 150 < wins[1] < 250


def test_the_same_seed_draws_the_same_ties() -> None:
    def order(seed: int) -> list[int]:
        arb = Arbiter(seed=seed)
        for seat in range(6):
            arb.push(seat, "slap", 10 * MS + seat * 30_000)  # six presses within 0.15 ms
        return [p.seat for p in arb.flush()]

    assert order(3) == order(3)
    assert len({tuple(order(s)) for s in range(10)}) > 1


def test_a_press_older_than_one_already_released_is_late_released_and_logged() -> None:
    logged = []
    arb = Arbiter(on_decision=logged.append)
    arb.push(0, "slap", 100 * MS)
    assert len(arb.release(200 * MS)) == 1
    arb.push(1, "slap", 90 * MS)  # delivered 110 ms after its edge: beyond any window
    late = arb.release(201 * MS)
    assert [p.seat for p in late] == [1]
    assert logged[-1].kind == "late" and logged[-1].delta_ns == 10 * MS


def test_a_crowd_of_close_presses_never_merges_two_presses_epsilon_apart() -> None:
    for seed in range(50):
        arb = Arbiter(seed=seed)
        # 0.00, 0.15, 0.25 ms: the middle press is close to both, the outer two are not.
        arb.push(2, "slap", 10 * MS + 250_000)
        arb.push(1, "slap", 10 * MS + 150_000)
        arb.push(0, "slap", 10 * MS)
        seats = [p.seat for p in arb.flush()]
        assert seats.index(0) < seats.index(2)


def test_equal_timestamps_tie_even_with_epsilon_zero() -> None:
    firsts = set()
    for seed in range(40):
        arb = Arbiter(epsilon_ns=0, seed=seed)
        arb.push(0, "slap", 5 * MS)
        arb.push(1, "slap", 5 * MS)
        firsts.add(arb.flush()[0].seat)
    assert firsts == {0, 1}


def test_window_must_exceed_epsilon() -> None:
    with pytest.raises(ValueError, match="window > epsilon"):
        Arbiter(window_ns=MS, epsilon_ns=MS)


presses = st.lists(
    st.tuples(st.integers(0, 11), st.integers(0, 50 * MS), st.integers(0, 5 * MS)),
    min_size=1, max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(presses=presses, seed=st.integers(0, 1000), steps=st.lists(st.integers(0, 3 * MS), max_size=80))
def test_order_no_loss_no_duplication_and_determinism(presses: list, seed: int, steps: list[int]) -> None:
    """Delivered with any skew up to the window, in any arrival order: presses epsilon or more
    apart in timestamp order; never late when the skew leaves epsilon of the window."""

    def run() -> list:
        arb = Arbiter(seed=seed)
        arrivals = sorted(((ts + skew, i, seat, ts) for i, (seat, ts, skew) in enumerate(presses)))
        out = []
        now = 0
        step = iter(steps)
        for arrive, _, seat, ts in arrivals:
            while now < arrive:
                now = min(arrive, now + next(step, 3 * MS) + 1)
                out += arb.release(now)
            arb.push(seat, "slap", ts)
        out += arb.flush()
        assert arb.held == 0
        if all(skew <= arb.window_ns - arb.epsilon_ns for _, _, skew in presses):
            assert not [d for d in arb.decisions if d.kind == "late"]
        return out

    out = run()
    assert sorted(p.seq for p in out) == list(range(len(presses)))  # every press once
    # Any two presses epsilon or more apart come out in timestamp order, however
    # many other presses crowd between them.
    position = {p.seq: i for i, p in enumerate(out)}
    for a in out:
        for b in out:
            if b.ts - a.ts >= Arbiter().epsilon_ns:
                assert position[a.seq] < position[b.seq]
    assert [p.seq for p in run()] == [p.seq for p in out]  # same seed, same presses: same order


def test_a_million_presses_worth_of_random_pairs_stays_in_order_in_small() -> None:
    """The benchmark's check, small: contested pairs with delta >= epsilon, skew <= window."""
    rng = random.Random(5)
    arb = Arbiter(seed=1)
    events = []
    t = 0
    for pair in range(2000):
        t += rng.randint(30 * MS, 40 * MS)
        delta = rng.randint(arb.epsilon_ns, 3 * MS)
        for seat, ts in ((2 * pair, t), (2 * pair + 1, t + delta)):
            events.append((ts + rng.randint(0, arb.window_ns), seat, ts))
    events.sort()
    out = []
    for arrive, seat, ts in events:
        out += arb.release(arrive)
        arb.push(seat, "slap", ts)
    out += arb.flush()
    position = {p.seat: i for i, p in enumerate(out)}
    assert all(position[2 * k] < position[2 * k + 1] for k in range(2000))
