"""`table-host bench players`: what a player's page costs with `STORED` matches in the journal
(docs/players.md, "Where the figures are made"; target: under 200 ms).

The journal is built as the table builds it: a bot match of each game at 2, 3 and 4 seats (hard
bots, played on the timed clock, so their actions carry stamps as a seat's do) is stored through
the real `Store`, with a circle of named players (`NAMES`) seated at random (the names' records,
docs/players.md "Records") and `RACES` races a match, as the arbiter records them (margins drawn
from 10 µs to 5 ms). Copies of those matches' rows, each with other players seated and a start
10 minutes after the one before, make `STORED` in all. The figures are made by the real code:
the templates replayed (`Statistics.catch_up`, timed per match), the copies' figures taken
from their template's (a copy replays to the same figures), the ratings carried over every
match and the players' pages made ahead (each timed). Then, for the player who played the most
matches, the page as /players/N serves it (`Statistics.page`) is asked on a new connection
(cold: SQLite's cache empty) and again `REPEATS` times (the median), a page over a period and a
page of one game (each made on demand) three times, and the leaderboard `REPEATS` times. Every
kind of page is judged by its slowest answer: exit 1 when one takes longer than `TARGET_MS`.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ..engine.match import Match
from ..service.database import player_named
from ..service.journal import Store
from ..service.statistics import Statistics
from .history import stored_match

TARGET_MS = 200.0
STORED = 10_000
RACES = 6
REPEATS = 20
GAMES = (("classic", {"rounds": 3}), ("dice", {"rounds": 3}), ("domino", {"rounds": 2}),
         ("crazy", {"target": 40}))
NAMES = ("Ana", "Ben", "Chloé", "Dmitri", "Eve", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena")
"""The named players the matches are played by: one table's circle of friends."""


def _template(store: Store, game: str, options: dict[str, Any], players: int, seed: int,
              names: list[str]) -> int:
    """A match of hard bots, stored as the table stores it, its seats named `names`, with a few
    races beside each round."""
    rng = random.Random(f"races/{seed}")

    def races(match: Match, match_id: int) -> None:
        for _ in range(RACES // max(1, match.options.get("rounds", 3) or 3)):
            winner, loser = rng.sample(range(players), 2)
            at = rng.randrange(10**9, 10**11)
            store.record_race(match_id, match.round_no, {
                "kind": "first", "winner": winner, "winner_ts": at, "loser": loser,
                "loser_ts": at + rng.randrange(10_000, 5_000_000)})

    return stored_match(store, game, options, seed, players, match_seed=f"players/{seed}", names=names,
                        after_round=races, cut_at=None)


def _copies(db: Path, templates: list[int], stored: int, rng: random.Random) -> None:
    """Copies of the templates' rows (matches, rounds, journal, races, who sat) up to `stored`
    matches, each seated by other players of the circle, begun 10 minutes apart."""
    raw = sqlite3.connect(db)
    with raw:
        ids = {name: player_named(raw, name)[0] for name in NAMES}  # type: ignore[index]
        now = time.time()
        tables = ("matches", "rounds", "journal", "races")
        columns = {t: [row[1] for row in raw.execute(f"PRAGMA table_info({t})")] for t in tables}
        players = dict(raw.execute("SELECT id, players FROM matches"))
        for n in range(len(templates) + 1, stored + 1):
            source = templates[(n - 1) % len(templates)]
            for table in tables:
                key = "id" if table == "matches" else "match_id"
                names = columns[table]
                chosen = ", ".join("?" if c == key else c for c in names)
                raw.execute(f"INSERT INTO {table} ({', '.join(names)}) SELECT {chosen} FROM {table} "
                            f"WHERE {key} = ?", (n, source))
            started = now - (stored - n) * 600
            raw.execute("UPDATE matches SET started = ?, ended = ? WHERE id = ?", (started, started + 300, n))
            seated = rng.sample(NAMES, players[source])
            raw.executemany("INSERT INTO match_players VALUES (?, ?, ?, 'player', ?, ?, ?)",
                            [(n, p, p + 1, ids[name], ids[name], name) for p, name in enumerate(seated)])
    # The table's writer commits a row at a time, so SQLite's automatic checkpoints keep its WAL
    # small; one transaction of 10,000 matches left 230 MB in it, which every new reader then read.
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()


def bench_players(stored: int = STORED) -> dict[str, Any]:
    rng = random.Random(31)
    with tempfile.TemporaryDirectory(prefix="bench-players-") as tmp:
        db = Path(tmp) / "table.db"
        store = Store(db)
        kinds = [(game, options, players) for game, options in GAMES for players in (2, 3, 4)][:stored]
        try:
            templates = [_template(store, game, options, players, seed, rng.sample(NAMES, players))
                         for seed, (game, options, players) in enumerate(kinds, start=1)]
        finally:
            store.close()
        _copies(db, templates, stored, rng)
        stats = Statistics(db)
        try:
            with stats._working() as work:  # the templates alone first: their replay is timed
                work.execute("BEGIN IMMEDIATE")
                work.execute("INSERT INTO figures.figured SELECT id, NULL FROM main.matches WHERE id > ?",
                             (len(templates),))
                work.execute("COMMIT")
            began = time.perf_counter()
            figured = stats.catch_up()
            replay_ms = (time.perf_counter() - began) * 1000 / max(1, figured)
            with stats._working() as work:  # each copy's figures are its template's
                columns = [row[1] for row in work.execute("PRAGMA figures.table_info(seat_figures)")]
                chosen = ", ".join("m.id" if c == "match_id" else "m.started" if c == "started" else f"f.{c}"
                                   for c in columns)
                work.execute("BEGIN IMMEDIATE")
                for n in range(len(templates) + 1, stored + 1):
                    work.execute(f"INSERT INTO figures.seat_figures SELECT {chosen} "
                                 "FROM figures.seat_figures f, main.matches m "
                                 "WHERE f.match_id = ? AND m.id = ?",
                                 (templates[(n - 1) % len(templates)], n))
                work.execute("COMMIT")
            began = time.perf_counter()
            stats._rate()
            rate_s = time.perf_counter() - began
            began = time.perf_counter()
            made = stats.make_pages(list(range(1, stored + 1)))  # as the keeper does after a match
            pages_s = time.perf_counter() - began
            with stats._working() as work:  # as above: the keeper commits a batch at a time
                work.execute("PRAGMA figures.wal_checkpoint(TRUNCATE)")
            with stats._reading() as read:
                busiest, played = read.execute(
                    "SELECT player_id, count(*) FROM match_players WHERE player_id IS NOT NULL "
                    "GROUP BY player_id ORDER BY count(*) DESC LIMIT 1").fetchone()
                rows = read.execute("SELECT count(*) FROM figures.seat_figures").fetchone()[0]
        finally:
            stats.close()
        cold = Statistics(db)  # a new connection: SQLite's cache empty
        try:
            began = time.perf_counter()
            page = cold.page(busiest)
            cold_ms = (time.perf_counter() - began) * 1000
            warm = _timed(REPEATS, lambda: cold.page(busiest))
            period_ms = _timed(3, lambda: cold.player(busiest, since=0.0))  # made on demand
            game_ms = _timed(3, lambda: cold.player(busiest, game="classic"))
            boards = _timed(REPEATS, cold.leaderboard)
        finally:
            cold.close()
    assert page is not None
    every = page["all"]
    warm_ms, board_ms = statistics.median(warm), statistics.median(boards)
    judged = judge({"player": [cold_ms, *warm], "period": period_ms, "game": game_ms, "leaderboard": boards})
    return {"stored": stored, "templates": len(templates), "seat_rows": rows,
            "replay_ms_per_match": round(replay_ms, 1), "ratings_s": round(rate_s, 2),
            "player": page["name"], "player_matches": played, "player_reactions": every["reactions"],
            "player_races": every["races"],
            "page_cold_ms": round(cold_ms, 1), "page_ms": round(warm_ms, 1),
            "page_max_ms": round(max(warm), 1),
            "leaderboard_ms": round(board_ms, 1), "target_ms": TARGET_MS,
            "pages_made": made, "pages_s": round(pages_s, 2),
            "period_page_ms": round(statistics.median(period_ms), 1),
            "page_kb": round(len(json.dumps(page)) / 1024, 1),
            "load": [round(x, 1) for x in os.getloadavg()], "cpus": os.cpu_count(),
            "pages": judged, "meets_target": all(kind["meets_target"] for kind in judged.values())}


def judge(kinds: dict[str, list[float]]) -> dict[str, dict[str, Any]]:
    """Each page kind's answers (ms): its median and slowest, and whether the slowest is within
    the target (a page shown once too slowly is a page too slow)."""
    return {kind: {"median_ms": round(statistics.median(times), 1), "slowest_ms": round(max(times), 1),
                   "asked": len(times), "meets_target": max(times) <= TARGET_MS}
            for kind, times in kinds.items()}


def _timed(times: int, ask: Any) -> list[float]:
    """Each of `times` answers of `ask`, in ms."""
    took = []
    for _ in range(times):
        began = time.perf_counter()
        ask()
        took.append((time.perf_counter() - began) * 1000)
    return took


PAGE_KINDS = {"player": "a player's page (/players/N), made ahead: cold, then warm",
              "period": "a player's page over a period (?since=), made when asked",
              "game": "a player's page of one game (?game=classic), made when asked",
              "leaderboard": "the leaderboard (/leaderboard: tonight and all time)"}


def players_text(f: dict[str, Any]) -> str:
    return "\n".join([
        f"players: a journal of {f['stored']} matches ({f['templates']} bot matches of the four games at 2-4 "
        f"seats, then copies), {f['seat_rows']} players' figures",
        f"  figures made: {f['replay_ms_per_match']} ms a match replayed; ratings over every match "
        f"{f['ratings_s']} s",
        f"  {f['player']}'s page ({f['player_matches']} matches, {f['player_reactions']} reactions, "
        f"{f['player_races']} races, {f['page_kb']} kB of JSON): cold {f['page_cold_ms']} ms, then "
        f"median {f['page_ms']} ms, slowest {f['page_max_ms']} ms of {REPEATS}",
        f"  {f['pages_made']} players' pages made ahead in {f['pages_s']} s (as after each match, its "
        "players')",
        f"  each page kind against the target of {f['target_ms']:g} ms (its slowest answer judged):",
        *(f"    {PAGE_KINDS[kind]}: median {p['median_ms']} ms, slowest {p['slowest_ms']} ms of "
          f"{p['asked']}: {'meets' if p['meets_target'] else 'MISSES'}" for kind, p in f["pages"].items()),
        f"  load average {' '.join(map(str, f['load']))} on {f['cpus']} CPUs (shared: other work slows it)",
        f"  target: every page within {f['target_ms']:g} ms: {'meets' if f['meets_target'] else 'MISSES'}",
    ])
