"""The players' statistics on the live page (views/standings.py, docs/web.md "Where the players'
data comes from"), end to end: the emulated daemon with two finished matches of Ana and Ben
stored, a Dice match played by bots beside Ana, then the figures its statistics' keeper made
found on the live state and in Debian's chromium: the podium's rating changes, the match's
fastest reaction, and on the attract screen the leaderboards and the highlights."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from helpers import MATCH_A, MATCH_B, RACES_A, RACES_B, stored_dice_matches
from test_browser import LiveTable, browser, live, open_page, shown  # noqa: F401  (the fixtures)

from firmware_host.system.paths import state_database
from firmware_host.views.live import live_state

TV = {"width": 1920, "height": 1080}


def _state(table: LiveTable) -> dict[str, Any]:
    """The live state as the web view is given it, made on the table's thread."""
    out: dict[str, Any] = {}
    views = table.daemon.views
    table.do(lambda now: out.update(live_state(table.daemon.table, now, "", "", *(
        lambda s: (s.standings, s.match_id))(views.sight(now)))))
    return out


def test_a_bot_match_s_figures_reach_the_podium_and_the_attract_screen(browser: Any, live: Any) -> None:  # noqa: F811
    db = state_database()
    db.parent.mkdir(parents=True, exist_ok=True)
    now = time.time()
    stored_dice_matches(db, [(1, now - 20 * 3600, MATCH_A, RACES_A, [-1, 1], [1]),  # all time only
                             (2, now - 3600, MATCH_B, RACES_B, [2, -2], [0])],  # tonight: Ana won
                        {1: [(1, "player", 1), (2, "player", 2)], 2: [(1, "player", 1), (2, "player", 2)]})
    table = live(4)
    t = table.daemon.table

    def begin(at: int) -> None:
        t.new("dice", {"rounds": 1}, at)
        t.name_seat(0, "Ana", at)  # player 1 of the stored matches: her ratings go on
        t.set_bots(3, "instant")
        t.start(at)

    table.do(begin)
    page = open_page(browser, table.url + "big", TV)
    page.wait_for_function("() => window.tableState.phase === 'match_result'", timeout=120_000)
    # the match's figures come a second or two after its end, from the statistics' own process
    page.wait_for_function("() => (window.tableState.podium || []).every((p) => p.rating !== null)",
                           timeout=120_000)
    state = _state(table)
    assert state["phase"] == "match_result"
    standings = table.daemon.figurer.standings
    assert standings is not None and standings["changes"]["match"] == table.daemon.binding.match_id == 3
    seats = standings["changes"]["seats"]
    assert {p["seat"]: p["rating"] for p in state["podium"]} == seats and set(seats) == {1, 2, 3, 4}
    assert next(p["name"] for p in state["podium"] if p["seat"] == 1) == "Ana"
    quick = standings["highlights"]["fastest_reaction"]
    # the bots' presses, from their kernel stamps: an instant bot can press on the clock's very tick
    # that made its card fit, so 0 ms is a true figure (it failed "> 0" once in the browser tier)
    assert quick is not None and 0 <= quick["ms"] < 60_000 and quick["seat"] in {1, 2, 3, 4}
    # the match's one round: its fastest reaction is the match's, named as the round's table names a seat
    assert standings["round"] == {"match": 3, "round": 1, "problem": None, "fastest_reaction": quick}
    named = "bot" if quick["name"].startswith("bot") else quick["name"]
    assert state["round_end"]["fastest"] == {"seat": quick["seat"], "name": named, "ms": quick["ms"]}
    steps = shown(page, ".podium .step-rating") + [li for li in shown(page, ".final .rest li")]
    assert len(steps) == 4 and all("rating " in s for s in steps)
    fastest = shown(page, ".round-end .fastest")
    assert fastest == [f"Fastest reaction: {named} (seat {quick['seat']}), {quick['ms']:.0f} ms"]

    def to_attract(at: int) -> None:  # the match's end, then the lobby, left at once
        t.timing = replace(t.timing, match_result_ns=0, idle_ns=0)
        t.tick(at)
        t.tick(at + 1)

    table.do(to_attract)
    page.wait_for_function("() => window.tableState.phase === 'attract'", timeout=30_000)
    state = _state(table)
    tonight = state["leaderboard"]["tonight"]
    # tonight: match 2 (Ana won it) and this one, Ben's match 2 alone; all time: Dice's rated
    assert [(e["name"], e["matches"]) for e in tonight] == [("Ana", 2), ("Ben", 1)]
    assert tonight[0]["wins"] >= 1 and tonight[1]["wins"] == 0
    board = standings["leaderboard"]["all_time"]["dice"]
    assert [(e["name"], e["rating"]) for e in state["leaderboard"]["all_time"]] == \
        [(e["name"], e["shown"]) for e in board] and {e["name"] for e in board} == {"Ana", "Ben"}
    assert state["highlights"] and state["highlights"][-1] == \
        f"{quick['name']} reacted fastest: {quick['ms']:.0f} ms"
    page.wait_for_function("() => document.querySelectorAll('.leaders li').length === 4", timeout=30_000)
    wins = tonight[0]["wins"]
    assert shown(page, '.leaders[data-period="tonight"] li') == [
        f"Ana · {wins} {'win' if wins == 1 else 'wins'}", "Ben · 0 wins"]
    assert shown(page, '.leaders[data-period="all_time"] li') == [
        f"{e['name']} · rating {e['shown']:.1f}" for e in board]
    assert shown(page, ".highlights li") == state["highlights"]
