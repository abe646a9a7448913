"""Every round ends, and every match: the stalls found by the audit, and the property over all games."""

from __future__ import annotations

import random

from helpers import waiting_domino_round
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest import MonkeyPatch

from firmware_host.engine.codec import from_dict, to_dict
from firmware_host.engine.options import PLAYERS, parse_options
from firmware_host.engine.round import Ending, Reason, Wake
from firmware_host.games.crazy.rules import CRAZY_ROUNDS
from firmware_host.games.domino.layouts import layouts
from firmware_host.games.domino.rules import DiscardDomino, DominoCard
from firmware_host.play import simulate as simulate_mod
from firmware_host.play.simulate import make_bots, play_round, simulate, sweep, sweep_cases
from firmware_host.table.bot_players import Level
from firmware_host.table.matches import new_match

K = DominoCard.parse
S = 1_000_000_000


def test_crazy_has_no_round_cap_by_default() -> None:
    """The rulebook ends a match only when a total reaches 100 at the end of a round."""
    assert CRAZY_ROUNDS is None and parse_options("crazy", 2)["rounds"] is None
    match = new_match("crazy", 2, 1, {"target": 10_000})
    bots = make_bots(2, "medium", 1)
    for _ in range(11):
        play_round(match, bots, random.Random(1))
        assert not match.is_over and max(match.totals) < 10_000
        match.next_round()
    assert match.rounds_played == 11


def test_crazy_round_cap_is_an_opt_in_house_rule() -> None:
    match = new_match("crazy", 2, 1, {"target": 10_000, "rounds": 2})
    bots = make_bots(2, "medium", 1)
    play_round(match, bots, random.Random(1))
    assert not match.is_over
    match.next_round()
    play_round(match, bots, random.Random(1))
    assert match.is_over and match.rounds_played == 2 and max(match.totals) < 10_000


def test_medium_crazy_bots_reach_100() -> None:
    """Bots play well enough that a match between them ends as the rulebook says."""
    report = simulate("crazy", 3, None, "m0", {}, "medium")
    assert max(report["totals"]) >= 100 and report["rounds_played"] <= 20


def test_crazy_rounds_cannot_be_unlimited() -> None:
    import pytest

    from firmware_host.engine.round import RulesError

    with pytest.raises(RulesError, match="rounds"):
        parse_options("crazy", 2, {"rounds": 0})


# ---------------------------------------------------------------- Domino: time and jokers

def test_a_domino_round_waiting_only_on_a_joker_ends_when_none_comes() -> None:
    rnd = waiting_domino_round(joker_wait_s=10.0)
    assert rnd.result is None and rnd.joker_needed(0) and not rnd.joker_needed(1)
    assert rnd.deadline() == 10 * S
    assert rnd.apply(DiscardDomino(1, 3 * S)) is None  # a discard changes nothing: still waiting
    assert rnd.deadline() == 10 * S
    assert not rnd.wake(10 * S - 1) and rnd.result is None
    assert rnd.wake(10 * S)
    assert rnd.result.ending is Ending.NO_PLACEMENT and rnd.result.finishers == (0, 1)
    assert rnd.journal[-1] == Wake(10 * S)
    fresh = waiting_domino_round(joker_wait_s=10.0)
    for action in rnd.journal:  # the wake is journaled, so a replay ends the same way
        assert fresh.apply(action) is None
    assert fresh.result == rnd.result


def test_a_joker_played_in_time_keeps_the_round_and_its_hold_lapses_by_itself() -> None:
    rnd = waiting_domino_round(joker_wait_s=10.0, joker_hold_s=5.0)
    joker = rnd.joker_route(0, [K("RB")])
    assert joker is not None
    assert rnd.apply(joker._replace(ts=4 * S)) is None
    assert rnd.waiting_since is None and rnd.result is None
    token = rnd.tokens[joker.token]
    assert token.reserved_by == 0 and rnd.deadline() == 9 * S  # the table wakes when the hold lapses
    assert rnd.wake(9 * S) and token.reserved_by is None and rnd.result is None
    assert to_dict(rnd.journal[-1]) == {"do": "wake", "ts": 9 * S}
    assert from_dict("domino", {"do": "wake", "ts": 9 * S}) == Wake(9 * S)


def test_wake_when_nothing_is_due_is_refused_and_changes_nothing() -> None:
    rnd = new_match("classic", 2, 1).round
    assert rnd.deadline() is None and not rnd.wake(10**12)
    assert rnd.apply(Wake(5)).reason is Reason.NOT_DUE and rnd.journal == []


def test_instant_domino_bots_stamp_every_action_and_the_stalled_seed_ends(monkeypatch: MonkeyPatch) -> None:
    """Seed 11 ran a million actions: every action had ts=0, so a joker's hold never lapsed."""
    monkeypatch.setattr(simulate_mod, "MAX_ACTIONS_PER_ROUND", 100_000)
    report = simulate("domino", 2, 3, 11)
    assert len(report["rounds"]) == 3
    match = new_match("domino", 2, 11)
    bots = make_bots(2, "instant", 11)
    play_round(match, bots, random.Random(0))
    stamps = [a.ts for a in match.round.journal]
    assert all(t > 0 for t in stamps) and stamps == sorted(stamps)


def test_a_timed_bot_with_nothing_to_do_is_asked_again(monkeypatch: MonkeyPatch) -> None:
    """Classic pro_row, stack face down: a seat that could not turn dropped out and the vote hung."""
    monkeypatch.setattr(simulate_mod, "MAX_ACTIONS_PER_ROUND", 100_000)
    report = simulate("classic", 5, 2, "fz0-170", {"pro_row": "yes", "stack_face_down": "yes"}, "easy")
    assert len(report["rounds"]) == 2


# ---------------------------------------------------------------- the property

OPTION_VALUES: dict[str, dict[str, list[object]]] = {
    "classic": {"recycle": ["shuffle", "turn_over"], "pro_row": [False, True], "descending": [False, True],
                "alternate_colours": [False, True], "stack_face_down": [False, True]},
    "dice": {},
    "domino": {"tokens": ["recommended", "random"], "joker_hold_s": [0.0, 5.0, 60.0],
               "joker_wait_s": [0.0, 10.0, 60.0]},
    "crazy": {"target": [10, 100]},
}
MOST_ACTIONS = 200_000
MOST_SECONDS = 1_800


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, int, dict[str, object], str, int]:
    game = draw(st.sampled_from(sorted(PLAYERS)))
    lo, hi = PLAYERS[game]
    players = draw(st.integers(lo, hi))
    options = {name: draw(st.sampled_from(values)) for name, values in OPTION_VALUES[game].items()}
    if game == "domino":
        options["layout"] = draw(st.sampled_from(sorted(n for n, (_, counts, _) in layouts().items()
                                                        if players in counts)))
    level = draw(st.sampled_from([lv.value for lv in Level]))
    return game, players, options, level, draw(st.integers(0, 10**6))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_every_round_ends_within_bounded_actions_and_time(case: tuple[str, int, dict[str, object], str, int]
                                                          ) -> None:
    game, players, options, level, seed = case
    match = new_match(game, players, seed, options)
    stats = play_round(match, make_bots(players, level, seed), random.Random(seed))
    assert match.round.result is not None
    assert stats.actions <= MOST_ACTIONS and stats.sim_seconds <= MOST_SECONDS


def test_a_sample_of_the_sweep_finishes_with_no_stall_and_no_traceback() -> None:
    """The whole sweep is `table-host simulate --sweep` (docs/rules-engine.md); here a sample of it."""
    cases_ = sweep_cases(sorted(PLAYERS), 1)
    sample = random.Random(12).sample(cases_, 40)
    report = sweep(sample)
    assert report["failures"] == [] and report["rounds"] == 40


def test_a_bot_plays_the_joker_the_round_waits_for() -> None:
    """Its screen says UP: JOKER; a bot should not discard its way past the wait."""
    from firmware_host.games.domino.rules import PlayJoker
    from firmware_host.games.domino.sight import DominoSight
    from firmware_host.table.bot_players import Bot

    rnd = waiting_domino_round()
    action = Bot("easy", random.Random(1)).choose(DominoSight(rnd, 0), 2 * S)
    assert isinstance(action, PlayJoker) and action.ts == 2 * S
    assert rnd.apply(action) is None


def test_a_match_replays_a_round_that_time_ended() -> None:
    from firmware_host.engine.match import Match

    b = waiting_domino_round().board
    setup = {"hands": [[K("RB")], [K("RB")]], "jokers": [1, 0]}
    match = Match("domino", 2, 5, {"rounds": 2}, b, setup=setup)
    assert match.round.wake(10 * S) and match.rounds_played == 1
    again = Match.replay("domino", 2, 5, {"rounds": 2}, match.journal, b, {0: setup})
    assert again.results == match.results and again.journal == match.journal


# ------------------------------------------------------------ every Crazy match ends (issue 34)

RUNAWAYS = [("medium", 5, 94), ("hard", 2, 3), ("hard", 2, 46), ("hard", 2, 72), ("hard", 3, 31),
            ("hard", 4, 3), ("hard", 4, 18), ("hard", 5, 20), ("hard", 5, 35), ("hard", 5, 43),
            ("hard", 5, 88)]


def test_the_crazy_matches_that_never_ended_reach_the_target() -> None:
    """These matches' totals sank into the thousands below zero: a bot took a hard bot's four
    quick plays for a masher's and discarded at once for ever after (docs/rules-engine.md)."""
    for level, players, seed in RUNAWAYS:
        report = simulate("crazy", players, None, str(seed), level=level)
        assert max(report["totals"]) >= 100, (level, players, seed, report["totals"])
        assert report["rounds_played"] <= 50, (level, players, seed, report["rounds_played"])


def test_a_crazy_bot_plays_against_a_masher_only_while_it_keeps_mashing() -> None:
    from firmware_host.games.crazy.bot import DENY_LOOKS, Memory, _watch

    class Seen:
        seat = 0

        def __init__(self) -> None:
            self.counts = [0, 0]

        def laid(self) -> list[int]:
            return list(self.counts)

    mem, sight = Memory(), Seen()
    ms = 1_000_000

    def look(at: int, laid: int) -> bool:
        sight.counts[1] = laid
        _watch(mem, sight, at)  # type: ignore[arg-type]
        return mem.denying

    assert not look(0, 0) and not look(1000 * ms, 3)  # three in a second: no sighting
    assert look(2000 * ms, 7)  # four in a second
    for i in range(1, DENY_LOOKS):  # remembered for DENY_LOOKS looks (a second apart, nothing laid)
        assert look((2000 + 1000 * i) * ms, 7), i
    assert not look((2000 + 1000 * DENY_LOOKS) * ms, 7)
    assert not look((3000 + 1000 * DENY_LOOKS) * ms + 1, 11)  # four, but more than a second apart


def test_the_sweep_names_a_match_past_five_times_its_median_by_its_command(monkeypatch: MonkeyPatch) -> None:
    cases = simulate_mod.match_cases(["crazy"], 12, [Level.HARD], 2)
    assert len(cases) == 12 and cases[3].command() == (
        "table-host simulate --game crazy --players 2 --seed 3 --bots hard")
    rounds = {c.seed: 8 for c in cases} | {"3": 41, "5": 40, "7": 1001}
    monkeypatch.setattr(simulate_mod, "play_match", lambda case, cap=1000: rounds[case.seed])
    report = simulate_mod.match_sweep(cases)
    assert report["failures"] == [
        {"case": "table-host simulate --game crazy --players 2 --seed 3 --bots hard",
         "error": "41 rounds, past 5 times the median 8"},
        {"case": "table-host simulate --game crazy --players 2 --seed 7 --bots hard",
         "error": "no end after 1000 rounds"},
    ]
    (row,) = report["rows"]
    assert (row["median"], row["p90"], row["shortest"], row["longest"]) == (8, 41, 8, 1001)
    assert row["histogram"] == {8: 9, 40: 1, 41: 1, 1001: 1}


def test_a_whole_match_is_played_to_its_end_or_stopped_at_the_cap() -> None:
    case = simulate_mod.MatchCase("crazy", 2, Level.HARD, "3")
    report = simulate("crazy", 2, None, "3", level="hard")
    assert simulate_mod.play_match(case) == report["rounds_played"]
    assert simulate_mod.play_match(case, cap=2) == 3
