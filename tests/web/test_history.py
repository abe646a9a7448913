"""History and replays, the data layer (web/history.py): a stored match step by step is the
rules' own states, and a contested press is stored with both kernel timestamps and its Δ."""

from __future__ import annotations

import json
import re
import sqlite3
import time
import urllib.request
from pathlib import Path

import pytest
from helpers import play_recorded
from plumbing import DaemonProcess, alive, descendants, left_after, press, scenario_table, settle

from firmware_host.service import database as storage
from firmware_host.service.journal import Store
from firmware_host.table.matches import new_match
from firmware_host.web import history

MS = 1_000_000


def rules_states(game: str, players: int, seed: str, options: dict, journal: list) -> list[dict]:
    """The states the rules give, built here by hand: deal, then each action, a new deal when
    the journal moves to the next round."""
    match = new_match(game, players, seed, options)
    states = [match.round.snapshot()]
    for round_no, action in journal:
        while match.round_no < round_no:
            match.next_round()
            states.append(match.round.snapshot())
        assert match.apply(action) is None
        states.append(match.round.snapshot())
    return states


@pytest.mark.parametrize(("game", "options"), [("classic", {"rounds": 2}), ("dice", {}),
                                               ("domino", {"rounds": 2}), ("crazy", {})])
def test_a_stored_match_step_by_step_is_what_the_rules_give(tmp_path: Path, game: str, options: dict) -> None:
    store = Store(tmp_path / "table.db")
    try:
        match = new_match(game, 3, "7/0", options)
        mid = store.begin_match(match, [2, 0, 1], {1: "hard"})
        play_recorded(store, mid, match, actions=400, seed=3, rounds=2)
        store._drain()
        timeline = history.match_timeline(store, mid)
    finally:
        store.close()
    assert timeline is not None and timeline["problem"] is None
    expected = rules_states(game, 3, "7/0", options, [tuple(e) for e in match.journal])
    assert [step["state"] for step in timeline["steps"]] == expected
    steps = timeline["steps"]
    assert [s["step"] for s in steps] == list(range(len(steps)))
    actions = [s for s in steps if s["kind"] != "deal"]
    assert len(actions) == len(match.journal)
    assert timeline["seats"] == [3, 1, 2] and timeline["bots"] == {"1": "hard"}
    first = actions[0]
    player = match.journal[0].action.seat
    assert first["seat"] == [3, 1, 2][player] and first["ts_ns"] == match.journal[0].action.ts
    assert first["text"].startswith(f"seat {first['seat']} ")
    ended = [s for s in steps if "result" in s]
    assert ended and ended[0]["result"]["scores"] == list(match.results[0].scores)
    assert steps[-1]["totals"] == list(match.totals)
    assert [r["scores"] for r in timeline["rounds"]] == [list(r.scores) for r in match.results]


def test_the_journal_download_is_the_stored_rows(tmp_path: Path) -> None:
    store = Store(tmp_path / "table.db")
    try:
        match = new_match("dice", 2, "1/0", {"rounds": 1})
        mid = store.begin_match(match, [1, 0])
        held = history.match_journal(store, mid)  # held in memory at once, on disk within 20 ms
        play_recorded(store, mid, match, actions=30, seed=2)
        store._drain()
        journal = history.match_journal(store, mid)
        assert history.match_journal(store, mid + 1) is None
        assert history.match_timeline(store, mid + 1) is None
    finally:
        store.close()
    assert held is not None and held["journal"] == [] and held["game"] == "dice"
    assert journal["format"] == "table-host match journal" and journal["seats"] == [2, 1]
    with sqlite3.connect(tmp_path / "table.db") as raw:
        rows = raw.execute("SELECT n, round_no, action FROM journal WHERE match_id=? ORDER BY n",
                           (mid,)).fetchall()
    assert [(e["n"], e["round"] - 1, e["action"]) for e in journal["journal"]] == \
        [(n, r, json.loads(a)) for n, r, a in rows]
    assert len(rows) == 30


@pytest.mark.parametrize(("bad", "why"), [
    ('{"do": "fly", "seat": 0}', "RulesError: unknown action do='fly' for dice"),
    ("{not json", "JSONDecodeError: Expecting property name enclosed in double quotes"),
])
def test_a_bad_journal_row_keeps_the_steps_before_it_and_names_itself(tmp_path: Path, bad: str,
                                                                      why: str) -> None:
    """It was: every row was read before the first step, so one bad row (row 3 of 1,047) left
    the replay with no step at all."""
    store = Store(tmp_path / "table.db")
    match = new_match("dice", 2, "1/0", {"rounds": 1})
    mid = store.begin_match(match, [0, 1])
    play_recorded(store, mid, match, actions=6, seed=2)
    store.close()
    with sqlite3.connect(tmp_path / "table.db") as raw:  # row 4 of 6 (n counts from 0)
        raw.execute("UPDATE journal SET action=? WHERE match_id=? AND n=3", (bad, mid))
    store = Store(tmp_path / "table.db")
    try:
        timeline = history.match_timeline(store, mid)
    finally:
        store.close()
    assert timeline is not None
    expected = rules_states("dice", 2, "1/0", {"rounds": 1}, [tuple(e) for e in match.journal[:3]])
    assert [step["state"] for step in timeline["steps"]] == expected  # the deal and rows 1 to 3
    assert [s["journal"] for s in timeline["steps"]] == [None, 0, 1, 2]
    assert timeline["problem"].startswith(f"the journal does not replay after step 3: row 4 of 6: {why}")


def test_a_match_whose_deal_does_not_replay_says_so(tmp_path: Path) -> None:
    store = Store(tmp_path / "table.db")
    match = new_match("dice", 2, "1/0", {"rounds": 1})
    mid = store.begin_match(match, [0, 1])
    play_recorded(store, mid, match, actions=2, seed=2)
    store.close()
    with sqlite3.connect(tmp_path / "table.db") as raw:
        raw.execute("UPDATE matches SET options=? WHERE id=?", ("{broken", mid))
    store = Store(tmp_path / "table.db")
    try:
        timeline = history.match_timeline(store, mid)
    finally:
        store.close()
    assert timeline is not None and timeline["steps"] == []
    assert timeline["problem"].startswith("the match's deal does not replay: JSONDecodeError: ")


# ---------------------------------------------------------------- races, through the table


def races_of(store: Store) -> list[dict]:
    store._drain()
    mid = store.history(1)[0]["match"]
    timeline = history.match_timeline(store, mid)
    assert timeline is not None
    return timeline["races"]


def test_a_tie_is_stored_with_both_stamps_its_draw_and_seed(tmp_path: Path, monkeypatch) -> None:
    """scenarios/classic-tie.toml: B2 slapped at 1.0 ms and 1.1 ms, ε 0.2 ms, arbiter seed 2."""
    store = Store(tmp_path / "table.db")
    try:
        game, table = scenario_table("classic-tie.toml", store, monkeypatch, 2, seed=2)
        press(game, table, 0, "slap", 1.0)
        press(game, table, 1, "slap", 1.1)
        settle(game, table, 20 * MS)
        races = races_of(store)
    finally:
        store.close()
    assert len(races) == 1
    race = races[0]
    assert race["kind"] == "tie" and race["seat"] == 1 and race["by_seat"] == 2
    assert race["loser_ts_ns"] == 1_000_000 and race["winner_ts_ns"] == 1_100_000
    assert race["delta_ns"] == -100_000 and race["delta_us"] == -100.0
    assert race["window_us"] == 5000.0 and race["epsilon_us"] == 200.0
    assert race["seed"] == 2 and race["draw"] == [1, 0] and race["draw_no"] == 1
    assert race["tied"] == [[2, 1_100_000], [1, 1_000_000]]
    assert race["decided_ns"] == 6_000_000  # the window after the earlier press
    assert race["reason"] == ("tie: 100 µs apart, under ε 200 µs, so the arbiter drew the order by lot (its "
                              "seed 2, draw number 1); seat 2 drawn first, seat 1 too late")


def test_a_press_that_came_late_is_not_a_tie(tmp_path: Path, monkeypatch) -> None:
    """scenarios/classic-late-press.toml: seat 1 slaps at 1.0 ms but reaches the Pi at 8.0 ms,
    after seat 2's slap (2.0 ms) was decided at 7.0 ms."""
    store = Store(tmp_path / "table.db")
    try:
        game, table = scenario_table("classic-late-press.toml", store, monkeypatch, 2, seed=2)
        press(game, table, 1, "slap", 2.0)
        press(game, table, 0, "slap", 1.0, arrive_ms=8.0)
        settle(game, table, 20 * MS)
        races = races_of(store)
    finally:
        store.close()
    assert [r["kind"] for r in races] == ["late"]
    race = races[0]
    assert (race["seat"], race["by_seat"]) == (1, 2)
    assert (race["loser_ts_ns"], race["winner_ts_ns"]) == (1 * MS, 2 * MS)
    assert race["delta_us"] == -1000.0 and race["late_us"] == 1000.0 and race["decided_ns"] == 8 * MS
    assert race["reason"] == ("too late: seat 1 pressed 1000 µs before seat 2, but the press reached the "
                              "table after seat 2's had been decided (taken 1.000 ms after seat 2's window "
                              "closed)")


def test_the_first_press_wins_by_its_delta_and_a_false_start_is_kept(tmp_path: Path, monkeypatch) -> None:
    """scenarios/classic-race.toml: seat 1's B2 at 2000.0 ms, seat 2's at 2000.4 ms; and seat 2
    slapping 250 µs before go."""
    store = Store(tmp_path / "table.db")
    try:
        game, table = scenario_table("classic-race.toml", store, monkeypatch, 3, seed=0)
        press(game, table, 1, "slap", -0.25)  # in the countdown: a false start
        press(game, table, 1, "right", 1000.0)  # Ben's B2 is the second card of his row
        press(game, table, 0, "slap", 2000.0)
        press(game, table, 1, "slap", 2000.4)
        settle(game, table, 2100 * MS)
        races = races_of(store)
        steps = history.match_timeline(store, store.history(1)[0]["match"])["steps"]
    finally:
        store.close()
    assert [r["kind"] for r in races] == ["false_start", "first"]
    false_start, first = races
    assert false_start["seat"] == 2 and false_start["loser_ts_ns"] == -250_000 and false_start["go_ns"] == 0
    assert false_start["delta_us"] == -250.0 and false_start["step"] == 0
    assert false_start["reason"] == "false start: seat 2 pressed slap 250 µs before go, not counted"
    assert (first["seat"], first["by_seat"], first["delta_ns"], first["delta_us"]) == (2, 1, 400_000, 400.0)
    assert first["reason"] == "first: seat 1 pressed 400 µs before seat 2; seat 2 too late"
    assert first["action"] == {"do": "play", "seat": 1, "ts": 2_000_400_000, "card": "B2"}
    # The step it happened at: after seat 1's B2 (the scenario's deal is not the seed's, so the
    # stored match does not replay past its deal: said, not hidden).
    assert first["step"] == 0 and len(steps) == 1


def test_a_version_1_database_gains_the_races(tmp_path: Path) -> None:
    db = tmp_path / "table.db"
    without = storage.SCHEMA.split("CREATE TABLE IF NOT EXISTS races")[0]
    with sqlite3.connect(db) as raw:
        raw.executescript(without)
        raw.execute("INSERT INTO matches (game, players, seed, options, boards, started) "
                    "VALUES ('dice', 2, '3', '{\"rounds\": 1}', '[]', 1.0)")
        raw.execute("PRAGMA user_version=1")
    store = Store(db)
    try:
        assert history.match_timeline(store, 1)["races"] == []
        assert time.time() > 0
    finally:
        store.close()
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == storage.SCHEMA_VERSION == 3
        assert [row[1] for row in raw.execute("PRAGMA table_info(races)")] == list(storage.COLUMNS["races"])


def test_a_bot_match_in_the_real_daemon_replays_step_by_step(tmp_path: Path) -> None:
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.start()
        assert daemon.ctl("new", "classic", "rounds=1")["ok"]
        assert daemon.ctl("bots", "3", "--level", "hard")["ok"]
        assert daemon.ctl("start")["ok"]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(daemon.ctl("inputs").get("events", [])) < 80:
            time.sleep(0.5)
        web = daemon.ctl("status")["web"]  # the daemon's own web view, while it plays on
        with urllib.request.urlopen(f"{web}api/matches") as r:
            listed = json.load(r)
        with urllib.request.urlopen(f"{web}api/matches/{listed[0]['match']}") as r:
            served = json.load(r)
        # the web view's process, and its history's process and multiprocessing's tracker
        rebuilding = descendants(daemon.proc.pid)
    finally:
        daemon.close()  # killed mid-round: what is on the card is what the history shows
    # They end with the daemon: they outlived it, holding table.db, until the machine restarted.
    assert len(rebuilding) == 3 and left_after(lambda: alive(rebuilding)) == []
    store = Store(tmp_path / "state" / "table.db")
    try:
        mid = store.history(1)[0]["match"]
        timeline = history.match_timeline(store, mid)
        journal = history.match_journal(store, mid)
    finally:
        store.close()
    assert timeline is not None and timeline["problem"] is None
    from firmware_host.engine.codec import from_dict

    actions = [(e["round"] - 1, from_dict("classic", e["action"])) for e in journal["journal"]]
    assert len(actions) >= 5  # bots on a loaded machine: enough steps to compare
    assert [s["state"] for s in timeline["steps"]] == rules_states("classic", 3, journal["seed"],
                                                                   journal["options"], actions)
    assert served["match"] == mid and served["problem"] is None and len(served["steps"]) >= 2
    shown = [s["text"] for s in served["steps"]]  # a little earlier than the store's last word
    assert shown == [s["text"] for s in timeline["steps"]][:len(shown)]


def test_the_replay_names_who_sat_at_each_seat_in_its_steps_and_races(tmp_path: Path) -> None:
    """Issue 31: a named player is "Ann (seat 2)" in a step's line and a race's reason, with
    their page's number for the link; a guest stays "seat N", a bot "bot (seat N)"; a name
    with markup is only characters (the page puts `words` in as text)."""
    store = Store(tmp_path / "table.db")
    try:
        match = new_match("dice", 3, "7/0", {"rounds": 1})
        mid = store.begin_match(match, [1, 0, 2], {2: "easy"}, names={0: "<b>Ann</b>"})
        play_recorded(store, mid, match, actions=12, seed=3)
        store.record_race(mid, 0, {"kind": "first", "loser": 1, "winner": 0, "loser_ts": 2_000_400_000,
                                   "winner_ts": 2_000_000_000, "control": "slap", "window_ns": 5 * MS,
                                   "epsilon_ns": 200_000})
        store.record_race(mid, 0, {"kind": "false_start", "loser": 0, "control": "slap",
                                   "loser_ts": -250_000, "go_ns": 0})
        store._drain()
        ann = store.players_read(lambda db: db.execute("SELECT id FROM players WHERE name='<b>Ann</b>'")
                                 .fetchone()[0])
        timeline = history.match_timeline(store, mid)
        listed = store.history(1)[0]
    finally:
        store.close()
    assert timeline is not None
    assert timeline["people"] == [{"seat": 2, "kind": "player", "name": "<b>Ann</b>", "id": ann},
                                  {"seat": 1, "kind": "guest", "name": None, "id": None},
                                  {"seat": 3, "kind": "bot", "name": None, "id": None}]
    by_seat = {2: "<b>Ann</b> (seat 2)", 1: "seat 1", 3: "bot (seat 3)"}
    actions = [s for s in timeline["steps"] if s["kind"] == "action"]
    assert {s["seat"] for s in actions} == {1, 2, 3}
    for step in actions:
        assert step["words"][0] == {"seat": step["seat"]}
        assert step["text"] == by_seat[step["seat"]] + step["words"][1]
        assert re.fullmatch(r" (put [A-Z]\d in its row|rolled the dice left again)", step["words"][1])
    first, false_start = timeline["races"]
    assert first["reason"] == ("first: <b>Ann</b> (seat 2) pressed 400 µs before seat 1; seat 1 too late")
    assert first["reason_words"] == ["first: ", {"seat": 2}, " pressed 400 µs before ", {"seat": 1}, "; ",
                                     {"seat": 1}, " too late"]
    assert false_start["reason"] == ("false start: <b>Ann</b> (seat 2) pressed slap 250 µs before go, "
                                     "not counted")
    assert listed["names"] == ["<b>Ann</b>", None, None] and listed["ids"] == [ann, None, None]
    assert listed["kinds"] == ["player", "guest", "bot"]


def test_a_match_held_in_memory_names_its_players_before_they_have_a_page() -> None:
    """While the disk refuses writes a match's players are the writer's held rows: named, with
    no page yet (the writer gives the number)."""
    from firmware_host.service.journal import record_of

    row = (7, "dice", 2, "1", "{}", "[]", 1.0, None, None, "[1, 0]", "{}", None)
    held = [("seated", (7, json.dumps([[0, 2, "player", "Zoë"], [1, 1, "guest", "guest"]])))]
    record = record_of(7, (row, [], [], []), held, [(0, 2, "player", 5, "Old")])
    assert record is not None and record["who"] == [
        {"player": 0, "seat": 2, "kind": "player", "id": None, "name": "Zoë"},
        {"player": 1, "seat": 1, "kind": "guest", "id": None, "name": "guest"}]
    assert history.people_of(record, [1, 0]) == [{"seat": 2, "kind": "player", "name": "Zoë", "id": None},
                                                {"seat": 1, "kind": "guest", "name": None, "id": None}]
