"""The referee: presses through the arbiter into the engine, contests written down."""

from __future__ import annotations

from helpers import deal

from firmware_host.arbiter import Arbiter
from firmware_host.inputs.edges import Event
from firmware_host.inputs.pins import InputEvent
from firmware_host.referee import Referee
from firmware_host.rules.classic import Card
from firmware_host.rules.common import Reason
from firmware_host.rules.match import Match

US = 1_000


def _race_for_b2(seed: int) -> tuple[Referee, list]:
    """Both seats hold a B2 at the left of their row; a B1 pile waits for it.

    Seat 1 presses first, seat 2 only 0.1 ms later: less than epsilon, a tie."""
    deals = [deal("B2 G6 G7", hand="R3 R4 R1"), deal("B2 Y5 Y8", hand="G3 G4 G1")]
    setup = {"deals": deals, "piles": [[(0, Card.parse("B1"))]]}
    match = Match("classic", 2, 1, {"rounds": 1}, setup=setup)
    referee = Referee(match, Arbiter(window_ns=5_000 * US, epsilon_ns=200 * US, seed=seed))
    referee.on_input(InputEvent(Event.PRESS, 0, "slap", 1_000 * US))
    referee.on_input(InputEvent(Event.PRESS, 1, "slap", 1_100 * US))
    return referee, referee.decide(10_000 * US)


def _seed_where_the_later_press_wins() -> int:
    for seed in range(100):
        _, outcomes = _race_for_b2(seed)
        if outcomes[0].press.seat == 1:
            return seed
    raise AssertionError("no draw put the later press first")  # pragma: no cover


def test_the_earlier_press_that_loses_a_tie_draw_is_too_late_not_misfit() -> None:
    _, outcomes = _race_for_b2(_seed_where_the_later_press_wins())
    won, lost = outcomes
    assert won.press.seat == 1 and won.refusal is None
    assert lost.press.seat == 0 and lost.refusal is not None
    assert lost.refusal.reason is Reason.TOO_LATE
    assert lost.refusal.by_seat == 1
    assert lost.refusal.short() == "too late, seat 2 won tie"


def test_a_tie_lost_to_a_later_press_is_logged_as_a_contest() -> None:
    referee, _ = _race_for_b2(_seed_where_the_later_press_wins())
    (contest,) = referee.contests
    assert (contest.winner, contest.loser) == (1, 0)
    assert (contest.winner_ts, contest.loser_ts) == (1_100 * US, 1_000 * US)
    assert "seat 2 won a tie with seat 1" in referee.notices[-1]
    assert any(n.startswith("arbiter: tie") for n in referee.notices)


def test_a_tie_won_by_the_earlier_press_reads_as_before() -> None:
    for seed in range(100):
        referee, outcomes = _race_for_b2(seed)
        if outcomes[0].press.seat == 0:
            break
    lost = outcomes[1]
    assert lost.refusal is not None and lost.refusal.reason is Reason.TOO_LATE
    assert str(lost.refusal) == "too late (seat 1 was 0.1 ms earlier)"
    assert referee.contests[-1].describe().startswith("seat 1 was 0.1 ms earlier than seat 2")
