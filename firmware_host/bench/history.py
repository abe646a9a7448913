"""`table-host bench history`: what the History and replays pages cost, and that they never
slow the table (docs/web.md, "History and replays").

All of it against the real daemon (emulated, headless), over HTTP as a browser asks. Before it
starts, a bot match of each game is stored in its state database (four hard bots, as the table
stores a match). The pages' work: each of those asked for (`/api/matches/N`, gzipped): the first
request (the history's own process starting for the first one, then the rules replayed for every
step), the same request again (kept), the JSON's size plain and gzipped, and the resident memory
of the daemon's child processes (that process and multiprocessing's resource tracker). The
table: four hard bots playing, each decision's lateness (when the engine decided, less its
press's kernel time stamp and the window: 0 is on time) over `seconds` with no browser, then over
`seconds` while a client asks for the match in play as fast as it is answered (each answer a
rebuild, since the match changes with every press). Target: the p99 lateness under that load
within the window of one press (5 ms); exit 1 when missed.
"""

from __future__ import annotations

import gzip
import json
import random
import statistics
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
    """Four hard bots play a match (Dice and Crazy cut at `ROUNDS` rounds and set aside, so that
    the daemon does not resume them), stored as the table stores it."""
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
        if match.is_over:
            return match_id
        if len(match.results) >= options.get("rounds", ROUNDS):
            store.abort(match_id)
            return match_id
        match.next_round()


def _store_history(state: Path) -> None:
    store = Store(state / "table.db")
    try:
        for seed, (game, options) in enumerate(GAMES, start=7):
            stored_match(store, game, options, seed)
    finally:
        store.close()


def _get(url: str) -> tuple[bytes, float]:
    """The body as sent (gzipped when the server gzips) and the seconds it took."""
    began = time.perf_counter()
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        body = answer.read()
        if answer.headers.get("Content-Encoding") != "gzip":
            body = gzip.compress(body)
    return body, time.perf_counter() - began


POLICIES = {0: "SCHED_OTHER", 1: "SCHED_FIFO", 2: "SCHED_RR", 3: "SCHED_BATCH", 5: "SCHED_IDLE"}


def _children(pid: int) -> list[dict[str, Any]]:
    """A process's children (/proc/PID/task/TID/children of each of its threads, proc(5): a child
    belongs to the thread that started it): each one's resident memory and scheduling policy."""
    tasks = Path(f"/proc/{pid}/task").iterdir()
    out = []
    for child in sorted({c for task in tasks for c in (task / "children").read_text().split()}):
        status = Path(f"/proc/{child}/status").read_text().splitlines()
        rss = next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)
        policy = int(Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[38])  # field 41
        out.append({"pid": int(child), "rss_mb": round(rss / 1024, 1),
                    "policy": POLICIES.get(policy, policy)})
    return out


def _builds(web: str) -> list[dict[str, Any]]:
    out = []
    for match_id, (game, _) in enumerate(GAMES, start=1):
        body, first = _get(f"{web}api/matches/{match_id}")
        _, again = _get(f"{web}api/matches/{match_id}")
        plain = gzip.decompress(body)
        out.append({"game": game, "steps": len(json.loads(plain)["steps"]),
                    "first_ms": round(first * 1000, 1), "again_ms": round(again * 1000, 1),
                    "json_kb": round(len(plain) / 1000),
                    "gzipped_kb": round(len(body) / 1000)})
    return out


def _lateness(daemon: Any, since: int, until: int) -> dict[str, Any]:
    inputs = daemon.ask({"cmd": "inputs"})
    window = inputs.get("window_ns", 0)
    late = sorted((e["decided_ns"] - e["ts_ns"] - window) / 1e6 for e in inputs.get("events", [])
                  if "decided_ns" in e and since <= e["decided_ns"] <= until)
    if not late:
        return {"decisions": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}
    return {"decisions": len(late), "p50_ms": round(statistics.median(late), 3),
            "p99_ms": round(late[max(0, int(len(late) * 0.99) - 1)], 3), "max_ms": round(late[-1], 3)}


def _phase(daemon: Any, match_url: str, seconds: float, load: bool) -> dict[str, Any]:
    """`seconds` of play, with a client asking for `match_url` again and again if `load`."""
    stop, answered = threading.Event(), [0]

    def ask_again() -> None:
        while not stop.is_set():
            _get(match_url)
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
    return {**_lateness(daemon, since, until), "requests": answered[0]}


def bench_history(seconds: float) -> dict[str, Any]:
    with emulated_daemon(prepare=_store_history) as daemon:
        web = daemon.ask({"cmd": "status"}).get("web", "")
        if not web:
            raise RuntimeError("the daemon's web view is not serving (status has no web address)")
        builds = _builds(web)
        children = _children(daemon.proc.pid)
        daemon.ask({"cmd": "new", "game": "classic", "options": {"rounds": 5}})
        daemon.ask({"cmd": "bots", "count": 4, "level": "hard"})
        daemon.ask({"cmd": "start"})
        time.sleep(4)  # the countdown
        match_url = f"{web}api/matches/{len(GAMES) + 1}"
        lateness = {"no_browser": _phase(daemon, match_url, seconds, False),
                    "history_requests": _phase(daemon, match_url, seconds, True)}
    p99 = lateness["history_requests"]["p99_ms"]
    return {"builds": builds, "children": children, "lateness": lateness, "seconds": seconds,
            "target_p99_ms": TARGET_P99_MS, "meets_target": p99 is not None and p99 <= TARGET_P99_MS}


def history_text(f: dict[str, Any]) -> str:
    lines = ["history: a stored 4-seat bot match of each game asked for, over HTTP, from the real daemon"]
    for n, b in enumerate(f["builds"]):
        lines.append(f"  {b['game']:8} {b['steps']:5} steps: first {b['first_ms']:7.1f} ms"
                     f"{' (with the process starting)' if n == 0 else ''}, again {b['again_ms']:5.1f} ms, "
                     f"{b['json_kb']} kB JSON, {b['gzipped_kb']} kB gzipped")
    children = "; ".join(f"{c['rss_mb']} MB resident, {c['policy']}" for c in f["children"])
    lines.append(f"  the daemon's children (multiprocessing's resource tracker, the history's): {children}")
    for name, p in f["lateness"].items():
        lines.append(f"  decisions late by ({name.replace('_', ' ')}, {p['decisions']} decisions, "
                     f"{p['requests']} requests): p50 {p['p50_ms']} ms, p99 {p['p99_ms']} ms, "
                     f"max {p['max_ms']} ms")
    lines.append(f"  target: p99 under history requests <= {f['target_p99_ms']:g} ms: "
                 f"{'meets' if f['meets_target'] else 'MISSES'}")
    return "\n".join(lines)
