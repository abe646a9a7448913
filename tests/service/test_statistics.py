"""The players' statistics and ratings from the journal (service/statistics.py, docs/players.md):
two Dice matches stored as the table stores them, whose stamps give each figure by hand, and two
players, Ana and Ben, who sat at them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import MATCH_A, MATCH_B, MS, NOW, RACES_A, RACES_B, Y, stored_dice_matches
from plumbing import wait_for

from firmware_host.config import emulated_config
from firmware_host.control.client import ask
from firmware_host.games.dice.rules import PlaceDie
from firmware_host.play.ratings import Rating, rate
from firmware_host.service.events import StandingsMade
from firmware_host.service.statistics import Statistics


@pytest.fixture
def two_matches(tmp_path: Path) -> Path:
    db = tmp_path / "table.db"
    stored_dice_matches(db, [(1, NOW - 20 * 3600, MATCH_A, RACES_A, [-1, 1], [1]),
                             (2, NOW - 3600, MATCH_B, RACES_B, [2, -2], [0])],
                        {1: [(1, "player", 1), (2, "player", 2)], 2: [(1, "player", 1), (2, "player", 2)]})
    return db


def test_a_player_page_adds_up_the_figures_of_their_matches(two_matches: Path) -> None:
    stats = Statistics(two_matches)
    try:
        assert stats.catch_up() == 2
        ana = stats.player(1)
        assert ana is not None and ana["name"] == "Ana"
        figures = ana["games"]["dice"]
        assert figures == ana["all"]
        assert figures["matches"] == 2 and figures["wins"] == 1
        assert figures["rounds"] == 2 and figures["points"] == 1 and figures["points_per_round"] == 0.5
        assert figures["slaps"] == 1 + 3  # her place in A; her roll and two places in B
        assert (figures["races"], figures["races_won"], figures["races_lost"]) == (2, 1, 1)
        assert figures["median_margin_won_ms"] == 0.04 and figures["median_margin_lost_ms"] == 0.8
        assert figures["reactions"] == 2  # 50 ms in A, 10 ms in B
        assert figures["median_reaction_ms"] == 30.0 and figures["best_reaction_ms"] == 10.0
        assert figures["false_starts"] == 0
        ben = stats.player(2)["all"]
        assert (ben["matches"], ben["wins"], ben["points_per_round"], ben["false_starts"]) == (2, 1, -0.5, 1)
        assert ben["reactions"] == 1 and ben["median_reaction_ms"] == 300.0 == ben["best_reaction_ms"]
        assert ben["median_margin_won_ms"] == 0.8 and ben["median_margin_lost_ms"] == 0.04
        assert [m["match"] for m in stats.player(1)["matches"]] == [2, 1]  # newest first
        assert stats.player(3) is None
    finally:
        stats.close()


def test_a_period_counts_the_matches_begun_in_it(two_matches: Path) -> None:
    stats = Statistics(two_matches)
    try:
        stats.catch_up()
        recent = stats.player(1, since=NOW - 2 * 3600)["all"]
        assert recent["matches"] == 1 and recent["best_reaction_ms"] == 10.0 and recent["wins"] == 1
        earlier = stats.player(1, until=NOW - 2 * 3600)["all"]
        assert earlier["matches"] == 1 and earlier["best_reaction_ms"] == 50.0 and earlier["wins"] == 0
        assert stats.player(1, game="classic")["all"]["matches"] == 0
    finally:
        stats.close()


def test_ratings_follow_each_match_in_order_and_are_made_again_the_same(two_matches: Path) -> None:
    expected: dict[Any, Rating] = {}
    rate(expected, [("dice", "player 1"), ("dice", "player 2")], [-1, 1])
    after_a = dict(expected)
    rate(expected, [("dice", "player 1"), ("dice", "player 2")], [2, -2])
    stats = Statistics(two_matches)
    try:
        stats.catch_up()
        over_time = stats.player(1)["ratings"]["dice"]
        assert [r["match"] for r in over_time] == [1, 2]
        assert over_time[0]["mu"] == round(after_a[("dice", "player 1")].mu, 3)
        assert over_time[1]["mu"] == round(expected[("dice", "player 1")].mu, 3)
        last = expected[("dice", "player 1")]
        assert over_time[1]["shown"] == round(last.mu - 3 * last.sigma, 3)
        before = stats.ratings()
        assert before["figured"] == 2 and before["waiting"] == 0
        assert [e["who"] for e in before["games"]["dice"]] == sorted(
            ["Ana", "Ben"], key=lambda n: -expected[("dice", f"player {1 if n == 'Ana' else 2}")].mu)
        again = stats.rebuild()
        assert again["matches"] == 2 and again["not_figured"] == []
        assert stats.ratings() == before
    finally:
        stats.close()


def test_the_leaderboard_tonight_and_all_time(two_matches: Path) -> None:
    stats = Statistics(two_matches)
    try:
        stats.catch_up()
        board = stats.leaderboard(now=NOW)
        # tonight: match 2 alone (begun an hour ago); Ana won it
        assert [(e["name"], e["matches"], e["wins"], e["points_per_round"]) for e in board["tonight"]] == [
            ("Ana", 1, 1, 2.0), ("Ben", 1, 0, -2.0)]
        assert {e["name"] for e in board["all_time"]["dice"]} == {"Ana", "Ben"}
        assert all(e["matches"] == 2 for e in board["all_time"]["dice"])
        shown = [e["shown"] for e in board["all_time"]["dice"]]
        assert shown == sorted(shown, reverse=True)
    finally:
        stats.close()


def test_the_newest_rounds_fastest_reaction_needs_no_finished_match(two_matches: Path) -> None:
    """Issue 31: each round's end shows that round's fastest reaction: made from the journal of
    the match in play, without its figures (which wait for its end)."""
    from firmware_host.service.statistics import _newest_round

    figures = two_matches.with_name(two_matches.name + ".figures")
    assert _newest_round(two_matches) == (2, 1) and not figures.exists()  # the keeper's look at the start
    assert _newest_round(two_matches.with_name("none.db")) is None
    stats = Statistics(two_matches)
    try:
        assert stats.newest_round() == (2, 1)
        assert stats.round_highlight(2) == {"match": 2, "round": 1, "problem": None,
                                            "fastest_reaction": {"ms": 10.0, "seat": 1, "name": "Ana"}}
        assert stats.round_highlight(1)["fastest_reaction"] == {"ms": 50.0, "seat": 1, "name": "Ana"}
        assert stats.round_highlight(3) is None  # no such match
    finally:
        stats.close()
    with sqlite3.connect(two_matches) as db:  # the match's end not written yet: a round of a match in play
        db.execute("UPDATE matches SET ended = NULL, winners = NULL WHERE id = 2")
        db.execute("INSERT INTO matches (game, players, seed, options, boards, started) "
                   "SELECT game, players, seed, options, boards, started + 60 FROM matches WHERE id = 2")
    stats = Statistics(two_matches)
    try:
        assert stats.newest_round() == (3, 0)  # a match begun, no round of it ended
        assert stats.round_highlight(3) is None
        assert stats.catch_up() == 1  # only match 1 is finished...
        assert stats.round_highlight(2)["fastest_reaction"] == {"ms": 10.0, "seat": 1, "name": "Ana"}
    finally:
        stats.close()


def test_the_highlights_of_a_match(two_matches: Path) -> None:
    stats = Statistics(two_matches)
    try:
        stats.catch_up()
        assert stats.highlights() == {
            "match": 2, "game": "dice",
            "closest_race": {"margin_ms": 0.04, "seat": 1, "name": "Ana"},
            "fastest_reaction": {"ms": 10.0, "seat": 1, "name": "Ana"}}
        assert stats.highlights(1)["closest_race"] == {"margin_ms": 0.8, "seat": 2, "name": "Ben"}
    finally:
        stats.close()


def test_the_rating_changes_of_a_match_by_seat(two_matches: Path) -> None:
    expected: dict[Any, Rating] = {}
    keys = [("dice", "player 1"), ("dice", "player 2")]
    rate(expected, keys, [-1, 1])
    after_a = dict(expected)
    rate(expected, keys, [2, -2])
    stats = Statistics(two_matches)
    try:
        assert stats.rating_changes() is None  # nothing figured
        stats.catch_up()
        first = {seat: round(after_a[k].shown - Rating().shown, 2)
                 for seat, k in zip((1, 2), keys, strict=True)}
        assert stats.rating_changes(1) == {"match": 1, "seats": first}
        assert first[2] > first[1]  # Ben won match A
        newest = stats.rating_changes()
        assert newest == {"match": 2, "seats": {seat: round(expected[k].shown - after_a[k].shown, 2)
                                                for seat, k in zip((1, 2), keys, strict=True)}}
        assert newest["seats"][1] > 0  # Ana won match B
    finally:
        stats.close()


def test_a_match_whose_journal_does_not_replay_is_named_and_the_rest_figured(tmp_path: Path) -> None:
    db = tmp_path / "table.db"
    broken = [PlaceDie(0, Y, 6, 10 * MS)]  # seat 1 holds no yellow 6
    stored_dice_matches(db, [(1, NOW, MATCH_A, [], [-1, 1], [1]), (2, NOW, broken, [], [0, 0], [0, 1])],
                        {1: [(1, "player", 1), (2, "guest", None)],
                         2: [(1, "player", 1), (2, "guest", None)]})
    stats = Statistics(db)
    try:
        report = stats.rebuild()
        assert report["matches"] == 2
        assert len(report["not_figured"]) == 1 and report["not_figured"][0].startswith("match 2: RulesError")
        assert stats.player(1)["all"]["matches"] == 1
        assert stats.ratings()["games"]["dice"][0]["who"] == "Ana"  # the guest is rated nowhere
        assert len(stats.ratings()["games"]["dice"]) == 1
    finally:
        stats.close()


def test_the_figures_file_is_private_and_a_new_version_is_made_again(two_matches: Path) -> None:
    stats = Statistics(two_matches)
    stats.catch_up()
    stats.close()
    path = two_matches.with_name("table.db.figures")
    assert path.stat().st_mode & 0o777 == 0o600
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE meta SET value='0' WHERE name='version'")
    stats = Statistics(two_matches)
    try:
        assert stats.ratings()["figured"] == 0  # emptied: its figures meant something else
        assert stats.catch_up() == 2
    finally:
        stats.close()


# ---------------------------------------------------------------- in the daemon


@pytest.fixture
def daemon(dirs: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The service with the two matches stored and its control socket, its loop NOT running: the
    game thread answers nothing, as when it is busy."""
    from firmware_host.service.daemon import Daemon

    monkeypatch.delenv("TABLE_HOST_SOCKET", raising=False)
    db = dirs / "STATE_DIRECTORY" / "table.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    stored_dice_matches(db, [(1, NOW - 20 * 3600, MATCH_A, RACES_A, [-1, 1], [1]),
                             (2, NOW - 3600, MATCH_B, RACES_B, [2, -2], [0])],
                        {1: [(1, "player", 1), (2, "bot", None)], 2: [(1, "player", 1), (2, "guest", None)]})
    served = Daemon(emulated_config(2), state_db=db)
    try:
        yield served
    finally:
        served.close()


def test_ratings_are_figured_beside_the_game_and_rebuilt_by_one_command(daemon: Any) -> None:
    daemon.figurer.keep()
    daemon.figurer.wake()  # as a round stored does: else it first looks 10 s after the start
    path = daemon.control.path
    # the ratings follow the figures: both matches figured, then both seats rated
    wait_for(lambda: len(ask({"cmd": "ratings"}, path).get("games", {}).get("dice", [])) == 2, timeout=60)
    wait_for(lambda: daemon.figurer.standings is not None, timeout=60)
    standings = daemon.figurer.standings  # what a screen on the game thread reads, never waits for
    assert standings["highlights"]["fastest_reaction"] == {"ms": 10.0, "seat": 1, "name": "Ana"}
    assert set(standings["leaderboard"]) == {"since", "tonight", "all_time", "titles"}
    assert standings["changes"]["match"] == 2 and set(standings["changes"]["seats"]) == {1}  # a guest: none
    shown = ask({"cmd": "ratings"}, path)
    assert shown["ok"] is True and shown["waiting"] == 0 and shown["problem"] is None
    assert {e["who"] for e in shown["games"]["dice"]} == {"Ana", "bot (hard)"}  # the guest: nowhere
    rebuilt = ask({"cmd": "ratings", "action": "rebuild"}, path)
    assert rebuilt == {"ok": True, "waiting": 2}
    wait_for(lambda: ask({"cmd": "ratings"}, path)["games"] == shown["games"], timeout=60)
    assert ask({"cmd": "ratings"}, path)["figured"] == 2
    queued = []  # for the game thread: only the wake that new standings are there (nothing waits)
    while not daemon.loop.events.empty():
        queued.append(daemon.loop.events.get())
    assert queued and all(isinstance(e, StandingsMade) for e in queued)


def test_an_answer_is_kept_until_the_figures_or_the_players_change(two_matches: Path) -> None:
    from firmware_host.service.statistics import player_in, statistics_of

    database = str(two_matches)
    stats = statistics_of(database)
    try:
        stats.catch_up()
        first = player_in(database, 2, game="dice")
        assert player_in(database, 2, game="dice") is first  # kept
        with sqlite3.connect(two_matches) as raw:
            raw.execute("UPDATE players SET name = 'Benjamin' WHERE id = 2")
        renamed = player_in(database, 2, game="dice")
        assert renamed is not first and renamed["name"] == "Benjamin"
        stats.rebuild()
        assert player_in(database, 2, game="dice") is not renamed  # figured again
    finally:
        stats.close()


def test_a_long_rating_history_is_drawn_from_at_most_200_points() -> None:
    from firmware_host.service.statistics import CHART_POINTS, _thinned

    rows = list(range(1000))
    thin = _thinned(rows)
    assert len(thin) == CHART_POINTS == 200 and thin[0] == 0 and thin[-1] == 999
    assert thin == sorted(set(thin))
    assert _thinned(rows[:5]) == rows[:5]


def test_a_whole_page_is_made_ahead_and_made_again_when_what_it_shows_changes(two_matches: Path) -> None:
    from firmware_host.service.statistics import catch_up_in, make_pages_in, player_in, statistics_of

    database = str(two_matches)
    stats = statistics_of(database)
    try:
        assert catch_up_in(database) == 2 and make_pages_in(database) == 2  # Ana's and Ben's
        with stats._reading() as db:
            kept = dict(db.execute("SELECT player_id, body FROM figures.pages"))
        assert set(kept) == {1, 2}
        assert player_in(database, 1) == stats.player(1)  # the page kept is the page made
        with sqlite3.connect(two_matches) as raw:
            raw.execute("UPDATE players SET name = 'Anna' WHERE id = 1")
        assert player_in(database, 1)["name"] == "Anna"  # a rename: made again
        assert player_in(database, 1, game="dice")["name"] == "Anna"
    finally:
        stats.close()


def test_a_round_stored_wakes_the_keeper_and_nothing_else_does(daemon: Any) -> None:
    """What the game thread does for the figures after a step: compare a count, set a flag."""
    follow = next(f for f in daemon.feed.followers if getattr(f, "__name__", "") == "figures_follow")
    woken = daemon.figurer._wake
    woken.clear()
    follow(None)
    assert not woken.is_set()  # no round stored since
    daemon.binding.saved_rounds += 1  # as binding.journal does when a round is stored
    follow(None)
    assert woken.is_set()
    woken.clear()
    follow(None)
    assert not woken.is_set()


def test_the_keeper_makes_a_rounds_fastest_reaction_when_the_round_is_stored(two_matches: Path) -> None:
    """A round that ends while the table runs is replayed in the statistics' process after the
    wake a stored round gives, and is in `standings` for the round's end: the rounds stored
    before the start are not (nothing is replayed for them)."""
    from firmware_host.service.statistics import Figurer

    figurer = Figurer(two_matches)
    made: list[int] = []
    figurer.made = lambda: made.append(1)
    try:
        figurer.keep()
        figurer.wake()
        wait_for(lambda: figurer.standings is not None, timeout=60)
        assert figurer.standings is not None and figurer.standings["round"] is None  # stored before: old
        with sqlite3.connect(two_matches) as db:  # match 3 (match 2 again, in play) ends its first round
            db.execute("INSERT INTO matches (game, players, seed, options, boards, started, seats, bots) "
                       "SELECT game, players, seed, options, boards, started + 60, seats, bots FROM matches "
                       "WHERE id = 2")
            for table in ("journal", "rounds", "match_players"):
                columns = [c[1] for c in db.execute(f"PRAGMA table_info({table})")]
                chosen = ", ".join("3" if c == "match_id" else c for c in columns)
                db.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {chosen} FROM {table} "
                           "WHERE match_id = 2")
        figurer.wake()
        wait_for(lambda: (figurer.standings or {}).get("round") is not None, timeout=60)
        assert figurer.standings["round"] == {"match": 3, "round": 1, "problem": None,
                                              "fastest_reaction": {"ms": 10.0, "seat": 1, "name": "Ana"}}
        assert made
    finally:
        figurer.close()
