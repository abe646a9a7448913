"""`table-host bench engine`: how fast the rules engine plays with instant bots.

Runs in this one process, pinned to one core where the OS allows, so the
figure is per core. Timing uses the process's CPU time as well as wall time,
since CI machines are shared.
"""

from __future__ import annotations

import os
import platform
import random
import time
from typing import Any

from .catalog import new_match
from .simulate import make_bots, play_round

ENGINE_TARGET_ROUNDS_PER_S = 1500


def _pin_one_core() -> int | None:
    try:
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return cpu
    except (AttributeError, OSError):
        return None


def bench_engine(rounds: int = 3000, game: str = "classic", players: int = 4,
                 repeats: int = 3) -> dict[str, Any]:
    """Play `rounds` rounds of `game` with instant bots, `repeats` times; the best run's
    rounds/s and actions/s (the least disturbed by other work on a shared machine)."""
    cpu = _pin_one_core()
    runs = [_time_rounds(rounds, game, players) for _ in range(max(1, repeats))]
    best = min(runs, key=lambda r: r[2])
    actions, wall, cpu_s = best
    per_s = rounds / cpu_s
    return {
        "game": game,
        "players": players,
        "rounds": rounds,
        "repeats": len(runs),
        "actions": actions,
        "actions_per_round": round(actions / rounds, 1),
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu_s, 3),
        "rounds_per_s": round(per_s, 1),
        "rounds_per_s_all_runs": [round(rounds / r[2], 1) for r in runs],
        "actions_per_s": round(actions / cpu_s, 1),
        "target_rounds_per_s": ENGINE_TARGET_ROUNDS_PER_S,
        "meets_target": per_s >= ENGINE_TARGET_ROUNDS_PER_S,
        "pinned_cpu": cpu,
        "python": platform.python_version(),
    }


def _time_rounds(rounds: int, game: str, players: int) -> tuple[int, float, float]:
    """(actions, wall seconds, CPU seconds) for `rounds` rounds, dealing included."""
    bots = make_bots(players, "instant", "bench")
    order = random.Random("bench")
    actions = 0
    # Warm up (imports, caches), then time whole matches, dealing included.
    play_round(new_match(game, players, "warm-up"), bots, order)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    played = 0
    while played < rounds:
        match = new_match(game, players, f"bench/{played}", {"rounds": min(1000, rounds - played)})
        while True:
            actions += play_round(match, bots, order).actions
            played += 1
            if match.is_over:
                break
            match.next_round()
    return actions, time.perf_counter() - wall0, time.process_time() - cpu0


def engine_text(f: dict[str, Any]) -> str:
    verdict = "meets" if f["meets_target"] else "MISSES"
    return (
        f"engine: {f['players']}-player {f['game']} with instant bots, {f['rounds']} rounds "
        f"on one core (cpu {f['pinned_cpu']}), Python {f['python']}\n"
        f"  {f['rounds_per_s']:.0f} rounds/s, {f['actions_per_s']:.0f} actions/s "
        f"({f['actions_per_round']} actions a round, {f['cpu_s']} s CPU, best of "
        f"{f['repeats']}: {', '.join(str(round(x)) for x in f['rounds_per_s_all_runs'])})\n"
        f"  target >= {f['target_rounds_per_s']} rounds/s: {verdict}"
    )
