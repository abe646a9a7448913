"""`table-host bench history`: what the History and replays pages cost, and that they never
slow the table (docs/web.md, "History and replays").

Two parts. The pages' work: a stored bot match per game rebuilt by the history's own process
(web/replays.py `Rebuilder`): the first request (the process starting, then the rules replayed
for every step), the same request again (kept), the JSON's size plain and gzipped, and that
process's resident memory. The table: the real daemon (emulated, headless) with four hard bots
playing, each decision's lateness (when the engine decided, less its press's kernel time stamp
and the window: 0 is on time) over `seconds` with no browser, then over `seconds` while a
client asks for the match in play as fast as it is answered (each answer a rebuild, since the
match changes with every press). Target: the p99 lateness under that load within the window
of one press (5 ms); exit 1 when missed.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import random
import statistics
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from ..game.catalog import new_match
from ..play.simulate import make_bots, play_round
from ..service.store import Store
from .harness import emulated_daemon

TARGET_P99_MS = 5.0
GAMES = (("classic", {"rounds": 5}), ("dice", {}), ("domino", {"rounds": 3}), ("crazy", {}))
ROUNDS = 3  # Dice and Crazy: rounds stored (their matches run to a score)


def stored_match(store: Store, game: str, options: dict[str, Any], seed: int) -> int:
    """Four hard bots play a match (at most `ROUNDS` rounds beyond Ligretto's and Domino's own),
    stored as the table stores it: the match, each accepted action, each round."""
    match = new_match(game, 4, f"{seed}/0", options)
    match_id = store.begin_match(match, [0, 1, 2, 3])
    bots, order = make_bots(4, "hard", seed), random.Random(seed)
    recorded = 0
    while True:
        play_round(match, bots, order)
        journal = match.journal
        for entry in journal[recorded:]:
            store.record(match_id, entry.round, entry.action)
        recorded = len(journal)
        store.round_over(match_id, match)
        if match.is_over or len(match.results) >= options.get("rounds", ROUNDS):
            return match_id
        match.next_round()


def _resident_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def bench_builds() -> list[dict[str, Any]]:
    from ..web import history
    from ..web.replays import Rebuilder

    out = []
    with tempfile.TemporaryDirectory(prefix="table-history-") as tmp:
        store = Store(Path(tmp) / "table.db")
        try:
            stored = [(game, stored_match(store, game, options, 7)) for game, options in GAMES]
            store._drain()
        finally:
            store.close()

        async def measure() -> None:
            rebuilder = Rebuilder(Path(tmp) / "table.db")
            try:
                for game, match_id in stored:
                    began = time.perf_counter()
                    body, _ = await rebuilder.run(history.timeline_gzipped, match_id)
                    first = time.perf_counter()
                    await rebuilder.run(history.timeline_gzipped, match_id)
                    again = time.perf_counter()
                    started = rebuilder.started == 1 and not out  # the process started for this one
                    pool = rebuilder.pool
                    pid = next(iter(pool._processes)) if pool is not None else 0
                    plain = gzip.decompress(body)
                    out.append({"game": game, "steps": len(json.loads(plain)["steps"]),
                                "first_ms": round((first - began) * 1000, 1), "with_process_start": started,
                                "again_ms": round((again - first) * 1000, 1),
                                "json_kb": round(len(plain) / 1000), "gzipped_kb": round(len(body) / 1000),
                                "process_rss_mb": round(_resident_kb(pid) / 1024, 1) if pid else None})
            finally:
                rebuilder.stop()

        asyncio.run(measure())
    return out


def _lateness(daemon: Any, since: int, until: int) -> list[float]:
    inputs = daemon.ask({"cmd": "inputs"})
    window = inputs.get("window_ns", 0)
    return sorted((e["decided_ns"] - e["ts_ns"] - window) / 1e6 for e in inputs.get("events", [])
                  if "decided_ns" in e and since <= e["decided_ns"] <= until)


def _figures(late: list[float]) -> dict[str, Any]:
    if not late:
        return {"decisions": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}
    return {"decisions": len(late), "p50_ms": round(statistics.median(late), 3),
            "p99_ms": round(late[max(0, int(len(late) * 0.99) - 1)], 3), "max_ms": round(late[-1], 3)}


def _phase(daemon: Any, match_url: str, seconds: float, load: bool) -> dict[str, Any]:
    """`seconds` of play, with a client asking for `match_url` again and again if `load`."""
    stop, answered = threading.Event(), [0]

    def ask_again() -> None:
        while not stop.is_set():
            with urllib.request.urlopen(match_url, timeout=30) as answer:
                answer.read()
            answered[0] += 1

    asker = threading.Thread(target=ask_again, daemon=True)
    since = time.monotonic_ns()
    if load:
        asker.start()
    time.sleep(seconds)
    until = time.monotonic_ns()
    stop.set()
    if load:
        asker.join(60)
    return {**_figures(_lateness(daemon, since, until)), "requests": answered[0]}


def bench_lateness(seconds: float) -> dict[str, Any]:
    with emulated_daemon() as daemon:
        daemon.ask({"cmd": "new", "game": "classic", "options": {"rounds": 5}})
        daemon.ask({"cmd": "bots", "count": 4, "level": "hard"})
        daemon.ask({"cmd": "start"})
        web = daemon.ask({"cmd": "status"}).get("web", "")
        if not web:
            raise RuntimeError("the daemon's web view is not serving (status has no web address)")
        time.sleep(4)  # the countdown
        with urllib.request.urlopen(f"{web}api/matches", timeout=30) as answer:
            match_id = json.load(answer)[0]["match"]
        match_url = f"{web}api/matches/{match_id}"
        return {"no_browser": _phase(daemon, match_url, seconds, False),
                "history_requests": _phase(daemon, match_url, seconds, True)}


def bench_history(seconds: float) -> dict[str, Any]:
    builds = bench_builds()
    lateness = bench_lateness(seconds)
    p99 = lateness["history_requests"]["p99_ms"]
    return {"builds": builds, "lateness": lateness, "seconds": seconds, "target_p99_ms": TARGET_P99_MS,
            "meets_target": p99 is not None and p99 <= TARGET_P99_MS}


def history_text(f: dict[str, Any]) -> str:
    lines = ["history (the pages' own process): a stored 4-seat bot match rebuilt for its page"]
    for b in f["builds"]:
        lines.append(f"  {b['game']:8} {b['steps']:5} steps: first {b['first_ms']:7.1f} ms"
                     f"{' (with the process starting)' if b['with_process_start'] else ''}, again "
                     f"{b['again_ms']:5.1f} ms, {b['json_kb']} kB JSON, {b['gzipped_kb']} kB gzipped, "
                     f"process {b['process_rss_mb']} MB")
    for name, p in f["lateness"].items():
        lines.append(f"  decisions late by ({name.replace('_', ' ')}, {p['decisions']} decisions, "
                     f"{p['requests']} requests): p50 {p['p50_ms']} ms, p99 {p['p99_ms']} ms, "
                     f"max {p['max_ms']} ms")
    lines.append(f"  target: p99 under history requests <= {f['target_p99_ms']:g} ms: "
                 f"{'meets' if f['meets_target'] else 'MISSES'}")
    return "\n".join(lines)
