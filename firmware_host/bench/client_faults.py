"""`table-host bench faults`, the clients' part: what misbehaving local users and a stop during
start-up do to the table, against the real daemon (`table-host run --emulate`).

- Slowloris: PEERS connections of a read-only user (nobody: a process forked and switched to
  uid 65534, which needs root; without, the run says so and is not counted), each trickling one
  byte every 2 s and connecting again whenever the daemon closes or refuses it.
- Unread pipeline: PEERS connections of the same user, each sending hundreds of `status`
  requests and reading none, then leaving and coming back.
- Throughout each attack and for 3 s after it, root (an admin peer) asks `status` every 0.2 s
  on a connection of its own, as `tablectl status` does: every one must be answered within 1 s.
- SIGTERM at random moments of start-up, from the first instant of the process to just after it
  answers: it must be gone within 5 s, by an orderly stop (exit 0), or killed by the signal
  when it had not taken it yet (/proc: neither blocked nor caught; only the interpreter's own
  start comes before `table-host run` blocks it, and systemd counts a SIGTERM death as a clean
  stop). Still running after 5 s is lost; killed although it had taken the signal, or any other
  end, failed: targets 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..system.children import die_with_parent, ending_with_me
from ..system.signals import taken
from .harness import DAEMON, ROOT, daemon_env, emulated_daemon

PEERS = 16  # attacking connections at once (the daemon lets one user have 4)
ATTACK_S = 10.0
AFTER_S = 3.0  # probing goes on this long after the attackers have left
PROBE_EVERY_S = 0.2
PROBE_LIMIT_S = 1.0  # an admin's status must be answered within this
TRICKLE_S = 2.0
PIPELINED = 500  # requests one unread-pipeline connection sends
NOBODY = 65534
STOP_S = 5.0  # a SIGTERM must end the daemon within this
STARTS = 40


def _slowloris(path: str, end: float, counts: dict[str, int]) -> None:
    """One connection at a time, a byte every TRICKLE_S, again as soon as it is closed."""
    request = b'{"cmd": "status"}\n'
    while time.monotonic() < end:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            try:
                conn.connect(path)
                counts["connections"] += 1
                for i in range(len(request) - 1):  # never the newline: the request never ends
                    conn.sendall(request[i:i + 1])
                    readable = _closed_within(conn, min(TRICKLE_S, end - time.monotonic()))
                    if readable or time.monotonic() >= end:
                        break
            except OSError:
                counts["errors"] += 1
        time.sleep(0.05)


def _closed_within(conn: socket.socket, seconds: float) -> bool:
    """Wait up to `seconds`; True once the daemon has said something or closed."""
    conn.settimeout(max(seconds, 0.001))
    try:
        conn.recv(4096)  # an error line, or b"": either way it is over
    except TimeoutError:
        return False
    return True


def _unread_pipeline(path: str, end: float, counts: dict[str, int]) -> None:
    """Many requests on one connection and no answer read; leave after a second, come back."""
    burst = b'{"cmd": "status"}\n' * PIPELINED
    while time.monotonic() < end:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(1.0)
            try:
                conn.connect(path)
                counts["connections"] += 1
                conn.sendall(burst)
                counts["requests"] += PIPELINED
                time.sleep(1.0)
            except OSError:  # the daemon closed it, or would not take more: as it should
                counts["errors"] += 1
        time.sleep(0.05)


ATTACKS: dict[str, Callable[[str, float, dict[str, int]], None]] = {
    "slowloris": _slowloris, "unread pipeline": _unread_pipeline}


def _attack_as_nobody(kind: str, path: Path, seconds: float) -> tuple[int, int]:
    """Fork; the child becomes nobody (no groups) and attacks with PEERS threads for `seconds`,
    then writes what it did to a pipe. Returns the child's pid and the pipe's read end."""
    read, write = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: nothing of the parent's is used but this module's functions
        try:
            os.close(read)
            os.setgroups([])
            os.setresgid(NOBODY, NOBODY, NOBODY)
            os.setresuid(NOBODY, NOBODY, NOBODY)
            die_with_parent(signal.SIGKILL, parent)  # after the change of user, which clears it
            counts = {"connections": 0, "requests": 0, "errors": 0}
            end = time.monotonic() + seconds
            threads = [threading.Thread(target=ATTACKS[kind], args=(str(path), end, counts))
                       for _ in range(PEERS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            os.write(write, json.dumps(counts).encode())
        finally:
            os._exit(0)
    os.close(write)
    return pid, read


def _probe(ask: Callable[[], dict[str, Any]], until: Callable[[], bool]) -> list[float | None]:
    """`status` as an admin every PROBE_EVERY_S until `until()`: each one's latency, None for no answer."""
    latencies: list[float | None] = []
    while not until():
        start = time.monotonic()
        answer = ask()
        took = time.monotonic() - start
        latencies.append(took if answer.get("ok") is True else None)
        time.sleep(max(0.0, PROBE_EVERY_S - took))
    return latencies


def client_attacks(seconds: float = ATTACK_S) -> dict[str, Any]:
    """Each attack against a fresh daemon, with the admin's probes throughout and after."""
    if os.geteuid() != 0:
        return {"ran": False, "why": "a read-only peer needs another uid: run as root"}
    from ..control.client import ask

    figures: dict[str, Any] = {"ran": True, "peers": PEERS, "seconds": seconds}
    for kind in ATTACKS:
        with tempfile.TemporaryDirectory() as tmp, emulated_daemon(Path(tmp) / "daemon.log") as daemon:
            for where in (daemon.socket.parent.parent, daemon.socket.parent):  # anyone may reach it:
                where.chmod(0o755)                                                # the daemon decides
            daemon.socket.chmod(0o666)
            pid, pipe = _attack_as_nobody(kind, daemon.socket, seconds)
            ended: list[float] = []

            def attack_over(pid: int = pid, ended: list[float] = ended) -> bool:
                if not ended and os.waitpid(pid, os.WNOHANG)[0] == pid:
                    ended.append(time.monotonic())
                return bool(ended) and time.monotonic() - ended[0] >= AFTER_S

            latencies = _probe(lambda d=daemon: ask({"cmd": "status"}, d.socket, timeout=10.0), attack_over)
            with os.fdopen(pipe) as f:
                counts = json.loads(f.read() or "{}")
            alive = daemon.answers()
        answered = [t for t in latencies if t is not None and t <= PROBE_LIMIT_S]
        figures[kind] = {"probes": len(latencies), "answered": len(answered),
                         "missed": len(latencies) - len(answered),
                         "worst_s": round(max((t for t in latencies if t is not None), default=0.0), 3),
                         "unanswered": sum(t is None for t in latencies), "attacker": counts,
                         "alive_after": alive}
    figures["meets_target"] = all(figures[k]["missed"] == 0 and figures[k]["alive_after"] for k in ATTACKS)
    return figures


def sigterm_at_start(runs: int = STARTS, seed: int | str = 13) -> dict[str, Any]:
    """Start the daemon `runs` times and SIGTERM each at a random moment between its first instant
    and a little after it first answers; count how each ended."""
    from ..control.client import NotRunning, ask

    rng = random.Random(seed)
    outcomes = {"stopped": 0, "killed_by_signal": 0, "lost": 0, "failed": 0}
    examples: list[str] = []
    ready_s = 0.0  # the slowest start seen so far: moments are drawn up to a little past it
    for run in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            env = daemon_env(tmp)
            log = Path(tmp) / "daemon.log"
            with open(log, "wb") as out:
                proc = subprocess.Popen(DAEMON, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=subprocess.STDOUT, preexec_fn=ending_with_me(signal.SIGTERM))
            started = time.monotonic()
            if run == 0:  # the first start is timed to its first answer, then stopped like the rest
                while proc.poll() is None and time.monotonic() - started < 30:
                    with contextlib.suppress(NotRunning):
                        if ask({"cmd": "status"}, Path(env["TABLE_HOST_SOCKET"]), timeout=2.0).get("ok"):
                            break
                    time.sleep(0.02)
                ready_s = time.monotonic() - started
                at = ready_s
            else:
                at = rng.uniform(0.0, ready_s * 1.2)
                time.sleep(max(0.0, at - (time.monotonic() - started)))
            held = taken(proc.pid, signal.SIGTERM)
            proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                code = None
            said = log.read_text(errors="replace")
        if code is None:
            outcomes["lost"] += 1
            examples.append(f"SIGTERM at {at:.3f} s: still running {STOP_S:g} s later")
        elif "Traceback" in said or code not in (0, -signal.SIGTERM) or (code and held):
            outcomes["failed"] += 1
            examples.append(f"SIGTERM at {at:.3f} s: exit {code}: {said.strip()[-160:]}")
        elif code == 0:
            outcomes["stopped"] += 1
        else:
            outcomes["killed_by_signal"] += 1
    return {"runs": runs, "window_s": round(ready_s * 1.2, 2), **outcomes, "examples": examples[:5],
            "meets_target": outcomes["lost"] == 0 and outcomes["failed"] == 0}


def client_faults(seconds: float = ATTACK_S, starts: int = STARTS) -> dict[str, Any]:
    attacks = client_attacks(seconds)
    starting = sigterm_at_start(starts)
    met = starting["meets_target"] and (attacks["meets_target"] if attacks["ran"] else True)
    return {"attacks": attacks, "sigterm": starting, "meets_target": met}


def client_text(figures: dict[str, Any]) -> list[str]:
    a, s = figures["attacks"], figures["sigterm"]
    if not a["ran"]:
        lines = [f"slowloris and unread pipeline: NOT RUN: {a['why']}"]
    else:
        lines = []
        for kind in ATTACKS:
            k, c = a[kind], a[kind]["attacker"]
            lines.append(
                f"{kind} ({a['peers']} read-only peers, {a['seconds']:g} s, {c.get('connections', 0)} "
                f"connections made): admin status every {PROBE_EVERY_S:g} s, {k['answered']} of "
                f"{k['probes']} answered within {PROBE_LIMIT_S:g} s, missed {k['missed']} (target 0), "
                f"worst {k['worst_s']} s; answering afterwards {'yes' if k['alive_after'] else 'NO'}")
    lines.append(f"SIGTERM at random moments of start-up (0 to {s['window_s']} s): {s['runs']} runs, stopped "
                 f"in order {s['stopped']}, killed by the signal before it took it "
                 f"{s['killed_by_signal']}, lost {s['lost']} (target 0), failed {s['failed']} "
                 "(target 0)")
    lines += [f"  {line}" for line in s["examples"]]
    return lines
