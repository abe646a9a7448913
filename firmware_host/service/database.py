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

import contextlib
import errno
import json
import logging
import os
import sqlite3
import stat
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ..system import paths
from ..system.atomic import replace_whole
from ..system.errors import TableError

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


ID_MAX = (1 << 63) - 1
"""SQLite's largest integer: a database whose newest match has it has no id for the next one."""


class StorageError(TableError, RuntimeError):
    """The state database cannot be used, and moving it aside would not help. `trouble` is the
    disk's part in the operator's words (a full disk, an I/O error, a read-only file system): the
    table then starts anyway, holding what it would write until the disk takes it. None when it
    is something no waiting cures (permissions, the directory)."""

    def __init__(self, message: str, trouble: str | None = None) -> None:
        super().__init__(message)
        self.trouble = trouble


class Damaged(TableError, ValueError):
    """The file is not a database this table can use; the message says why, in one line."""


def private(path: Path) -> None:
    """The journal is the table's alone, whoever starts it (by hand, with STATE_DIRECTORY set by
    hand, or systemd, whose unit says StateDirectoryMode=0700 too): the state directory 0700, the
    files 0600 whatever the umask, as the debug bundle is. Damaged when something that is not a
    file is where the database should be (a directory named table.db): it is moved aside as a
    damaged file is."""
    directory = path.parent
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    if directory == paths.directory("STATE_DIRECTORY"):  # the table's own, made 0755 by an older one
        _tighten(directory, 0o700)
    try:
        info = path.stat()
    except FileNotFoundError:  # created 0600 here, whatever the umask; SQLite gives -wal and -shm its mode
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
    else:
        if not stat.S_ISREG(info.st_mode):
            raise Damaged(f"a {_kind(info.st_mode)} is where the database should be, not a file")
    for suffix in SUFFIXES:
        _tighten(Path(f"{path}{suffix}"), 0o600)


def _kind(mode: int) -> str:
    return "directory" if stat.S_ISDIR(mode) else "named pipe" if stat.S_ISFIFO(mode) else \
        "socket" if stat.S_ISSOCK(mode) else "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else \
        "special file"


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
        try:
            private(path)
            return _open_checked(path), notes
        except Damaged as exc:
            notes.append(move_aside(path, str(exc)))
            private(path)
            return _open_checked(path), notes
    except Damaged as exc:  # a new, empty file damaged at once: the directory's fault, not the file's
        raise StorageError(f"cannot open the state database {path}: {exc}") from None
    except (OSError, sqlite3.Error) as exc:
        raise StorageError(f"cannot open the state database {path}: {exc}",
                           disk_trouble(exc, path.parent)) from None


def disk_trouble(exc: BaseException, directory: Path | None = None) -> str | None:
    """The disk's part in a failure, in the operator's words: "disk full", "disk error: ...",
    "read-only: ..."; None when the disk is not the cause. SQLite says a -shm file it could not
    grow is an I/O error: a directory with no space left says it is a full disk."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    number = exc.errno if isinstance(exc, OSError) else None
    if name == "SQLITE_FULL" or number in (errno.ENOSPC, errno.EDQUOT):
        return "disk full"
    if name.startswith("SQLITE_IOERR") or number == errno.EIO:
        return "disk full" if directory is not None and _full(directory) else f"disk error: {exc}"
    if name.startswith("SQLITE_READONLY") or number == errno.EROFS:
        return f"read-only: {exc}"
    return None


def _full(directory: Path) -> bool:
    try:
        return os.statvfs(directory).f_bavail == 0
    except OSError:
        return False


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
    triggers = sorted(row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='trigger'"))
    if triggers:  # the table has none: one would refuse or change what it writes
        raise Damaged(f"triggers this table-host does not know: {', '.join(triggers)}")
    if version < SCHEMA_VERSION:
        _migrate(db, version)
    for table, expected in COLUMNS.items():
        have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        missing = [c for c in expected if c not in have]
        if missing:
            raise Damaged(f"table {table} lacks column {', '.join(missing)}")
    newest = db.execute("SELECT MAX(id) FROM matches").fetchone()[0]
    if isinstance(newest, int) and newest >= ID_MAX:  # every new match would be refused
        raise Damaged(f"match id {newest}: no id is left for a new match")


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
    return moved_aside(path, why)[1]


def moved_aside(path: Path, why: str) -> tuple[Path, str]:
    """`move_aside`, and where the database went."""
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
    return target, note


# ---------------------------------------------------------------- what the writer writes

Op = tuple[Any, ...]
"""One thing the writer holds until it is on disk: ("match", row), ("action", row), ("race", row),
("round", row, end or None), ("end", row), ("set_aside", (reason, match id))."""


def apply(db: sqlite3.Connection, ops: Sequence[Op]) -> None:
    """The statements that write `ops`, in the transaction the caller holds: the matches first
    (the rest refers to them), the journal, the races, then the rounds, ends and set-asides in
    their order."""
    db.executemany("INSERT OR IGNORE INTO matches (id, game, players, seed, options, boards, "
                   "started, seats, bots) VALUES (?,?,?,?,?,?,?,?,?)",
                   [op[1] for op in ops if op[0] == "match"])
    db.executemany("INSERT OR REPLACE INTO journal VALUES (?,?,?,?)",
                   [op[1] for op in ops if op[0] == "action"])
    db.executemany("INSERT OR REPLACE INTO races VALUES (?,?,?,?,?)",
                   [op[1] for op in ops if op[0] == "race"])
    for op in ops:
        if op[0] == "round":
            db.execute("INSERT OR REPLACE INTO rounds VALUES (?,?,?,?,?,?)", op[1])
            if op[2] is not None:
                db.execute("UPDATE matches SET ended=?, winners=? WHERE id=?", op[2])
        elif op[0] == "end":
            db.execute("UPDATE matches SET ended=?, winners=? WHERE id=?", op[1])
        elif op[0] == "set_aside":
            db.execute("UPDATE matches SET set_aside=? WHERE id=? AND ended IS NULL", op[1])


def match_of(op: Op) -> int | None:
    """The match an operation belongs to."""
    if op[0] == "end":
        return op[1][2] if isinstance(op[1][2], int) else None
    if op[0] == "set_aside":
        return op[1][1] if isinstance(op[1][1], int) else None
    return op[1][0] if isinstance(op[1][0], int) else None


def refused_anywhere(ops: Sequence[Op]) -> dict[int, str]:
    """Which of `ops` a new, empty database of this schema refuses too, by index, and why: rows
    that can never be written. What it takes, only the database that refused it is to blame for."""
    fresh = sqlite3.connect(":memory:", isolation_level=None)
    try:
        fresh.executescript(SCHEMA)
        refused: dict[int, str] = {}
        for i, op in enumerate(ops):
            fresh.execute("SAVEPOINT one")
            try:
                apply(fresh, [op])
            except Exception as exc:  # whatever the row makes the driver or SQLite say
                refused[i] = said(exc)
            fresh.execute("ROLLBACK TO one")
            fresh.execute("RELEASE one")
        return refused
    finally:
        fresh.close()


def said(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def carry_over(db: sqlite3.Connection, moved: Path, matches: set[int]) -> int:
    """Copy `matches` (their rows, rounds, journal and races) from a database moved aside into
    the new one `db`, so that the match in play goes on in history and can still resume; the
    rows copied. In one transaction."""
    ids = sorted(m for m in matches if isinstance(m, int) and abs(m) <= ID_MAX)
    if not ids:
        return 0
    marks = ",".join("?" * len(ids))
    db.execute("ATTACH DATABASE ? AS moved", (str(moved),))
    try:
        db.execute("BEGIN")
        copied = 0
        try:
            for table, columns in COLUMNS.items():
                key = "id" if table == "matches" else "match_id"
                names = ", ".join(columns)
                copied += db.execute(f"INSERT OR IGNORE INTO main.{table} ({names}) SELECT {names} "
                                     f"FROM moved.{table} WHERE {key} IN ({marks})", ids).rowcount
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return copied
    finally:
        db.execute("DETACH DATABASE moved")


# ---------------------------------------------------------------- rows kept beside the database

HELD_SUFFIX = ".held"
"""Beside the database: what was held in memory when the table stopped, written at the next start."""
SET_ASIDE_SUFFIX = ".set-aside"
"""Beside the database: rows no database can take (each with why), kept for a person to look at."""


def _private_file(path: Path, flags: int) -> int:
    fd = os.open(path, flags | os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def save_held(database: Path, ops: Sequence[Op]) -> Path:
    """Write what is held to `<database>.held`, one JSON line an operation, whole or not at all
    (a new file renamed into place); raises OSError when the disk refuses."""
    target = Path(f"{database}{HELD_SUFFIX}")

    def write(f: IO[bytes]) -> None:
        for op in ops:
            f.write(json.dumps([op[0], *op[1:]], separators=(",", ":")).encode() + b"\n")

    replace_whole(target, write)
    return target


def load_held(database: Path) -> list[Op]:
    """What an earlier run held when it stopped (`save_held`), in its order; a line that does not
    read is said and set aside, never fatal."""
    source = Path(f"{database}{HELD_SUFFIX}")
    try:
        text = source.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        log.error("cannot read %s: %s: what it holds is not written", source, exc.strerror or exc)
        return []
    ops: list[Op] = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            item = json.loads(line)
            if not isinstance(item, list) or item[0] not in KINDS or len(item) != KINDS[item[0]]:
                raise ValueError("not an operation the writer holds")
            ops.append((item[0], *(tuple(part) if isinstance(part, list) else part for part in item[1:])))
        except (ValueError, IndexError, TypeError) as exc:
            set_aside_rows(database, [(("line", line[:2000]), f"{source.name} line {number}: {exc}")])
    if ops:
        log.warning("%d rows held in memory when the table last stopped (%s): written now", len(ops),
                    source)
    else:  # nothing in it reads: each line is set aside already
        drop_held_file(database)
    return ops


KINDS = {"match": 2, "action": 2, "race": 2, "round": 3, "end": 2, "set_aside": 2}


def drop_held_file(database: Path) -> None:
    """Everything `<database>.held` held is written now."""
    with contextlib.suppress(FileNotFoundError):
        Path(f"{database}{HELD_SUFFIX}").unlink()


def set_aside_rows(database: Path, rows: Sequence[tuple[Op, str]]) -> str:
    """Rows that can never be written, each with why, appended to `<database>.set-aside` (one
    JSON object a line) and each said in the journal (ERROR, the row itself with it): kept for a
    person, never silently dropped. Returns where they went, for the status."""
    target = Path(f"{database}{SET_ASIDE_SUFFIX}")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    lines = [json.dumps({"at": stamp, "reason": reason, "op": op[0], "row": op[1],
                         **({"end": op[2]} if len(op) > 2 else {})}, separators=(",", ":"), default=repr)
             for op, reason in rows]
    for line in lines:
        log.error("a row no database takes is set aside: %s", line)
    try:
        fd = _private_file(target, os.O_APPEND)
        with open(fd, "a", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
    except OSError as exc:
        log.error("cannot write %s (%s): the rows set aside are in the journal only", target,
                  exc.strerror or exc)
        return "the journal (service log)"
    return target.name
