"""What `bench bots` and `simulate` say about the bots: rounds per match, the share of cards that
reach the centre, and hard against medium with a confidence interval."""

from __future__ import annotations

import random

import pytest

from firmware_host.bench.bots import head_to_head, play_match, wilson
from firmware_host.play.simulate import make_bots, play_round, simulate
from firmware_host.table.bot_players import Level
from firmware_host.table.matches import new_match


def test_wilson_interval_matches_the_textbook_values() -> None:
    lo, hi = wilson(40, 40)
    assert (round(lo, 3), hi) == (0.912, 1.0)
    lo, hi = wilson(5, 10)
    assert (round(lo, 3), round(hi, 3)) == (0.237, 0.763)
    assert wilson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("game", ["classic", "dice", "domino", "crazy"])
def test_to_centre_counts_what_was_played_of_what_was_dealt(game: str) -> None:
    match = new_match(game, 2, 3)
    reached, dealt = match.round.to_centre()
    assert reached == 0 and dealt == {"classic": 80, "dice": 24, "domino": 30, "crazy": 72}[game]
    play_round(match, make_bots(2, "instant", 3), random.Random(3))
    reached, dealt = match.round.to_centre()
    assert 0 < reached <= dealt


def test_simulate_reports_rounds_and_the_share_that_reached_the_centre() -> None:
    report = simulate("crazy", 2, 3, "s", {}, "instant")
    assert report["rounds_played"] == len(report["rounds"]) == 3
    reached = sum(r["to_centre"][0] for r in report["rounds"])
    dealt = sum(r["to_centre"][1] for r in report["rounds"])
    assert dealt == 3 * 72 and report["centre_share"] == round(reached / dealt, 3)


def test_a_bench_match_counts_its_rounds_and_cards() -> None:
    out = play_match("dice", Level.HARD, "alt", "count", 0)
    assert out.rounds == 6 and 0 < out.reached <= out.dealt


def test_hard_beats_medium_head_to_head_beyond_chance() -> None:
    figures = head_to_head(12, ("classic", "crazy"))
    for row in figures["rows"]:
        assert row["hard_won"] + row["drawn"] <= 12 and row["interval_95"][0] > 0.5, row
    assert figures["pass"]
