"""`table-host bench faults`, the state database's part: a disk that fills during a match, a disk
full before the table starts, and files damaged in eight ways, each against the real daemon
(`table-host run --emulate`).

- Full disk: the state directory is a 2 MiB tmpfs (mounting it needs root; without, the run
  says so and is not counted). A bot match of Dice is played over the control socket; once its
  first round is stored, the tmpfs is filled to the last byte. Play goes on for two more rounds;
  every `status` must be answered and say `DEGRADED: state not saved (disk full)`. The filler
  is removed; the warning must go within 30 s. Then the daemon is killed (SIGKILL) and started
  again: every round the table played must be in `history`. Rounds lost: target 0.
- Full before the start: the tmpfs filled to the last byte before the daemon starts, with no
  database yet and with one holding a stored match. It must come up (a restart loop is a start
  that ends before it answers), say `DEGRADED: state not saved (disk full)`, play a Dice round,
  and write it once the filler is removed; after a SIGKILL and a restart the round must be in
  `history`. Restart loops, rounds lost, tracebacks: target 0.
- Damaged database: a stored match, then one damage (a garbage page, a renamed column, garbage
  in a round's scores, a file that is not a database, a newer schema version, a directory where
  the file should be, a match id that leaves none for the next match, a trigger the table does
  not know); the daemon must come up and answer `status` and `history` (a restart loop under
  systemd is a start that ends before it answers), with no traceback in its output. Targets 0
  and 0.
"""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..system.children import ending_with_me
from .harness import DAEMON, ROOT, EmulatedDaemon, daemon_env
from .soak import BOTS, LEVEL

TMPFS = "2m"
FULL_ROUNDS = 2  # rounds played on the full disk
START_S = 30.0


@contextlib.contextmanager
def daemon_on(state: Path, log: Path) -> Iterator[EmulatedDaemon]:
    """The real daemon on the state directory `state`, its output to `log`; killed at the end.
    Yields once it answers, or with `proc` ended if it could not start (its exit status)."""
    env = {**daemon_env(state.parent), "STATE_DIRECTORY": str(state)}
    with open(log, "ab") as out:
        proc = subprocess.Popen(DAEMON, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, preexec_fn=ending_with_me(signal.SIGTERM))
    daemon = EmulatedDaemon(proc, Path(env["TABLE_HOST_SOCKET"]), env)
    try:
        deadline = time.monotonic() + START_S
        while not daemon.answers() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        yield daemon
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def fill(directory: Path) -> int:
    """Write zeros into `directory` until the file system refuses; the bytes written."""
    written = 0
    block = bytes(4096)
    with open(directory / "filler", "wb", buffering=0) as f:
        while True:
            try:
                written += f.write(block)
            except OSError:
                break
    return written


def _play_until(ask: Callable[[dict[str, Any]], dict[str, Any]], rounds: int, seen: dict[str, Any],
                timeout_s: float = 120.0) -> None:
    """Poll `status` (counting answers and warnings), go on at each round's result, until
    `rounds` rounds in all have ended or the match is over."""
    deadline = time.monotonic() + timeout_s
    while seen["rounds"] < rounds and not seen["over"] and time.monotonic() < deadline:
        answer = ask({"cmd": "status"})
        seen["asked"] += 1
        if not answer.get("ok"):
            seen["unanswered"] += 1
            time.sleep(0.05)
            continue
        if "disk full" in str(answer.get("storage", "")):
            seen["warned"] += 1
        if answer.get("phase") == "round_result":
            seen["rounds"] += 1
            ask({"cmd": "next"})
        elif answer.get("phase") == "match_result":
            seen["rounds"] += 1
            seen["over"] = True
        time.sleep(0.05)


def full_disk() -> dict[str, Any]:
    """The full-disk run (see the module's docstring)."""
    return _on_a_tmpfs(_full_disk_run)


def _on_a_tmpfs(run: Callable[[Path, Path], dict[str, Any]]) -> dict[str, Any]:
    """`run(state directory, log)` with the state directory a TMPFS tmpfs of its own."""
    figures: dict[str, Any] = {"ran": False}
    with tempfile.TemporaryDirectory(prefix="table-full-") as tmp:
        state = Path(tmp) / "state"
        state.mkdir()
        mount = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS},mode=0700", "tmpfs", str(state)],
                               capture_output=True, text=True)
        if mount.returncode != 0:
            figures["why"] = f"cannot mount a {TMPFS} tmpfs (root is needed): {mount.stderr.strip()[:120]}"
            return figures
        try:
            figures |= run(state, Path(tmp) / "daemon.log")
            figures["ran"] = True
        finally:
            subprocess.run(["umount", "-l", str(state)], capture_output=True)
    return figures


def full_at_start() -> dict[str, Any]:
    """The disk full before the start, with no database and with one (see the module's docstring)."""
    runs = {kind: _on_a_tmpfs(lambda state, log, kind=kind: _full_at_start_run(state, log, kind))
            for kind in ("no database", "a stored match")}
    ran = all(r["ran"] for r in runs.values())
    figures: dict[str, Any] = {"ran": ran, "runs": runs}
    if not ran:
        figures["why"] = next(r["why"] for r in runs.values() if not r["ran"])
    return figures


def _full_at_start_run(state: Path, log: Path, kind: str) -> dict[str, Any]:
    if kind == "a stored match":
        _stored_match(state / "table.db", rounds=1)  # over: the table starts in attract
    filled = fill(state)
    seen = {"asked": 0, "unanswered": 0, "warned": 0, "rounds": 0, "over": False}
    with daemon_on(state, log) as daemon:
        if daemon.proc.poll() is not None:
            return {"filled_bytes": filled, "started": False, "exit": daemon.proc.returncode,
                    "rounds_played": 0, "rounds_in_history": 0, "rounds_lost": 0, "warned_while_full": 0,
                    "written_after_space_returns": False, "tracebacks": log.read_text(errors="replace")
                    .count("Traceback")}
        for body in ({"cmd": "new", "game": "dice", "options": {"rounds": 3}},
                     {"cmd": "bots", "count": BOTS, "level": LEVEL}, {"cmd": "start"}):
            daemon.ask(body)
        _play_until(daemon.ask, 1, seen)  # a round played on the full disk
        (state / "filler").unlink()
        deadline = time.monotonic() + 30
        recovered = False
        while time.monotonic() < deadline and not recovered:
            answer = daemon.ask({"cmd": "status"})
            recovered = answer.get("ok") is True and "storage" not in answer
            time.sleep(0.1)
        daemon.proc.send_signal(signal.SIGKILL)
        daemon.proc.wait()
    with daemon_on(state, log) as again:
        history = again.ask({"cmd": "history", "limit": 1})
        stored = len(history["matches"][0]["rounds"]) if history.get("ok") and history["matches"] else 0
    return {"filled_bytes": filled, "started": True, "rounds_played": seen["rounds"],
            "rounds_in_history": stored, "rounds_lost": max(0, seen["rounds"] - stored),
            "warned_while_full": seen["warned"], "written_after_space_returns": recovered,
            "tracebacks": log.read_text(errors="replace").count("Traceback")}


def _full_disk_run(state: Path, log: Path) -> dict[str, Any]:
    seen = {"asked": 0, "unanswered": 0, "warned": 0, "rounds": 0, "over": False}
    with daemon_on(state, log) as daemon:
        if daemon.proc.poll() is not None:
            return {"why": f"the daemon did not start: {log.read_text(errors='replace')[-300:]}"}
        for body in ({"cmd": "new", "game": "dice", "options": {"rounds": 2 + FULL_ROUNDS}},
                     {"cmd": "bots", "count": BOTS, "level": LEVEL}, {"cmd": "start"}):
            daemon.ask(body)
        _play_until(daemon.ask, 1, seen)  # round 1: stored before its result shows
        filled = fill(state)
        _play_until(daemon.ask, 1 + FULL_ROUNDS, seen)
        warned_while_full = seen["warned"]
        (state / "filler").unlink()
        deadline = time.monotonic() + 30
        recovered = False
        while time.monotonic() < deadline:
            answer = daemon.ask({"cmd": "status"})
            seen["asked"] += 1
            seen["unanswered"] += not answer.get("ok")
            if answer.get("ok") and "storage" not in answer:
                recovered = True
                break
            time.sleep(0.1)
        played = seen["rounds"]
        daemon.proc.send_signal(signal.SIGKILL)  # everything must be on disk by now
        daemon.proc.wait()
    with daemon_on(state, log) as again:
        history = again.ask({"cmd": "history", "limit": 1})
        stored = len(history["matches"][0]["rounds"]) if history.get("ok") and history["matches"] else 0
    tracebacks = log.read_text(errors="replace").count("Traceback")
    return {"tmpfs": TMPFS, "filled_bytes": filled, "rounds_played": played, "rounds_in_history": stored,
            "rounds_lost": max(0, played - stored), "status_asked": seen["asked"],
            "unanswered": seen["unanswered"], "warned_while_full": warned_while_full,
            "written_after_space_returns": recovered, "tracebacks": tracebacks}


def _stored_match(db: Path, rounds: int = 3) -> None:
    """A match of `rounds` rounds with one stored, as the table leaves it (over when 1)."""
    from ..engine.game import sight_of
    from ..play.simulate import make_bots
    from ..service.journal import Store
    from ..table.matches import new_match

    store = Store(db)
    match = new_match("dice", 2, 3, {"rounds": rounds})
    mid = store.begin_match(match, [0, 1])
    bots = make_bots(2, "hard", 1)
    now, turn = 0, 0
    while not match.results:
        seat = turn % 2
        turn += 1
        action = bots[seat].choose(sight_of(match.round, seat), now)
        now += 1_000_000
        if action is not None and match.apply(action) is None:
            store.record(mid, match.round_no, action)
            if match.round.result is not None:
                store.round_over(mid, match)
    store.close()


def _garbage_page(db: Path) -> None:
    with sqlite3.connect(db) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = raw.execute("PRAGMA page_size").fetchone()[0]
    with open(db, "r+b") as f:
        f.seek(size)
        f.write(b"\xde\xad\xbe\xef" * (size // 4))


def _sql(statement: str) -> Callable[[Path], None]:
    def damage(db: Path) -> None:
        with sqlite3.connect(db) as raw:
            raw.execute(statement)
    return damage


def _not_a_database(db: Path) -> None:
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    db.write_bytes(b"not a database\n" * 500)


def _a_directory(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    db.mkdir()
    (db / "notes.txt").write_text("someone's\n")


DAMAGE: dict[str, Callable[[Path], None]] = {
    "garbage page": _garbage_page,
    "renamed column": _sql("ALTER TABLE matches RENAME COLUMN seed TO sead"),
    "garbage scores row": _sql("UPDATE rounds SET scores = '{not json'"),
    "not a database": _not_a_database,
    "newer schema": _sql("PRAGMA user_version = 99"),
    "a directory named table.db": _a_directory,
    "no match id left": _sql("UPDATE matches SET id = 9223372036854775807"),
    "a trigger refusing rows": _sql("CREATE TRIGGER no BEFORE INSERT ON journal "
                                    "BEGIN SELECT RAISE(ABORT, 'refused'); END"),
}


def damaged_databases() -> dict[str, Any]:
    """Each damage in turn, the real daemon started on it (see the module's docstring)."""
    results: dict[str, str] = {}
    tracebacks = restart_loops = 0
    for kind, damage in DAMAGE.items():
        with tempfile.TemporaryDirectory(prefix="table-damaged-") as tmp:
            state = Path(tmp) / "state"
            state.mkdir()
            _stored_match(state / "table.db")
            damage(state / "table.db")
            log = Path(tmp) / "daemon.log"
            with daemon_on(state, log) as daemon:
                up = daemon.proc.poll() is None and daemon.answers()
                history = daemon.ask({"cmd": "history"}) if up else {}
                status = daemon.ask({"cmd": "status"}) if up else {}
            said = log.read_text(errors="replace")
            tracebacks += said.count("Traceback")
            if not up:
                restart_loops += 1
                results[kind] = f"did not start: {said.strip()[-160:]}"
            elif not history.get("ok"):
                results[kind] = f"history refused: {history.get('error')}"
            else:
                moved = [n for n in status.get("set_aside", []) if "moved aside" in n]
                results[kind] = "moved aside, new database" if moved else \
                    f"kept, {len(history['matches'])} match(es) in history"
    return {"kinds": len(DAMAGE), "outcomes": results, "tracebacks": tracebacks,
            "restart_loops": restart_loops}


def storage_faults() -> dict[str, Any]:
    figures = {"full_disk": full_disk(), "full_at_start": full_at_start(), "damaged": damaged_databases()}
    f, s, d = figures["full_disk"], figures["full_at_start"], figures["damaged"]
    met = d["tracebacks"] == 0 and d["restart_loops"] == 0 and \
        all(not o.startswith(("did not", "history refused")) for o in d["outcomes"].values())
    if f["ran"]:  # not run (no root): said, not counted
        met = met and f["rounds_lost"] == 0 and f["unanswered"] == 0 and f["warned_while_full"] > 0 \
            and f["written_after_space_returns"] and f["tracebacks"] == 0
    if s["ran"]:
        met = met and all(r["started"] and r["rounds_played"] > 0 and r["rounds_lost"] == 0
                          and r["warned_while_full"] > 0 and r["written_after_space_returns"]
                          and r["tracebacks"] == 0 for r in s["runs"].values())
    figures["meets_target"] = met
    return figures


def storage_text(figures: dict[str, Any]) -> list[str]:
    f, d = figures["full_disk"], figures["damaged"]
    if not f["ran"]:
        lines = [f"full disk: NOT RUN: {f['why']}"]
    else:
        lines = [f"full disk ({f['tmpfs']} tmpfs filled after round 1): {f['rounds_played']} rounds played, "
                 f"{f['rounds_in_history']} in history after SIGKILL and restart, rounds lost "
                 f"{f['rounds_lost']} (target 0); status answered {f['status_asked'] - f['unanswered']} of "
                 f"{f['status_asked']} (unanswered {f['unanswered']}, target 0), 'disk full' said "
                 f"{f['warned_while_full']} times while full; everything written after space returned: "
                 f"{'yes' if f['written_after_space_returns'] else 'NO'}; tracebacks {f['tracebacks']}"]
    s = figures["full_at_start"]
    if not s["ran"]:
        lines.append(f"full before the start: NOT RUN: {s['why']}")
    for kind, r in s["runs"].items() if s["ran"] else ():
        start = "started" if r["started"] else f"DID NOT START (exit {r.get('exit')})"
        lines.append(f"full before the start ({kind}): {start}, {r['rounds_played']} rounds played, "
                     f"{r['rounds_in_history']} in history after SIGKILL and restart, rounds lost "
                     f"{r['rounds_lost']} (target 0); 'disk full' said {r['warned_while_full']} times; "
                     f"written after space returned: {'yes' if r['written_after_space_returns'] else 'NO'}; "
                     f"tracebacks {r['tracebacks']}")
    lines.append(f"damaged database: {d['kinds']} kinds tried, tracebacks {d['tracebacks']} (target 0), "
                 f"restart loops {d['restart_loops']} (target 0)")
    lines += [f"  {kind}: {outcome}" for kind, outcome in d["outcomes"].items()]
    return lines
