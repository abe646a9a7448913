"""`table-host bench engine`: how fast the rules engine referees each game.

Two figures per game (4 seats each), both on one core (the process pins itself
where the OS allows), CPU time, best of 3 runs since the machines are shared:

- engine: the rules engine alone. Instant bots play the rounds first; then the
  timed part replays exactly their accepted actions through `Match.replay`,
  dealing and shuffling included. This is the work the table does per round,
  and the path it takes to recover a round after a power cut.
- with bots: the same rounds played live, the bots' own decisions included
  (what `table-host simulate` does).

The targets are compared with the engine figures: Ligretto >= 1,500 rounds/s,
and Domino within 3 times Ligretto's CPU time per action.
"""

from __future__ import annotations

import contextlib
import os
import platform
import random
import time
from collections.abc import Iterator
from typing import Any

from ..engine.match import Match
from ..play.simulate import make_bots, play_round
from ..table.matches import new_match, resources_for

ENGINE_TARGET_ROUNDS_PER_S = 1500
_MATCH_ROUNDS = 6
"""Matches as long as a Domino match (Ligretto: 5): early rounds differ from the hundredth."""


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


GAMES = ("classic", "dice", "domino", "crazy")
PLAYERS = 4
"""Every game at 4 seats, the most Dice and Domino take."""
DOMINO_TARGET_RATIO = 3.0
"""Domino's engine may take at most this many times Ligretto's CPU time per action."""


def bench_game(rounds: int, game: str, players: int = PLAYERS, repeats: int = 3) -> dict[str, Any]:
    """One game's figures: the engine (replay) and the live bots, best of `repeats`."""
    live, replayed = [], []
    actions = 0
    _play(5, game, players)  # warm up: imports, caches
    for _ in range(max(1, repeats)):
        matches, actions, cpu_live = _play(rounds, game, players)
        live.append(cpu_live)
        replayed.append(_replay(matches))
    best_engine, best_live = min(replayed), min(live)
    return {
        "game": game,
        "players": players,
        "rounds": rounds,
        "repeats": len(live),
        "actions": actions,
        "actions_per_round": round(actions / rounds, 1),
        "rounds_per_s": round(rounds / best_engine, 1),
        "actions_per_s": round(actions / best_engine, 1),
        "rounds_per_s_all_runs": [round(rounds / s, 1) for s in replayed],
        "with_bots_rounds_per_s": round(rounds / best_live, 1),
        "with_bots_actions_per_s": round(actions / best_live, 1),
        "with_bots_rounds_per_s_all_runs": [round(rounds / s, 1) for s in live],
    }


def bench_engine(rounds: int = 3000, games: tuple[str, ...] = GAMES, repeats: int = 3) -> dict[str, Any]:
    """Every game's figures; the targets: Ligretto's engine >= 1,500 rounds/s, and Domino's
    engine within `DOMINO_TARGET_RATIO` times Ligretto's CPU time per action."""
    with _one_core() as cpu:
        figures = {game: bench_game(rounds, game, PLAYERS, repeats) for game in games}
    out: dict[str, Any] = {"rounds": rounds, "players": PLAYERS, "games": figures,
                           "target_rounds_per_s": ENGINE_TARGET_ROUNDS_PER_S,
                           "target_domino_ratio": DOMINO_TARGET_RATIO,
                           "pinned_cpu": cpu, "python": platform.python_version()}
    met = []
    if "classic" in figures:
        met.append(figures["classic"]["rounds_per_s"] >= ENGINE_TARGET_ROUNDS_PER_S)
        if "domino" in figures:
            ratio = figures["classic"]["actions_per_s"] / figures["domino"]["actions_per_s"]
            out["domino_vs_classic_per_action"] = round(ratio, 2)
            met.append(ratio <= DOMINO_TARGET_RATIO)
    out["meets_target"] = all(met)
    return out


def engine_text(f: dict[str, Any]) -> str:
    def runs(g: dict[str, Any], key: str) -> str:
        return ", ".join(str(round(x)) for x in g[key])

    lines = [f"engine: {f['players']} players, {f['rounds']} rounds of instant bots per game, one core "
             f"(cpu {f['pinned_cpu']}), Python {f['python']}, CPU time, best of "
             f"{next(iter(f['games'].values()))['repeats'] if f['games'] else 0}",
             f"  {'game':<8} {'rules engine':>26} {'with the bots':>26}  actions a round"]
    for game, g in f["games"].items():
        lines.append(f"  {game:<8} {g['rounds_per_s']:>7.0f} rounds/s {g['actions_per_s']:>8.0f} actions/s "
                     f"{g['with_bots_rounds_per_s']:>7.0f} rounds/s "
                     f"{g['with_bots_actions_per_s']:>8.0f} actions/s  {g['actions_per_round']}")
        lines.append(f"  {'':<8} runs: {runs(g, 'rounds_per_s_all_runs')} / "
                     f"{runs(g, 'with_bots_rounds_per_s_all_runs')} rounds/s")
    classic = f["games"].get("classic")
    if classic is not None:
        verdict = "meets" if classic["rounds_per_s"] >= f["target_rounds_per_s"] else "MISSES"
        lines.append(f"  target: Ligretto's rules engine >= {f['target_rounds_per_s']} rounds/s: {verdict}")
    if "domino_vs_classic_per_action" in f:
        ratio = f["domino_vs_classic_per_action"]
        verdict = "meets" if ratio <= f["target_domino_ratio"] else "MISSES"
        lines.append(f"  target: Domino's engine within {f['target_domino_ratio']:g}x Ligretto's time per "
                     f"action: {ratio:.2f}x, {verdict}")
    return "\n".join(lines)
