"""`table-host bench soak`: does the daemon's memory settle while bot matches go on and on?

The real daemon (`table-host run --emulate --ui none`, a process of its own, emulated hardware)
is driven over its control socket exactly as `tablectl` drives it: `new`, `bots`, `start`, `next`
after each round, the four games in turn (classic, dice, domino, crazy), four hard bots, every
bot press going through the mock pins, the arbiter, the store and the screens. Its resident
memory is sampled every couple of seconds from /proc/PID/status, in its parts (proc(5)):
RssAnon (heap and stacks: what a leak grows), RssFile (pages of files mapped: the interpreter's
and libraries' code, fonts; shared with other processes, and the kernel's to drop and read again
when memory is short, so it rises as code is first used and falls under pressure, and is not
the table's to hold down) and RssShmem (shared memory; the table uses none).

The run opens with one one-round match of each game, so that every game's code, tables and
fonts are loaded early, then plays whole matches of each game in turn. The warm-up is a fixed
time (`--warm-up`, 15 minutes at most and by default): the growth judged is what comes after it,
the least-squares slope of each part over the samples taken since, in MB an hour. The target:
RssAnon and RssShmem grow less than 1 MB an hour, so that a table left on for a season of play
stays well inside its budget. It is judged only when the whole warm-up and at least 15 minutes
after it were measured; a shorter run is a smoke test (its warm-up cut at half the run): memory
moves in pages and arenas, and a slope over a minute says little.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..engine.options import GAMES
from ..system.memory import RSS_PARTS, TRACE, rss_parts_mb, snapshot_growth, snapshots, threads
from .harness import emulated_daemon

TARGET_MB_PER_HOUR = 1.0
SAMPLE_S = 2.0
POLL_S = 0.3
BOTS = 4
LEVEL = "hard"
WARM_UP_MINUTES = 15.0  # the longest warm-up the target allows, and the default
MEASURED_MINUTES = 15.0  # at least this long measured after the warm-up, or no verdict
JUDGED = ("RssAnon", "RssShmem")  # RssFile is the kernel's to keep or drop (module docstring)

Sample = tuple[float, dict[str, float]]
"""Seconds into the run, and MB of each of RSS_PARTS."""
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


def measured(samples: list[Sample], warm_at: float) -> list[Sample]:
    """The samples taken once the warm-up was over."""
    return [sample for sample in samples if sample[0] >= warm_at]


def part_figures(samples: list[Sample], warm_at: float, part: str) -> dict[str, Any]:
    """One part of RSS over the run: where it stood, and its growth after the warm-up."""
    every = [(t, parts[part]) for t, parts in samples]
    after = [(t, parts[part]) for t, parts in measured(samples, warm_at)]
    growth = slope_per_hour(after)
    span_h = (after[-1][0] - after[0][0]) / 3600
    return {
        "start_mb": round(every[0][1], 2),
        "warm_mb": round(after[0][1], 2),
        "end_mb": round(every[-1][1], 2),
        "peak_mb": round(max(m for _, m in every), 2),
        "growth_mb_per_hour": None if growth is None else round(growth, 3),
        "end_minus_warm_mb_per_hour": round((after[-1][1] - after[0][1]) / span_h, 3) if span_h else None,
    }


def soak(seconds: float, ask: Ask, sample: Callable[[], dict[str, float]],
         warm_up_s: float = WARM_UP_MINUTES * 60,
         on_warm: Callable[[], None] | None = None) -> dict[str, Any]:
    """Drive the table for `seconds`, sampling RSS's parts (`sample`: MB of each of RSS_PARTS,
    empty once the daemon is gone); the figures, matches played and the verdict. `on_warm` is
    called once when the warm-up ends (a thread count, a tracemalloc snapshot in a diagnosis)."""
    driver = Driver(ask)
    warm_at = min(warm_up_s, seconds / 2)  # a run too short for the whole warm-up: a smoke test
    warm_up_done = warm_at == warm_up_s
    judged = warm_up_done and seconds - warm_at >= MEASURED_MINUTES * 60
    start = time.monotonic()
    end = start + seconds
    samples: list[Sample] = []

    def take(at: float) -> None:
        parts = sample()
        if parts:
            samples.append((at, parts))

    take(0.0)
    whole_by_warm: bool | None = None
    next_sample = start + SAMPLE_S
    try:
        while (now := time.monotonic()) < end:
            driver.step()
            if now >= next_sample:
                take(now - start)
                next_sample += SAMPLE_S
            if whole_by_warm is None and now - start >= warm_at:
                whole_by_warm = driver.warm
                take(now - start)
                if on_warm is not None:
                    on_warm()
            time.sleep(POLL_S)
    finally:
        driver.stop()
    take(time.monotonic() - start)
    if not samples:  # gone before the first look: nothing grew, and `daemon_alive` says why
        samples.append((0.0, dict.fromkeys(RSS_PARTS, 0.0)))
    warm_at = min(warm_at, samples[-1][0])
    rss = {part: part_figures(samples, warm_at, part) for part in RSS_PARTS}
    return {
        "minutes": round(seconds / 60, 2),
        "warm_up_minutes": round(warm_up_s / 60, 2),
        "warm_up_s": round(warm_at, 1),
        "warm_up_done": warm_up_done,  # the whole warm-up, before measuring began
        "games_whole_by_warm_up": bool(whole_by_warm),  # a whole match of each game played by then
        "measured_s": round(samples[-1][0] - warm_at, 1),
        "rss": rss,  # VmRSS and its parts: /proc/PID/status, MB
        "judged_parts": list(JUDGED),
        "samples": len(samples),
        "matches": driver.played,
        "refusals": driver.refusals[-5:],
        "target_mb_per_hour": TARGET_MB_PER_HOUR,
        "judged": judged,
        # Judged only after a whole warm-up and a long enough measure.
        "meets_target": judged and all(
            rss[part]["growth_mb_per_hour"] is not None
            and rss[part]["growth_mb_per_hour"] < TARGET_MB_PER_HOUR for part in JUDGED),
    }


def bench_soak(minutes: float, warm_up_minutes: float = WARM_UP_MINUTES) -> dict[str, Any]:
    with emulated_daemon() as daemon:
        allocator = daemon.ask({"cmd": "status"}).get("memory", {}).get("allocator")
        start = threads(daemon.proc.pid)  # a thread that comes later brings its stack
        warm: list[int] = []
        figures = soak(minutes * 60, daemon.ask, lambda: rss_parts_mb(daemon.proc.pid),
                       warm_up_minutes * 60, lambda: warm.append(threads(daemon.proc.pid)))
        end = threads(daemon.proc.pid)
        figures["daemon_alive"] = daemon.proc.poll() is None
        figures["allocator"] = allocator
        figures["threads"] = {"start": start, "warm": warm[0] if warm else end, "end": end}
    figures["meets_target"] = figures["meets_target"] and figures["daemon_alive"]
    if os.environ.get(TRACE):  # a diagnosis: what grew in the daemon after the warm-up
        taken = snapshots(Path(os.environ[TRACE]))
        after = [path for at, path in taken if at >= figures["warm_up_s"]]
        if len(after) >= 2:
            figures["tracemalloc"] = snapshot_growth(after[0], after[-1])
    return figures


PART_NOTES = {"VmRSS": "all of it", "RssAnon": "heap, stacks", "RssFile": "code, fonts: not judged",
              "RssShmem": "shared memory"}


def soak_text(f: dict[str, Any]) -> str:
    matches = ", ".join(f"{game} {n}" for game, n in f["matches"].items())
    warm = (f"warm-up {f['warm_up_s'] / 60:g} min (a whole match of each game by then: "
            f"{'yes' if f['games_whole_by_warm_up'] else 'no'})")
    if not f["warm_up_done"]:
        warm += f", cut short: the run is too short for its {f['warm_up_minutes']:g} min"
    lines = [
        f"soak: the real daemon (emulated, headless, allocator {f.get('allocator')}), {BOTS} {LEVEL} bots, "
        f"the four games in turn, {f['minutes']:g} min",
        f"  {warm}, then {f['measured_s'] / 60:.1f} min measured ({f['samples']} samples in all)",
        f"  RSS, MB     {'start':>7} {'warm':>7} {'end':>7} {'peak':>7}   "
        "growth after warm-up (end minus warm)",
    ]
    for part in RSS_PARTS:
        r = f["rss"][part]
        growth = "not measured" if r["growth_mb_per_hour"] is None else f"{r['growth_mb_per_hour']:+.2f} MB/h"
        lines.append(f"  {part:<10} {r['start_mb']:7.1f} {r['warm_mb']:7.1f} {r['end_mb']:7.1f} "
                     f"{r['peak_mb']:7.1f}   {growth} "
                     f"({r['end_minus_warm_mb_per_hour']}; {PART_NOTES[part]})")
    lines.append(f"  matches played: {matches}")
    if "threads" in f:
        t = f["threads"]
        lines.append(f"  the daemon's threads: start {t['start']}, after warm-up {t['warm']}, end {t['end']}")
    lines += [f"  refused: {r}" for r in f["refusals"]]
    lines += [f"  tracemalloc, after the warm-up: {line}" for line in f.get("tracemalloc", [])]
    if not f.get("daemon_alive", True):
        lines.append("  the daemon DIED during the soak")
    target = (f"  target: {' and '.join(f['judged_parts'])} growth after warm-up "
              f"< {f['target_mb_per_hour']:g} MB/h: ")
    if f["judged"]:
        lines.append(target + ("PASS" if f["meets_target"] else "FAIL"))
    else:
        lines.append(target + f"NOT JUDGED: that takes a run of {f['warm_up_minutes'] + MEASURED_MINUTES:g} "
                     f"min or more (the warm-up, then {MEASURED_MINUTES:g} min measured)")
    return "\n".join(lines)
