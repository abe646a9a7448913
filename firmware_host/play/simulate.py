"""Bot-against-bot matches, headless: `table-host simulate` and the engine benchmark.

Instant bots act one at a time in a random seat order. Timed bots run on a
simulated clock: each looks at the table, decides, and its action lands after
its reaction time, so slower bots lose races and see "too late" as people do.
"""

from __future__ import annotations

import heapq
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..engine.game import sight_of
from ..engine.match import Match
from ..engine.round import RoundBase
from ..system.errors import RoundStalled
from ..table.bot_players import Bot, Level
from ..table.matches import new_match

MAX_ACTIONS_PER_ROUND = 1_000_000
MAX_ROUND_SECONDS = 3600
"""Simulated time a timed round may take; far beyond any real round, so reaching it is a stall."""
_INSTANT_STEP_NS = 1_000_000  # instant bots' clock: one action a millisecond
POLL_NS = 1_000_000_000
"""A timed bot with nothing to do looks again this much later (as the daemon's bots do)."""


@dataclass(slots=True)
class RoundStats:
    actions: int = 0
    refusals: int = 0
    refusal_reasons: Counter[str] = field(default_factory=Counter)
    sim_seconds: float = 0.0


Observer = Callable[[int, int | None, Any, Any], None]
"""Told of each action as it lands: (ns into the round, seat, action, refusal or None); seat and
action are None for a wake (time ended a hold or the round)."""


def play_round(match: Match, bots: list[Bot], rng: random.Random,
               observer: Observer | None = None) -> RoundStats:
    """Play the current round to its end with the given bots (on the timed clock when observed)."""
    stats = RoundStats()
    rnd = match.round
    sights = [sight_of(rnd, seat) for seat in range(match.players)]
    if observer is None and all(b.level == Level.INSTANT for b in bots):
        _play_instant(match, bots, sights, rng, stats)
    else:
        _play_timed(match, bots, sights, stats, observer)
    return stats


def _play_instant(match: Match, bots: list[Bot], sights: list[Any], rng: random.Random,
                  stats: RoundStats) -> None:
    """Every action is stamped with the instant clock, so a joker's hold lapses as at the table;
    when the round has something due (`deadline`) it is woken first."""
    rnd = match.round
    n = match.players
    apply = rnd.apply  # the match hears of the round's end through rnd.on_end
    # A round that never wakes (its game has no deadline) is not asked before every action.
    deadline = rnd.deadline
    wakes = type(rnd).deadline is not RoundBase.deadline
    draw = rng.random
    policies = [bot.policy(sight) for bot, sight in zip(bots, sights, strict=True)]
    limit = MAX_ACTIONS_PER_ROUND * _INSTANT_STEP_NS
    idle = 0
    now = _INSTANT_STEP_NS
    while rnd.result is None:
        due = deadline() if wakes else None
        if due is not None and due <= now:
            if not rnd.wake(now) or rnd.deadline() == due:
                raise RoundStalled(f"{match.game}: waking the round at its deadline changed nothing")
            continue
        seat = int(draw() * n)
        action = policies[seat](sights[seat], now)
        if action is None:
            idle += 1
            if idle > 50 * n:
                if due is None:
                    raise RoundStalled(f"{match.game}: no bot can act, yet the round goes on")
                now = due  # nobody acts: time runs on to what is due
                idle = 0
            continue
        idle = 0
        refusal = apply(action)
        now += _INSTANT_STEP_NS
        if refusal is not None:
            stats.refusals += 1
            stats.refusal_reasons[refusal.reason.name.lower()] += 1
        if now > limit:
            raise RoundStalled(f"{match.game}: a round ran past {MAX_ACTIONS_PER_ROUND} actions")
    stats.actions = now // _INSTANT_STEP_NS - 1
    stats.sim_seconds = now / 1e9


def _play_timed(match: Match, bots: list[Bot], sights: list[Any], stats: RoundStats,
                observer: Observer | None = None) -> None:
    """Bots on a simulated clock. A bot with nothing to do looks again `POLL_NS` later, so
    none drops out; the round is woken when something is due."""
    rnd = match.round
    queue: list[tuple[int, int, Any]] = []  # (lands at ns, seat, action or None for a look)
    now = 0
    limit = MAX_ROUND_SECONDS * 1_000_000_000

    def decide(seat: int, at: int) -> None:
        action = bots[seat].choose(sights[seat], at)
        if action is None:
            heapq.heappush(queue, (at + POLL_NS, seat, None))
        else:
            lands = at + bots[seat].delay_ns(action)
            heapq.heappush(queue, (lands, seat, action._replace(ts=lands)))

    for seat in range(match.players):
        decide(seat, 0)
    while rnd.result is None:
        due = rnd.deadline()
        if due is not None and due <= queue[0][0]:
            now = max(now, due)
            if not rnd.wake(now) or rnd.deadline() == due:
                raise RoundStalled(f"{match.game}: waking the round at its deadline changed nothing")
            if observer is not None:
                observer(now, None, None, None)
            continue
        now, seat, action = heapq.heappop(queue)
        if now > limit:
            raise RoundStalled(f"{match.game}: a round ran past {MAX_ROUND_SECONDS} s of play")
        if action is not None:
            refusal = match.apply(action)
            if observer is not None:
                observer(now, seat, action, refusal)
            stats.actions += 1
            if refusal is not None:
                stats.refusals += 1
                stats.refusal_reasons[refusal.reason.name.lower()] += 1
            if stats.actions > MAX_ACTIONS_PER_ROUND:
                raise RoundStalled(f"{match.game}: a round ran past {MAX_ACTIONS_PER_ROUND} actions")
        decide(seat, now)
    stats.sim_seconds = now / 1e9


def make_bots(players: int, level: Level | str, seed: int | str) -> list[Bot]:
    return [Bot(level, random.Random(f"bot/{seed}/{seat}")) for seat in range(players)]


def simulate(
    game: str,
    players: int,
    rounds: int | None,
    seed: int | str,
    options: dict[str, Any] | None = None,
    level: Level | str = Level.INSTANT,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Play one match (cut to `rounds` if given) and report it as plain data."""
    opts = dict(options or {})
    if rounds is not None:
        opts["rounds"] = rounds
    match = new_match(game, players, seed, opts)
    bots = make_bots(players, level, seed)
    order = random.Random(f"order/{seed}")
    per_round: list[dict[str, Any]] = []
    endings: Counter[str] = Counter()
    actions = refusals = reached = dealt = 0
    started = time.perf_counter()
    while True:
        stats = play_round(match, bots, order)
        result = match.results[-1]
        to_centre = match.round.to_centre()
        reached, dealt = reached + to_centre[0], dealt + to_centre[1]
        endings[str(result.ending)] += 1
        actions += stats.actions
        refusals += stats.refusals
        per_round.append({
            "round": match.rounds_played,
            "ending": str(result.ending),
            "finishers": list(result.finishers),
            "scores": list(result.scores),
            "totals": list(match.totals),
            "actions": stats.actions,
            "to_centre": list(to_centre),
            "refusals": stats.refusals,
            **({"refusal_reasons": dict(stats.refusal_reasons)} if stats.refusals else {}),
            **({"game_seconds": round(stats.sim_seconds, 2)} if stats.sim_seconds else {}),
        })
        if progress is not None:
            progress(match.rounds_played)
        if match.is_over:
            break
        match.next_round()
    elapsed = max(time.perf_counter() - started, 1e-9)
    return {
        "game": game,
        "players": players,
        "seed": seed,
        "bots": str(Level(level)),
        "options": match.summary()["options"],
        "rounds": per_round,
        "totals": list(match.totals),
        "winners": list(match.winners),
        "endings": dict(endings),
        "rounds_played": len(per_round),
        "centre_share": round(reached / dealt, 3) if dealt else 0.0,
        "actions": actions,
        "refusals": refusals,
        "elapsed_s": round(elapsed, 4),
        "rounds_per_s": round(len(per_round) / elapsed, 1),
        "actions_per_s": round(actions / elapsed, 1),
    }


# ---------------------------------------------------------------- the sweep

@dataclass(frozen=True, slots=True)
class SweepCase:
    game: str
    players: int
    options: dict[str, Any]
    level: Level
    seed: str

    def command(self) -> str:
        """The `table-host simulate` line that plays this case again."""
        opts = "".join(f" --option {k}={'yes' if v is True else v}" for k, v in self.options.items())
        return (f"table-host simulate --game {self.game} --players {self.players} --rounds 1 "
                f"--seed {self.seed} --bots {self.level}{opts}")


def sweep_cases(games: list[str], seeds: int, levels: list[Level] | None = None) -> list[SweepCase]:
    """Every game, player count, option set and bot level, each for `seeds` seeds."""
    from ..engine.game import find
    from ..engine.options import PLAYERS

    out = []
    for game in games:
        lo, hi = PLAYERS[game]
        for players in range(lo, hi + 1):
            sets = find(game).sweep_options(players)
            for i, options in enumerate(sets):
                for level in levels or list(Level):
                    for s in range(seeds):
                        out.append(SweepCase(game, players, options, level, f"sweep{i}-{s}"))
    return out


def sweep(cases: list[SweepCase], progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Play one round of each case; a stall or any exception is a failure, reported by its command."""
    failures: list[dict[str, str]] = []
    most_actions = 0
    most_seconds = 0.0
    started = time.perf_counter()
    for n, case in enumerate(cases, 1):
        try:
            match = new_match(case.game, case.players, case.seed, dict(case.options))
            bots = make_bots(case.players, case.level, case.seed)
            stats = play_round(match, bots, random.Random(f"order/{case.seed}"))
            most_actions = max(most_actions, stats.actions)
            most_seconds = max(most_seconds, stats.sim_seconds)
        except Exception as exc:
            failures.append({"case": case.command(), "error": f"{type(exc).__name__}: {exc}"})
        if progress is not None:
            progress(n)
    return {
        "rounds": len(cases),
        "failures": failures,
        "most_actions": most_actions,
        "most_game_seconds": round(most_seconds, 1),
        "elapsed_s": round(time.perf_counter() - started, 1),
    }


# ---------------------------------------------------------------- whole matches

RUNAWAY = 5
"""A match longer than this many times the median of its kind (game, players, bots) is named."""
MATCH_ROUND_CAP = 1000
"""Rounds after which a match is stopped and named however its kind plays (a runaway never ends)."""


@dataclass(frozen=True, slots=True)
class MatchCase:
    game: str
    players: int
    level: Level
    seed: str

    def command(self) -> str:
        """The `table-host simulate` line that plays this match again, whole."""
        return (f"table-host simulate --game {self.game} --players {self.players} "
                f"--seed {self.seed} --bots {self.level}")


def match_cases(games: list[str], seeds: int, levels: list[Level] | None = None,
                players: int | None = None) -> list[MatchCase]:
    """Every game, player count and timed bot level (instant bots play no one's way), each with
    the default options for seeds 0 to `seeds` - 1."""
    from ..engine.options import PLAYERS

    out: list[MatchCase] = []
    for game in games:
        lo, hi = PLAYERS[game]
        counts = [players] if players is not None else list(range(lo, hi + 1))
        for n in counts:
            for level in levels or [lv for lv in Level if lv != Level.INSTANT]:
                out.extend(MatchCase(game, n, level, str(s)) for s in range(seeds))
    return out


def play_match(case: MatchCase, cap: int = MATCH_ROUND_CAP) -> int:
    """The rounds `case` took to its end, as `table-host simulate` plays it; `cap` + 1 when it was
    stopped at `cap` rounds without an end."""
    match = new_match(case.game, case.players, case.seed)
    bots = make_bots(case.players, case.level, case.seed)
    order = random.Random(f"order/{case.seed}")
    while True:
        play_round(match, bots, order)
        if match.is_over:
            return match.rounds_played
        if match.rounds_played >= cap:
            return cap + 1
        match.next_round()


def _median(values: list[int]) -> float:
    v = sorted(values)
    mid = len(v) // 2
    return float(v[mid]) if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def match_sweep(cases: list[MatchCase], cap: int = MATCH_ROUND_CAP,
                progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Play each case whole; per kind (game, players, bots) the distribution of rounds a match
    took, and by its command each match past `RUNAWAY` times its kind's median or stopped at
    `cap` rounds, or that raised."""
    started = time.perf_counter()
    kinds: dict[tuple[str, int, str], list[tuple[MatchCase, int]]] = {}
    failures: list[dict[str, str]] = []
    for n, case in enumerate(cases, 1):
        try:
            rounds = play_match(case, cap)
        except Exception as exc:
            failures.append({"case": case.command(), "error": f"{type(exc).__name__}: {exc}"})
        else:
            kinds.setdefault((case.game, case.players, str(case.level)), []).append((case, rounds))
        if progress is not None:
            progress(n)
    rows = []
    for (game, players, level), played in kinds.items():
        counts = sorted(r for _, r in played)
        median = _median(counts)
        bound = RUNAWAY * median
        for case, rounds in played:
            if rounds > cap:
                failures.append({"case": case.command(), "error": f"no end after {cap} rounds"})
            elif rounds > bound:
                failures.append({"case": case.command(),
                                 "error": f"{rounds} rounds, past {RUNAWAY} times the median {median:g}"})
        rows.append({"game": game, "players": players, "bots": level, "matches": len(counts),
                     "median": median, "p90": counts[-(-9 * len(counts) // 10) - 1],
                     "longest": counts[-1], "shortest": counts[0],
                     "histogram": dict(sorted(Counter(counts).items()))})
    return {"matches": len(cases), "rows": rows, "failures": failures,
            "elapsed_s": round(time.perf_counter() - started, 1)}
