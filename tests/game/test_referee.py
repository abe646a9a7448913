"""The referee: presses through the arbiter into the engine, contests written down."""

from __future__ import annotations

from helpers import race_for_b2, seed_where_the_later_press_wins

from firmware_host.rules.common import Reason

US = 1_000


def test_the_earlier_press_that_loses_a_tie_draw_is_too_late_not_misfit() -> None:
    _, outcomes = race_for_b2(seed_where_the_later_press_wins())
    won, lost = outcomes
    assert won.press.seat == 1 and won.refusal is None
    assert lost.press.seat == 0 and lost.refusal is not None
    assert lost.refusal.reason is Reason.TOO_LATE
    assert lost.refusal.by_seat == 1
    assert lost.refusal.short() == "too late, seat 2 won tie"


def test_a_tie_lost_to_a_later_press_is_logged_as_a_contest() -> None:
    referee, _ = race_for_b2(seed_where_the_later_press_wins())
    (contest,) = referee.contests
    assert (contest.winner, contest.loser) == (1, 0)
    assert (contest.winner_ts, contest.loser_ts) == (1_100 * US, 1_000 * US)
    assert "seat 2 won a tie with seat 1" in referee.notices[-1]
    assert any(n.startswith("arbiter: tie") for n in referee.notices)


def test_a_tie_won_by_the_earlier_press_reads_as_before() -> None:
    for seed in range(100):
        referee, outcomes = race_for_b2(seed)
        if outcomes[0].press.seat == 0:
            break
    lost = outcomes[1]
    assert lost.refusal is not None and lost.refusal.reason is Reason.TOO_LATE
    assert str(lost.refusal) == "too late (seat 1 was 0.1 ms earlier)"
    assert referee.contests[-1].describe().startswith("seat 1 was 0.1 ms earlier than seat 2")
