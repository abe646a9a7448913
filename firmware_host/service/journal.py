"""Persistence: matches, rounds, scores and the journal of accepted actions, in SQLite (WAL).

The game loop never waits for the disk: `record` and `begin_match` hand their rows to a writer
thread, which commits within 20 ms. A round's result is committed with its journal in one
transaction and synced before `round_over` returns, so a power cut loses no completed round.
After SIGKILL or a power cut, `resume()` rebuilds the match in progress by replaying its journal
through the deterministic engine (engine/match.py).

Nothing the disk does stops the game: a commit that fails (a full disk, an I/O error) leaves its
rows held in memory, `problem` says so (STATUS=, `tablectl status`), the writer tries again with
a growing pause and writes everything once it can; `round_over` does not wait for a commit that
cannot happen. A disk that is full when the table starts is the same: it starts without the
database and opens it when it can. Opening the file (database.py) checks it and moves a damaged
one aside. A row no database could take is set aside (kept beside the database with why); a
database that refuses what a new one takes is moved aside like a damaged one. What is still held
when the table stops is kept beside the database and written at the next start.

Reading never touches the writer: `history` and `match_record` read on a read-only connection of
their own (WAL lets it read beside the writer), a page at a time (`HISTORY_MAX`), from whatever
thread asks; the game thread never answers them (docs/persistence.md, "Reading the history").
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..control.protocol import HISTORY_MAX
from ..engine.codec import from_dict, to_dict
from ..engine.game import find, of_action
from ..engine.match import Match
from ..engine.round import RulesError, Wake
from ..system import paths
from ..system.errors import StoreError
from ..table.matches import resources_for
from .database import (
    CACHE_KIB,
    HELD_SUFFIX,
    ID_MAX,
    SCHEMA,
    Op,
    StorageError,
    apply,
    carry_over,
    disk_trouble,
    drop_held_file,
    load_held,
    match_of,
    moved_aside,
    open_database,
    refused_anywhere,
    said,
    save_held,
    set_aside_rows,
)

__all__ = ["CACHE_KIB", "HISTORY_MAX", "MATCH_FIELDS", "SCHEMA", "Reader", "Store", "StoreError",
           "read_match", "read_only", "read_seated", "record_of", "replay_arguments", "state_path"]

log = logging.getLogger("table_host.store")

BATCH_S = 0.02
ROUND_WAIT_S = 2.0
CLOSE_WAIT_S = 5.0
"""At most this long the game waits in `round_over` for its round to reach the card (a card
that hangs); the writer goes on trying, and the game goes on."""
RETRY_S = (0.5, 8.0)
"""After a failed commit the writer tries again after the first pause, doubled each time up to
the second."""
HELD_ACTIONS_MAX = 50_000
"""Journal rows held in memory while they cannot be written (measured: about 14 MB, docs/
persistence.md). Past it, the oldest match's held journal is dropped, loudly, and the match set
aside (its rounds, start and end are kept): a journal with a gap cannot resume a match."""

state_path = paths.state_database
KEPT_COUNTS = 8
"""Matches whose journal position `record` remembers: the one in play and the last few before it."""
NOTHING: tuple[Any, list[Any], list[Any], list[Any]] = (None, [], [], [])
"""`read_match` of a database that has nothing stored (a new file, not yet written)."""
T = TypeVar("T")


class Store:
    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else state_path()
        self._mutex = threading.Lock()  # the writer's connection (the writer, and resume at start)
        self._held_lock = threading.Lock()  # `_held` alone: never held while the disk is written
        self._held: list[Op] = []  # rows not yet committed, oldest first
        self._held_actions = 0  # journal rows among them (the writer's count)
        self._unwritten = 0  # journal rows since the last commit attempt (the batch)
        self._dropped: dict[int, int] = {}  # match: journal rows not kept (the memory limit)
        self._reason: str | None = None  # why the last commit failed, until one succeeds
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._counts: dict[int, int] = {}
        self._races: dict[int, int] = {}  # match: its races recorded (the next one's number)
        self._reader: sqlite3.Connection | None = None  # the readers' own, read-only
        self._reader_immutable = False  # opened so while the database could not be written
        self._reader_lock = threading.Lock()
        self._renamed: dict[int, int] = {}  # match ids given before the stored ones could be read
        self.set_aside_notes: list[str] = []  # what was set aside since this start, said by status
        self._db: sqlite3.Connection | None = None
        held = load_held(self.path)  # what an earlier run held when it stopped: oldest of all
        try:
            self._db, moved = open_database(self.path)
            self.set_aside_notes += moved
        except StorageError as exc:
            if exc.trouble is None:
                raise StoreError(str(exc)) from None
            self._reason = exc.trouble  # DEGRADED from the first moment; the writer tries again
            log.error("state not saved (%s): %s; the table starts without it, holds what it would write "
                      "and writes it when the disk allows", exc.trouble, exc)
        newest = self._newest()
        self._ids_unknown = newest is None  # the stored matches cannot be read: see _opened
        self._held = held
        self._held_file = bool(held)  # `.held` is there until what it held is written
        self._held_actions = sum(1 for op in held if op[0] == "action")
        self._next_id = max([newest or 0, *(op[1][0] for op in held if op[0] == "match")]) + 1
        self._writer = threading.Thread(target=self._write_loop, name="store", daemon=True)
        self._writer.start()

    def _newest(self) -> int | None:
        """The newest stored match's id (0: none); None when what is stored cannot be read."""
        if self._db is None and not self.path.exists():
            return 0
        try:
            newest = self._read(lambda db: db.execute("SELECT MAX(id) FROM matches").fetchone())[0]
        except sqlite3.Error as exc:
            if _nothing_stored(exc):
                return 0
            if self._db is not None:
                raise StoreError(f"cannot open the state database {self.path}: {exc}") from None
            log.error("the stored matches cannot be read (%s): the matches played meanwhile are "
                      "numbered again when they are written", exc)
            return None
        return int(newest or 0)

    # ------------------------------------------------------------ health

    @property
    def problem(self) -> str | None:
        """Why state is not being saved, for STATUS= and `tablectl status`; None when it is."""
        reason = self._reason
        if reason is None:
            return None
        text = f"state not saved ({reason})"
        if self._dropped:
            matches = ", ".join(str(m) for m in self._dropped)
            text += f"; journal of match {matches} not kept (over {HELD_ACTIONS_MAX} actions held)"
        return text

    def held(self) -> int:
        """Rows held in memory, not yet on disk."""
        with self._held_lock:
            return len(self._held)

    def describe(self) -> str | None:
        """The problem with what is held, for `tablectl status`."""
        problem = self.problem
        if problem is None:
            return None
        return f"DEGRADED: {problem}: {self.held()} rows held in memory, written when the disk allows"

    # ------------------------------------------------------------ writing

    def begin_match(self, match: Match, seats: list[int] | None = None,
                    bots: dict[int, str] | None = None, names: dict[int, str] | None = None) -> int:
        """A new match; `seats` is the physical seat of each player, `bots` the bot players'
        levels, so that a match resumed after a crash is played by the same seats and bots;
        `names` the named players' names (the others are guests), found or added among the known
        players by the writer, in the match's own transaction: never a lookup on the game thread."""
        with self._held_lock:  # held at once (history shows it), before any of its actions
            match_id = self._next_id
            self._next_id += 1
            row = (match_id, match.game, match.players, str(match.seed), json.dumps(_plain(match.options)),
                   json.dumps([[str(c) for c in b] for b in match.boards]), time.time(),
                   json.dumps(seats or []), json.dumps({str(k): v for k, v in (bots or {}).items()}))
            self._held.append(("match", row))
            self._held.append(("seated", (match_id, json.dumps(_who(match.players, seats, bots, names)))))
        self._queue.put(("nudge",))
        self._counts[match_id] = self._races[match_id] = 0
        for kept in (self._counts, self._races):
            while len(kept) > KEPT_COUNTS:  # one entry a match: the oldest go
                del kept[next(iter(kept))]
        return match_id

    def record(self, match_id: int, round_no: int, action: Any) -> None:
        """An accepted action: queued for the writer thread, never waits for the disk. The writer
        spells it as JSON (an action is an immutable tuple): on the game thread that took as
        long as the rules engine's own work per action (issue 34)."""
        if type(action) is not Wake and of_action(type(action)) is None:  # refused here, not there
            raise RulesError(f"no game has the action {type(action).__name__}")
        n = self._counts.get(match_id, 0)
        self._counts[match_id] = n + 1
        self._queue.put(("action", (match_id, n, round_no, action)))

    def record_race(self, match_id: int, round_no: int, race: dict[str, Any]) -> None:
        """A contested press or a false start, for the race view: queued like an action, after
        the journal rows recorded so far (its `after`)."""
        n = self._races.get(match_id, 0)
        self._races[match_id] = n + 1
        self._queue.put(("race", (match_id, n, round_no, self._counts.get(match_id, 0), json.dumps(race))))

    def round_over(self, match_id: int, match: Match) -> None:
        """A round ended: its result, every action before it and, after the last round, the
        match's end are on disk when this returns, in one transaction: a kill leaves all or none.
        If the disk refuses them they are held and this returns at once: the game goes on."""
        done = threading.Event()
        result = match.results[-1]
        row = (match_id, len(match.results) - 1, str(result.ending), json.dumps(list(result.finishers)),
               json.dumps(list(result.scores)), time.time())
        end = (time.time(), json.dumps(list(match.winners)), match_id) if match.is_over else None
        self._queue.put(("round", row, end, done))
        if self._reason is None and not done.wait(ROUND_WAIT_S):
            log.warning("round %d of match %d not on the card after %.0f s: play goes on, the writer "
                        "keeps it", row[1] + 1, match_id, ROUND_WAIT_S)

    def abort(self, match_id: int) -> None:
        """Aborted by the operator: kept in history, never resumed."""
        self.set_aside(match_id, "aborted")

    def set_aside(self, match_id: int, reason: str) -> None:
        """A match that must not come back (aborted, or one that cannot resume): kept, marked."""
        self._queue.put(("set_aside", (reason, match_id)))
        self._drain()

    def _drain(self) -> None:
        """Wait until what is queued is written, or the writer has found it cannot be."""
        done = threading.Event()
        self._queue.put(("sync", done))
        if self._reason is None:
            done.wait(ROUND_WAIT_S)

    def close(self) -> None:
        """Stop the writer; what it could not write is kept beside the database (`.held`) and
        written at the next start, never dropped while a file can hold it."""
        self._queue.put(("stop",))
        self._writer.join(timeout=CLOSE_WAIT_S)
        busy = self._writer.is_alive()  # still in a commit (a loaded machine): its connection is its own
        with self._reader_lock, contextlib.suppress(sqlite3.Error):
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        with self._held_lock:
            left = list(self._held)
        if left:
            why = self._reason or "the writer did not finish in time"
            try:
                kept = save_held(self.path, left)
            except OSError as exc:
                log.error("state not saved at exit (%s): %d rows held in memory are lost: %s could not be "
                          "written either (%s)", why, len(left), f"{self.path.name}{HELD_SUFFIX}",
                          exc.strerror or exc)
            else:
                log.warning("state not saved at exit (%s): the %d rows held in memory are kept in %s and "
                            "written at the next start", why, len(left), kept)
        if busy:  # closing it under a running statement crashed the process in libsqlite3, twice
            log.warning("the journal's writer is still writing at exit: its connection is left open to it")
        elif self._db is not None:
            with self._mutex, contextlib.suppress(sqlite3.Error):
                self._db.close()

    def _write_loop(self) -> None:
        """The writer: holds what it is given, commits it in batches, and on a failure keeps it
        and tries again later. Whatever happens, it does not die and it releases the waiters."""
        waiting: list[threading.Event] = []
        retry_at, pause = 0.0, RETRY_S[0]
        while True:
            if self._reason is None:
                timeout = BATCH_S if self._unwritten or self.held() else None
            else:
                timeout = max(0.0, retry_at - time.monotonic())
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                item = None
            kind = None if item is None else item[0]
            if kind == "action":
                match_id, n, round_no, action = item[1]
                try:  # spelt here, off the game thread (`record`); a row given as text is kept as it is
                    text = action if isinstance(action, str) else json.dumps(to_dict(action))
                except Exception as exc:  # a bug (`record` checked the action's game): said, never fatal
                    log.error("match %d: action %d (%r) cannot be written (%s): the match is set aside, "
                              "its journal has a gap", match_id, n, action, exc)
                    self._hold(("set_aside", self._renumbered(
                        (f"action {n} could not be written ({exc})", match_id), 1)))
                    continue
                self._hold_action((match_id, n, round_no, text))
                if self._unwritten < 200:
                    continue
            elif kind == "round":
                self._hold(("round", self._renumbered(item[1]), item[2] and self._renumbered(item[2], 2)))
                waiting.append(item[3])
            elif kind == "end":
                self._hold(("end", self._renumbered(item[1], 2)))
            elif kind == "set_aside":
                self._hold(("set_aside", self._renumbered(item[1], 1)))
            elif kind == "race":
                self._hold(("race", self._renumbered(item[1])))
                continue  # written with the next batch, as actions are
            elif kind == "sync":
                waiting.append(item[1])
            elif kind == "nudge":
                continue  # a new match: written with the next batch
            if self._reason is None or kind == "stop" or time.monotonic() >= retry_at:
                if self._write_held():
                    pause = RETRY_S[0]
                else:
                    retry_at = time.monotonic() + pause
                    pause = min(pause * 2, RETRY_S[1])
            for event in waiting:  # written, or found unwritable: the game does not wait on
                event.set()
            waiting.clear()
            if kind == "stop":
                return

    def _renumbered(self, row: tuple[Any, ...], at: int = 0) -> tuple[Any, ...]:
        """`row` with its match id as stored (see `_opened`)."""
        new = self._renamed.get(row[at])
        return row if new is None else (*row[:at], new, *row[at + 1:])

    def _hold(self, op: Op) -> None:
        with self._held_lock:
            self._held.append(op)

    def _hold_action(self, row: tuple[Any, ...]) -> None:
        row = self._renumbered(row)
        match_id = row[0]
        if match_id in self._dropped:
            self._dropped[match_id] += 1
            return
        if self._reason is not None and self._held_actions >= HELD_ACTIONS_MAX:  # not a batch: a failure
            self._drop_oldest_journal()
            if match_id in self._dropped:
                self._dropped[match_id] += 1
                return
        self._hold(("action", row))
        self._held_actions += 1
        self._unwritten += 1

    def _drop_oldest_journal(self) -> None:
        """The memory limit: the held journal of the oldest match goes, and the match is set aside
        (a journal with a gap cannot resume it); its start, rounds and end stay held. Said loudly."""
        with self._held_lock:
            victim = next(op[1][0] for op in self._held if op[0] == "action")
            kept = [op for op in self._held if not (op[0] == "action" and op[1][0] == victim)]
            dropped = len(self._held) - len(kept)
            at = next(i for i, op in enumerate(self._held) if op[0] == "action" and op[1][0] == victim)
            reason = f"its journal was not saved: the disk refused it ({self._reason}) and more than " \
                     f"{HELD_ACTIONS_MAX} actions were held"
            kept.insert(at, ("set_aside", (reason, victim)))  # where its journal was: before its end
            self._held = kept
        self._held_actions -= dropped
        self._dropped[victim] = dropped
        log.error("state not saved (%s): over %d actions held in memory: the journal of match %d "
                  "(%d actions) is dropped and the match set aside; its rounds are kept",
                  self._reason, HELD_ACTIONS_MAX, victim, dropped)

    def _write_held(self) -> bool:
        """Commit what is held, a round (with the journal before it) to a transaction; True when
        all of it is on disk. A failure of the disk keeps the rest held and says why, once; rows
        the database refuses for another reason are dealt with by `_refused`."""
        self._unwritten = 0
        with self._held_lock:
            ops = list(self._held)
        try:
            with self._mutex:
                if self._db is None:
                    self._opened()
                    with self._held_lock:  # renumbered, perhaps, and what came meanwhile
                        ops = list(self._held)
                done = 0
                while done < len(ops):
                    end = next((i + 1 for i in range(done, len(ops)) if ops[i][0] == "round"), len(ops))
                    batch = ops[done:end]
                    try:
                        self._commit(batch)
                    except Exception as exc:
                        if disk_trouble(exc, self.path.parent) is not None:
                            raise
                        self._refused(batch, exc)
                    with self._held_lock:
                        del self._held[:end - done]
                    self._held_actions -= sum(1 for op in batch if op[0] == "action")
                    done = end
        except Exception as exc:  # sqlite3.Error above all; whatever it is, the game goes on
            reason = getattr(exc, "trouble", None) or disk_trouble(exc, self.path.parent) or said(exc)
            if self._reason != reason:
                log.error("state not saved (%s): %d rows held in memory; trying again until the disk "
                          "takes them", reason, self.held())
            self._reason = reason
            return False
        if self._reason is not None:
            log.warning("state saved again: everything held while it could not be (%s) is on disk",
                        self._reason)
            self._reason = None
        if self._held_file:  # what an earlier run left there is written now
            drop_held_file(self.path)
            self._held_file = False
        return True

    def _commit(self, ops: Sequence[Op]) -> None:
        """One transaction (database.py's `apply`)."""
        db = self._db
        assert db is not None
        db.execute("BEGIN")
        try:
            apply(db, ops)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite may have rolled back already (a full disk does)
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            raise

    def _refused(self, ops: list[Op], exc: Exception) -> None:
        """The database refused `ops` for something other than the disk (a value SQLite cannot
        hold, a constraint, a trigger). Rows a new database would refuse too can never be written:
        they are set aside, with why, and their match too (its journal has a gap). If the database
        refuses what a new one takes, it is to blame: it is moved aside like a damaged one and the
        rows go to a new one, with what is stored of their matches. Raises what the disk says."""
        refused = refused_anywhere(ops)
        if refused:
            kept = set_aside_rows(self.path, [(ops[i], why) for i, why in refused.items()])
            matches = sorted({m for i in refused if (m := match_of(ops[i])) is not None})
            for match_id in matches:
                count = sum(1 for i in refused if match_of(ops[i]) == match_id)
                why = next(w for i, w in refused.items() if match_of(ops[i]) == match_id)
                note = f"match {match_id}: {count} row(s) no database can take were set aside ({why}), " \
                       f"kept in {kept}"
                self.set_aside_notes.append(note)
            ops = [op for i, op in enumerate(ops) if i not in refused]
            ops += [("set_aside", (f"rows of its journal could not be written ({refused[min(refused)]})", m))
                    for m in matches]
            try:
                self._commit(ops)
                return
            except Exception as again:
                if disk_trouble(again, self.path.parent) is not None:
                    raise
                exc = again
        self._replace(f"it refuses what a new database takes: {said(exc)}", ops)
        self._commit(ops)

    def _replace(self, why: str, ops: list[Op]) -> None:
        """Move the database aside (database.py's `moved_aside`) and start a new one, with what is
        stored of the matches `ops` belong to."""
        assert self._db is not None
        with contextlib.suppress(sqlite3.Error):
            self._db.close()
        self._db = None
        with self._reader_lock:  # the readers' connection follows the file: open it again
            if self._reader is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._reader.close()
                self._reader = None
        moved, note = moved_aside(self.path, why)
        self.set_aside_notes.append(note)
        self._db, notes = open_database(self.path)
        self.set_aside_notes += notes
        try:
            carry_over(self._db, moved, {m for op in ops if (m := match_of(op)) is not None})
        except sqlite3.Error as exc:
            if disk_trouble(exc, self.path.parent) is not None:
                raise
            log.error("the matches in play could not be copied from %s (%s): their earlier rows stay "
                      "there", moved.name, exc)

    def _opened(self) -> None:
        """The database could not be written when the table started; now it opens. A reader that
        read the file alone (immutable) opens it again, before anything is committed. If the
        stored matches could not be read then, the matches played meanwhile take ids after the
        stored ones, and the unfinished stored match, which the table did not resume, is set aside."""
        db, notes = open_database(self.path)  # writes only to the -wal: an immutable read is still whole
        self.set_aside_notes += notes
        if self._ids_unknown:
            try:
                newest = int(db.execute("SELECT COALESCE(MAX(id), 0) FROM matches").fetchone()[0])
                stale = [row[0] for row in db.execute(
                    "SELECT id FROM matches WHERE ended IS NULL AND set_aside IS NULL")]
            except BaseException:
                db.close()
                raise
            self._renumber(newest)
            reason = f"not resumed: the table started while its database could not be read ({self._reason})"
            with self._held_lock:
                self._held[:0] = [("set_aside", (reason, m)) for m in stale]
            self._ids_unknown = False
        self._db = db  # from now on readers open it as it is written
        with self._reader_lock:  # and one that read the file alone reads it again before a commit
            if self._reader is not None and self._reader_immutable:
                with contextlib.suppress(sqlite3.Error):
                    self._reader.close()
                self._reader = None

    def _renumber(self, newest: int) -> None:
        """The matches held with ids a stored match has get the ids after the newest stored one."""
        with self._held_lock:
            mine = sorted({op[1][0] for op in self._held if op[0] == "match"})
            clash = [m for m in mine if m <= newest]
            if not clash:
                return
            renamed = {old: newest + 1 + i for i, old in enumerate(mine)}
            self._held = [op if (m := match_of(op)) not in renamed else _with_match(op, renamed[m])
                          for op in self._held]
            self._next_id = max(self._next_id, newest + len(mine) + 1)
        self._renamed.update(renamed)
        self._dropped = {renamed.get(k, k): v for k, v in self._dropped.items()}
        for old, new in renamed.items():
            log.warning("match %d, played while the stored matches could not be read, is stored as match %d",
                        old, new)

    # ------------------------------------------------------------ players

    def players_write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work` (service/players.py's add, rename, merge, remove) in one transaction on the
        writer's connection, from the thread that asks (a command's, the web's): never the game
        thread. While the disk refuses, nothing is changed and StoreError says why."""
        with self._mutex:
            db = self._db
            if db is None or self._reason is not None:
                raise StoreError(f"the players cannot be changed now: {self.problem or 'state not saved'}")
            db.execute("BEGIN IMMEDIATE")
            try:
                done = work(db)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                raise
        return done

    def players_read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work` (service/players.py's reads) on the readers' own connection: never the writer's
        lock. What is held in memory (a full disk) is not in it."""
        try:
            with self._reading() as db:
                return work(db)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the players: {exc}") from None

    # ------------------------------------------------------------ reading

    def _read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work` on the writer's connection (at start, before the writer writes), or on the
        readers' own when the database cannot be written."""
        if self._db is not None:
            with self._mutex:
                return work(self._db)
        with self._reading() as db:
            return work(db)

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """The readers' own connection, read-only, one reader at a time; never the writer's lock."""
        with self._reader_lock:
            if self._reader is None:
                self._reader, self._reader_immutable = _open_reader(self.path, self._db is None)
            yield self._reader

    def unfinished(self) -> int | None:
        """The newest match neither ended nor set aside, stored or held."""
        with self._held_lock:
            held = list(self._held)
        view = _held_view(held)
        try:
            stored = self._read(lambda db: [row[0] for row in db.execute(
                "SELECT id FROM matches WHERE ended IS NULL AND set_aside IS NULL ORDER BY id DESC LIMIT 8")])
        except sqlite3.Error as exc:
            if not _nothing_stored(exc):
                raise
            stored = []
        gone = view["ends"].keys() | view["set_aside"].keys()
        return max({*stored, *view["matches"]} - gone, default=None)

    def _record(self, match_id: int) -> dict[str, Any] | None:
        """`match_record` for the writer's side (resume): stored and held."""
        with self._held_lock:
            held = list(self._held)
        try:
            read = self._read(lambda db: read_match(db, match_id))
        except sqlite3.Error as exc:
            if not _nothing_stored(exc):
                raise
            read = NOTHING
        return record_of(match_id, read, held)

    def seating(self, match_id: int) -> tuple[list[int], dict[int, str]]:
        """The physical seat of each player and the bot players' levels, as stored (or held)."""
        with self._held_lock:
            held = next((op[1] for op in self._held if op[0] == "match" and op[1][0] == match_id), None)
        try:
            found = self._read(lambda db: db.execute("SELECT seats, bots FROM matches WHERE id=?",
                                                     (match_id,)).fetchone())
        except sqlite3.Error as exc:
            if not _nothing_stored(exc):
                raise
            found = None
        if found is None and held is not None:
            found = held[7:9]
        if found is None:
            raise StoreError(f"no match {match_id} is stored")
        return _seating(match_id, *found)

    def names_of(self, match_id: int) -> dict[int, str]:
        """The named players of a match, by player number (a resumed match's names); what is
        held in memory and not yet written has them too."""
        with self._held_lock:
            held = next((op[1][1] for op in self._held if op[0] == "seated" and op[1][0] == match_id), None)
        if held is not None:
            return {int(p): str(n) for p, _s, kind, n in json.loads(held) if kind == "player"}
        try:
            rows = self._read(lambda db: db.execute(
                "SELECT player, name FROM match_players WHERE match_id=? AND kind='player'",
                (match_id,)).fetchall())
        except sqlite3.Error as exc:
            if not _nothing_stored(exc):
                raise
            rows = []
        return {int(p): str(n) for p, n in rows}

    def resume(self, seats_wired: int | None = None) -> tuple[int, Match] | None:
        """The newest unfinished match, rebuilt by replaying its journal, or None. A match that
        cannot come back (its journal or its row does not replay, or it needs more seats than
        `seats_wired`) is set aside: kept in history with the reason, noted in
        `set_aside_notes`, and the table starts clean. A round or an end the journal proves but
        the tables lack (a database written before they were one transaction) is stored."""
        try:
            match_id = self.unfinished()
        except sqlite3.Error as exc:
            self.set_aside_notes.append(f"no match resumed: the unfinished one cannot be read: {exc}")
            return None
        if match_id is None:
            return None
        try:
            match, stored = self._replay(match_id, seats_wired)
        except Exception as exc:
            reason = f"cannot resume: {type(exc).__name__}: {exc}" if not isinstance(exc, StoreError) \
                else str(exc)
            self.set_aside(match_id, reason)
            self.set_aside_notes.append(f"match {match_id} set aside: {reason}")
            return None
        self._repair(match_id, match, stored)
        if match.is_over:
            return None
        return match_id, match

    def _replay(self, match_id: int, seats_wired: int | None) -> tuple[Match, int]:
        """The match replayed from what is stored and held, and how many of its rounds are stored."""
        record = self._record(match_id)
        if record is None:
            raise StoreError(f"no match {match_id} is stored")
        row = record["row"]
        seats, _bots = _seating(match_id, row["seats"], row["bots"])  # the daemon asks next: a bad
        # row is set aside here
        players = row["players"]
        if seats_wired is not None:
            placed = seats or list(range(players))
            if players > seats_wired or any(not 0 <= s < seats_wired for s in placed):
                raise StoreError(f"{players} players at seats {[s + 1 for s in placed]}, "
                                 f"but {seats_wired} seats are wired")
        arguments = replay_arguments(row["game"], players, row["seed"], row["options"], row["boards"],
                                     [(r, a) for _n, r, a in record["journal"]])
        match = Match.replay(**arguments)
        self._counts[match_id] = len(arguments["journal"])
        self._races[match_id] = max((n for n, *_ in record["races"]), default=-1) + 1
        stored = len(record["rounds"])
        if stored > len(match.results):
            raise StoreError(f"{stored} rounds stored, the journal replays {len(match.results)}")
        return match, stored

    def _repair(self, match_id: int, match: Match, stored: int) -> None:
        """Store what the journal proves and the tables lack, through the writer (a full disk
        holds it like anything else)."""
        if stored == len(match.results) and not match.is_over:
            return
        now = time.time()
        for n, r in enumerate(match.results[stored:], start=stored):
            row = (match_id, n, str(r.ending), json.dumps(list(r.finishers)), json.dumps(list(r.scores)), now)
            self._queue.put(("round", row, None, threading.Event()))
        if match.is_over:
            self._queue.put(("end", (now, json.dumps(list(match.winners)), match_id)))
        self._drain()

    def rounds(self, match_id: int, seats: list[int] | None = None) -> list[dict[str, Any]]:
        """Each round's ending, finishers and scores per player; with `seats` (each player's
        physical seat), finishers are seat numbers from 1, as the table shows them. A row that
        does not read is left out (`history` says which)."""
        record = self._record(match_id)
        return _round_entries(record["rounds"] if record else [], seats)[0]

    def match_record(self, match_id: int) -> dict[str, Any] | None:
        """One match as stored, with what is held in memory: its row (`MATCH_FIELDS`), rounds,
        journal and races as rows of text, for the history pages and the JSON download; None
        when there is none. Read on the readers' connection, so that a reader never waits for
        the writer nor the writer for it, and nothing read this way can write."""
        with self._held_lock:
            held = list(self._held)
        seated: list[Any] = []
        try:
            with self._reading() as db:
                read = read_match(db, match_id)
                seated = read_seated(db, match_id)
        except sqlite3.Error as exc:
            if not _nothing_stored(exc):
                raise StoreError(f"cannot read match {match_id}: {exc}") from None
            read = NOTHING
        return record_of(match_id, read, held, seated)

    def history(self, limit: int = 20, before: int | None = None) -> list[dict[str, Any]]:
        """`history_page`'s matches."""
        return self.history_page(limit, before)["matches"]

    def every_match(self) -> Iterator[dict[str, Any]]:
        """Every stored match, newest first, a page at a time (a bench's count, a test's)."""
        before = None
        while True:
            page = self.history_page(HISTORY_MAX, before)
            yield from page["matches"]
            before = page["next"]
            if before is None:
                return

    def history_page(self, limit: int = 20, before: int | None = None) -> dict[str, Any]:
        """The newest matches first (older than match `before`, when given), at most `limit`
        (1 to HISTORY_MAX), with what is held in memory (a full disk); `next` is the `before` of
        the page after it, None when no older match is stored. Seats are numbered from 1, as on
        the table: `seats` is each player's seat (the order of `scores`), `winners` and
        `finishers` are seats. A row that does not read is set aside, never fatal: a round is
        left out and named in `damaged`; a match is listed as damaged. Read on the readers'
        connection, in one read transaction, from any thread; never the writer's lock."""
        limit, before = page_bounds(limit, before)
        with self._held_lock:  # before the disk is read: a row written meanwhile is read there
            held = list(self._held)
        return _page(self._reading, held, limit, before)


class Reader:
    """The journal as a process of its own reads it (the web view's, web/child.py): a read-only
    connection and nothing else, so no writer, no lock of the table's and nothing held in its
    memory (rows a full disk holds are the table's own until written: `Store.held`)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._db is None:
                self._db = _open_reader(self.path, False)[0]
            try:
                yield self._db
            except sqlite3.Error:  # opened again at the next read: the file may have been replaced
                self._db.close()
                self._db = None
                raise

    def version(self) -> int:
        """SQLite's `data_version`: another number once another connection (the table's writer)
        has committed, so an answer read before it is still the answer while it is the same."""
        with self._reading() as db:
            return int(db.execute("PRAGMA data_version").fetchone()[0])

    def history_page(self, limit: int = 20, before: int | None = None) -> dict[str, Any]:
        """`Store.history_page`'s answer, from the disk alone."""
        limit, before = page_bounds(limit, before)
        return _page(self._reading, [], limit, before)

    def match_record(self, match_id: int) -> dict[str, Any] | None:
        """`Store.match_record`'s answer, from the disk alone."""
        seated: list[Any] = []
        try:
            with self._reading() as db:
                read = read_match(db, match_id)
                seated = read_seated(db, match_id)
        except sqlite3.Error as exc:
            if not _nothing_stored(exc):
                raise StoreError(f"cannot read match {match_id}: {exc}") from None
            read = NOTHING
        return record_of(match_id, read, [], seated)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _page(reading: Callable[[], contextlib.AbstractContextManager[sqlite3.Connection]], held: list[Op],
          limit: int, before: int | None) -> dict[str, Any]:
    """A page of the history (`Store.history_page`) read on `reading`'s connection, with `held`."""
    view = _held_view(held)
    try:
        with reading() as db:
            stored, rounds = _read_page(db, limit, before)
    except sqlite3.Error as exc:
        if not _nothing_stored(exc):
            raise StoreError(f"cannot read the stored matches: {exc}") from None
        stored, rounds = [], {}
    rows = {row[0]: row for row in stored} | {m: r for m, r in view["matches"].items()
                                               if m not in {row[0] for row in stored}
                                               and (before is None or m < before)}
    chosen = sorted(rows, reverse=True)
    more = len(chosen) > limit
    chosen = chosen[:limit]
    matches = [_history_entry(rows[m], rounds.get(m, []) + view["rounds"].get(m, []), view)
               for m in chosen]
    return {"matches": matches, "next": chosen[-1] if more else None}


def _seating(match_id: int, seats: Any, bots: Any) -> tuple[list[int], dict[int, str]]:
    placed, levels = json.loads(seats), json.loads(bots)
    if not isinstance(placed, list) or not all(isinstance(s, int) for s in placed) \
            or not isinstance(levels, dict):
        raise StoreError(f"match {match_id}: its seats or bots are not as stored")
    return placed, {int(k): str(v) for k, v in levels.items()}


def page_bounds(limit: Any, before: Any) -> tuple[int, int | None]:
    """A page's `limit` and `before` as a reader asked them, or ValueError naming what is allowed."""
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= HISTORY_MAX:
        raise ValueError(f"limit must be a whole number from 1 to {HISTORY_MAX} (older matches: ask again "
                         f"with before, the answer's next), not {limit!r}")
    if before is not None and (not isinstance(before, int) or isinstance(before, bool) or before < 1):
        raise ValueError(f"before must be a match number from 1 (the answer's next), not {before!r}")
    return limit, before


def _read_page(db: sqlite3.Connection, limit: int,
               before: int | None) -> tuple[list[Any], dict[int, list[Any]]]:
    """The page's match rows (one more than `limit`: is there a next page?) and their rounds,
    in one read transaction: the rounds are those of the rows read."""
    db.execute("BEGIN")
    try:
        older = "" if before is None or before > ID_MAX else f"WHERE id < {int(before)} "
        stored = db.execute(f"SELECT id, game, players, started, ended, winners, set_aside, seats "
                            f"FROM matches {older}ORDER BY id DESC LIMIT ?", (limit + 1,)).fetchall()
        ids = [row[0] for row in stored]
        rounds: dict[int, list[Any]] = {}
        if ids:
            for match_id, *rest in db.execute(
                    f"SELECT match_id, round_no, ending, finishers, scores FROM rounds WHERE match_id IN "
                    f"({','.join('?' * len(ids))}) ORDER BY match_id, round_no", ids):
                rounds.setdefault(match_id, []).append(tuple(rest))
            names: dict[int, dict[int, str]] = {}
            player_ids: dict[int, dict[int, int]] = {}
            kinds: dict[int, dict[int, str]] = {}
            for match_id, player, name, player_id, kind in db.execute(
                    f"SELECT match_id, player, name, player_id, kind FROM match_players WHERE "
                    f"match_id IN ({','.join('?' * len(ids))})", ids):
                kinds.setdefault(match_id, {})[player] = kind
                if kind == "player":
                    names.setdefault(match_id, {})[player] = name
                    player_ids.setdefault(match_id, {})[player] = player_id
            stored = [(*row, names.get(row[0], {}), player_ids.get(row[0], {}), kinds.get(row[0], {}))
                      for row in stored]
    finally:
        if db.in_transaction:
            db.execute("COMMIT")
    return stored, rounds


def _nothing_stored(exc: sqlite3.Error) -> bool:
    """A database file not written yet (the disk was full when it was made): nothing is stored."""
    return isinstance(exc, sqlite3.OperationalError) and str(exc).startswith("no such table")


def _open_reader(path: Path, unwritable: bool) -> tuple[sqlite3.Connection, bool]:
    """The readers' connection, and whether it is immutable. On a full disk SQLite cannot make
    the -shm file a reader needs: while the database cannot be written and its -wal holds nothing,
    the file alone is the whole database and is read as immutable (the writer, once it opens the
    database, has the readers open it again first)."""
    db = read_only(path)
    try:
        db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return db, False
    except sqlite3.Error:
        db.close()
        wal = Path(f"{path}-wal")
        if not unwritable or (wal.exists() and wal.stat().st_size):
            raise
    db = read_only(path, immutable=True)
    db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    return db, True


def _held_view(ops: Sequence[Op]) -> dict[str, Any]:
    """What is held and not yet on disk, as the reads add it: new matches, rounds, ends."""
    view: dict[str, Any] = {"matches": {}, "rounds": {}, "ends": {}, "set_aside": {}, "names": {},
                            "kinds": {}}
    for op in ops:
        if op[0] == "match":
            mid, game, players, _seed, _options, _boards, started, seats, _bots = op[1]
            view["matches"][mid] = (mid, game, players, started, None, None, None, seats)
        elif op[0] == "round":
            view["rounds"].setdefault(op[1][0], []).append(op[1][1:5])
            if op[2] is not None:
                view["ends"][op[2][2]] = op[2][:2]
        elif op[0] == "end":
            view["ends"][op[1][2]] = op[1][:2]
        elif op[0] == "set_aside":
            view["set_aside"].setdefault(op[1][1], op[1][0])
        elif op[0] == "seated":
            view["names"][op[1][0]] = {int(p): str(n) for p, _s, kind, n in json.loads(op[1][1])
                                       if kind == "player"}
            view["kinds"][op[1][0]] = {int(p): str(kind) for p, _s, kind, _n in json.loads(op[1][1])}
    return view


def _with_match(op: Op, match_id: int) -> Op:
    """`op` with another match id."""
    if op[0] == "end":
        return ("end", (*op[1][:2], match_id))
    if op[0] == "set_aside":
        return ("set_aside", (op[1][0], match_id))
    if op[0] == "round":
        return ("round", (match_id, *op[1][1:]), op[2] and (*op[2][:2], match_id))
    return (op[0], (match_id, *op[1][1:]))


def read_only(path: Path, immutable: bool = False) -> sqlite3.Connection:
    """A connection to the state database that cannot write: the readers' (the history, web/).
    Autocommit: a read holds no transaction between two calls (`_read_page` takes one)."""
    extra = "&immutable=1" if immutable else ""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro{extra}", uri=True, check_same_thread=False,
                           isolation_level=None)


def read_match(db: sqlite3.Connection, match_id: int) -> tuple[Any, list[Any], list[Any], list[Any]]:
    """A match's row (`MATCH_FIELDS`, None when there is none), rounds, journal and races as
    stored: the rows `Store.match_record` starts from."""
    found = db.execute(f"SELECT {', '.join(MATCH_FIELDS)} FROM matches WHERE id=?", (match_id,)).fetchone()
    rounds = db.execute("SELECT round_no, ending, finishers, scores FROM rounds WHERE match_id=? "
                        "ORDER BY round_no", (match_id,)).fetchall()
    journal = db.execute("SELECT n, round_no, action FROM journal WHERE match_id=? ORDER BY n",
                         (match_id,)).fetchall()
    races = db.execute("SELECT n, round_no, after, race FROM races WHERE match_id=? ORDER BY n",
                       (match_id,)).fetchall()
    return found, rounds, journal, races


def record_of(match_id: int, read: tuple[Any, list[Any], list[Any], list[Any]],
              held: Sequence[tuple[Any, ...]] = (),
              seated: Sequence[tuple[Any, ...]] = ()) -> dict[str, Any] | None:
    """`Store.match_record` from what `read_match` read, the writer's `held` operations (what
    is not on disk yet, as the writer will commit it) and who sat there (`read_seated`): `who`."""
    found, rounds, journal, races = read
    row = dict(zip(MATCH_FIELDS, found, strict=True)) if found is not None else None
    journal_by_n = {n: (n, r, a) for n, r, a in journal}
    races_by_n = {n: (n, r, after, race) for n, r, after, race in races}
    rounds_by_n = {r[0]: r for r in rounds}
    for op in held:  # not on disk yet: as the writer will commit it
        kind, data = op[0], op[1]
        if kind == "match" and data[0] == match_id and row is None:
            row = {"ended": None, "winners": None, "set_aside": None} | dict(zip(
                ("id", "game", "players", "seed", "options", "boards", "started", "seats", "bots"), data,
                strict=True))
        elif kind == "action" and data[0] == match_id:
            journal_by_n[data[1]] = data[1:]
        elif kind == "race" and data[0] == match_id:
            races_by_n[data[1]] = data[1:]
        elif kind == "round" and data[0] == match_id:
            rounds_by_n[data[1]] = data[1:5]
            if op[2] is not None and row is not None:
                row["ended"], row["winners"] = op[2][:2]
        elif kind == "end" and data[2] == match_id and row is not None:
            row["ended"], row["winners"] = data[:2]
    if row is None:
        return None
    who = [{"player": p, "seat": s, "kind": k, "id": i, "name": n} for p, s, k, i, n in seated]
    for op in held:  # a match begun while the disk refused it: its players as the writer will write them
        if op[0] == "seated" and op[1][0] == match_id:
            who = [{"player": p, "seat": s, "kind": k, "id": None, "name": n}
                   for p, s, k, n in json.loads(op[1][1])]
    return {"row": row, "rounds": [rounds_by_n[n] for n in sorted(rounds_by_n)],
            "journal": [journal_by_n[n] for n in sorted(journal_by_n)],
            "races": [races_by_n[n] for n in sorted(races_by_n)], "who": who}


def read_seated(db: sqlite3.Connection, match_id: int) -> list[tuple[Any, ...]]:
    """Who sat at a stored match (`match_players`: player, seat from 1, kind, player id, name as
    shown then), in the players' order; [] when none are stored (a file not written yet)."""
    try:
        return db.execute("SELECT player, seat, kind, player_id, name FROM match_players WHERE match_id=? "
                          "ORDER BY player", (match_id,)).fetchall()
    except sqlite3.OperationalError as exc:
        if not _nothing_stored(exc):
            raise
        return []


MATCH_FIELDS = ("id", "game", "players", "seed", "options", "boards", "started", "ended", "winners", "seats",
                "bots", "set_aside")


def replay_arguments(game: str, players: int, seed: str, options: str, boards: str,
                     journal: list[tuple[int, str]]) -> dict[str, Any]:
    """What `Match.replay` (and `Match.replaying`, for the history) takes, from a stored match:
    its row's text and its journal's (round, action) rows. Raises what a bad row raises
    (RulesError, ValueError)."""
    digits = seed.removeprefix("-")
    choices = json.loads(options)
    resources = resources_for(game, players, choices)
    entry = find(game)
    context = entry.journal_context(players, resources)
    return {"game": game, "players": players,
            "seed": int(seed) if digits.isascii() and digits.isdigit() else seed,
            "options": choices, "resources": resources,
            "journal": [(r, from_dict(game, json.loads(a), context)) for r, a in journal],
            "boards": [[entry.carried_card(c) for c in b] for b in json.loads(boards)] or None}


def _history_entry(row: tuple[Any, ...], rounds: list[tuple[Any, ...]],
                   view: dict[str, Any]) -> dict[str, Any]:
    mid, game, players, started, ended, winners, set_aside, seats_text, *rest = row
    named: dict[int, str] = rest[0] if rest else view["names"].get(mid, {})
    known: dict[int, int] = rest[1] if len(rest) > 1 else {}  # held, not written: no player id yet
    kinds: dict[int, str] = rest[2] if len(rest) > 2 else view["kinds"].get(mid, {})
    if set_aside is None and ended is None:  # as the UPDATE will do it: not once the match ended
        set_aside = view["set_aside"].get(mid)
    if mid in view["ends"]:
        ended, winners = view["ends"][mid]
    try:
        if not isinstance(players, int) or not 0 < players <= 64:
            raise ValueError(f"players is {players!r}")
        seats = json.loads(seats_text) if seats_text else []
        if not isinstance(seats, list) or len(seats) != players or not all(isinstance(s, int) for s in seats):
            seats = list(range(players))  # stored without seating: the players sat in order
        entries, damaged = _round_entries(rounds, seats, players)
        entry = {"match": mid, "game": str(game), "players": players, "seats": [s + 1 for s in seats],
                 "started": _number(started), "ended": _number(ended),
                 "winners": _seat_numbers(_ints(winners), seats) if winners else None,
                 "set_aside": set_aside, "rounds": entries,
                 "names": [named.get(p) for p in range(players)],  # None: a guest or a bot
                 "ids": [known.get(p) for p in range(players)],  # each named player's page: /players/N
                 "kinds": [kinds.get(p, "guest") for p in range(players)]}  # player, guest or bot
    except (ValueError, TypeError) as exc:
        return {"match": mid, "game": str(game), "players": 0, "seats": [], "started": None, "ended": None,
                "winners": None, "set_aside": f"damaged row: {exc}", "rounds": []}
    if damaged:
        entry["damaged"] = damaged
    return entry


def _round_entries(rows: list[tuple[Any, ...]], seats: list[int] | None,
                   players: int | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """The rounds that read, each once (a held one after its stored one is the same), and a line
    for each that does not."""
    entries: dict[int, dict[str, Any]] = {}
    damaged: list[str] = []
    for r, e, f, s in rows:
        try:
            finishers, scores = _ints(f), _ints(s)
            if players is not None and len(scores) != players:
                raise ValueError(f"{len(scores)} scores for {players} players")
            entries[int(r)] = {"round": int(r) + 1, "ending": str(e),
                               "finishers": finishers if seats is None else _seat_numbers(finishers, seats),
                               "scores": scores}
        except (ValueError, TypeError) as exc:
            damaged.append(f"round {r + 1 if isinstance(r, int) else r!r}: {exc}")
    return [entries[r] for r in sorted(entries)], damaged


def _ints(text: Any) -> list[int]:
    """A stored JSON list of whole numbers, or ValueError saying what it is instead."""
    try:
        value = json.loads(text)
    except (ValueError, TypeError):
        raise ValueError(f"not JSON: {str(text)[:40]!r}") from None
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ValueError(f"not a list of whole numbers: {str(text)[:40]!r}")
    return value


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _seat_numbers(players: list[int], seats: list[int]) -> list[int]:
    """Player indexes to the seat numbers (from 1) they sat at."""
    return [seats[p] + 1 if 0 <= p < len(seats) else p + 1 for p in players]


def _who(players: int, seats: list[int] | None, bots: dict[int, str] | None,
         names: dict[int, str] | None) -> list[list[Any]]:
    """A "seated" operation's players: [player, seat from 1, kind, name] each."""
    placed = seats or list(range(players))
    who: list[list[Any]] = []
    for player in range(players):
        seat = placed[player] + 1 if player < len(placed) else player + 1
        if bots and player in bots:
            who.append([player, seat, "bot", f"bot ({bots[player]})"])
        elif names and player in names:
            who.append([player, seat, "player", names[player]])
        else:
            who.append([player, seat, "guest", "guest"])
    return who


def _plain(options: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()}
