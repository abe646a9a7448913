"""Opening the state database: its files private, its schema checked and migrated, a damaged one
moved aside so that the table starts on a new one instead of refusing to start.

What a damaged file does is Home Assistant's recorder's answer to the same problem
(homeassistant/components/recorder/util.py, `validate_or_move_away_sqlite_database` and
`move_away_broken_database`): check the file at open, and if SQLite says it is damaged, rename it
(with its -wal and -shm files) to `<name>.corrupt.<time>`, say so loudly and start with a new
one. Unlike the recorder, the WAL and SHM files keep SQLite's naming (`<moved name>-wal`), so
that the moved file opens with its last transactions in `sqlite3`. The check here is SQLite's
`PRAGMA quick_check` (the recorder's optional integrity check was the same pragma), the schema's
version is `PRAGMA user_version`.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import time
from pathlib import Path

from ..system import paths

log = logging.getLogger("table_host.store")

SCHEMA_VERSION = 2
"""0 (or absent): the tables as they were before the version was kept, `set_aside` perhaps
missing; 1: the same tables with `matches.set_aside`, and the version kept; 2: and `races`, the
contested presses and false starts (the web's race view)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    id INTEGER PRIMARY KEY,
    game TEXT NOT NULL,
    players INTEGER NOT NULL,
    seed TEXT NOT NULL,
    options TEXT NOT NULL,
    boards TEXT NOT NULL,
    started REAL NOT NULL,
    ended REAL,
    winners TEXT,
    seats TEXT NOT NULL DEFAULT '[]',
    bots TEXT NOT NULL DEFAULT '{}',
    set_aside TEXT
);
CREATE TABLE IF NOT EXISTS rounds (
    match_id INTEGER NOT NULL REFERENCES matches(id),
    round_no INTEGER NOT NULL,
    ending TEXT NOT NULL,
    finishers TEXT NOT NULL,
    scores TEXT NOT NULL,
    ended REAL NOT NULL,
    PRIMARY KEY (match_id, round_no)
);
CREATE TABLE IF NOT EXISTS journal (
    match_id INTEGER NOT NULL REFERENCES matches(id),
    n INTEGER NOT NULL,
    round_no INTEGER NOT NULL,
    action TEXT NOT NULL,
    PRIMARY KEY (match_id, n)
);
CREATE TABLE IF NOT EXISTS races (
    match_id INTEGER NOT NULL REFERENCES matches(id),
    n INTEGER NOT NULL,
    round_no INTEGER NOT NULL,
    after INTEGER NOT NULL,  -- how many of the match's journal rows were recorded before it
    race TEXT NOT NULL,
    PRIMARY KEY (match_id, n)
);
"""

COLUMNS = {
    "matches": ("id", "game", "players", "seed", "options", "boards", "started", "ended", "winners",
                "seats", "bots", "set_aside"),
    "rounds": ("match_id", "round_no", "ending", "finishers", "scores", "ended"),
    "journal": ("match_id", "n", "round_no", "action"),
    "races": ("match_id", "n", "round_no", "after", "race"),
}
CACHE_KIB = 128
"""SQLite's page cache (its default is 2 MiB): the table appends and seldom reads back."""
SUFFIXES = ("", "-wal", "-shm")
"""A WAL database is these three files; they go together or not at all."""


class StorageError(RuntimeError):
    """The state database cannot be used, and moving it aside would not help (the directory)."""


class Damaged(Exception):
    """The file is not a database this table can use; the message says why, in one line."""


def private(path: Path) -> None:
    """By hand, the journal is the user's alone: the state directory 0700, the files 0600, as
    the debug bundle is. Under systemd the unit's StateDirectory= and UMask= decide (its group
    may be meant to read), so nothing is changed there."""
    directory = path.parent
    managed = paths._service("STATE_DIRECTORY") == directory
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    if managed:
        return
    if directory == paths.directory("STATE_DIRECTORY"):  # the table's own, made 0755 by an older one
        _tighten(directory, 0o700)
    if not path.exists():  # created 0600 here, whatever the umask; SQLite gives -wal and -shm its mode
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
    for suffix in SUFFIXES:
        _tighten(Path(f"{path}{suffix}"), 0o600)


def _tighten(path: Path, mode: int) -> None:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if info.st_uid == os.getuid() and not stat.S_ISLNK(info.st_mode) and stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, stat.S_IMODE(info.st_mode) & mode)


def open_database(path: Path) -> tuple[sqlite3.Connection, list[str]]:
    """The connection, and what was moved aside to get it (said by `tablectl status`)."""
    notes: list[str] = []
    try:
        private(path)
        try:
            return _open_checked(path), notes
        except Damaged as exc:
            notes.append(move_aside(path, str(exc)))
            private(path)
            return _open_checked(path), notes
    except Damaged as exc:  # a new, empty file damaged at once: the directory's fault, not the file's
        raise StorageError(f"cannot open the state database {path}: {exc}") from None
    except (OSError, sqlite3.Error) as exc:
        raise StorageError(f"cannot open the state database {path}: {exc}") from None


DAMAGE = ("SQLITE_NOTADB", "SQLITE_CORRUPT")


def _open_checked(path: Path) -> sqlite3.Connection:
    """Open, check and migrate; Damaged if the file is not a table's database in good order.
    Errors that moving the file would not cure (permissions, a full disk, I/O) pass through."""
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        _check_and_migrate(db)
    except sqlite3.DatabaseError as exc:
        db.close()
        if (getattr(exc, "sqlite_errorname", "") or "").startswith(DAMAGE):
            raise Damaged(f"{exc}") from None
        raise
    except BaseException:
        db.close()
        raise
    return db


def _check_and_migrate(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")  # a commit is on the card before it returns
    db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")  # the page cache grows with the file up to this
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise Damaged(f"schema version {version}, written by a newer table-host (this one knows up to "
                      f"{SCHEMA_VERSION})")
    problems = [row[0] for row in db.execute("PRAGMA quick_check").fetchall()]
    if problems != ["ok"]:
        raise Damaged(f"quick_check: {problems[0]}" + (f" (and {len(problems) - 1} more)"
                                                       if len(problems) > 1 else ""))
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    strange = sorted(t for t in tables - set(COLUMNS) if not t.startswith("sqlite_"))
    if strange:
        raise Damaged(f"tables this table-host does not know: {', '.join(strange)}")
    if version < SCHEMA_VERSION:
        _migrate(db, version)
    for table, expected in COLUMNS.items():
        have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        missing = [c for c in expected if c not in have]
        if missing:
            raise Damaged(f"table {table} lacks column {', '.join(missing)}")


def _migrate(db: sqlite3.Connection, version: int) -> None:
    """From `version` to SCHEMA_VERSION in one transaction: a kill leaves the old or the new.
    Tables added since `version` (1 to 2: races) come from SCHEMA's CREATE TABLE IF NOT EXISTS."""
    db.execute("BEGIN IMMEDIATE")
    try:
        for statement in SCHEMA.split(";"):  # not executescript: it would commit first
            if statement.strip():
                db.execute(statement)
        if version == 0:
            columns = {row[1] for row in db.execute("PRAGMA table_info(matches)")}
            if "set_aside" not in columns:  # a database from before matches could be set aside
                db.execute("ALTER TABLE matches ADD COLUMN set_aside TEXT")
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    if version:
        log.info("state database: schema %d migrated to %d", version, SCHEMA_VERSION)


def move_aside(path: Path, why: str) -> str:
    """Rename the damaged database and its -wal and -shm files beside it, with the time, and
    say so loudly; the note returned is for `tablectl status`."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.name}.corrupt.{stamp}")
    n = 1
    while any(Path(f"{target}{s}").exists() for s in SUFFIXES):
        n += 1
        target = path.with_name(f"{path.name}.corrupt.{stamp}.{n}")
    for suffix in SUFFIXES:
        source = Path(f"{path}{suffix}")
        if source.exists():
            os.rename(source, f"{target}{suffix}")
    note = f"the state database was damaged ({why}): moved aside to {target.name}, a new one started"
    log.error("%s", note.replace("the state database", f"the state database {path}", 1))
    return note
