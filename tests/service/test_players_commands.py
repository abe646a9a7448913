"""`tablectl players` and `tablectl seat N NAME` against the real daemon: names seated in the
lobby reach the journal with the match, the list follows, and refusals say why."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from plumbing import DaemonProcess

from firmware_host.table.machine import Phase, Table

ROOT = Path(__file__).resolve().parents[2]


def test_seated_names_are_the_matchs_players_and_the_list_follows(tmp_path: Path) -> None:
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.start()
        assert daemon.ctl("players") == {"ok": True, "players": []}
        added = daemon.ctl("players", "add", "Ann")
        assert (added["ok"], added["done"], added["name"]) == (True, "add", "Ann")
        assert daemon.ctl("players", "add", "ANN") == {"ok": False, "error": "'ANN' is already a player"}
        daemon.ctl("new", "dice", "rounds=1")
        seated = daemon.ctl("seat", "2", "ann")  # the known player, spelled as the table knows her
        assert seated["ok"] and seated["seats_joined"] == [2] and seated["names"] == ["Ann"]
        assert daemon.ctl("seat", "3", "<b>Bo</b>")["names"] == ["Ann", "<b>Bo</b>"]
        assert daemon.ctl("seat", "4", "ANN") == {"ok": False, "error": "Ann sits at seat 2 already"}
        assert daemon.ctl("seat", "4", "a\x07b") == {
            "ok": False, "error": "a name cannot hold a control character (U+0007)"}
        assert daemon.ctl("seat", "1")["names"] == ["Ann", "<b>Bo</b>", None]  # a guest
        assert daemon.ctl("seats")["names"] == ["Ann", "<b>Bo</b>", None]
        assert daemon.ctl("start")["ok"]
        assert daemon.ctl("seat", "4", "Cy") == {
            "ok": False, "error": "names are chosen in the lobby, before the match starts"}
        assert daemon.ctl("abort")["ok"]
        listed = daemon.ctl("players")["players"]
        assert [(p["name"], p["matches"]) for p in listed] == [("<b>Bo</b>", 1), ("Ann", 1)]
        assert daemon.ctl("players", "rename", "Ann", "Anna")["was"] == "Ann"
        assert daemon.ctl("status")["names"] == ["Anna", "<b>Bo</b>", None]  # the lobby's seat follows
        merged = daemon.ctl("players", "merge", "<b>Bo</b>", "Anna")
        assert (merged["name"], merged["matches_moved"]) == ("Anna", 1)
        assert daemon.ctl("players", "remove", "Zed") == {
            "ok": False, "error": "no player is called 'Zed' (tablectl players lists them)"}
        text = subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", "players"], cwd=ROOT,
                              env=daemon.env | {"COLUMNS": "100"}, capture_output=True, text=True, timeout=30)
        assert text.returncode == 0 and "Anna" in text.stdout and "<b>" not in text.stdout
        with sqlite3.connect(tmp_path / "state" / "table.db") as raw:
            rows = raw.execute("SELECT seat, kind, name, player_id = seated_as FROM match_players "
                               "ORDER BY player").fetchall()
        raw.close()
        assert rows == [(2, "player", "Ann", 1), (3, "player", "<b>Bo</b>", 0), (1, "guest", "guest", None)]
    finally:
        daemon.close()


def test_a_seat_is_named_in_the_lobby_only_and_once() -> None:
    table = Table(4)
    table.known = ("Ann",)
    table.new("classic", {}, 0)
    assert table.name_seat(0, " ann ", 1) == "Ann" and table.joined == [0]
    with pytest.raises(ValueError, match="Ann sits at seat 1 already"):
        table.name_seat(2, "ANN", 2)
    with pytest.raises(ValueError, match="no seat 5: 4 seats are wired"):
        table.name_seat(4, "Bo", 2)
    table.name_seat(1, "Bo", 3)
    assert table.player_names() == ["Ann", "Bo"]
    table.start(4)
    assert table.phase is Phase.COUNTDOWN and table.known == ("Ann", "Bo")
    with pytest.raises(ValueError, match="names are chosen in the lobby"):
        table.name_seat(1, "Cy", 5)


def test_tablectl_history_names_the_named_seats() -> None:
    from firmware_host.cli.show import as_text, history_table

    match = {"match": 3, "game": "dice", "players": 2, "seats": [2, 4], "started": 0.0, "ended": 60.0,
             "winners": [4], "set_aside": None, "names": [None, "[b]Zoë[/b]"],
             "rounds": [{"round": 1, "ending": "finished", "finishers": [4], "scores": [-2, 5]}]}
    text = as_text(history_table([match]), width=200)
    assert "won by [b]Zoë[/b] (seat 4)" in text and "seat 2 -2, [b]Zoë[/b] (seat 4) +5" in text
    match["winners"] = [2, 4]  # a shared win: each winner as the table names a seat, a guest by its seat
    assert "won by seat 2 and [b]Zoë[/b] (seat 4)" in as_text(history_table([match]), width=200)
    match["names"] = [None, None]
    assert "won by seats 2, 4" in as_text(history_table([match]), width=200)
