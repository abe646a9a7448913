"""The players' statistics and ratings, kept beside the journal and never on the game thread
(docs/players.md).

Each finished match is replayed once, on this component's own thread, into its figures per player
(play/figures.py), and the players' ratings are carried on (play/ratings.py). Both are kept in a
file of their own beside the state database, `table.db.figures`: derived, so it can always be
made again from the journal (`tablectl ratings --rebuild`, or a file of another version, which
is emptied and refilled), and apart from the journal's file, whose schema is checked at every
start and whose migrations are the store's alone (docs/persistence.md). A page reads the
figures of a player's matches with one indexed query on its own connection: the journal's file
read-only, the figures' file attached.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import multiprocessing
import os
import signal
import sqlite3
import threading
import time
from array import array
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, TypeVar

from ..engine.game import title_of
from ..play.figures import match_figures, round_reactions
from ..play.ratings import Rating, rate
from ..system.children import die_with_parent
from ..system.errors import StoreError
from ..system.realtime import join_the_rest, lift_stragglers
from .journal import read_match, read_only, replay_arguments
from .players import seated
from .registry import Call, Commands

T = TypeVar("T")

log = logging.getLogger("table_host.statistics")

VERSION = 1
"""The figures file's schema and the figures' definitions: a file of another version is emptied
and refilled from the journal."""
SCHEMA = """
CREATE TABLE IF NOT EXISTS figures.meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS figures.figured (
    match_id INTEGER PRIMARY KEY,
    problem TEXT  -- why its journal gave no figures (it does not replay), else NULL
);
CREATE TABLE IF NOT EXISTS figures.seat_figures (
    match_id INTEGER NOT NULL,
    player INTEGER NOT NULL,  -- the engine's player number, from 0
    game TEXT NOT NULL,
    started REAL NOT NULL,  -- the match's start, Unix time
    won INTEGER NOT NULL,
    rounds INTEGER NOT NULL,
    points INTEGER NOT NULL,
    slaps INTEGER NOT NULL,
    false_starts INTEGER NOT NULL,
    won_margins BLOB NOT NULL,  -- int64 ns, native order, one a race won
    lost_margins BLOB NOT NULL,
    reactions BLOB NOT NULL,  -- int64 ns, one a reaction
    reactions_known INTEGER NOT NULL,
    PRIMARY KEY (match_id, player)
);
CREATE TABLE IF NOT EXISTS figures.ratings (
    game TEXT NOT NULL,
    who TEXT NOT NULL,  -- 'player <id>' or 'bot <level>'
    match_id INTEGER NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    PRIMARY KEY (who, game, match_id)
);
CREATE INDEX IF NOT EXISTS figures.ratings_match ON ratings(match_id);
CREATE TABLE IF NOT EXISTS figures.standing (
    game TEXT NOT NULL,
    who TEXT NOT NULL,
    match_id INTEGER NOT NULL,  -- the last match rated
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    matches INTEGER NOT NULL,  -- matches rated
    PRIMARY KEY (game, who)
);
CREATE INDEX IF NOT EXISTS figures.seat_started ON seat_figures(started);
CREATE TABLE IF NOT EXISTS figures.pages (
    player_id INTEGER PRIMARY KEY,  -- a player's whole page (every game, every match), made ahead
    mark TEXT NOT NULL,  -- what it was made from (`_page_mark`): another mark, and it is made again
    body TEXT NOT NULL  -- its JSON
);
"""
TONIGHT_S = 12 * 3600
"""Tonight's leaderboard: the matches begun in the last 12 hours."""
CHART_POINTS = 200
"""A player's rating over time is drawn from at most this many of their matches per game (evenly
spread, the last always among them): a chart 640 pixels wide shows no more."""
CACHED = 64
"""Answers kept in the statistics' process until the figures or the players change."""
MATCHES_SHOWN = 50
"""A player page lists this many of their newest matches."""
IDLE_S = 120.0
"""The statistics' process ends after this long unasked, giving its memory back."""
FIRST_LOOK_S = 10.0
"""The keeper's first look at the journal, this long after the table is ready (or at the first
round stored): a start does not share its CPU with the figures."""
SETTLE_S = 0.5
"""After a wake, the keeper waits this long before it reads: the round's rows reach the disk."""
STANDINGS_S = 60.0
"""The attract screen's standings are made again at least this often (tonight moves on), and at
once after a match is figured."""
BATCH = 20
"""Matches figured between two commits: a page never waits for more than these."""


class Statistics:
    """The figures and ratings of the matches in the state database at `path`, in the process
    that makes them (`Figurer`): `catch_up` figures the matches that ended since; the pages ask
    `player`, `leaderboard`, `highlights` and `ratings`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.figures_path = path.with_name(path.name + ".figures")
        self._worker_lock = threading.Lock()
        self._reader_lock = threading.Lock()
        self._worker: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._cache: dict[tuple[Any, ...], Any] = {}
        self.figured_now: list[int] = []
        """The matches `catch_up` figured since `make_pages` last made their players' pages."""
        self._cache_mark: Any = None

    # ------------------------------------------------------------ connections

    def _open(self) -> sqlite3.Connection:
        """The journal's file read-only, with the figures' file attached (made 0600 if new)."""
        db = read_only(self.path)
        fd = os.open(self.figures_path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)
        db.execute("ATTACH DATABASE ? AS figures", (f"{self.figures_path.resolve().as_uri()}?mode=rw",))
        db.execute("PRAGMA busy_timeout=2000")
        if db.execute("PRAGMA figures.journal_mode").fetchone()[0] != "wal":  # once: it stays so
            db.execute("PRAGMA figures.journal_mode=WAL")
        return db

    @contextlib.contextmanager
    def _working(self) -> Iterator[sqlite3.Connection]:
        with self._worker_lock:
            if self._worker is None:
                self._worker = db = self._open()
                self._schema(db)
            yield self._worker

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._reader_lock:
            if self._reader is None:
                with self._working():  # the schema first
                    pass
                self._reader = self._open()
            yield self._reader

    def _schema(self, db: sqlite3.Connection) -> None:
        """The figures' tables, made if new, emptied if of another version."""
        if _has(db, "figures", "meta") and _has(db, "figures", "pages") and db.execute(
                "SELECT value FROM figures.meta WHERE name='version'").fetchone() == (str(VERSION),):
            return  # as it should be: no write, no wait for another process's
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            found = db.execute("SELECT value FROM figures.meta WHERE name='version'").fetchone()
            if found is None or found[0] != str(VERSION):
                if found is not None:
                    log.info("statistics: figures of version %s made again for version %d", found[0], VERSION)
                for table in ("figured", "seat_figures", "ratings", "standing", "pages"):
                    db.execute(f"DELETE FROM figures.{table}")
                db.execute("INSERT OR REPLACE INTO figures.meta VALUES ('version', ?)", (str(VERSION),))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def cached(self, key: tuple[Any, ...], compute: Callable[[], T]) -> T:
        """`compute()`, kept until the figures or the players change (a merge, a rename): the
        attract screen and the pages ask again and again while nothing changes."""
        with self._reading() as db:
            mark = (db.execute("PRAGMA figures.data_version").fetchone()[0],
                    db.execute("SELECT group_concat(id || '/' || name || '/' || coalesce(merged_into, '') "
                               "|| '/' || coalesce(removed, ''), '|') FROM main.players").fetchone()[0]
                    if _has(db, "main", "players") else None)
        if self._cache_mark != mark:
            self._cache.clear()
            self._cache_mark = mark
        if key in self._cache:
            return self._cache[key]  # type: ignore[no-any-return]
        answer = self._cache[key] = compute()
        while len(self._cache) > CACHED:
            del self._cache[next(iter(self._cache))]
        return answer

    def close(self) -> None:
        for lock, name in ((self._worker_lock, "_worker"), (self._reader_lock, "_reader")):
            with lock:
                db = getattr(self, name)
                if db is not None:
                    db.close()
                    setattr(self, name, None)

    # ------------------------------------------------------------ figuring

    def catch_up(self, limit: int | None = None) -> int:
        """Figure the finished matches not figured yet (at most `limit`), oldest first, then
        carry the ratings on; how many matches were figured."""
        done = 0
        with self._working() as db:
            if not _has(db, "main", "matches"):
                return 0
            todo = [row[0] for row in db.execute(
                "SELECT id FROM main.matches WHERE ended IS NOT NULL AND set_aside IS NULL "
                "AND id NOT IN (SELECT match_id FROM figures.figured) ORDER BY id")][:limit]
        while todo:
            batch, todo = todo[:BATCH], todo[BATCH:]
            with self._working() as db:
                rows = [(match_id, read_match(db, match_id)) for match_id in batch]
            figured = [(match_id, *_figured(read)) for match_id, read in rows]
            with self._working() as db:
                db.execute("BEGIN IMMEDIATE")
                try:
                    for match_id, problem, seats in figured:
                        db.execute("INSERT OR REPLACE INTO figures.figured VALUES (?, ?)",
                                   (match_id, problem))
                        db.executemany("INSERT OR REPLACE INTO figures.seat_figures VALUES "
                                       "(?,?,?,?,?,?,?,?,?,?,?,?,?)", seats)
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
            done += len(batch)
            self.figured_now += batch
        self._rate()
        return done

    def clear(self) -> dict[str, Any]:
        """Every figure and rating gone, to be made again from the journal; how many matches wait."""
        with self._working() as db:
            db.execute("BEGIN IMMEDIATE")
            for table in ("figured", "seat_figures", "ratings", "standing", "pages"):
                db.execute(f"DELETE FROM figures.{table}")
            db.execute("DELETE FROM figures.meta WHERE name='seated'")
            db.execute("COMMIT")
            waiting = db.execute("SELECT count(*) FROM main.matches WHERE ended IS NOT NULL "
                                 "AND set_aside IS NULL").fetchone()[0] if _has(db, "main", "matches") else 0
        return {"waiting": waiting}

    def waiting(self) -> int:
        """How many finished matches have no figures yet."""
        with self._working() as db:
            if not _has(db, "main", "matches"):
                return 0
            return int(db.execute("SELECT count(*) FROM main.matches WHERE ended IS NOT NULL "
                                  "AND set_aside IS NULL AND id NOT IN "
                                  "(SELECT match_id FROM figures.figured)").fetchone()[0])

    def rebuild(self) -> dict[str, Any]:
        """Every figure and rating made again from the journal, at once (the benches, the tests;
        the daemon's `tablectl ratings rebuild` clears, and its keeper figures beside the game)."""
        started = time.monotonic()
        self.clear()
        matches = self.catch_up()
        with self._reading() as db:
            problems = [f"match {m}: {p}" for m, p in db.execute(
                "SELECT match_id, problem FROM figures.figured WHERE problem IS NOT NULL ORDER BY match_id")]
        return {"matches": matches, "not_figured": problems, "seconds": round(time.monotonic() - started, 2)}

    def _rate(self) -> None:
        """Carry every game's ratings on over the matches figured since; all of them again when who
        sat where has changed (a merge of two players) or a match older than the last rated came."""
        with self._working() as db:
            seated = _seated_mark(db)
            mark = db.execute("SELECT value FROM figures.meta WHERE name='seated'").fetchone()
            last = db.execute("SELECT max(match_id) FROM figures.ratings").fetchone()[0] or 0
            late = db.execute("SELECT count(*) FROM figures.seat_figures f WHERE match_id < ? AND NOT EXISTS "
                              "(SELECT 1 FROM figures.ratings r WHERE r.match_id = f.match_id)",
                              (last,)).fetchone()[0]
            again = mark is None or mark[0] != seated or late > 0
            if again:
                last = 0
            ratings: dict[Hashable, Rating] = {}
            if not again:
                for game, who, mu, sigma in db.execute("SELECT game, who, mu, sigma FROM figures.standing"):
                    ratings[(game, who)] = Rating(mu, sigma)
            rows = db.execute(
                f"SELECT f.match_id, f.game, f.player, f.points, {_who_sql(db)} FROM figures.seat_figures f "
                f"{_seated_join(db)} WHERE f.match_id > ? ORDER BY f.match_id, f.player", (last,)).fetchall()
        out: list[tuple[Any, ...]] = []
        i = 0
        while i < len(rows):
            j = i
            while j < len(rows) and rows[j][0] == rows[i][0]:
                j += 1
            match = rows[i:j]
            i = j
            game = match[0][1]
            if len(match) < 2:
                continue
            keys = [(game, who) if who is not None else None for *_, who in match]
            after = rate(ratings, keys, [r[3] for r in match])
            out += [(game, r[4], r[0], a.mu, a.sigma) for r, a in zip(match, after, strict=True)
                    if r[4] is not None]
        standing: dict[tuple[str, str], list[Any]] = {}
        for game, who, match_id, mu, sigma in out:  # in match order: the last one stays
            kept = standing.setdefault((game, who), [game, who, 0, 0.0, 0.0, 0])
            kept[2:5] = match_id, mu, sigma
            kept[5] += 1
        with self._working() as db:
            db.execute("BEGIN IMMEDIATE")
            if again:
                db.execute("DELETE FROM figures.ratings")
                db.execute("DELETE FROM figures.standing")
            db.executemany("INSERT OR REPLACE INTO figures.ratings VALUES (?,?,?,?,?)", out)
            db.executemany("INSERT INTO figures.standing VALUES (?,?,?,?,?,?) "
                           "ON CONFLICT (game, who) DO UPDATE "
                           "SET match_id = excluded.match_id, mu = excluded.mu, sigma = excluded.sigma, "
                           "matches = matches + excluded.matches", list(standing.values()))
            db.execute("INSERT OR REPLACE INTO figures.meta VALUES ('seated', ?)", (seated,))
            db.execute("COMMIT")

    # ------------------------------------------------------------ what the pages ask

    def player(self, player_id: int, game: str | None = None, since: float | None = None,
               until: float | None = None) -> dict[str, Any] | None:
        """A player's page: their name, figures per game and over every game (over the matches
        begun from `since` until `until`, Unix time, when given), their rating per game after
        each match, and their newest matches. None: no such player."""
        with self._reading() as db:
            if not _has(db, "main", "players"):
                return None
            found = db.execute("SELECT name, merged_into FROM main.players WHERE id=?",
                               (player_id,)).fetchone()
            if found is None:
                return None
            where, args = "mp.player_id = ?", [player_id]
            if game is not None:
                where, args = where + " AND f.game = ?", [*args, game]
            if since is not None:
                where, args = where + " AND f.started >= ?", [*args, since]
            if until is not None:
                where, args = where + " AND f.started < ?", [*args, until]
            rows = db.execute(
                "SELECT f.match_id, f.game, f.started, f.won, f.rounds, f.points, f.slaps, f.false_starts, "
                "f.won_margins, f.lost_margins, f.reactions, f.reactions_known, mp.seat "
                "FROM main.match_players mp JOIN figures.seat_figures f "
                f"ON f.match_id = mp.match_id AND f.player = mp.player WHERE {where} ORDER BY f.match_id",
                args).fetchall()
            rated = db.execute("SELECT r.game, r.match_id, r.mu, r.sigma, f.started FROM figures.ratings r "
                               "JOIN figures.seat_figures f ON f.match_id = r.match_id AND f.player = 0 "
                               "WHERE r.who = ? ORDER BY r.game, r.match_id",
                               (f"player {player_id}",)).fetchall()
        games: dict[str, list[Any]] = {}
        for row in rows:
            games.setdefault(row[1], []).append(row)
        parts = {g: _gathered(r) for g, r in games.items()}  # each game's once; every game's from them
        by_game: dict[str, list[Any]] = {}
        for r in rated:
            if game is None or r[0] == game:
                by_game.setdefault(r[0], []).append(r)
        ratings = {g: [{"match": match_id, "started": started, "mu": round(mu, 3), "sigma": round(sigma, 3),
                        "shown": round(Rating(mu, sigma).shown, 3)}
                       for _g, match_id, mu, sigma, started in _thinned(rows_of_game)]
                   for g, rows_of_game in by_game.items()}
        return {"player": player_id, "name": found[0], "merged_into": found[1],
                "all": _summarised(_joined(list(parts.values()))),
                "games": {g: _summarised(part) for g, part in sorted(parts.items())},
                "titles": {g: title_of(g) for g in {*games, *ratings}},
                "ratings": ratings,
                "matches": [{"match": r[0], "game": r[1], "started": r[2], "seat": r[12], "won": bool(r[3]),
                             "rounds": r[4], "points": r[5]} for r in reversed(rows[-MATCHES_SHOWN:])]}

    def page(self, player_id: int) -> dict[str, Any] | None:
        """A player's whole page (`player` over every game and match), as kept in `pages` while
        what it was made from has not changed, else made and kept: the keeper makes the pages of
        the players of each match it figures, so a person asks for a page made ahead."""
        with self._reading() as db:
            mark = _page_mark(db, player_id)
            if mark is None:
                return None
            kept = db.execute("SELECT body FROM figures.pages WHERE player_id = ? AND mark = ?",
                              (player_id, mark)).fetchone()
        if kept is not None:
            return json.loads(kept[0])  # type: ignore[no-any-return]
        made = self.player(player_id)
        if made is not None:
            with self._working() as db:
                db.execute("INSERT OR REPLACE INTO figures.pages VALUES (?, ?, ?)",
                           (player_id, mark, json.dumps(made, separators=(",", ":"), ensure_ascii=False)))
        return made

    def make_pages(self, match_ids: list[int]) -> int:
        """The pages of the named players of these matches, made ahead; how many were made."""
        with self._reading() as db:
            if not match_ids or not _has(db, "main", "match_players"):
                return 0
            marks = ",".join("?" * len(match_ids))
            players = [row[0] for row in db.execute(
                f"SELECT DISTINCT player_id FROM main.match_players WHERE match_id IN ({marks}) "
                "AND player_id IS NOT NULL", match_ids)]
        for player_id in players:
            self.page(player_id)
        return len(players)

    def leaderboard(self, now: float | None = None) -> dict[str, Any]:
        """Tonight (the matches begun in the last `TONIGHT_S`): each named player's wins, matches
        and points per round, most wins first; all time: each game's rated players by their shown
        rating, highest first."""
        now = time.time() if now is None else now
        with self._reading() as db:
            if not _has(db, "main", "players"):
                return {"tonight": [], "all_time": {}, "since": now - TONIGHT_S, "titles": {}}
            tonight = db.execute(
                "SELECT mp.player_id, p.name, count(*), sum(f.won), sum(f.rounds), sum(f.points) "
                "FROM figures.seat_figures f CROSS JOIN main.match_players mp "  # f first: by its start
                "ON mp.match_id = f.match_id AND mp.player = f.player "
                "JOIN main.players p ON p.id = mp.player_id "
                "WHERE f.started >= ? AND p.removed IS NULL GROUP BY mp.player_id",
                (now - TONIGHT_S,)).fetchall()
            latest = db.execute("SELECT game, who, mu, sigma, matches FROM figures.standing "
                                "WHERE who LIKE 'player %'").fetchall()
            names = dict(db.execute("SELECT id, name FROM main.players WHERE merged_into IS NULL "
                                    "AND removed IS NULL"))
        board_tonight = sorted(
            ({"player": pid, "name": name, "matches": n, "wins": wins or 0, "rounds": rounds or 0,
              "points_per_round": round(points / rounds, 2) if rounds else None}
             for pid, name, n, wins, rounds, points in tonight),
            key=lambda e: (-e["wins"], -(e["points_per_round"] or 0), e["name"].casefold()))
        all_time: dict[str, list[dict[str, Any]]] = {}
        for game, who, mu, sigma, matches in latest:
            pid = int(who.removeprefix("player "))
            if pid in names:
                rating = Rating(mu, sigma)
                all_time.setdefault(game, []).append(
                    {"player": pid, "name": names[pid], "shown": round(rating.shown, 2), "mu": round(mu, 2),
                     "sigma": round(sigma, 2), "matches": matches})
        for entries in all_time.values():
            entries.sort(key=lambda e: (-e["shown"], e["name"].casefold()))
        return {"since": now - TONIGHT_S, "tonight": board_tonight,
                "all_time": dict(sorted(all_time.items())), "titles": {g: title_of(g) for g in all_time}}

    def ratings(self) -> dict[str, Any]:
        """Every game's ratings now, named players and bots (guests are rated from the default each
        match and kept nowhere), highest shown first; and how far the figuring has come."""
        with self._reading() as db:
            latest = db.execute("SELECT game, who, mu, sigma, matches FROM figures.standing").fetchall()
            names = dict(db.execute("SELECT id, name FROM main.players WHERE merged_into IS NULL "
                                    "AND removed IS NULL")) if _has(db, "main", "players") else {}
            figured = db.execute("SELECT count(*) FROM figures.figured").fetchone()[0]
            waiting = db.execute("SELECT count(*) FROM main.matches WHERE ended IS NOT NULL "
                                 "AND set_aside IS NULL "
                                 "AND id NOT IN (SELECT match_id FROM figures.figured)").fetchone()[0] \
                if _has(db, "main", "matches") else 0
        games: dict[str, list[dict[str, Any]]] = {}
        for game, who, mu, sigma, matches in latest:
            player = int(who.removeprefix("player ")) if who.startswith("player ") else None
            if player is not None and player not in names:
                continue  # merged or removed: left out of what lists players (docs/players.md)
            rating = Rating(mu, sigma)
            games.setdefault(game, []).append({"who": names[player] if player is not None else who,
                                               "player": player,
                                               "shown": round(rating.shown, 2), "mu": round(mu, 2),
                                               "sigma": round(sigma, 2), "matches": matches})
        for entries in games.values():
            entries.sort(key=lambda e: (-e["shown"], e["who"].casefold()))
        return {"games": dict(sorted(games.items())), "titles": {g: title_of(g) for g in games},
                "figured": figured, "waiting": waiting}

    def rating_changes(self, match_id: int | None = None) -> dict[str, Any] | None:
        """A finished match's (the newest figured, when not given) change of each rated seat's
        shown rating (from 1: a named player's or a bot's; a guest is rated from the default each
        match and kept nowhere, so has none); None: no match figured."""
        with self._reading() as db:
            if match_id is None:
                match_id = db.execute("SELECT max(match_id) FROM figures.seat_figures").fetchone()[0]
                if match_id is None:
                    return None
            rows = db.execute(
                f"SELECT {_seat_sql(db)}, r.mu, r.sigma, "
                "(SELECT b.mu || ' ' || b.sigma FROM figures.ratings b WHERE b.who = r.who "
                " AND b.game = r.game AND b.match_id < r.match_id ORDER BY b.match_id DESC LIMIT 1) "
                f"FROM figures.seat_figures f {_seated_join(db)} JOIN figures.ratings r "
                f"ON r.match_id = f.match_id AND r.game = f.game AND r.who = {_who_sql(db)} "
                "WHERE f.match_id = ? ORDER BY f.player", (match_id,)).fetchall()
        changes: dict[int, float] = {}
        for seat, mu, sigma, before in rows:
            was = Rating(*map(float, before.split())) if before else Rating()
            changes[int(seat)] = round(Rating(mu, sigma).shown - was.shown, 2)
        return {"match": match_id, "seats": changes}

    def highlights(self, match_id: int | None = None) -> dict[str, Any] | None:
        """A finished match's (the newest figured, when not given) closest race won and fastest
        reaction, each with its seat (from 1) and who sat there; None: no match figured."""
        with self._reading() as db:
            if match_id is None:
                found = db.execute("SELECT max(match_id) FROM figures.seat_figures").fetchone()
                match_id = found[0] if found else None
                if match_id is None:
                    return None
            rows = db.execute(
                f"SELECT f.player, f.game, f.won_margins, f.reactions, {_seat_sql(db)}, {_name_sql(db)} "
                f"FROM figures.seat_figures f {_seated_join(db)} {_named_join(db)} "
                "WHERE f.match_id = ? ORDER BY f.player", (match_id,)).fetchall()
        if not rows:
            return None
        race = min(((m, r) for r in rows for m in _ns(r[2])), default=None, key=lambda x: x[0])
        quick = min(((t, r) for r in rows for t in _ns(r[3])), default=None, key=lambda x: x[0])

        def who(r: Any) -> dict[str, Any]:
            return {"seat": r[4], "name": r[5]}

        return {"match": match_id, "game": rows[0][1],
                "closest_race": {"margin_ms": race[0] / 1e6, **who(race[1])} if race else None,
                "fastest_reaction": {"ms": quick[0] / 1e6, **who(quick[1])} if quick else None}


    def newest_round(self) -> tuple[int, int] | None:
        """The newest stored match and how many of its rounds are stored (a few indexed reads:
        the keeper asks at each wake whether a round has ended since)."""
        with self._reading() as db:
            if not _has(db, "main", "matches"):
                return None
            found = db.execute("SELECT m.id, (SELECT count(*) FROM main.rounds r WHERE r.match_id = m.id) "
                               "FROM main.matches m ORDER BY m.id DESC LIMIT 1").fetchone()
        return None if found is None else (int(found[0]), int(found[1]))

    def round_highlight(self, match_id: int) -> dict[str, Any] | None:
        """The newest stored round of a match, in play or finished: its fastest reaction (as
        docs/players.md defines it; None when no seat reacted or the game does not say what
        fits), with the seat (from 1) and who sat there as the highlights name them. None: no
        round of it is stored. A journal that does not replay is said in `problem`."""
        with self._reading() as db:
            found, rounds, journal, _races = read_match(db, match_id)
            who = {w["player"]: w for w in seated(db, match_id)} if _has(db, "main", "match_players") else {}
        if found is None or not rounds:
            return None
        last = max(int(r[0]) for r in rounds)
        out: dict[str, Any] = {"match": match_id, "round": last + 1, "fastest_reaction": None,
                               "problem": None}
        _mid, game, players, seed, options, boards = found[:6]
        try:
            replay = replay_arguments(game, players, seed, options, boards,
                                      [(r, a) for _n, r, a in journal if r <= last])
            reactions = round_reactions(replay).get(last, [])
        except Exception as exc:  # named, never fatal: the round's end shows no reaction
            out["problem"] = f"{type(exc).__name__}: {exc}"
            return out
        if reactions:
            ns, player = min(reactions)
            sat = who.get(player, {"seat": player + 1, "name": "guest"})
            out["fastest_reaction"] = {"ms": ns / 1e6, "seat": sat["seat"], "name": sat["name"]}
        return out


# ---------------------------------------------------------------- helpers


def _figured(read: tuple[Any, list[Any], list[Any], list[Any]]) -> tuple[str | None, list[tuple[Any, ...]]]:
    """(why it gave no figures, or None; its seat_figures rows) of one match as `read_match` read
    it."""
    found, _rounds, journal, races = read
    if found is None:
        return "not stored", []
    mid, game, players, seed, options, boards, started = found[:7]
    try:
        replay = replay_arguments(game, players, seed, options, boards, [(r, a) for _n, r, a in journal])
        figures = match_figures(replay, [json.loads(race) for *_, race in races])
    except Exception as exc:  # a journal that does not replay is named, never fatal
        return f"{type(exc).__name__}: {exc}", []
    return None, [(mid, f.player, game, started, int(f.won), f.rounds, f.points, f.slaps, f.false_starts,
                   f.won_margins.tobytes(), f.lost_margins.tobytes(), f.reactions.tobytes(),
                   int(f.reactions_known)) for f in figures]


def _newest_round(database: Path) -> tuple[int, int] | None:
    """`Statistics.newest_round` on the journal alone, its own read-only connection opened and
    closed: the keeper's look as the table starts makes no figures file (that waits for its
    first pass). None: no journal, or nothing stored yet."""
    try:
        db = read_only(database)
    except sqlite3.Error:
        return None
    try:
        found = db.execute("SELECT m.id, (SELECT count(*) FROM rounds r WHERE r.match_id = m.id) "
                           "FROM matches m ORDER BY m.id DESC LIMIT 1").fetchone()
    except sqlite3.Error:
        return None
    finally:
        db.close()
    return None if found is None else (int(found[0]), int(found[1]))


def _page_mark(db: sqlite3.Connection, player_id: int) -> str | None:
    """What a player's whole page is made from, in a few indexed reads: their name and state, their
    matches figured (how many, the newest), their ratings (how many, the newest) and who sat
    where (a merge). None: no such player."""
    if not _has(db, "main", "players") or not _has(db, "main", "match_players"):
        return None
    found = db.execute("SELECT name, merged_into, removed FROM main.players WHERE id = ?",
                       (player_id,)).fetchone()
    if found is None:
        return None
    figured = db.execute("SELECT count(*), max(f.match_id) FROM main.match_players mp "
                         "JOIN figures.seat_figures f ON f.match_id = mp.match_id AND f.player = mp.player "
                         "WHERE mp.player_id = ?",
                         (player_id,)).fetchone()
    rated = db.execute("SELECT count(*), max(match_id) FROM figures.ratings WHERE who = ?",
                       (f"player {player_id}",)).fetchone()
    seated = db.execute("SELECT value FROM figures.meta WHERE name = 'seated'").fetchone()
    return json.dumps([list(found), list(figured), list(rated), seated[0] if seated else None, VERSION])


def _thinned(rows: list[Any]) -> list[Any]:
    """At most CHART_POINTS of `rows`, evenly spread, the last among them."""
    if len(rows) <= CHART_POINTS:
        return rows
    step = (len(rows) - 1) / (CHART_POINTS - 1)
    return [rows[round(i * step)] for i in range(CHART_POINTS)]


def _ns(blob: bytes) -> array:
    values = array("q")
    values.frombytes(blob)
    return values


def _gathered(rows: list[Any]) -> dict[str, Any]:
    """The sums and the sorted margins and reactions of `rows` (seat_figures rows of one player)."""
    won, lost, reactions = array("q"), array("q"), array("q")
    known = False
    for r in rows:
        won.frombytes(r[8])
        lost.frombytes(r[9])
        if r[11]:
            known = True
            reactions.frombytes(r[10])
    return {"matches": len(rows), "wins": sum(r[3] for r in rows), "rounds": sum(r[4] for r in rows),
            "points": sum(r[5] for r in rows), "slaps": sum(r[6] for r in rows),
            "false_starts": sum(r[7] for r in rows), "known": known,
            "won": sorted(won), "lost": sorted(lost), "reactions": sorted(reactions)}


def _joined(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """`_gathered` of several sets of rows (a player's games) as one: each list already sorted,
    so sorting them together only merges their runs, not sorts them again."""
    out: dict[str, Any] = {k: sum(p[k] for p in parts)
                           for k in ("matches", "wins", "rounds", "points", "slaps", "false_starts")}
    out["known"] = any(p["known"] for p in parts)
    for k in ("won", "lost", "reactions"):
        out[k] = sorted(itertools.chain.from_iterable(p[k] for p in parts))
    return out


def _summarised(g: dict[str, Any]) -> dict[str, Any]:
    """The figures of docs/players.md from `_gathered`'s sums and sorted lists."""
    won, lost, reactions, known, rounds, points = (g["won"], g["lost"], g["reactions"], g["known"],
                                                   g["rounds"], g["points"])

    def ms(value: float | None) -> float | None:
        return None if value is None else round(value / 1e6, 3)

    return {"matches": g["matches"], "wins": g["wins"], "rounds": rounds, "points": points,
            "points_per_round": round(points / rounds, 2) if rounds else None,
            "slaps": g["slaps"], "false_starts": g["false_starts"],
            "races": len(won) + len(lost), "races_won": len(won), "races_lost": len(lost),
            "median_margin_won_ms": ms(_middle(won)), "median_margin_lost_ms": ms(_middle(lost)),
            "reactions": len(reactions) if known else None,
            "median_reaction_ms": ms(_middle(reactions)),
            "best_reaction_ms": ms(reactions[0] if reactions else None)}


def _middle(ordered: list[int]) -> float | None:
    """The median of a sorted list (the mean of the middle two of an even count), None of nothing:
    play/figures.py's `median` without sorting again."""
    if not ordered:
        return None
    half = len(ordered) // 2
    return float(ordered[half]) if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2


def _has(db: sqlite3.Connection, schema: str, table: str) -> bool:
    return db.execute(f"SELECT 1 FROM {schema}.sqlite_master WHERE type='table' AND name=?",
                      (table,)).fetchone() is not None


def _seated_join(db: sqlite3.Connection) -> str:
    """Who sat where (docs/players.md, "Records"): absent from a database before players were kept."""
    if _has(db, "main", "match_players"):
        return "LEFT JOIN main.match_players mp ON mp.match_id = f.match_id AND mp.player = f.player"
    return ""


def _named_join(db: sqlite3.Connection) -> str:
    if _has(db, "main", "match_players") and _has(db, "main", "players"):
        return "LEFT JOIN main.players p ON p.id = mp.player_id"
    return ""


def _who_sql(db: sqlite3.Connection) -> str:
    """A rated player's key: a named player by id ('player 3'), a bot by its level ('bot (hard)');
    NULL for a guest."""
    if not _has(db, "main", "match_players"):
        return "NULL"
    return ("CASE WHEN mp.player_id IS NOT NULL THEN 'player ' || mp.player_id "
            "WHEN mp.kind = 'bot' THEN mp.name END")


def _seat_sql(db: sqlite3.Connection) -> str:
    return "mp.seat" if _has(db, "main", "match_players") else "f.player + 1"


def _name_sql(db: sqlite3.Connection) -> str:
    if _has(db, "main", "match_players") and _has(db, "main", "players"):
        return "coalesce(p.name, mp.name)"
    return "'guest'"


def _seated_mark(db: sqlite3.Connection) -> str:
    """Changes when who sat where changes (a merge): the ratings are then made again."""
    if not _has(db, "main", "match_players"):
        return "none"
    count, total = db.execute("SELECT count(*), total(player_id * 1000003 + match_id * 131 + player) "
                              "FROM main.match_players WHERE player_id IS NOT NULL").fetchone()
    return f"{count}/{total:.0f}"


# ---------------------------------------------------------------- a process of its own


class Figurer:
    """Where the figures are made and read: a process of its own at the lowest priority there
    is (SCHED_IDLE), as the history's timelines are (web/replays.py): replaying a match, or
    sorting a player's thousands of reaction times, is Python that would hold the interpreter's
    lock against the game thread. `keep` starts a thread that figures each finished match (woken
    by `wake`, after each round stored); `ask` runs one of this module's `*_in` functions there,
    from any thread but the game thread. The process starts when first needed and ends after
    `IDLE_S` unasked."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._used = 0.0
        self._wake = threading.Event()
        self._stopping = False
        self._keeper: threading.Thread | None = None
        self._reader: Statistics | None = None
        self.made: Callable[[], None] = lambda: None
        """Called (on the keeper's thread) after each new `standings`: the daemon wakes its loop."""
        self.problem: str | None = None
        """Why the figures could not be kept the last time (no database yet, a process that
        stopped), or None."""
        self.standings: dict[str, Any] | None = None
        """The leaderboard (`Statistics.leaderboard`), the newest match's highlights
        (`highlights`) and its rating changes (`rating_changes`), and the newest round's fastest
        reaction (`round_highlight`, of a match in play too) as of the keeper's last pass,
        for a screen drawn on the game thread (views/standings.py): read, never waited for (None
        until the first pass, 10 s after the start or at the first round stored). A new dict at
        each pass, never changed in place: a reader holds one whole pass."""

    def ask(self, work: Callable[..., T], *args: Any, timeout: float = 60.0) -> T:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=worker_start, initargs=(os.getpid(),))
                started = True
            else:
                started = False
            pool = self._pool
            self._used = time.monotonic()
        try:
            answer = pool.submit(work, str(self.database), *args).result(timeout)
            if started:
                lift_stragglers()  # the pool's own threads run Python beside the game
            return answer
        except BrokenProcessPool:
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            raise StoreError("the statistics' process stopped: ask again") from None

    def register(self, commands: Commands) -> None:
        commands.register("ratings", self.ratings_command, action="show")
        commands.register("ratings", self.rebuild_command, action="rebuild")

    def _here(self) -> Statistics:
        """This process's own reader, for what is a few indexed reads (the commands): no process
        started for them, answered within a command's wait."""
        with self._lock:
            if self._reader is None:
                self._reader = Statistics(self.database)
            return self._reader

    def ratings_command(self, call: Call) -> dict[str, Any]:
        return {**self._here().ratings(), "problem": self.problem}

    def rebuild_command(self, call: Call) -> dict[str, Any]:
        """The figures emptied at once, then made again by the keeper, beside the game: a journal
        of thousands of matches takes longer than a command is waited for."""
        answer = self._here().clear()
        self.wake()
        return answer

    def keep(self) -> None:
        """Figure what the journal holds and each match as it ends, on a thread of its own."""
        self._keeper = threading.Thread(target=self._keep, name="statistics", daemon=True)
        self._keeper.start()

    def wake(self) -> None:
        self._wake.set()

    def _keep(self) -> None:
        join_the_rest()
        waiting = Statistics(self.database)  # SQL alone here (sqlite3 lets go of the GIL): any to do?
        told = 0.0  # when `standings` was last made
        round_end: dict[str, Any] | None = None
        try:
            looked = _newest_round(self.database)  # when last looked: a round stored before the start is old
            self._wake.wait(timeout=FIRST_LOOK_S)  # not while the table starts
            while not self._stopping:
                self._wake.clear()
                try:
                    fresh = self.standings is None or time.monotonic() - told > STANDINGS_S
                    newest = waiting.newest_round()
                    if newest != looked:  # a round ended: its fastest reaction, while its end is shown
                        round_end = self.ask(round_highlight_in, newest[0]) if newest and newest[1] else None
                        looked, fresh = newest, True
                    if waiting.waiting() > 0:
                        while not self._stopping and self.ask(catch_up_in, BATCH) >= BATCH:
                            pass
                        self.ask(make_pages_in, timeout=600.0)
                        fresh = True
                    if fresh:  # a few indexed reads and one match's figures: here, whole at once
                        self.standings = {"leaderboard": waiting.leaderboard(),
                                          "highlights": waiting.highlights(),
                                          "changes": waiting.rating_changes(), "round": round_end}
                        told = time.monotonic()
                        self.made()
                    self.problem = None
                except Exception as exc:  # never fatal: said once, tried again at the next wake
                    if not self._stopping and self.problem != str(exc):
                        log.warning("statistics: the figures are not kept now: %s", exc)
                    self.problem = str(exc)
                if self._wake.wait(timeout=IDLE_S / 4) and not self._stopping:
                    time.sleep(SETTLE_S)  # the writer commits a match's end within its 20 ms
                with self._lock:
                    if self._pool is not None and time.monotonic() - self._used > IDLE_S:
                        self._stop_pool()
        finally:
            waiting.close()

    def _stop_pool(self) -> None:
        """The process ended now, whatever it is doing (under self._lock): the pool's shutdown
        alone waits, at the table's exit, for the work in hand, and at SCHED_IDLE on a busy
        machine that may never come."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        processes = list(getattr(pool, "_processes", {}).values())  # the standard library's own
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            with contextlib.suppress(Exception):
                process.kill()

    def close(self) -> None:
        """At once: nothing the figures wait for holds the table's stop."""
        self._stopping = True
        self._wake.set()
        with self._lock:
            self._stop_pool()
        if self._keeper is not None:
            self._keeper.join(timeout=1)
        with self._lock:
            reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()


def tracker_started() -> None:
    """multiprocessing's resource tracker, started now, with the process's own stderr. A terminal
    UI (Textual) puts a capture in sys.stderr whose `fileno()` is -1; started after that, the
    tracker's spawn fails ("bad value(s) in fds_to_keep") and with it the statistics' process: a
    fresh clone's `./dev run` kept no figures. A frontend that takes stderr calls this first."""
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()


def worker_start(parent: int) -> None:
    """The statistics' process, as it starts: it ends with the table that started it, runs only
    when nothing of the table wants a CPU, and registers the built-in games (a composition root
    of its own, as the history's process is)."""
    from .. import games  # noqa: F401

    die_with_parent(signal.SIGKILL, parent)
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except OSError as exc:
        log.warning("the statistics' process keeps its priority: SCHED_IDLE refused (%s)",
                    exc.strerror or exc)


_opened: dict[str, Statistics] = {}


def statistics_of(database: str) -> Statistics:
    """This process's `Statistics` of the state database at `database`, opened once."""
    found = _opened.get(database)
    if found is None:
        found = _opened[database] = Statistics(Path(database))
    return found


def catch_up_in(database: str, limit: int | None = None) -> int:
    return statistics_of(database).catch_up(limit)


def rebuild_in(database: str) -> dict[str, Any]:
    return statistics_of(database).rebuild()


def clear_in(database: str) -> dict[str, Any]:
    return statistics_of(database).clear()


def player_in(database: str, player_id: int, game: str | None = None, since: float | None = None,
              until: float | None = None) -> dict[str, Any] | None:
    stats = statistics_of(database)
    if game is None and since is None and until is None:
        return stats.page(player_id)
    return stats.cached(("player", player_id, game, since, until),
                        lambda: stats.player(player_id, game, since, until))


def make_pages_in(database: str) -> int:
    """The pages of the players of the matches figured since the last call, made ahead."""
    stats = statistics_of(database)
    done, stats.figured_now = stats.figured_now, []
    return stats.make_pages(done)


def leaderboard_in(database: str, now: float | None = None) -> dict[str, Any]:
    stats = statistics_of(database)
    if now is not None:
        return stats.leaderboard(now)
    minute = int(time.time() // 60)  # tonight moves on: kept for a minute at most
    return stats.cached(("leaderboard", minute), lambda: stats.leaderboard(minute * 60.0))


def highlights_in(database: str, match_id: int | None = None) -> dict[str, Any] | None:
    stats = statistics_of(database)
    return stats.cached(("highlights", match_id), lambda: stats.highlights(match_id))


def round_highlight_in(database: str, match_id: int) -> dict[str, Any] | None:
    return statistics_of(database).round_highlight(match_id)


def ratings_in(database: str) -> dict[str, Any]:
    return statistics_of(database).ratings()
