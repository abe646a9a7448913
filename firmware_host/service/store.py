"""Persistence: matches, rounds, scores and the journal of accepted actions, in SQLite (WAL).

The game loop never waits for the disk: `record` hands an action to a writer
thread, which commits within 20 ms. A round's result is committed at once and
synced before `round_over` returns, so a power cut loses no completed round.
After SIGKILL or a power cut, `resume()` rebuilds the match in progress by
replaying its journal through the deterministic engine (rules/match.py).
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ..game.catalog import resources_for
from ..rules.codec import from_dict, to_dict
from ..rules.domino import DominoCard
from ..rules.kinds import find as find_rules
from ..rules.match import Match
from ..system import paths
from ..system.errors import StoreError

BATCH_S = 0.02

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
"""


state_path = paths.state_database
CACHE_KIB = 128
"""SQLite's page cache (its default is 2 MiB): the table appends and seldom reads back."""
KEPT_COUNTS = 8
"""Matches whose journal position `record` remembers: the one in play and the last few before it."""


class Store:
    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else state_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = self._connect()
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the state database {self.path}: {exc}") from None
        self._mutex = threading.Lock()  # one connection, used by the game and the writer
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._counts: dict[int, int] = {}
        self.set_aside_notes: list[str] = []  # what resume() set aside at this start, said by status
        self._writer = threading.Thread(target=self._write_loop, name="store", daemon=True)
        self._writer.start()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")  # a commit is on the card before it returns
        db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")  # the page cache grows with the file up to this
        db.executescript(SCHEMA)
        columns = {row[1] for row in db.execute("PRAGMA table_info(matches)")}
        if "set_aside" not in columns:  # a database from before matches could be set aside
            db.execute("ALTER TABLE matches ADD COLUMN set_aside TEXT")
        return db

    # ------------------------------------------------------------ writing

    def begin_match(self, match: Match, seats: list[int] | None = None,
                    bots: dict[int, str] | None = None) -> int:
        """A new match; `seats` is the physical seat of each player, `bots` the bot players'
        levels, so that a match resumed after a crash is played by the same seats and bots."""
        with self._mutex:
            cur = self._db.execute(
                "INSERT INTO matches (game, players, seed, options, boards, started, seats, bots) "
                "VALUES (?,?,?,?,?,?,?,?)",
                (match.game, match.players, str(match.seed), json.dumps(_plain(match.options)),
                 json.dumps([[str(c) for c in b] for b in match.boards]), time.time(),
                 json.dumps(seats or []), json.dumps({str(k): v for k, v in (bots or {}).items()})))
        match_id = int(cur.lastrowid or 0)
        self._counts[match_id] = 0
        while len(self._counts) > KEPT_COUNTS:  # one entry a match: the oldest go
            del self._counts[next(iter(self._counts))]
        return match_id

    def record(self, match_id: int, round_no: int, action: Any) -> None:
        """An accepted action: queued for the writer thread, never waits for the disk."""
        n = self._counts.get(match_id, 0)
        self._counts[match_id] = n + 1
        self._queue.put(("action", (match_id, n, round_no, json.dumps(to_dict(action)))))

    def round_over(self, match_id: int, match: Match) -> None:
        """A round ended: its result, every action before it and, after the last round, the
        match's end are on disk when this returns, in one transaction: a kill leaves all or none."""
        done = threading.Event()
        result = match.results[-1]
        row = (match_id, len(match.results) - 1, str(result.ending), json.dumps(list(result.finishers)),
               json.dumps(list(result.scores)), time.time())
        end = (time.time(), json.dumps(list(match.winners)), match_id) if match.is_over else None
        self._queue.put(("round", row, done, end))
        done.wait()

    def abort(self, match_id: int) -> None:
        """Aborted by the operator: kept in history, never resumed."""
        self.set_aside(match_id, "aborted")

    def set_aside(self, match_id: int, reason: str) -> None:
        """A match that must not come back (aborted, or one that cannot resume): kept, marked."""
        self._queue.put(("set_aside", (reason, match_id)))
        self._drain()

    def _drain(self) -> None:
        done = threading.Event()
        self._queue.put(("sync", done))
        done.wait()

    def close(self) -> None:
        self._queue.put(("stop",))
        self._writer.join(timeout=5)
        self._db.close()

    def _write_loop(self) -> None:
        pending: list[tuple[int, int, int, str]] = []
        while True:
            try:
                item = self._queue.get(timeout=BATCH_S if pending else None)
            except queue.Empty:
                item = None
            if item is not None and item[0] == "action":
                pending.append(item[1])
                if len(pending) < 200:
                    continue
            if item is not None and item[0] == "round":
                self._flush(pending, item[1], item[3])  # the round, its journal, the match's end: one
                item[2].set()
                pending = []
                continue
            self._flush(pending)
            pending = []
            if item is None:
                continue
            if item[0] == "set_aside":
                with self._mutex:
                    self._db.execute("UPDATE matches SET set_aside=? WHERE id=? AND ended IS NULL", item[1])
            elif item[0] == "sync":
                item[1].set()
            elif item[0] == "stop":
                return

    def _flush(self, rows: list[tuple[int, int, int, str]], round_row: tuple[Any, ...] | None = None,
               end: tuple[Any, ...] | None = None) -> None:
        if not rows and round_row is None:
            return
        with self._mutex:
            self._db.execute("BEGIN")
            try:
                self._db.executemany("INSERT OR REPLACE INTO journal VALUES (?,?,?,?)", rows)
                if round_row is not None:
                    self._db.execute("INSERT OR REPLACE INTO rounds VALUES (?,?,?,?,?,?)", round_row)
                if end is not None:
                    self._db.execute("UPDATE matches SET ended=?, winners=? WHERE id=?", end)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # ------------------------------------------------------------ reading

    def unfinished(self) -> int | None:
        with self._mutex:
            row = self._db.execute(
                "SELECT id FROM matches WHERE ended IS NULL AND set_aside IS NULL "
                "ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else int(row[0])

    def seating(self, match_id: int) -> tuple[list[int], dict[int, str]]:
        """The physical seat of each player and the bot players' levels, as stored."""
        with self._mutex:
            seats, bots = self._db.execute("SELECT seats, bots FROM matches WHERE id=?",
                                           (match_id,)).fetchone()
        return json.loads(seats), {int(k): v for k, v in json.loads(bots).items()}

    def resume(self, seats_wired: int | None = None) -> tuple[int, Match] | None:
        """The newest unfinished match, rebuilt by replaying its journal, or None. A match that
        cannot come back (its journal does not replay, or it needs more seats than
        `seats_wired`) is set aside: kept in history with the reason, noted in
        `set_aside_notes`, and the table starts clean. A round or an end the journal proves but
        the tables lack (a database written before they were one transaction) is stored."""
        match_id = self.unfinished()
        if match_id is None:
            return None
        try:
            match = self._replay(match_id, seats_wired)
        except Exception as exc:
            reason = f"cannot resume: {type(exc).__name__}: {exc}" if not isinstance(exc, StoreError) \
                else str(exc)
            self.set_aside(match_id, reason)
            self.set_aside_notes.append(f"match {match_id} set aside: {reason}")
            return None
        self._repair(match_id, match)
        if match.is_over:
            return None
        return match_id, match

    def _replay(self, match_id: int, seats_wired: int | None) -> Match:
        with self._mutex:
            game, players, seed, options, boards, seats = self._db.execute(
                "SELECT game, players, seed, options, boards, seats FROM matches WHERE id=?",
                (match_id,)).fetchone()
            rows = self._db.execute(
                "SELECT round_no, action FROM journal WHERE match_id=? ORDER BY n", (match_id,)).fetchall()
        if seats_wired is not None:
            placed = json.loads(seats) or list(range(players))
            if players > seats_wired or any(not 0 <= s < seats_wired for s in placed):
                raise StoreError(f"{players} players at seats {[s + 1 for s in placed]}, "
                                 f"but {seats_wired} seats are wired")
        options = json.loads(options)
        digits = seed.removeprefix("-")
        seed_value: int | str = int(seed) if digits.isascii() and digits.isdigit() else seed
        resources = resources_for(game, players, options)
        context = find_rules(game).journal_context(players, resources)
        journal = [(r, from_dict(game, json.loads(a), context)) for r, a in rows]
        board_cards = [[DominoCard.parse(c) for c in b] for b in json.loads(boards)]
        match = Match.replay(game, players, seed_value, options, journal, resources,
                             boards=board_cards or None)
        self._counts[match_id] = len(journal)
        stored = self.rounds(match_id)
        if len(stored) > len(match.results):
            raise StoreError(f"{len(stored)} rounds stored, the journal replays {len(match.results)}")
        return match

    def _repair(self, match_id: int, match: Match) -> None:
        stored = len(self.rounds(match_id))
        if stored == len(match.results) and not match.is_over:
            return
        now = time.time()
        rows = [(match_id, n, str(r.ending), json.dumps(list(r.finishers)), json.dumps(list(r.scores)), now)
                for n, r in enumerate(match.results) if n >= stored]
        with self._mutex:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO rounds VALUES (?,?,?,?,?,?)", rows)
            if match.is_over:
                self._db.execute("UPDATE matches SET ended=?, winners=? WHERE id=?",
                                 (now, json.dumps(list(match.winners)), match_id))
            self._db.execute("COMMIT")

    def rounds(self, match_id: int, seats: list[int] | None = None) -> list[dict[str, Any]]:
        """Each round's ending, finishers and scores per player; with `seats` (each player's
        physical seat), finishers are seat numbers from 1, as the table shows them."""
        with self._mutex:
            rows = self._db.execute("SELECT round_no, ending, finishers, scores FROM rounds "
                                    "WHERE match_id=? ORDER BY round_no", (match_id,)).fetchall()
        return [{"round": r + 1, "ending": e,
                 "finishers": json.loads(f) if seats is None else _seat_numbers(json.loads(f), seats),
                 "scores": json.loads(s)}
                for r, e, f, s in rows]

    def history(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest matches first. Seats are numbered from 1, as on the table: `seats` is each
        player's seat (the order of `scores`), `winners` and `finishers` are seats."""
        with self._mutex:
            matches = self._db.execute("SELECT id, game, players, started, ended, winners, set_aside, seats "
                                       "FROM matches ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        out = []
        for mid, game, players, started, ended, winners, set_aside, seats_text in matches:
            seats = json.loads(seats_text) if seats_text else []
            if len(seats) != players:
                seats = list(range(players))  # stored without seating: the players sat in order
            out.append({"match": mid, "game": game, "players": players, "seats": [s + 1 for s in seats],
                        "started": started, "ended": ended,
                        "winners": _seat_numbers(json.loads(winners), seats) if winners else None,
                        "set_aside": set_aside, "rounds": self.rounds(mid, seats)})
        return out


def _seat_numbers(players: list[int], seats: list[int]) -> list[int]:
    """Player indexes to the seat numbers (from 1) they sat at."""
    return [seats[p] + 1 if 0 <= p < len(seats) else p + 1 for p in players]


def _plain(options: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()}
