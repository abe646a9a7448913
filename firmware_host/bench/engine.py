"""`table-host bench engine`: how fast the rules engine referees Ligretto.

Two figures, both on one core (the process pins itself where the OS allows),
CPU time, best of 3 runs since the machines are shared:

- engine: the rules engine alone. Instant bots play the rounds first; then the
  timed part replays exactly their accepted actions through `Match.replay`,
  dealing and shuffling included. This is the work the table does per round,
  and the path it takes to recover a round after a power cut.
- with bots: the same rounds played live, the bots' own decisions included
  (what `table-host simulate` does).

The target (>= 1,500 rounds/s) is compared with the engine figure.
"""

from __future__ import annotations

import contextlib
import os
import platform
import random
import time
from collections.abc import Iterator
from typing import Any

from ..game.catalog import new_match, resources_for
from ..play.simulate import make_bots, play_round
from ..rules.match import Match

ENGINE_TARGET_ROUNDS_PER_S = 1500
_MATCH_ROUNDS = 500


@contextlib.contextmanager
def _one_core() -> Iterator[int | None]:
    """Run on one core (the figure is per core), then give the process its cores back."""
    try:
        before = os.sched_getaffinity(0)
        cpu = min(before)
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError):
        yield None
        return
    try:
        yield cpu
    finally:
        os.sched_setaffinity(0, before)


def _play(rounds: int, game: str, players: int) -> tuple[list[Match], int, float]:
    """Play `rounds` rounds with instant bots: the matches, their actions, CPU seconds."""
    bots = make_bots(players, "instant", "bench")
    order = random.Random("bench")
    matches: list[Match] = []
    actions = 0
    started = time.process_time()
    played = 0
    while played < rounds:
        match = new_match(game, players, f"bench/{played}", {"rounds": min(_MATCH_ROUNDS, rounds - played)})
        matches.append(match)
        while True:
            actions += play_round(match, bots, order).actions
            played += 1
            if match.is_over:
                break
            match.next_round()
    return matches, actions, time.process_time() - started


def _replay(matches: list[Match]) -> float:
    """CPU seconds to rebuild every match from its journal."""
    work = [(m, m.journal, resources_for(m.game, m.players, m.options)) for m in matches]
    started = time.process_time()
    for m, journal, res in work:
        again = Match.replay(m.game, m.players, m.seed, m.options, journal, res)
        assert again.results == m.results  # the replay is the game that was played
    return time.process_time() - started


def bench_engine(rounds: int = 3000, game: str = "classic", players: int = 4,
                 repeats: int = 3) -> dict[str, Any]:
    live, replayed = [], []
    actions = 0
    with _one_core() as cpu:
        _play(5, game, players)  # warm up: imports, caches
        for _ in range(max(1, repeats)):
            matches, actions, cpu_live = _play(rounds, game, players)
            live.append(cpu_live)
            replayed.append(_replay(matches))
    best_engine, best_live = min(replayed), min(live)
    per_s = rounds / best_engine
    return {
        "game": game,
        "players": players,
        "rounds": rounds,
        "repeats": len(live),
        "actions": actions,
        "actions_per_round": round(actions / rounds, 1),
        "rounds_per_s": round(per_s, 1),
        "actions_per_s": round(actions / best_engine, 1),
        "rounds_per_s_all_runs": [round(rounds / s, 1) for s in replayed],
        "with_bots_rounds_per_s": round(rounds / best_live, 1),
        "with_bots_actions_per_s": round(actions / best_live, 1),
        "with_bots_rounds_per_s_all_runs": [round(rounds / s, 1) for s in live],
        "target_rounds_per_s": ENGINE_TARGET_ROUNDS_PER_S,
        "meets_target": per_s >= ENGINE_TARGET_ROUNDS_PER_S,
        "pinned_cpu": cpu,
        "python": platform.python_version(),
    }


def engine_text(f: dict[str, Any]) -> str:
    verdict = "meets" if f["meets_target"] else "MISSES"

    def runs(key: str) -> str:
        return ", ".join(str(round(x)) for x in f[key])

    return (
        f"engine: {f['players']}-player {f['game']}, {f['rounds']} rounds of instant bots, "
        f"one core (cpu {f['pinned_cpu']}), Python {f['python']}, best of {f['repeats']}\n"
        f"  rules engine:   {f['rounds_per_s']:.0f} rounds/s, {f['actions_per_s']:.0f} actions/s "
        f"({f['actions_per_round']} actions a round; runs: {runs('rounds_per_s_all_runs')})\n"
        f"  with the bots:  {f['with_bots_rounds_per_s']:.0f} rounds/s, "
        f"{f['with_bots_actions_per_s']:.0f} actions/s (runs: {runs('with_bots_rounds_per_s_all_runs')})\n"
        f"  target: rules engine >= {f['target_rounds_per_s']} rounds/s: {verdict}"
    )
