"""`table-host watch`: bots play a match at the table's pace, round by round.

The bots play on the simulated clock `simulate` uses for timed bots (each
action lands after the bot's reaction time), and every action is shown when
the wall clock reaches its time, divided by `speed`: at speed 1 a medium bot
thinks for about a second, as it does at the table. Between rounds the result
stays up for the table's round-result time (also divided by `speed`). The
match has a finite length, so watching ends.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from ..engine.game import find
from ..table.bot_players import Level
from ..table.machine import Timing
from ..table.matches import new_match
from ..table.words import ended_by
from .simulate import make_bots, play_round


def watch(game: str, players: int, seed: int | str, level: Level | str, speed: float = 1.0,
          out: Callable[[str], None] = print, sleep: Callable[[float], None] = time.sleep,
          clock: Callable[[], float] = time.monotonic, pause_s: float | None = None) -> dict[str, Any]:
    """Play and show one match; returns the totals and how long it took on the table's clock."""
    if not speed > 0:
        raise ValueError("speed must be above 0")
    match = new_match(game, players, seed)
    said = find(game).said  # each play in the players' words, as a replay's step lines say it
    bots = make_bots(players, level, seed)
    order = random.Random(f"order/{seed}")
    pause = Timing().round_result_ns / 1e9 if pause_s is None else pause_s
    table_s = 0.0  # the table's clock: rounds played and result pauses, in seconds
    started = clock()

    def wait_until(at_s: float) -> None:
        delay = started + at_s / speed - clock()
        if delay > 0:
            sleep(delay)

    while True:
        out(f"round {match.rounds_played + 1}")
        offset = table_s

        def show(now: int, seat: int | None, action: Any, refusal: Any, offset: float = offset) -> None:
            wait_until(offset + now / 1e9)
            when = f"  {now / 1e9:7.2f} s"
            if seat is None:
                out(f"{when}  table    time is up: the round is woken")
            else:
                outcome = "" if refusal is None else f"  ({refusal.short()})"
                out(f"{when}  seat {seat + 1:<3} {said(action)}{outcome}")

        stats = play_round(match, bots, order, observer=show)
        table_s += stats.sim_seconds
        result = match.results[-1]
        how = ended_by(result.ending, [f"seat {s + 1}" for s in result.finishers])
        scores = ", ".join(f"seat {p + 1} {s:+d}" for p, s in enumerate(result.scores))
        totals = ", ".join(f"seat {p + 1} {t}" for p, t in enumerate(match.totals))
        out(f"round {match.rounds_played} over after {stats.sim_seconds:.1f} s: {how}. "
            f"Scores {scores}; totals {totals}")
        if match.is_over:
            break
        table_s += pause
        wait_until(table_s)
        match.next_round()
    winners = ", ".join(f"seat {s + 1}" for s in match.winners)
    out(f"winner{'s' if len(match.winners) > 1 else ''}: {winners}")
    return {"totals": list(match.totals), "winners": [s + 1 for s in match.winners],
            "rounds": match.rounds_played, "table_seconds": round(table_s, 2)}
