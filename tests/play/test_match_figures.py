"""One match's figures per player (play/figures.py, docs/players.md "The figures"), each worked
out by hand from a scenario's stamps: scenarios/dice-reactions.toml for the reactions, slaps,
rounds and points; races written as the arbiter's records are, for the races and false starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from firmware_host.play.figures import SeatFigures, match_figures, median
from firmware_host.play.scenario import run_file

ROOT = Path(__file__).resolve().parents[2]
MS = 1_000_000


def replay_of(path: Path) -> dict[str, Any]:
    """The arguments the journal's reader hands to `match_figures` for the match a file plays."""
    run = run_file(path)
    assert run.failures == []
    match = run.match
    return {"game": match.game, "players": match.players, "seed": match.seed, "options": match.options,
            "journal": [(e.round, e.action) for e in match.journal], "resources": match.resources,
            "setups": match.setups}


def test_reactions_run_from_the_entry_that_makes_a_die_fit_to_the_seats_next_press() -> None:
    one, two = match_figures(replay_of(ROOT / "scenarios" / "dice-reactions.toml"), [])
    # seat 1: red 2 fits at 100 ms (seat 2's red 1), pressed at 350 ms; its blue 2 fitted before
    # its press at 360 ms (no clock); its yellow 2 fits at 400 ms, when the round ends (none)
    assert list(one.reactions) == [250 * MS]
    # seat 2: its red 1 fitted at the deal (no stamp, no clock); its own roll at 380 ms makes
    # yellow 1 fit, placed at 400 ms
    assert list(two.reactions) == [20 * MS]
    assert (one.slaps, two.slaps) == (2, 4)
    assert (one.rounds, two.rounds) == (1, 1)
    assert (one.points, two.points) == (-1, 1)
    assert (one.won, two.won) == (False, True)
    assert one.reactions_known and two.reactions_known


def test_races_and_false_starts_come_from_the_arbiters_records() -> None:
    races = [
        {"kind": "first", "winner": 1, "winner_ts": 100 * MS, "loser": 0, "loser_ts": 100 * MS + 800_000},
        {"kind": "tie", "winner": 0, "winner_ts": 200 * MS + 40_000, "loser": 1, "loser_ts": 200 * MS},
        {"kind": "late", "winner": 1, "winner_ts": 300 * MS, "loser": 0, "loser_ts": 300 * MS - 3 * MS},
        {"kind": "false_start", "loser": 0, "loser_ts": 5 * MS, "go_ns": 6 * MS},
    ]
    one, two = match_figures(replay_of(ROOT / "scenarios" / "dice-reactions.toml"), races)
    # margins are the two presses' distance, whichever was first: 0.8 ms, 0.04 ms, 3 ms
    assert list(one.won_margins) == [40_000] and list(one.lost_margins) == [800_000, 3 * MS]
    assert list(two.won_margins) == [800_000, 3 * MS] and list(two.lost_margins) == [40_000]
    assert (one.false_starts, two.false_starts) == (1, 0)


def test_a_game_that_does_not_say_what_fits_has_no_reactions(monkeypatch: Any) -> None:
    from firmware_host.engine.game import Game, find

    monkeypatch.setattr(type(find("dice")), "playable", Game.playable)
    figures = match_figures(replay_of(ROOT / "scenarios" / "dice-reactions.toml"), [])
    assert [list(f.reactions) for f in figures] == [[], []]
    assert [f.reactions_known for f in figures] == [False, False]
    assert [f.slaps for f in figures] == [2, 4]  # the rest is counted all the same


def test_the_median_of_an_even_count_is_the_mean_of_the_middle_two() -> None:
    assert median([40, 10, 30, 20]) == 25
    assert median([3, 1, 2]) == 2
    assert median([]) is None
    assert SeatFigures(0).reactions.typecode == "q"


def test_each_rounds_reactions_are_the_matchs_reactions_of_that_round() -> None:
    """Issue 31: a round's end shows that round's fastest reaction, not only the match's."""
    from firmware_host.play.figures import round_reactions

    replay = replay_of(ROOT / "scenarios" / "dice-reactions.toml")
    assert round_reactions(replay) == {0: [(250 * MS, 0), (20 * MS, 1)]}  # seat 1 at 350 ms, seat 2 at 400
    import random

    from firmware_host.play.simulate import make_bots, play_round
    from firmware_host.table.matches import new_match

    match = new_match("dice", 3, 4, {"rounds": 3})
    bots, rng = make_bots(3, "hard", 4), random.Random(4)
    for _ in range(3):
        play_round(match, bots, rng)
        if not match.is_over:
            match.next_round()
    stamped = [(e.round, e.action) for e in match.journal]
    whole = {"game": match.game, "players": 3, "seed": match.seed, "options": match.options,
             "journal": stamped, "resources": match.resources, "setups": match.setups}
    rounds = round_reactions(whole)
    figures = match_figures(whole, [])
    assert set(rounds) <= {0, 1, 2} and sum(len(r) for r in rounds.values()) > 3
    for player in range(3):  # every reaction of the match is in exactly one round, in order
        mine = [ns for r in sorted(rounds) for ns, p in rounds[r] if p == player]
        assert mine == list(figures[player].reactions)
