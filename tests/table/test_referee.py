"""The referee: presses through the arbiter into the engine, contests written down."""

from __future__ import annotations

import pytest
from helpers import deal, race_for_b2, seed_where_the_later_press_wins

from firmware_host.devices.inputs.pins import InputEvent
from firmware_host.engine.match import Match
from firmware_host.engine.round import Reason
from firmware_host.games.classic.rules import Card
from firmware_host.table.arbiter import Arbiter
from firmware_host.table.presses import Event
from firmware_host.table.referee import Outcome, Referee

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


def test_a_tie_won_by_the_earlier_press_is_still_told_as_a_tie() -> None:
    # The arbiter drew it: the seat hears that it lost a draw, not that it was slower.
    for seed in range(100):
        referee, outcomes = race_for_b2(seed)
        if outcomes[0].press.seat == 0:
            break
    lost = outcomes[1]
    assert lost.refusal is not None and lost.refusal.reason is Reason.TOO_LATE and lost.refusal.tie
    assert str(lost.refusal) == "too late (seat 1 won the tie, pressed 0.1 ms before you)"
    assert lost.refusal.short() == "too late, seat 1 won tie"
    assert lost.refusal.to_dict()["draw"] == 1
    assert referee.contests[-1].describe() == ("seat 1 won a tie with seat 2, "
                                               "pressed 0.1 ms earlier (1.000 ms vs 1.100 ms)")


def late_by(gap_us: int) -> Outcome:
    """Seat 2 presses at 2.0 ms, decided at 7.0 ms; seat 1's press, stamped `gap_us` before
    seat 2's, reaches the Pi only at 8.0 ms: after its window, so the arbiter logs it late."""
    deals = [deal("B2 G6 G7", hand="R3 R4 R1"), deal("B2 Y5 Y8", hand="G3 G4 G1")]
    match = Match("classic", 2, 1, {"rounds": 1}, setup={"deals": deals, "piles": [[(0, Card.parse("B1"))]]})
    referee = Referee(match, Arbiter(window_ns=5_000 * US, epsilon_ns=200 * US, seed=0))
    referee.on_input(InputEvent(Event.PRESS, 1, "slap", 2_000 * US))
    (won,) = referee.decide(7_000 * US)
    assert won.refusal is None
    referee.on_input(InputEvent(Event.PRESS, 0, "slap", 2_000 * US - gap_us * 1_000))
    (lost,) = referee.decide(8_000 * US)
    assert referee.arbiter.decisions[-1].kind == "late" and len(referee.arbiter.decisions) == 1  # no draw
    return lost


@pytest.mark.parametrize("gap_us, gap", [(100, "0.1"), (150, "0.1"), (199, "0.2"), (200, "0.2")])
def test_a_press_the_arbiter_took_late_is_told_late_even_within_epsilon(gap_us: int, gap: str) -> None:
    # Issue 34: within epsilon of the winner's stamp, the late press was told "won the tie".
    lost = late_by(gap_us)
    assert lost.refusal is not None and not lost.refusal.tie and lost.refusal.draw is None
    assert lost.refusal.delta_ns == -gap_us * 1_000
    assert str(lost.refusal) == (f"too late (seat 2 pressed {gap} ms after you, "
                                 "but yours reached the table late)")
    assert lost.refusal.short() == "late press, seat 2 won"
    assert lost.contest is not None and lost.contest.reason == "late" and lost.contest.decision is not None
    assert lost.contest.decision.kind == "late"


def test_a_late_press_is_not_a_tie_it_is_told_its_press_reached_the_table_late() -> None:
    # Seat 2 presses at 2.0 ms and is decided at 7.0 ms; seat 1's press, stamped 1.0 ms, reaches
    # the Pi only at 8.0 ms: later than the window, so the arbiter releases it at once, as late.
    deals = [deal("B2 G6 G7", hand="R3 R4 R1"), deal("B2 Y5 Y8", hand="G3 G4 G1")]
    match = Match("classic", 2, 1, {"rounds": 1}, setup={"deals": deals, "piles": [[(0, Card.parse("B1"))]]})
    referee = Referee(match, Arbiter(window_ns=5_000 * US, epsilon_ns=200 * US, seed=0))
    referee.on_input(InputEvent(Event.PRESS, 1, "slap", 2_000 * US))
    (won,) = referee.decide(7_000 * US)
    referee.on_input(InputEvent(Event.PRESS, 0, "slap", 1_000 * US))
    (lost,) = referee.decide(8_000 * US)
    assert won.refusal is None and referee.arbiter.decisions[-1].kind == "late"
    assert lost.refusal is not None and lost.refusal.delta_ns == -1_000 * US and not lost.refusal.tie
    assert str(lost.refusal) == "too late (seat 2 pressed 1.0 ms after you, but yours reached the table late)"
    assert lost.refusal.short() == "late press, seat 2 won"
    assert referee.notices[-1] == ("Seats 2 and 1 wanted the same spot: seat 2 pressed 1.0 ms after seat 1, "
                                   "whose press reached the table late")
    assert referee.seats[0].message == lost.refusal.short()


def test_presses_within_epsilon_are_called_a_tie() -> None:
    _, (_, lost) = race_for_b2(seed_where_the_later_press_wins())
    assert lost.refusal is not None and lost.refusal.tie
    assert str(lost.refusal) == "too late (seat 2 won the tie, pressed 0.1 ms after you)"


def test_a_press_long_after_the_spot_was_taken_is_not_called_wanting_the_same_spot() -> None:
    # 837 ms apart is no race: the note says the spot had been taken, not that both wanted it.
    deals = [deal("B2 G6 G7", hand="R3 R4 R1"), deal("B2 Y5 Y8", hand="G3 G4 G1")]
    match = Match("classic", 2, 1, {"rounds": 1}, setup={"deals": deals, "piles": [[(0, Card.parse("B1"))]]})
    referee = Referee(match, Arbiter(window_ns=5_000 * US, epsilon_ns=200 * US, seed=0))
    referee.on_input(InputEvent(Event.PRESS, 1, "slap", 2_000 * US))
    referee.decide(7_000 * US)
    referee.on_input(InputEvent(Event.PRESS, 0, "slap", 839_000 * US))
    (lost,) = referee.decide(844_000 * US)
    assert lost.refusal is not None and str(lost.refusal) == "too late (seat 2 was 837.0 ms earlier)"
    assert referee.notices[-1] == "Seat 1 went for a spot that seat 2 had taken 837.0 ms before"
