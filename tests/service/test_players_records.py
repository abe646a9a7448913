"""The players' records: the schema's migration from main's journals, who sat at each stored
match, and `add`, `rename`, `merge`, `remove`, `listed` with their refusals."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from helpers import play_recorded

from firmware_host.engine.match import Match
from firmware_host.service import players
from firmware_host.service.database import SCHEMA_VERSION
from firmware_host.service.journal import Store, read_match, record_of, replay_arguments
from firmware_host.table.matches import new_match
from firmware_host.table.names import NAME_MAX, NameRefused, clean

MAIN_JOURNAL = Path(__file__).parent / "data" / "main-journal-v2.sql"
"""Written by main's code before players were kept (tests/service/data/make_main_journal.py)."""


def _replayed(db: sqlite3.Connection, match_id: int) -> tuple[object, ...]:
    record = record_of(match_id, read_match(db, match_id))
    assert record is not None
    row = record["row"]
    match = Match.replay(**replay_arguments(row["game"], row["players"], row["seed"], row["options"],
                                            row["boards"], [(r, a) for _n, r, a in record["journal"]]))
    return (match.results, match.winners, match.round_no, match.round.snapshot(), row["ended"],
            row["winners"])


def test_a_journal_made_by_main_migrates_and_every_match_replays_the_same(tmp_path: Path) -> None:
    path = tmp_path / "table.db"
    with sqlite3.connect(path) as raw:
        raw.executescript(MAIN_JOURNAL.read_text(encoding="utf-8"))
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 2
        before = {m: _replayed(raw, m) for m in (1, 2, 3, 4)}
        history_rows = raw.execute("SELECT * FROM rounds ORDER BY match_id, round_no").fetchall()
    raw.close()
    store = Store(path)
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
        assert {m: _replayed(raw, m) for m in (1, 2, 3, 4)} == before
        assert raw.execute("SELECT * FROM rounds ORDER BY match_id, round_no").fetchall() == history_rows
        # every stored match names its players: guests, and bots where the match had them
        assert raw.execute("SELECT match_id, player, seat, kind, player_id, name FROM match_players "
                           "ORDER BY match_id, player").fetchall() == [
            (1, 0, 1, "guest", None, "guest"), (1, 1, 3, "guest", None, "guest"),
            (1, 2, 5, "bot", None, "bot (hard)"),
            (2, 0, 2, "guest", None, "guest"), (2, 1, 4, "guest", None, "guest"),
            (3, 0, 1, "guest", None, "guest"), (3, 1, 2, "guest", None, "guest"),
            (3, 2, 3, "guest", None, "guest"), (3, 3, 4, "guest", None, "guest"),
            (4, 0, 6, "bot", None, "bot (easy)"), (4, 1, 1, "guest", None, "guest"),
            (4, 2, 2, "guest", None, "guest")]
    raw.close()
    assert store.players_read(lambda db: players.seat_player(db, 4, 6)) == {
        "player": 0, "seat": 6, "kind": "bot", "id": None, "name": "bot (easy)"}
    resumed = store.resume()  # the unfinished Crazy match comes back, as on main
    assert resumed is not None and resumed[0] == 4
    assert (resumed[1].results, resumed[1].round.snapshot()) == (before[4][0], before[4][3])
    store.close()


def test_a_match_names_its_players_found_or_added_by_the_writer(tmp_path: Path) -> None:
    store = Store(tmp_path / "table.db")
    store.players_write(lambda db: players.add(db, "Ann"))
    match = new_match("dice", 3, 5, {"rounds": 1})
    mid = store.begin_match(match, [4, 0, 2], {2: "easy"}, {0: "ann", 1: "Björn"})
    play_recorded(store, mid, match, 10_000)
    assert match.is_over
    seated = store.players_read(lambda db: players.seated(db, mid))
    assert [(p["player"], p["seat"], p["kind"], p["name"]) for p in seated] == [
        (0, 5, "player", "Ann"), (1, 1, "player", "Björn"), (2, 3, "bot", "bot (easy)")]
    listed = store.players_read(players.listed)
    assert [(p["name"], p["matches"]) for p in listed] == [("Ann", 1), ("Björn", 1)]
    assert seated[0]["id"] == listed[0]["id"] and seated[1]["id"] == listed[1]["id"]
    assert store.players_read(lambda db: players.seat_player(db, mid, 1))["name"] == "Björn"
    assert store.players_read(lambda db: players.seat_player(db, mid, 2)) is None
    who = json.loads(store.match_record(mid)["journal"][0][2])["seat"]
    assert store.players_read(lambda db: players.action_player(db, mid, 0)) == seated[who]
    assert store.players_read(lambda db: players.action_player(db, mid, 10**6)) is None
    store.close()


def test_rename_merge_and_remove_keep_every_match(tmp_path: Path) -> None:
    store = Store(tmp_path / "table.db")
    ids = {}
    for game_no, name in enumerate(("Ann", "Annie", "Bo")):
        match = new_match("dice", 2, game_no, {"rounds": 1})
        mid = store.begin_match(match, [0, 1], {}, {0: name})
        play_recorded(store, mid, match, 10_000)
        ids[name] = mid
    assert store.players_write(lambda db: players.rename(db, "bo", "Bodil"))["was"] == "Bo"
    merged = store.players_write(lambda db: players.merge(db, "Annie", "ANN"))
    assert (merged["name"], merged["merged"], merged["matches_moved"]) == ("Ann", "Annie", 1)
    listed = store.players_read(players.listed)
    assert [(p["name"], p["matches"]) for p in listed] == [("Ann", 2), ("Bodil", 1)]
    # the matches show the names as they were, and both of Annie's and Ann's are Ann's now
    annie = store.players_read(lambda db: players.seat_player(db, ids["Annie"], 1))
    assert (annie["name"], annie["id"]) == ("Annie", merged["id"])
    assert store.players_read(lambda db: players.seat_player(db, ids["Bo"], 1))["name"] == "Bo"
    store.players_write(lambda db: players.remove(db, "Bodil"))
    assert [p["name"] for p in store.players_read(players.listed)] == ["Ann"]
    gone = store.players_read(lambda db: players.listed(db, removed=True))
    assert [(p["name"], p["removed"] is not None, p["matches"]) for p in gone] == [
        ("Ann", False, 2), ("Bodil", True, 1)]
    again = store.players_write(lambda db: players.add(db, "Bodil"))  # the name is free again
    assert again["id"] != gone[1]["id"]
    assert store.players_read(players.known_names) == ("Ann", "Bodil")
    store.close()


@pytest.mark.parametrize(("work", "said"), [
    (lambda db: players.add(db, "ann"), "'ann' is already a player"),
    (lambda db: players.rename(db, "Zed", "Y"), "no player is called 'Zed' (tablectl players lists them)"),
    (lambda db: players.rename(db, "Ann", "BO"), "'BO' is already a player (to make them one: tablectl "
                                                 "players merge)"),
    (lambda db: players.merge(db, "Ann", "ANN"), "'Ann' and 'Ann' are the same player already"),
    (lambda db: players.remove(db, "guest"), "'guest' is the table's word for a seat without a name: "
                                             "choose another"),
])
def test_refusals_name_the_problem_and_change_nothing(tmp_path: Path, work, said: str) -> None:
    store = Store(tmp_path / "table.db")
    store.players_write(lambda db: players.add(db, "Ann"))
    store.players_write(lambda db: players.add(db, "Bo"))
    with pytest.raises(NameRefused) as refused:
        store.players_write(work)
    assert str(refused.value) == said
    listed = store.players_read(players.listed)
    assert [(p["name"], p["removed"]) for p in listed] == [("Ann", None), ("Bo", None)]
    store.close()


def test_what_a_name_is() -> None:
    assert clean("  Zoe\u0301   Smith ") == "Zoé Smith"  # NFC: one character, one name
    assert len(clean("e\u0301" * NAME_MAX)) == NAME_MAX
    assert clean("<b>李</b>") == "<b>李</b>"  # markup is text: shown as text everywhere
    for bad, said in [("", "a name needs at least one letter"),
                      ("A" * 17, "a name is at most 16 characters, not 17: AAAAAAAAAAAAAAAA…"),
                      ("a\x07b", "a name cannot hold a control character (U+0007)"),
                      ("a\u202eb", "a name cannot hold a format character (U+202E)"),
                      ("Guest", "'Guest' is the table's word for a seat without a name: choose another"),
                      (7, "a name is text, not int")]:
        with pytest.raises(NameRefused) as refused:
            clean(bad)
        assert str(refused.value) == said
