"""A disk full before the table starts, a database that refuses rows, a directory where the
database should be (issue "No decision comes late", items 5, 6 and 7): the table starts, plays,
and everything it played is written once it can be; nothing held is dropped at exit."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import play_recorded
from plumbing import wait_for

from firmware_host.service import journal as store_module
from firmware_host.service.journal import Store
from firmware_host.table.matches import new_match

ROOT = Path(__file__).resolve().parents[2]
ID_MAX = (1 << 63) - 1  # SQLite's largest integer
UNSHARE = shutil.which("unshare")
REFUSING = "CREATE TRIGGER no BEFORE INSERT ON journal BEGIN SELECT RAISE(ABORT, 'refused'); END"


def moved_files(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir() if ".corrupt." in p.name)


def dice_stored(db: Path, rounds: int = 1, of: int = 3) -> int:
    """A Dice match of `of` rounds with `rounds` of them played, stored, the store closed."""
    store = Store(db)
    match = new_match("dice", 2, 3, {"rounds": of})
    mid = store.begin_match(match, [0, 1])
    play_recorded(store, mid, match, 10**6, rounds=rounds)
    store.close()
    return mid


# ---------------------------------------------------------------- 5. a disk full before the start

ON_A_FULL_DISK = """
import json, os, sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
from helpers import play_recorded
from plumbing import wait_for
import firmware_host.games
from firmware_host.cli.run import hold_table
from firmware_host.table.matches import new_match
from firmware_host.service import journal as store_module
from firmware_host.service.journal import Store

store_module.RETRY_S = (0.05, 0.1)
state = Path(os.environ["STATE_DIRECTORY"])
db = state / "table.db"
before = {before!r}
out = {{}}
if before != "none":  # what an earlier start left: a finished match, or one to resume
    earlier = Store(db)
    match = new_match("dice", 2, 3, {{"rounds": 1 if before == "finished" else 3}})
    out["earlier"] = earlier.begin_match(match, [0, 1])
    play_recorded(earlier, out["earlier"], match, 10**6, rounds=1)
    play_recorded(earlier, out["earlier"], match, 5)  # and a few actions of round 2, if any
    out["earlier_actions"] = len(match.journal)
    earlier.close()
with open(state / "filler", "wb", buffering=0) as f:  # the disk full to the last byte
    try:
        while True:
            f.write(bytes(4096))
    except OSError:
        pass
os.close(hold_table(db))  # the lock: the pid cannot be written, the lock is held all the same
store = Store(db)
out["problem"] = store.problem
resumed = store.resume(2)
out["resumed"] = None if resumed is None else [resumed[0], len(resumed[1].journal)]
if resumed is not None:
    mid, match = resumed
else:
    match = new_match("dice", 2, 5, {{"rounds": 1}})
    mid = store.begin_match(match, [0, 1])
play_recorded(store, mid, match, 10**6)  # to its end, on the full disk
out["played"] = mid
wait_for(lambda: len(store.history()[0]["rounds"]) == len(match.results), 5)  # round_over does not
# wait on a full disk: the writer holds the round a moment later
out["while_full"] = [[m["match"], len(m["rounds"])] for m in store.history()]
out["problem_while_full"] = store.problem
os.unlink(state / "filler")
wait_for(lambda: store.problem is None, 30)
store.close()
again = Store(db)
out["after"] = [[m["match"], len(m["rounds"]), m["ended"] is not None] for m in again.history()]
again.close()
print(json.dumps(out))
"""


def on_a_full_disk(tmp_path: Path, before: str) -> dict:
    """The script above in a mount namespace whose state directory is a 2 MiB tmpfs."""
    if os.geteuid() != 0 or UNSHARE is None:
        pytest.skip("needs root and unshare(1) to mount a small tmpfs (CI runs as root)")
    state = tmp_path / "state"
    state.mkdir()
    script = ON_A_FULL_DISK.format(tests=str(ROOT / "tests"), before=before)
    shell = 'mount -t tmpfs -o size=2m,mode=0700 tmpfs "$STATE_DIRECTORY" && exec "$PYTHON" -c "$SCRIPT"'
    env = {**os.environ, "STATE_DIRECTORY": str(state), "PYTHONPATH": str(ROOT), "PYTHON": sys.executable,
           "SCRIPT": script}
    done = subprocess.run([UNSHARE, "--mount", "--fork", "sh", "-c", shell], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("before", ["none", "finished", "unfinished"])
def test_a_disk_full_before_the_start_starts_degraded_plays_and_writes_when_space_returns(
        tmp_path: Path, before: str) -> None:
    out = on_a_full_disk(tmp_path, before)
    assert out["problem"] == "state not saved (disk full)"  # DEGRADED from the first moment
    assert out["problem_while_full"] == "state not saved (disk full)"
    if before == "unfinished":  # read as it was left, the match a stop interrupted comes back
        assert out["resumed"] == [out["earlier"], out["earlier_actions"]]
        assert out["played"] == out["earlier"]
        assert out["while_full"] == [[out["earlier"], 3]]
        assert out["after"] == [[out["earlier"], 3, True]]
    elif before == "finished":  # the stored matches are read: the new one is numbered after them
        assert out["resumed"] is None and out["played"] == out["earlier"] + 1
        assert out["while_full"] == [[out["played"], 1], [out["earlier"], 1]]
        assert out["after"] == [[out["played"], 1, True], [out["earlier"], 1, True]]
    else:
        assert out["resumed"] is None and out["played"] == 1
        assert out["while_full"] == [[1, 1]]  # from memory
        assert out["after"] == [[1, 1, True]]  # and on disk once space returned


def test_matches_numbered_before_the_stored_ones_could_be_read_are_numbered_again(
        tmp_path: Path, monkeypatch, said) -> None:
    """A database no reader can open at start (a full disk and a -wal with transactions in it):
    the matches played meanwhile take the ids after the stored ones when it opens, and the
    unfinished stored one, not resumed at this start, is set aside."""
    db = tmp_path / "table.db"
    earlier = dice_stored(db, rounds=1, of=3)
    monkeypatch.setattr(store_module, "RETRY_S", (0.05, 0.1))
    real, real_reader = store_module.open_database, store_module._open_reader
    full = {"now": True}

    def refusing(path: Path):
        if full["now"]:
            raise store_module.StorageError(f"cannot open the state database {path}: disk I/O error",
                                            "disk full")
        return real(path)

    def unreadable(path: Path, unwritable: bool):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(store_module, "open_database", refusing)
    monkeypatch.setattr(store_module, "_open_reader", unreadable)
    store = Store(db)
    try:
        assert store.problem == "state not saved (disk full)"
        match = new_match("dice", 2, 5, {"rounds": 1})
        mid = store.begin_match(match, [0, 1])
        assert mid == 1  # nothing could be read: provisional
        play_recorded(store, mid, match, 10**6)
        monkeypatch.setattr(store_module, "_open_reader", real_reader)
        full["now"] = False
        wait_for(lambda: store.problem is None, 10)
        history = {m["match"]: m for m in store.history()}
        assert sorted(history) == [earlier, earlier + 1]
        assert len(history[earlier + 1]["rounds"]) == 1 and history[earlier + 1]["ended"] is not None
        assert history[earlier]["set_aside"].startswith("not resumed: the table started while its "
                                                        "database could not be read (disk full)")
        assert any(f"match 1, played while the stored matches could not be read, is stored as match "
                   f"{earlier + 1}" in line for line in said)
    finally:
        store.close()


# ---------------------------------------------------------------- 6. rows a database refuses


def test_a_database_with_no_id_left_for_a_new_match_is_moved_aside(tmp_path: Path, said) -> None:
    db = tmp_path / "table.db"
    dice_stored(db, rounds=3, of=3)
    with sqlite3.connect(db) as raw:
        raw.execute(f"UPDATE matches SET id={ID_MAX}")  # passes SQLite's checks: one bad row
    store = Store(db)
    try:
        assert any("no id is left for a new match" in n and "moved aside" in n for n in store.set_aside_notes)
        match = new_match("dice", 2, 5, {"rounds": 1})
        mid = store.begin_match(match, [0, 1])
        play_recorded(store, mid, match, 10**6)
        store._drain()
        assert store.problem is None and store.held() == 0  # saving, not DEGRADED
        assert [(m["match"], len(m["rounds"])) for m in store.history()] == [(1, 1)]
    finally:
        store.close()
    moved = [n for n in moved_files(db) if not n.endswith(("-wal", "-shm"))]
    with sqlite3.connect(db.parent / moved[0]) as raw:  # everything it had, kept
        assert raw.execute("SELECT id FROM matches").fetchall() == [(ID_MAX,)]


def test_a_database_with_a_trigger_is_moved_aside_at_open(tmp_path: Path) -> None:
    db = tmp_path / "table.db"
    dice_stored(db)
    with sqlite3.connect(db) as raw:
        raw.execute(REFUSING)
    store = Store(db)
    try:
        assert "triggers this table-host does not know: no" in store.set_aside_notes[0]
        assert moved_files(db) and store.history() == []
    finally:
        store.close()


def test_a_database_that_refuses_what_a_new_one_takes_is_moved_aside_and_play_goes_on(
        tmp_path: Path, said) -> None:
    """A trigger that refuses every journal row, put in while the table runs: not the disk, so
    it is not retried forever; a new database takes the rows, so this one is to blame."""
    db = tmp_path / "table.db"
    store = Store(db)
    try:
        match = new_match("dice", 2, 3, {"rounds": 2})
        mid = store.begin_match(match, [0, 1])
        play_recorded(store, mid, match, 10**6, rounds=1)
        store._drain()
        with sqlite3.connect(db) as raw:
            raw.execute(REFUSING)
        match.next_round()
        play_recorded(store, mid, match, 10**6)
        store._drain()
        assert store.problem is None and store.held() == 0
        assert any("it refuses what a new database takes" in n and "moved aside" in n
                   for n in store.set_aside_notes)
        history = store.history()
        assert [(m["match"], len(m["rounds"]), m["ended"] is not None) for m in history] == [(mid, 2, True)]
    finally:
        store.close()
    again = Store(db)  # the new database holds the whole match: its first round carried over
    try:
        record = again.match_record(mid)
        assert record is not None and len(record["journal"]) == len(match.journal)
        assert [r[0] for r in record["rounds"]] == [0, 1]
    finally:
        again.close()
    assert moved_files(db)


def test_a_row_no_database_can_take_is_set_aside_with_why_and_the_rest_is_written(
        tmp_path: Path, said) -> None:
    db = tmp_path / "table.db"
    store = Store(db)
    try:
        match = new_match("dice", 2, 3, {"rounds": 1})
        mid = store.begin_match(match, [0, 1])
        play_recorded(store, mid, match, 5)
        store._queue.put(("action", (mid, 999, 1 << 70, '{"do": "wake"}')))  # a value SQLite cannot hold
        play_recorded(store, mid, match, 10**6)
        store._drain()
        assert store.problem is None and store.held() == 0  # not "written when the disk allows"
        entry = store.history()[0]
        assert len(entry["rounds"]) == 1  # everything else written
        assert entry["set_aside"] is None  # it ended: its rounds are whole
        note = next(n for n in store.set_aside_notes if n.startswith(f"match {mid}:"))
        assert "1 row(s) no database can take were set aside (OverflowError" in note
        assert "kept in table.db.set-aside" in note
    finally:
        store.close()
    kept = [json.loads(line) for line in (tmp_path / "table.db.set-aside").read_text().splitlines()]
    assert [(k["op"], k["row"][:3]) for k in kept] == [("action", [mid, 999, 1 << 70])]
    assert kept[0]["reason"].startswith("OverflowError")
    assert (tmp_path / "table.db.set-aside").stat().st_mode & 0o777 == 0o600
    assert any("a row no database takes is set aside" in line for line in said)


def test_an_unfinished_match_with_a_row_set_aside_is_set_aside_too(tmp_path: Path) -> None:
    db = tmp_path / "table.db"
    store = Store(db)
    try:
        match = new_match("dice", 2, 3, {"rounds": 3})
        mid = store.begin_match(match, [0, 1])
        play_recorded(store, mid, match, 5)
        store._queue.put(("action", (mid, 999, 1 << 70, '{"do": "wake"}')))
        store._drain()
        assert store.history()[0]["set_aside"].startswith("rows of its journal could not be written")
    finally:
        store.close()
    assert Store(db).resume(2) is None  # a journal with a gap does not come back


def test_rows_held_at_exit_are_kept_beside_the_database_and_written_at_the_next_start(
        tmp_path: Path, monkeypatch, said) -> None:
    monkeypatch.setattr(store_module, "RETRY_S", (0.05, 0.1))
    db = tmp_path / "table.db"
    store = Store(db)
    match = new_match("dice", 2, 3, {"rounds": 3})
    mid = store.begin_match(match, [0, 1])
    play_recorded(store, mid, match, 10**6, rounds=1)
    store._drain()
    with store._mutex:  # SQLite's own SQLITE_FULL: the file may not grow
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count={pages}")
    match.next_round()
    play_recorded(store, mid, match, 10**6, rounds=2)
    wait_for(lambda: store.problem is not None, 10)
    held = store.held()
    assert held > 0
    store.close()  # still full: kept, not lost
    kept = tmp_path / "table.db.held"
    assert kept.exists() and len(kept.read_text().splitlines()) == held
    assert kept.stat().st_mode & 0o777 == 0o600
    assert any(f"the {held} rows held in memory are kept in" in line for line in said)
    again = Store(db)
    try:
        again._drain()
        resumed = again.resume(2)
        assert resumed is not None and resumed[0] == mid and len(resumed[1].results) == 2
        assert len(again.history()[0]["rounds"]) == 2
        wait_for(lambda: not kept.exists(), 5)  # written: the file goes
    finally:
        again.close()
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT COUNT(*) FROM rounds").fetchone()[0] == 2
        assert raw.execute("SELECT COUNT(*) FROM journal").fetchone()[0] == len(match.journal)


# ---------------------------------------------------------------- 7. not a file


def test_a_directory_named_table_db_is_moved_aside_and_the_table_starts(tmp_path: Path, said) -> None:
    db = tmp_path / "table.db"
    db.mkdir()
    (db / "notes.txt").write_text("someone's")
    store = Store(db)
    try:
        assert "a directory is where the database should be" in store.set_aside_notes[0]
        mid = store.begin_match(new_match("dice", 2, 5, {"rounds": 1}), [0, 1])
        store._drain()
        assert store.problem is None and store.history()[0]["match"] == mid
    finally:
        store.close()
    moved = moved_files(db)
    assert len(moved) == 1 and (tmp_path / moved[0] / "notes.txt").read_text() == "someone's"
    assert db.is_file()
