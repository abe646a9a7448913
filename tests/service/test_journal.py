"""Persistence: completed rounds survive anything; the round in progress comes back by replay."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers import play_recorded

from firmware_host.service.journal import Store, state_path
from firmware_host.system.children import ending_with_me
from firmware_host.system.errors import StoreError
from firmware_host.table.matches import new_match

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("game", "players"), [("classic", 3), ("dice", 2), ("domino", 4), ("crazy", 3)])
def test_a_match_closed_mid_round_comes_back_exactly(tmp_path: Path, game: str, players: int) -> None:
    store = Store(tmp_path / "table.db")
    match = new_match(game, players, 9, {"rounds": 3} if game != "crazy" else {})
    match_id = store.begin_match(match)
    play_recorded(store, match_id, match, 100)
    assert not match.is_over  # the premise: a match that is still going
    snapshot, results, round_no = match.round.snapshot(), list(match.results), match.round_no
    store.close()
    again = Store(tmp_path / "table.db")
    resumed_id, resumed = again.resume()
    assert resumed_id == match_id and resumed.round_no == round_no
    assert resumed.results == results and resumed.round.snapshot() == snapshot
    assert [r["scores"] for r in again.rounds(match_id)] == [list(r.scores) for r in results]
    again.close()


def test_a_finished_match_is_history_not_resumed(tmp_path: Path) -> None:
    store = Store(tmp_path / "table.db")
    match = new_match("dice", 2, 3, {"rounds": 1})
    match_id = store.begin_match(match)
    play_recorded(store, match_id, match, 10_000)
    assert match.is_over
    assert store.resume() is None
    history = store.history()
    assert history[0]["match"] == match_id  # seats numbered from 1, as the table shows them:
    assert history[0]["winners"] == [p + 1 for p in match.winners]  # players sat in order here
    store.close()


def test_sigkill_mid_round_loses_no_completed_round(tmp_path: Path) -> None:
    db = tmp_path / "table.db"
    child = textwrap.dedent(f"""
        import json, sys, time
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from helpers import play_recorded
        import firmware_host.games
        from firmware_host.table.matches import new_match
        from firmware_host.service.journal import Store
        store = Store({str(db)!r})
        match = new_match("classic", 4, 5, {{"rounds": 5}})
        mid = store.begin_match(match)
        play_recorded(store, mid, match, 10**6, rounds=2)
        match.next_round()
        play_recorded(store, mid, match, 15, seed=2)
        time.sleep(0.2)  # the writer's batch reaches the disk
        print(json.dumps({{"results": [list(r.scores) for r in match.results],
                           "round": match.round_no, "state": match.round.snapshot()}}), flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            preexec_fn=ending_with_me())
    line = proc.stdout.readline()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    before = json.loads(line)
    store = Store(db)
    _, match = store.resume()
    assert [list(r.scores) for r in match.results] == before["results"]  # no completed round lost
    assert match.round_no == before["round"]
    assert json.loads(json.dumps(match.round.snapshot())) == before["state"]  # the round in progress
    store.close()


def test_the_state_directory_comes_from_systemd(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path))
    assert state_path() == tmp_path / "table.db"
    monkeypatch.delenv("STATE_DIRECTORY")  # not a service: the user's own, per XDG
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_path() == tmp_path / "xdg" / "table-host" / "table.db"


def test_an_unusable_state_directory_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StoreError, match="cannot open the state database"):
        Store(blocker / "table.db")
    _ = time


def test_the_writer_spells_the_actions_not_the_game_thread(tmp_path: Path, monkeypatch) -> None:
    """Issue 34: JSON-encoding an action on the game thread cost as much as the engine's work."""
    import threading

    from firmware_host.engine.round import RulesError
    from firmware_host.service import journal

    spelt_on: list[str] = []
    real = journal.to_dict

    def to_dict(action):
        spelt_on.append(threading.current_thread().name)
        return real(action)

    monkeypatch.setattr(journal, "to_dict", to_dict)
    store = Store(tmp_path / "table.db")
    try:
        match = new_match("classic", 2, 5, {"rounds": 1})
        mid = store.begin_match(match)
        played = play_recorded(store, mid, match, 30)
        with pytest.raises(RulesError, match="no game has the action str"):
            store.record(mid, 0, "not an action")  # refused at once, on the caller's thread
        store._drain()
        record = store.match_record(mid)
        assert record is not None
        assert [json.loads(a) for _, _, a in record["journal"]] == [real(e.action) for e in match.journal]
        assert len(spelt_on) == played == 30 and set(spelt_on) == {"store"}
    finally:
        store.close()
