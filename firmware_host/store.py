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

from . import paths
from .catalog import crazy_deck, resources_for
from .rules.codec import crazy_index, from_dict, to_dict
from .rules.crazy import CrazyColour
from .rules.domino import DominoCard
from .rules.match import Match

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
    bots TEXT NOT NULL DEFAULT '{}'
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


class StoreError(RuntimeError):
    pass


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
        self._writer = threading.Thread(target=self._write_loop, name="store", daemon=True)
        self._writer.start()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")  # a commit is on the card before it returns
        db.executescript(SCHEMA)
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
        return match_id

    def record(self, match_id: int, round_no: int, action: Any) -> None:
        """An accepted action: queued for the writer thread, never waits for the disk."""
        n = self._counts.get(match_id, 0)
        self._counts[match_id] = n + 1
        self._queue.put(("action", (match_id, n, round_no, json.dumps(to_dict(action)))))

    def round_over(self, match_id: int, match: Match) -> None:
        """A round ended: its result (and every action before it) is on disk when this returns."""
        done = threading.Event()
        result = match.results[-1]
        row = (match_id, len(match.results) - 1, str(result.ending), json.dumps(list(result.finishers)),
               json.dumps(list(result.scores)), time.time())
        self._queue.put(("round", row, done))
        done.wait()
        if match.is_over:
            with self._mutex:
                self._db.execute("UPDATE matches SET ended=?, winners=? WHERE id=?",
                                 (time.time(), json.dumps(list(match.winners)), match_id))

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
            self._flush(pending)
            pending = []
            if item is None:
                continue
            if item[0] == "round":
                with self._mutex:
                    self._db.execute("INSERT OR REPLACE INTO rounds VALUES (?,?,?,?,?,?)", item[1])
                item[2].set()
            elif item[0] == "stop":
                return

    def _flush(self, rows: list[tuple[int, int, int, str]]) -> None:
        if not rows:
            return
        with self._mutex:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO journal VALUES (?,?,?,?)", rows)
            self._db.execute("COMMIT")

    # ------------------------------------------------------------ reading

    def unfinished(self) -> int | None:
        with self._mutex:
            row = self._db.execute(
                "SELECT id FROM matches WHERE ended IS NULL ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else int(row[0])

    def seating(self, match_id: int) -> tuple[list[int], dict[int, str]]:
        """The physical seat of each player and the bot players' levels, as stored."""
        with self._mutex:
            seats, bots = self._db.execute("SELECT seats, bots FROM matches WHERE id=?",
                                           (match_id,)).fetchone()
        return json.loads(seats), {int(k): v for k, v in json.loads(bots).items()}

    def resume(self) -> tuple[int, Match] | None:
        """The newest unfinished match, rebuilt by replaying its journal, or None."""
        match_id = self.unfinished()
        if match_id is None:
            return None
        with self._mutex:
            game, players, seed, options, boards = self._db.execute(
                "SELECT game, players, seed, options, boards FROM matches WHERE id=?", (match_id,)).fetchone()
            rows = self._db.execute(
                "SELECT round_no, action FROM journal WHERE match_id=? ORDER BY n", (match_id,)).fetchall()
        options = json.loads(options)
        digits = seed.removeprefix("-")
        seed_value: int | str = int(seed) if digits.isascii() and digits.isdigit() else seed
        cards = None
        if game == "crazy":
            cards = crazy_index([crazy_deck().cards(CrazyColour(s)) for s in range(players)])
        journal = [(r, from_dict(game, json.loads(a), cards)) for r, a in rows]
        board_cards = [[DominoCard.parse(c) for c in b] for b in json.loads(boards)]
        match = Match.replay(game, players, seed_value, options, journal,
                             resources_for(game, players, options), boards=board_cards or None)
        self._counts[match_id] = len(journal)
        stored = self.rounds(match_id)
        if len(stored) > len(match.results):
            raise StoreError(f"match {match_id}: {len(stored)} rounds stored, the journal replays "
                             f"{len(match.results)}")
        return match_id, match

    def rounds(self, match_id: int) -> list[dict[str, Any]]:
        with self._mutex:
            rows = self._db.execute("SELECT round_no, ending, finishers, scores FROM rounds "
                                    "WHERE match_id=? ORDER BY round_no", (match_id,)).fetchall()
        return [{"round": r + 1, "ending": e, "finishers": json.loads(f), "scores": json.loads(s)}
                for r, e, f, s in rows]

    def history(self, limit: int = 20) -> list[dict[str, Any]]:
        with self._mutex:
            matches = self._db.execute("SELECT id, game, players, started, ended, winners FROM matches "
                                       "ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        out = []
        for mid, game, players, started, ended, winners in matches:
            out.append({"match": mid, "game": game, "players": players, "started": started,
                        "ended": ended, "winners": json.loads(winners) if winners else None,
                        "rounds": self.rounds(mid)})
        return out


def _plain(options: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()}
