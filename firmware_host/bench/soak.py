"""`table-host bench soak`: does the daemon's memory settle while bot matches go on and on?

The real daemon (`table-host run --emulate --ui none`, a process of its own, emulated hardware)
is driven over its control socket exactly as `tablectl` drives it: `new`, `bots`, `start`, `next`
after each round, the four games in turn (classic, dice, domino, crazy), four hard bots, every
bot press going through the mock pins, the arbiter, the store and the screens. Its resident
memory (VmRSS, /proc/PID/status) is sampled every couple of seconds.

Warm-up: the run opens with one one-round match of each game, so that every game's code,
tables and fonts are loaded early (they stay, and are not growth), then plays one whole match
of each game: memory rises until the allocator holds the largest match's journal and state, and
a whole match is what a table plays. Measuring starts when both are done, but not before 20 %
of the run (nor after half of it: a short run measures what it can, and says its warm-up was
cut short). Growth is the least-squares slope of RSS over the samples after the warm-up, in MB
an hour; the target is < 1 MB an hour, so that a table left on for a season of play stays well
inside its budget. Short runs are smoke tests: RSS moves in pages and arenas, and a slope
over a minute says little.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..rules.options import GAMES
from ..system.memory import rss_mb, threads

TARGET_MB_PER_HOUR = 1.0
SAMPLE_S = 2.0
POLL_S = 0.3
BOTS = 4
LEVEL = "hard"
WARM_SHARE = (0.2, 0.5)  # the warm-up ends inside this share of the run
JUDGED_MINUTES = 30  # the warm-up takes about 11 minutes here, and must end within half the run

Ask = Callable[[dict[str, Any]], dict[str, Any]]


class Driver:
    """Plays bot matches through control requests, one game after another, as `tablectl` would."""

    def __init__(self, ask: Ask) -> None:
        self.ask = ask
        self.played = dict.fromkeys(GAMES, 0)
        self.warm_cycle = list(GAMES)  # one short match of each game first
        self.whole_to_play = set(GAMES)  # then one whole match of each
        self.game: str | None = None
        self.short = False
        self.next_game = 0
        self.refusals: list[str] = []

    def _do(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = self.ask(body)
        if not answer.get("ok"):
            self.refusals.append(f"{body['cmd']}: {answer.get('error')}")
            del self.refusals[:-20]
        return answer

    def _begin(self) -> None:
        self.short = bool(self.warm_cycle)
        if self.short:
            game, options = self.warm_cycle[0], {"rounds": 1}
        else:
            game, options = GAMES[self.next_game % len(GAMES)], {}
            self.next_game += 1
        self._do({"cmd": "new", "game": game, "options": options})
        self._do({"cmd": "bots", "count": BOTS, "level": LEVEL})
        if self._do({"cmd": "start"}).get("ok"):
            self.game = game

    @property
    def warm(self) -> bool:
        """The short cycle played, and a whole match of each game."""
        return not self.warm_cycle and not self.whole_to_play

    def step(self) -> None:
        """One look at the table, and what a person at tablectl would do next."""
        phase = self._do({"cmd": "status"}).get("phase")
        if phase == "round_result":
            self._do({"cmd": "next"})
        elif phase in ("countdown", "playing"):
            return
        else:  # attract, lobby, match_result: the match is over (or never began)
            if self.game is not None and phase == "match_result":
                self.played[self.game] += 1
                if self.short:  # the short cycle's first game: _begin chose it
                    self.warm_cycle.pop(0)
                else:
                    self.whole_to_play.discard(self.game)
            self.game = None
            self._begin()

    def stop(self) -> None:
        if self.game is not None:
            self._do({"cmd": "abort"})


def slope_per_hour(samples: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, MB) samples, in MB an hour."""
    if len(samples) < 2:
        return None
    n = len(samples)
    mt = sum(t for t, _ in samples) / n
    mm = sum(m for _, m in samples) / n
    var = sum((t - mt) ** 2 for t, _ in samples)
    if var == 0:
        return None
    return sum((t - mt) * (m - mm) for t, m in samples) / var * 3600


def soak(seconds: float, ask: Ask, rss: Callable[[], float],
         on_warm: Callable[[], None] | None = None) -> dict[str, Any]:
    """Drive the table for `seconds`; RSS figures and matches played. `on_warm` is called once
    when the warm-up ends (a tracemalloc snapshot, in a diagnosis)."""
    driver = Driver(ask)
    start = time.monotonic()
    end = start + seconds
    samples: list[tuple[float, float]] = [(0.0, rss())]
    warm_at: float | None = None
    warmed = False
    next_sample = start + SAMPLE_S
    try:
        while (now := time.monotonic()) < end:
            driver.step()
            if now >= next_sample:
                samples.append((now - start, rss()))
                next_sample += SAMPLE_S
            elapsed = now - start
            if warm_at is None and elapsed >= WARM_SHARE[0] * seconds and (
                    driver.warm or elapsed >= WARM_SHARE[1] * seconds):
                warm_at = elapsed
                warmed = driver.warm  # or cut short at half the run
                samples.append((elapsed, rss()))
                if on_warm is not None:
                    on_warm()
            time.sleep(POLL_S)
    finally:
        driver.stop()
    samples.append((time.monotonic() - start, rss()))
    warm_at = samples[-1][0] if warm_at is None else warm_at
    after = [s for s in samples if s[0] >= warm_at]
    warm_rss = after[0][1]
    growth = slope_per_hour(after)
    span_h = (after[-1][0] - after[0][0]) / 3600
    return {
        "minutes": round(seconds / 60, 2),
        "rss_start_mb": round(samples[0][1], 2),
        "rss_warm_mb": round(warm_rss, 2),
        "rss_end_mb": round(samples[-1][1], 2),
        "rss_peak_mb": round(max(m for _, m in samples), 2),
        "warm_up_s": round(warm_at, 1),
        "warm_up_done": warmed,  # when measuring began
        "growth_mb_per_hour": None if growth is None else round(growth, 3),
        "end_minus_warm_mb_per_hour": round((samples[-1][1] - warm_rss) / span_h, 3) if span_h else None,
        "samples": len(samples),
        "matches": driver.played,
        "refusals": driver.refusals[-5:],
        "target_mb_per_hour": TARGET_MB_PER_HOUR,
        # Judged only after a whole warm-up: before it, memory is still meant to rise.
        "meets_target": warmed and growth is not None and growth < TARGET_MB_PER_HOUR,
    }


@dataclass
class EmulatedDaemon:
    """The real daemon in a process of its own, and what a client needs to reach it."""

    proc: subprocess.Popen[bytes]
    socket: Path
    env: dict[str, str]  # its environment: `tablectl` run with it finds its socket

    def ask(self, body: dict[str, Any]) -> dict[str, Any]:
        """What `tablectl` asks; not running is an answer too."""
        from ..control.client import NotRunning, ask

        try:
            return ask(body, self.socket)
        except NotRunning as exc:
            return {"ok": False, "error": str(exc)}

    def answers(self) -> bool:
        """Alive and answering `status`."""
        return self.proc.poll() is None and self.ask({"cmd": "status"}).get("ok") is True


@contextlib.contextmanager
def emulated_daemon(log: Path | None = None, start_s: float = 30.0) -> Iterator[EmulatedDaemon]:
    """The real daemon (emulated, headless, its own state and socket, no configuration file), up
    and answering; stopped at the end. `log`: where its output goes (its tail names a failed start)."""
    root = str(Path(__file__).resolve().parents[2])
    with tempfile.TemporaryDirectory(prefix="table-daemon-") as tmp:
        socket = Path(tmp) / "run" / "control.sock"
        env = {**os.environ, "RUNTIME_DIRECTORY": f"{tmp}/run", "STATE_DIRECTORY": f"{tmp}/state",
               "CONFIGURATION_DIRECTORY": f"{tmp}/etc", "TABLE_HOST_SOCKET": str(socket)}
        for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "INVOCATION_ID", "JOURNAL_STREAM"):
            env.pop(name, None)
        with open(log or os.devnull, "ab") as out:
            command = [sys.executable, "-m", "firmware_host", "run", "--emulate", "--ui", "none"]
            proc = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT)
        daemon = EmulatedDaemon(proc, socket, env)
        try:
            deadline = time.monotonic() + start_s
            while not daemon.answers():
                if proc.poll() is not None or time.monotonic() > deadline:
                    said = log.read_text(errors="replace")[-400:] if log else ""
                    raise RuntimeError(f"the daemon did not come up (exit status {proc.poll()}) {said}")
                time.sleep(0.2)
            yield daemon
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def bench_soak(minutes: float) -> dict[str, Any]:
    with emulated_daemon() as daemon:
        allocator = daemon.ask({"cmd": "status"}).get("memory", {}).get("allocator")
        start = threads(daemon.proc.pid)  # a thread that comes later brings its stack
        warm: list[int] = []
        figures = soak(minutes * 60, daemon.ask, lambda: rss_mb(daemon.proc.pid),
                       lambda: warm.append(threads(daemon.proc.pid)))
        end = threads(daemon.proc.pid)
        figures["daemon_alive"] = daemon.proc.poll() is None
        figures["allocator"] = allocator
        figures["threads"] = {"start": start, "warm": warm[0] if warm else end, "end": end}
    figures["meets_target"] = figures["meets_target"] and figures["daemon_alive"]
    return figures


def soak_text(f: dict[str, Any]) -> str:
    growth = "not measured" if f["growth_mb_per_hour"] is None else f"{f['growth_mb_per_hour']:+.2f} MB/h"
    matches = ", ".join(f"{game} {n}" for game, n in f["matches"].items())
    lines = [
        f"soak: the real daemon (emulated, headless, allocator {f.get('allocator')}), {BOTS} {LEVEL} bots, "
        f"the four games in turn, {f['minutes']:g} min",
        f"  RSS: start {f['rss_start_mb']:.1f} MB, after warm-up ({f['warm_up_s']:g} s"
        f"{'' if f['warm_up_done'] else ', cut short: not every game played whole yet'}) "
        f"{f['rss_warm_mb']:.1f} MB, end {f['rss_end_mb']:.1f} MB, peak {f['rss_peak_mb']:.1f} MB",
        f"  growth after warm-up: {growth} (slope of {f['samples']} samples; end minus warm-up: "
        f"{f['end_minus_warm_mb_per_hour']} MB/h)",
        f"  matches played: {matches}",
    ]
    if "threads" in f:
        t = f["threads"]
        lines.append(f"  the daemon's threads: start {t['start']}, after warm-up {t['warm']}, end {t['end']}")
    lines += [f"  refused: {r}" for r in f["refusals"]]
    if not f.get("daemon_alive", True):
        lines.append("  the daemon DIED during the soak")
    target = f"  target: growth after warm-up < {f['target_mb_per_hour']:g} MB/h: "
    if f["warm_up_done"]:
        lines.append(target + ("PASS" if f["meets_target"] else "FAIL"))
    else:
        lines.append(target + f"NOT JUDGED: the warm-up (a whole match of each game) did not end within "
                     f"half of {f['minutes']:g} min (runs of {JUDGED_MINUTES} min or more leave it room)")
    return "\n".join(lines)
