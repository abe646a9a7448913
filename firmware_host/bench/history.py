"""`table-host bench history`: what reading the stored matches costs, and that it never slows
the table (docs/web.md, "History and replays"; docs/persistence.md, "Reading the history").

All of it against the real daemon (emulated, headless), as a browser and `tablectl` ask. Before
it starts, a bot match of each game is stored in its state database (four hard bots, as the table
stores a match), and copies of their rows make `MATCHES` matches in all. The pages' work: each of
the four asked for (`/api/matches/N`, gzipped): the first request (the history's own process
starting for the first one, then the rules replayed for every step), the same request again
(kept), the JSON's size plain and gzipped, and the resident memory of the daemon's child
processes (that process and multiprocessing's resource tracker). The table: four hard bots
playing, each decision's lateness (when the engine decided, less its press's kernel time stamp
and the window: 0 is on time) over `seconds` with no reader; over `seconds` while a browser asks
for the match in play as fast as it is answered (each answer a rebuild, since the match changes
with every press); and over `seconds` while READERS read-only users (each a uid of its own, which
needs root; else this user) ask `tablectl history` without pause, and an admin asks `status`
every 0.2 s. Then a daemon with `LARGE` matches stored, its table idle: one `tablectl history
--limit 100000` (the checkout's own tablectl), and the CPU time the game thread spent meanwhile
(/proc/PID/task/PID/schedstat, less what it spends idle as long). Targets: the p99 lateness under
each load within the window of one press (5 ms); every admin `status` answered within 1 s; the
game thread's CPU for the large history within 5 ms. Exit 1 when one is missed.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..engine.match import Match
from ..play.simulate import make_bots, play_round
from ..service.journal import Store
from ..table.matches import new_match
from .harness import ROOT, emulated_daemon

TARGET_P99_MS = 5.0
TARGET_GAME_CPU_MS = 5.0  # the game thread's CPU for one `tablectl history --limit 100000`
PROBE_EVERY_S, PROBE_LIMIT_S = 0.2, 1.0  # an admin's `status`: asked this often, answered within this
GAMES = (("classic", {"rounds": 5}), ("dice", {}), ("domino", {"rounds": 3}), ("crazy", {}))
ROUNDS = 3  # Dice and Crazy: rounds stored (their matches run to a score)
MATCHES = 200  # stored while READERS users ask for the history
READERS = 8  # read-only users asking `tablectl history` without pause
LARGE = 2_000  # stored for the one large `tablectl history --limit 100000`
FIRST_UID = 61_000  # the readers' uids (no account needed: the kernel's word is the uid)


def stored_match(store: Store, game: str, options: dict[str, Any], seed: int, players: int = 4,
                 match_seed: str | None = None, names: list[str] | None = None,
                 after_round: Callable[[Match, int], None] | None = None,
                 cut_at: int | None = ROUNDS) -> int:
    """Hard bots play a match, stored round by round as the table stores it. A match that runs to
    a score (Dice, Crazy) is cut at `cut_at` rounds, unless `options` sets a round count, and set
    aside, so that the daemon does not resume it; `cut_at=None` plays it to its end. `names`
    seats named players; `after_round(match, match_id)` adds what a bench wants beside each round
    (its races) before the round's row is written."""
    match = new_match(game, players, match_seed or f"{seed}/0", options)
    match_id = store.begin_match(match, list(range(players)),
                                 **({"names": dict(enumerate(names))} if names else {}))
    bots, order = make_bots(players, "hard", seed), random.Random(seed)
    recorded = 0
    while True:
        play_round(match, bots, order)
        journal = match.journal
        for entry in journal[recorded:]:
            store.record(match_id, entry.round, entry.action)
        recorded = len(journal)
        if after_round is not None:
            after_round(match, match_id)
        store.round_over(match_id, match)
        if match.is_over:
            return match_id
        if cut_at is not None and len(match.results) >= options.get("rounds", cut_at):
            store.abort(match_id)
            return match_id
        match.next_round()


def _store_history(state: Path, matches: int = MATCHES) -> None:
    """A bot match of each game, then copies of their match and round rows (not their journals:
    the history's list reads no journal) up to `matches` in all."""
    store = Store(state / "table.db")
    try:
        for seed, (game, options) in enumerate(GAMES, start=7):
            stored_match(store, game, options, seed)
    finally:
        store.close()
    with sqlite3.connect(state / "table.db") as db:
        columns = {t: [row[1] for row in db.execute(f"PRAGMA table_info({t})")]
                   for t in ("matches", "rounds")}
        for first in range(len(GAMES) + 1, matches + 1, len(GAMES)):
            shift = first - 1
            for table, key in (("matches", "id"), ("rounds", "match_id")):
                names = columns[table]
                chosen = ", ".join(f"{c} + {shift}" if c == key else c for c in names)
                db.execute(f"INSERT INTO {table} ({', '.join(names)}) SELECT {chosen} FROM {table} "
                           f"WHERE {key} <= {min(len(GAMES), matches - shift)}")


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


def _ask_again(path: str, stop: Callable[[], bool], counts: dict[str, int]) -> None:
    """`tablectl history` (its request: the newest 20) on a connection of its own each time, as
    fast as it is answered."""
    request = json.dumps({"cmd": "history", "limit": 20}).encode() + b"\n"
    while not stop():
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(10)
                conn.connect(path)
                conn.sendall(request)
                answer = b""
                while not answer.endswith(b"\n"):
                    chunk = conn.recv(1 << 16)
                    if not chunk:
                        break
                    answer += chunk
            counts["answered" if b'"ok": true' in answer else "refused"] += 1
        except OSError:
            counts["refused"] += 1


def _readers(path: Path, seconds: float) -> list[tuple[int, int]]:
    """READERS processes, each a read-only user of its own (a uid of its own needs root; else
    this user), asking for the history for `seconds`: their pids and the pipes they report on."""
    own = os.geteuid() != 0
    started = []
    for n in range(READERS):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: nothing of the parent's is used but this module's functions
            try:
                os.close(read)
                if not own:
                    os.setgroups([])
                    os.setresgid(FIRST_UID + n, FIRST_UID + n, FIRST_UID + n)
                    os.setresuid(FIRST_UID + n, FIRST_UID + n, FIRST_UID + n)
                counts = {"answered": 0, "refused": 0}
                end = time.monotonic() + seconds
                _ask_again(str(path), lambda end=end: time.monotonic() > end, counts)
                os.write(write, json.dumps(counts).encode())
            finally:
                os._exit(0)
        os.close(write)
        started.append((pid, read))
    return started


def _probe(daemon: Any, seconds: float) -> list[float | None]:
    """`status` as an admin (root or this user) every PROBE_EVERY_S for `seconds`: each one's
    latency in seconds, None when it was not answered."""
    from ..control.client import ask

    latencies: list[float | None] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        began = time.monotonic()
        try:
            ok = ask({"cmd": "status"}, daemon.socket, timeout=10.0).get("ok") is True
        except Exception:
            ok = False
        took = time.monotonic() - began
        latencies.append(took if ok else None)
        time.sleep(max(0.0, PROBE_EVERY_S - took))
    return latencies


def _readers_phase(daemon: Any, seconds: float) -> dict[str, Any]:
    """`seconds` of play while READERS users ask for the history and an admin asks `status`."""
    for where in (daemon.socket.parent.parent, daemon.socket.parent):  # anyone may reach it:
        where.chmod(0o755)                                                # the daemon decides
    daemon.socket.chmod(0o666)
    since = time.monotonic_ns()
    children = _readers(daemon.socket, seconds)
    latencies = _probe(daemon, seconds)
    counts = {"answered": 0, "refused": 0}
    for pid, pipe in children:
        os.waitpid(pid, 0)
        with os.fdopen(pipe) as f:
            for key, value in json.loads(f.read() or "{}").items():
                counts[key] += value
    until = time.monotonic_ns()
    answered = [t for t in latencies if t is not None]
    return {**_lateness(daemon, since, until), "requests": counts["answered"], "refused": counts["refused"],
            "readers": READERS, "as_others": os.geteuid() == 0,
            "status_probes": len(latencies), "status_unanswered": len(latencies) - len(answered),
            "status_over_1s": sum(1 for t in answered if t > PROBE_LIMIT_S),
            "status_worst_ms": round(max(answered, default=0.0) * 1000, 1)}


def _game_cpu_ns(pid: int) -> int:
    """The CPU time the game thread (the daemon's main thread, headless) has had, in ns
    (/proc/PID/task/TID/schedstat's first field, proc(5))."""
    return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0])


def _large_history() -> dict[str, Any]:
    """A daemon with LARGE matches stored, idle: `tablectl history --limit 100000` once."""
    with emulated_daemon(prepare=lambda state: _store_history(state, LARGE)) as daemon:
        time.sleep(1.0)  # past its start
        tablectl = "import sys; from firmware_host.cli.ctl import main; sys.exit(main())"
        command = [sys.executable, "-c", tablectl, "--json", "history", "--limit", "100000"]
        began, cpu = time.monotonic(), _game_cpu_ns(daemon.proc.pid)
        done = subprocess.run(command, cwd=ROOT, env=daemon.env, capture_output=True, timeout=120)
        took, spent = time.monotonic() - began, _game_cpu_ns(daemon.proc.pid) - cpu
        cpu = _game_cpu_ns(daemon.proc.pid)
        time.sleep(took)  # the game thread idle as long: its own timers' share
        idle = _game_cpu_ns(daemon.proc.pid) - cpu
    try:
        listed = len(json.loads(done.stdout)["matches"])
    except (ValueError, KeyError):
        listed = 0
    return {"stored": LARGE, "listed": listed, "seconds": round(took, 3),
            "game_cpu_ms": round(max(0, spent - idle) / 1e6, 1), "idle_cpu_ms": round(idle / 1e6, 1),
            "target_game_cpu_ms": TARGET_GAME_CPU_MS}


def bench_history(seconds: float) -> dict[str, Any]:
    with emulated_daemon(prepare=_store_history) as daemon:
        web = daemon.ask({"cmd": "status"}).get("web", "")
        if not web:
            raise RuntimeError("the daemon's web view is not serving (status has no web address)")
        builds = _builds(web)
        children = _children(daemon.proc.pid)
        daemon.ask({"cmd": "new", "game": "classic", "options": {"rounds": 100}})  # in play throughout
        daemon.ask({"cmd": "bots", "count": 4, "level": "hard"})
        daemon.ask({"cmd": "start"})
        time.sleep(4)  # the countdown
        match_url = f"{web}api/matches/{MATCHES + 1}"
        lateness = {"no_browser": _phase(daemon, match_url, seconds, False),
                    "history_requests": _phase(daemon, match_url, seconds, True),
                    "tablectl_readers": _readers_phase(daemon, seconds)}
    large = _large_history()
    readers = lateness["tablectl_readers"]
    met = all(p["p99_ms"] is not None and p["p99_ms"] <= TARGET_P99_MS
              for name, p in lateness.items() if name != "no_browser")
    met = met and readers["status_unanswered"] == 0 and readers["status_over_1s"] == 0
    met = met and large["listed"] == LARGE and large["game_cpu_ms"] <= TARGET_GAME_CPU_MS
    return {"builds": builds, "children": children, "lateness": lateness, "large": large, "seconds": seconds,
            "matches": MATCHES, "target_p99_ms": TARGET_P99_MS, "meets_target": met}


def history_text(f: dict[str, Any]) -> str:
    lines = ["history: a stored 4-seat bot match of each game asked for, over HTTP, from the real daemon"]
    for n, b in enumerate(f["builds"]):
        lines.append(f"  {b['game']:8} {b['steps']:5} steps: first {b['first_ms']:7.1f} ms"
                     f"{' (with the process starting)' if n == 0 else ''}, again {b['again_ms']:5.1f} ms, "
                     f"{b['json_kb']} kB JSON, {b['gzipped_kb']} kB gzipped")
    children = "; ".join(f"{c['rss_mb']} MB resident, {c['policy']}" for c in f["children"])
    lines.append(f"  the daemon's children (multiprocessing's resource tracker, the history's): {children}")
    lines.append(f"  the table, four hard bots playing, {f['matches']} matches stored:")
    for name, p in f["lateness"].items():
        lines.append(f"  decisions late by ({name.replace('_', ' ')}, {p['decisions']} decisions, "
                     f"{p['requests']} requests): p50 {p['p50_ms']} ms, p99 {p['p99_ms']} ms, "
                     f"max {p['max_ms']} ms")
    r = f["lateness"]["tablectl_readers"]
    who = "each a uid of its own" if r["as_others"] else "as this user (not root: no other uid)"
    lines.append(f"  {r['readers']} users asking `tablectl history` without pause ({who}), {r['refused']} "
                 f"refused; an admin's status every {PROBE_EVERY_S:g} s: {r['status_probes']} asked, "
                 f"{r['status_unanswered']} unanswered, {r['status_over_1s']} over {PROBE_LIMIT_S:g} s, "
                 f"worst {r['status_worst_ms']} ms")
    g = f["large"]
    lines.append(f"  `tablectl history --limit 100000` with {g['stored']} matches stored: {g['listed']} "
                 f"listed in {g['seconds']} s; the game thread's CPU meanwhile {g['game_cpu_ms']} ms "
                 f"(beyond its idle {g['idle_cpu_ms']} ms)")
    lines.append(f"  targets: p99 under load <= {f['target_p99_ms']:g} ms, every status within "
                 f"{PROBE_LIMIT_S:g} s, the game thread's CPU for the large history <= "
                 f"{g['target_game_cpu_ms']:g} ms: {'meets' if f['meets_target'] else 'MISSES'}")
    return "\n".join(lines)
