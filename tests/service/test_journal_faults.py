"""What a full disk, a damaged file and loose permissions do to the state (issue 22, items 1-3):
the game never stops, nothing is dropped silently, the table always starts."""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from pathlib import Path

import pytest
from helpers import play_recorded
from plumbing import wait_for

from firmware_host.bench.storage_faults import DAMAGE
from firmware_host.engine.match import Match
from firmware_host.service import journal as store_module
from firmware_host.service.database import SCHEMA_VERSION
from firmware_host.service.journal import Store, state_path
from firmware_host.table.matches import new_match

# ---------------------------------------------------------------- 1. a full disk


def disk_full(store: Store, full: bool) -> None:
    """SQLite's own SQLITE_FULL, deterministically: the file may not grow past its size now
    (PRAGMA max_page_count), or may again."""
    with store._mutex:
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count={pages if full else 1 << 30}")


def returns(call: object, timeout: float = 10.0) -> bool:
    """Whether `call()` returns within `timeout` (the game thread must not be held)."""
    worker = threading.Thread(target=call, daemon=True)  # type: ignore[arg-type]
    worker.start()
    worker.join(timeout)
    return not worker.is_alive()


def test_a_full_disk_holds_the_rounds_and_writes_them_when_space_returns(tmp_path: Path,
                                                                         monkeypatch, said) -> None:
    monkeypatch.setattr(store_module, "RETRY_S", (0.05, 0.1))
    store = Store(tmp_path / "table.db")
    match = new_match("dice", 2, 3, {"rounds": 3})
    mid = store.begin_match(match, [0, 1])
    play_recorded(store, mid, match, 10**6, rounds=1)
    store._drain()
    disk_full(store, True)
    assert returns(lambda: play_recorded(store, mid, match, 10**6, rounds=2))  # round 2 ends on a full disk
    assert store.problem == "state not saved (disk full)"
    assert "DEGRADED: state not saved (disk full)" in store.describe()
    assert any("state not saved (disk full)" in line for line in said)
    assert store._writer.is_alive()
    assert len(store.history()[0]["rounds"]) == 2  # shown from memory meanwhile
    with sqlite3.connect(tmp_path / "table.db") as raw:
        assert raw.execute("SELECT COUNT(*) FROM rounds").fetchone()[0] == 1  # not on disk
    match.next_round()
    assert returns(lambda: play_recorded(store, mid, match, 20, seed=3))  # and the round goes on
    snapshot = match.round.snapshot()
    disk_full(store, False)
    wait_for(lambda: store.problem is None, 10)
    assert store.problem is None and store.held() == 0
    assert any("state saved again" in line for line in said)
    store.close()
    again = Store(tmp_path / "table.db")
    resumed_id, resumed = again.resume(2)
    assert resumed_id == mid and [r.scores for r in resumed.results] == [r.scores for r in match.results]
    assert resumed.round.snapshot() == snapshot  # every action since, too
    again.close()


def test_over_the_memory_limit_the_oldest_journal_goes_loudly_and_its_match_is_set_aside(
        tmp_path: Path, monkeypatch, said) -> None:
    monkeypatch.setattr(store_module, "RETRY_S", (0.05, 0.1))
    monkeypatch.setattr(store_module, "HELD_ACTIONS_MAX", 20)
    store = Store(tmp_path / "table.db")
    store._drain()
    disk_full(store, True)
    first = new_match("dice", 2, 3, {"rounds": 3})
    first_id = store.begin_match(first, [0, 1])
    play_recorded(store, first_id, first, 10**6)  # about 100 actions: the free room in a page is less
    assert first.is_over
    second = new_match("dice", 2, 4, {"rounds": 2})
    second_id = store.begin_match(second, [0, 1])
    play_recorded(store, second_id, second, 10)
    wait_for(lambda: "not kept" in (store.problem or ""), 10)
    assert f"journal of match {first_id} not kept" in store.problem
    assert any(f"the journal of match {first_id}" in line and "dropped" in line for line in said)
    disk_full(store, False)
    wait_for(lambda: store.problem is None, 10)
    store.close()
    again = Store(tmp_path / "table.db")
    history = {m["match"]: m for m in again.history()}
    assert len(history[first_id]["rounds"]) == 3 and history[first_id]["ended"] is not None  # kept
    assert "journal was not saved" in history[first_id]["set_aside"]
    assert again.resume(2)[0] == second_id  # the newer match's journal is whole
    again.close()


# ---------------------------------------------------------------- 2. a damaged database


def playing(db: Path, rounds: int = 1) -> tuple[Store, int, Match]:
    """A Dice match of 3 rounds with its first `rounds` played, on disk, the store still open."""
    store = Store(db)
    match = new_match("dice", 2, 3, {"rounds": 3})
    mid = store.begin_match(match, [0, 1])
    play_recorded(store, mid, match, 10**6, rounds=rounds)
    store._drain()
    return store, mid, match


def stored_match(db: Path, rounds: int = 1) -> tuple[int, Match]:
    store, mid, match = playing(db, rounds)
    store.close()
    return mid, match


def moved_files(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir() if ".corrupt." in p.name)


@pytest.mark.parametrize("kind", [k for k in DAMAGE if k != "garbage scores row"])
def test_a_damaged_database_is_moved_aside_loudly_and_the_table_starts_on_a_new_one(
        tmp_path: Path, kind: str, said) -> None:
    db = tmp_path / "table.db"
    stored_match(db)
    DAMAGE[kind](db)  # the bench's damages (bench/storage_faults.py): a garbage page, a renamed
    # column, a file that is not a database, a newer schema
    store = Store(db)
    try:
        assert store.resume(2) is None and store.history() == []  # a new one
        moved = moved_files(db)
        assert moved and all(name.startswith("table.db.corrupt.") for name in moved)
        assert store.set_aside_notes and "moved aside to table.db.corrupt." in store.set_aside_notes[0]
        assert any("damaged" in line and "moved aside" in line for line in said)
        mid = store.begin_match(new_match("dice", 2, 5, {"rounds": 1}), [0, 1])  # and it works
        store._drain()
        assert store.history()[0]["match"] == mid
    finally:
        store.close()


def test_the_wal_goes_with_the_moved_file_and_the_moved_file_opens(tmp_path: Path) -> None:
    db = tmp_path / "table.db"
    store, _, _ = playing(db)  # the WAL holds it; the store is not closed (a crash)
    with sqlite3.connect(db) as raw:
        raw.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    assert Path(f"{db}-wal").exists()
    Store(db).close()
    moved = [n for n in moved_files(db) if not n.endswith(("-wal", "-shm"))]
    assert len(moved) == 1 and Path(tmp_path / f"{moved[0]}-wal").exists()
    with sqlite3.connect(tmp_path / moved[0]) as raw:
        assert raw.execute("SELECT COUNT(*) FROM rounds").fetchone()[0] == 1
    store.close()


def test_garbage_in_a_rounds_row_is_left_out_of_history_not_fatal(tmp_path: Path) -> None:
    db = tmp_path / "table.db"
    mid, _ = stored_match(db, rounds=2)
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE rounds SET scores='{garbage' WHERE round_no=0")
        raw.execute("UPDATE rounds SET finishers='[\"x\"]' WHERE round_no=1")
    store = Store(db)
    try:
        entry = store.history()[0]
        assert entry["match"] == mid and entry["rounds"] == []
        assert entry["damaged"][0].startswith("round 1: not JSON")
        assert entry["damaged"][1].startswith("round 2: not a list of whole numbers")
        from firmware_host.cli.ctl import history_text

        text = history_text(store.history())
        assert re.search(rf"^\s*{mid}\s.*damaged: 2 rounds", text, flags=re.M), text
    finally:
        store.close()


def test_a_bad_matches_row_is_set_aside_at_resume_and_listed_as_damaged(tmp_path: Path) -> None:
    db = tmp_path / "table.db"
    mid, _ = stored_match(db)
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE matches SET bots='[1,', winners='nope', players='many'")
    store = Store(db)
    try:
        assert store.resume(2) is None and f"match {mid} set aside" in store.set_aside_notes[0]
        entry = store.history()[0]
        assert entry["match"] == mid and entry["set_aside"].startswith("damaged row")
    finally:
        store.close()


def test_todays_database_is_migrated_to_the_schema_version(tmp_path: Path) -> None:
    db = tmp_path / "table.db"
    with sqlite3.connect(db) as raw:  # as written before the version was kept, without set_aside
        raw.executescript(store_module.SCHEMA.replace("    set_aside TEXT\n", "").replace(
            "'{}',\n", "'{}'\n"))
        raw.execute("INSERT INTO matches (game, players, seed, options, boards, started) "
                    "VALUES ('dice', 2, '3', '{}', '[]', 1.0)")
    store = Store(db)
    store.close()
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert "set_aside" in {row[1] for row in raw.execute("PRAGMA table_info(matches)")}
        assert raw.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 1
    assert moved_files(db) == []


# ---------------------------------------------------------------- 3. private by hand


def test_by_hand_the_state_is_the_users_alone(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    old = os.umask(0o022)
    try:
        state = state_path().parent
        state.mkdir(parents=True)  # as an older table-host (or the lock) left it: 0755
        store = Store()
        store.begin_match(new_match("dice", 2, 3, {"rounds": 1}), [0, 1])
        store._drain()
        modes = {p.name: p.stat().st_mode & 0o777 for p in state.iterdir()}
        store.close()
    finally:
        os.umask(old)
    assert state.stat().st_mode & 0o777 == 0o700
    assert modes["table.db"] == 0o600 and modes["table.db-wal"] == 0o600 and modes["table.db-shm"] == 0o600


def test_an_existing_open_journal_is_closed_by_hand(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    Store().close()
    db = state_path()
    os.chmod(db.parent, 0o755)
    os.chmod(db, 0o644)
    Store().close()
    assert db.parent.stat().st_mode & 0o777 == 0o700 and db.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(("who", "umask"), [("by hand", 0o022), ("systemd", 0o007)],
                         ids=["by hand", "systemd"])
def test_with_state_directory_set_the_state_is_private_whoever_starts_it(dirs: Path, monkeypatch, who: str,
                                                                         umask: int) -> None:
    """STATE_DIRECTORY set by hand (a script, a second table) is not systemd; under systemd the
    unit says StateDirectoryMode=0700 too. Either way 0700 and 0600 (issue: item 8)."""
    if who == "systemd":
        monkeypatch.setenv("INVOCATION_ID", "0123456789abcdef")
    else:
        monkeypatch.delenv("INVOCATION_ID", raising=False)
        monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    state = dirs / "STATE_DIRECTORY"
    os.chmod(state, 0o755)  # systemd's StateDirectory= default, or mkdir under umask 022
    old = os.umask(umask)
    try:
        store = Store(state / "table.db")
        store.begin_match(new_match("dice", 2, 3, {"rounds": 1}), [0, 1])
        store._drain()
        modes = {p.name: p.stat().st_mode & 0o777 for p in state.iterdir()}
        store.close()
    finally:
        os.umask(old)
    assert state.stat().st_mode & 0o777 == 0o700
    assert modes["table.db"] == 0o600 and modes["table.db-wal"] == 0o600 and modes["table.db-shm"] == 0o600


def test_closing_while_the_writer_is_still_in_a_commit_leaves_it_its_connection(
        tmp_path: Path, monkeypatch, said) -> None:
    """A loaded machine: the writer is inside a commit when the table stops. Its connection was
    closed under it, and the process died in libsqlite3 (exit 139, twice); now it is left to it."""
    store = Store(tmp_path / "table.db")
    match = new_match("dice", 2, 3, {"rounds": 3})
    mid = store.begin_match(match, [0, 1])
    store._drain()
    inside, go_on = threading.Event(), threading.Event()
    commit = store._commit

    def slow_commit(batch):  # the writer's own commit, held inside
        inside.set()
        go_on.wait(10)
        return commit(batch)

    monkeypatch.setattr(store, "_commit", slow_commit)
    monkeypatch.setattr(store_module, "CLOSE_WAIT_S", 0.2)
    play_recorded(store, mid, match, 10**6, rounds=1)
    assert inside.wait(10)
    store.close()
    assert store._writer.is_alive()
    assert any("still writing at exit" in line for line in said)
    go_on.set()  # the commit finishes on an open connection, and the writer stops as it was told
    store._writer.join(10)
    assert not store._writer.is_alive()
    with sqlite3.connect(tmp_path / "table.db") as raw:
        assert raw.execute("SELECT COUNT(*) FROM rounds").fetchone()[0] == 1
