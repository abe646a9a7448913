"""`table-host bench bots`: do the bots beat a player who only mashes one button?

A masher is a person who hammers one button as fast as a hand goes (about 7
presses a second) and never looks at the table. Each press goes through the
seat's own controls (`SeatController`, exactly what a button at the table
means) with the cursor wherever it is, so the masher plays whatever that
button does then. Per game we try each button a masher would hammer:

- slap, the big button: plays the card or die under the cursor (Ligretto: row
  place 1; Dice: the first die; Domino: the first legal place of the top card;
  Crazy: the first hand card to its first target);
- alt: turns 3 hand cards (Ligretto), rerolls (Dice), discards the top card
  (Domino), discards the first hand card (Crazy);
- greedy, not a masher but a player that looks and does not think: at a
  medium bot's pace it makes the first legal play it finds, and only when
  nothing fits the routine move (issue 34: such a script beat the medium
  Crazy bots 104 to 14, -1 and -81).

Each match is one bot against one masher, on a simulated clock (nothing
sleeps): the bot's reaction times apply as at the table, the masher presses
every 1/rate seconds. A match is won when the bot's total is higher than the
masher's. A round the masher holds open (Ligretto, Domino: it keeps cards the
round needs and never plays them) is called after `ROUND_LIMIT_S` of play and
scored as it stands; the match ends there. The target: medium and hard each win most matches (> 50 %) against
every masher, and hard does at least as well as medium.
"""

from __future__ import annotations

import heapq
import math
import random
import time
from dataclasses import dataclass
from typing import Any

from ..engine.game import find, sight_of
from ..engine.match import Match, Round
from ..play.simulate import POLL_NS, RoundStalled
from ..table.bot_players import Bot, Level
from ..table.controls import SeatController
from ..table.matches import new_match

GAMES = ("classic", "dice", "domino", "crazy")
MASHES = ("slap", "alt", "greedy")
MASH_RATE_HZ = 7.0
"""A person hammering one button: 6 to 8 presses a second."""
LEVELS = (Level.MEDIUM, Level.HARD)
TARGET = 0.5
"""The share of matches a bot must win (more than this) to pass."""


@dataclass(slots=True)
class Masher:
    """One button, pressed again and again at `rate_hz` (with a hand's jitter), blind."""

    control: str
    controls: SeatController
    rng: random.Random
    rate_hz: float = MASH_RATE_HZ

    def interval_ns(self) -> int:
        mean = 1e9 / self.rate_hz
        return int(max(0.5 * mean, self.rng.gauss(mean, 0.15 * mean)))

    def reset(self) -> None:
        """A new round: the cursor goes back to the first place."""
        self.controls.cursor = self.controls.target = 0

    def press(self, match: Match, now: int) -> None:
        action = self.controls.action(self.control, now)
        if action is not None:
            self.controls.result(action, match.apply(action))


class Greedy:
    """A player who looks but does not think: it makes the first legal play it finds (any card
    that fits, at once: no holding a 5 for a 4, no waiting), and only when nothing fits the
    game's routine move (turn, reroll, discard the first card). It looks and acts at a medium
    bot's pace (`GREEDY_PACE`), overlooking nothing, so what sets the bots apart is judgement."""

    def __init__(self, seat: int, match: Match, rng: random.Random) -> None:
        self.seat = seat
        self.match = match
        self.pace = Bot(GREEDY_PACE, rng)
        self.pending: Any = None

    def reset(self) -> None:
        self.pending = None

    def interval_ns(self) -> int:
        """Look at the table now: what to do, and how long until it lands."""
        routine = find(self.match.game).routine
        fallback = None
        self.pending = None
        for action in self.match.round.legal_actions(self.seat):
            if type(action) not in routine:
                self.pending = action
                break
            if fallback is None:
                fallback = action
        self.pending = self.pending or fallback
        return POLL_NS if self.pending is None else self.pace.delay_ns(self.pending)

    def press(self, match: Match, now: int) -> None:
        if self.pending is not None:
            match.apply(self.pending._replace(ts=now))


GREEDY_PACE = Level.MEDIUM
"""The greedy player's reaction times: an ordinary person's (950 ± 280 ms a play). At the
masher's 7 looks a second it would be no person; it then empties its cards in a few seconds and
beats every bot by speed alone (0 of 20 Crazy matches won by medium or hard, measured)."""


HOUSE_RULES: dict[str, dict[str, Any]] = {"crazy": {"rounds": 10}}
"""A safety bound, not the product's default: a masher's Crazy total never reaches 100 (it plays
blind and sits on cards that fit nowhere), so the bench's matches end after 10 rounds, the
house rule `rounds`, which the rulebook has not (printed with the figures)."""

ROUND_LIMIT_S = 600
"""A round still going after ten minutes of play is one nobody at a real table would sit through."""


def standing(rnd: Round) -> tuple[int, ...]:
    """What each seat would score if the round were called now.

    Ligretto and Domino rounds need every seat to play: a seat that only mashes can hold on to
    the cards the round needs, so it never ends. The bench calls such a round at
    `ROUND_LIMIT_S` and scores it as it stands (Domino: as if nobody could place any more)."""
    return find(rnd.game).standing(rnd)


@dataclass(slots=True)
class Outcome:
    bot: int
    masher: int
    called: int  # rounds called at ROUND_LIMIT_S
    rounds: int = 0  # rounds played, the called one included
    reached: int = 0  # cards (dice) that reached the centre (Crazy: score piles) in those rounds
    dealt: int = 0  # cards (dice) those rounds dealt


def play_match(game: str, level: Level, control: str, seed: str, masher_seat: int) -> Outcome:
    """One two-seat match, bot against masher, to its end."""
    match = new_match(game, 2, seed, HOUSE_RULES.get(game))
    bot_seat = 1 - masher_seat
    bot = Bot(level, random.Random(f"bench-bot/{seed}"))
    rng = random.Random(f"bench-masher/{seed}")
    masher: Masher | Greedy = (Greedy(masher_seat, match, rng) if control == "greedy" else
                               Masher(control, SeatController(masher_seat, match), rng))
    called = rounds = reached = dealt = 0
    totals = [0, 0]
    for _ in range(1000):
        ended = _play_round(match, bot, bot_seat, masher)
        rounds += 1
        got, of = match.round.to_centre()
        reached, dealt = reached + got, dealt + of
        if ended:
            totals = list(match.totals)
        else:  # called: the match ends here, scored as it stands
            called += 1
            totals = [t + s for t, s in zip(match.totals, standing(match.round), strict=True)]
            break
        if match.is_over:
            break
        match.next_round()
    return Outcome(totals[bot_seat], totals[masher_seat], called, rounds, reached, dealt)


def _play_round(match: Match, bot: Bot, bot_seat: int, masher: Masher | Greedy) -> bool:
    """The bot as `simulate` times it (it decides, its action lands after its reaction time);
    the masher presses on its own beat; the round is woken when something is due."""
    rnd = match.round
    sight = sight_of(rnd, bot_seat)
    masher.reset()
    queue: list[tuple[int, int, Any]] = []  # (at ns, seat, bot action, or None for a look or a press)
    limit = ROUND_LIMIT_S * 1_000_000_000

    def decide(at: int) -> None:
        action = bot.choose(sight, at)
        if action is None:
            heapq.heappush(queue, (at + POLL_NS, bot_seat, None))
        else:
            lands = at + bot.delay_ns(action)
            heapq.heappush(queue, (lands, bot_seat, action._replace(ts=lands)))

    decide(0)
    heapq.heappush(queue, (masher.interval_ns(), 1 - bot_seat, None))
    while rnd.result is None:
        due = rnd.deadline()
        if due is not None and due <= queue[0][0]:
            if not rnd.wake(due) or rnd.deadline() == due:
                raise RoundStalled(f"{match.game}: waking the round at its deadline changed nothing")
            continue
        now, seat, action = heapq.heappop(queue)
        if now > limit:
            return False
        if seat == bot_seat:
            if action is not None:
                match.apply(action)
            decide(now)
        else:
            masher.press(match, now)
            heapq.heappush(queue, (now + masher.interval_ns(), seat, None))
    return True


def bench_bots(matches: int = 50, games: tuple[str, ...] = GAMES, mashes: tuple[str, ...] = MASHES,
               levels: tuple[Level, ...] = LEVELS) -> dict[str, Any]:
    """`matches` matches per game, button and level; the masher sits in seat 1 or 2 in turn."""
    started = time.perf_counter()
    rows = []
    for game in games:
        for control in mashes:
            row: dict[str, Any] = {"game": game, "mash": control}
            for level in levels:
                won = lost = drawn = called = rounds = reached = dealt = 0
                margin = 0
                for m in range(matches):
                    out = play_match(game, level, control, f"{game}/{control}/{m}", m % 2)
                    bot, mash = out.bot, out.masher
                    called += out.called
                    rounds += out.rounds
                    reached, dealt = reached + out.reached, dealt + out.dealt
                    won += bot > mash
                    lost += bot < mash
                    drawn += bot == mash
                    margin += bot - mash
                lo, hi = wilson(won, matches)
                row[str(level)] = {"won": won, "lost": lost, "drawn": drawn, "called": called,
                                   "rate": round(won / matches, 3),
                                   "interval_95": [round(lo, 3), round(hi, 3)],
                                   "mean_margin": round(margin / matches, 1),
                                   "rounds_per_match": round(rounds / matches, 2),
                                   "centre_share": round(reached / dealt, 3) if dealt else 0.0}
            rates = [row[str(level)]["rate"] for level in levels]
            row["pass"] = all(r > TARGET for r in rates) and rates == sorted(rates)
            rows.append(row)
    h2h = head_to_head(matches, games) if Level.HARD in levels and Level.MEDIUM in levels else None
    return {"matches": matches, "rate_hz": MASH_RATE_HZ, "rows": rows, "head_to_head": h2h,
            "pass": all(r["pass"] for r in rows) and (h2h is None or h2h["pass"]),
            "seconds": round(time.perf_counter() - started, 1)}


def wilson(won: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % confidence interval of a share `won`/`n` (Wilson's score interval)."""
    if n == 0:
        return 0.0, 1.0
    p = won / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def head_to_head(matches: int = 100, games: tuple[str, ...] = GAMES) -> dict[str, Any]:
    """Hard against medium, `matches` two-seat matches per game (hard in seat 1 or 2 in turn),
    on the simulated clock: hard's share of the matches (a draw counts half) with its 95 %
    interval. Hard is at least as strong as medium when the interval lies above one half."""
    from ..play.simulate import play_round

    rows = []
    for game in games:
        won = drawn = 0
        for m in range(matches):
            hard_seat = m % 2
            match = new_match(game, 2, f"h2h/{game}/{m}", HOUSE_RULES.get(game))
            bots = [Bot(Level.HARD if s == hard_seat else Level.MEDIUM, random.Random(f"h2h/{game}/{m}/{s}"))
                    for s in range(2)]
            while True:
                play_round(match, bots, random.Random(m))
                if match.is_over:
                    break
                match.next_round()
            hard, medium = match.totals[hard_seat], match.totals[1 - hard_seat]
            won += hard > medium
            drawn += hard == medium
        share = (won + drawn / 2) / matches
        lo, hi = wilson(won + drawn / 2, matches)
        rows.append({"game": game, "matches": matches, "hard_won": won, "drawn": drawn,
                     "hard_share": round(share, 3), "interval_95": [round(lo, 3), round(hi, 3)],
                     "pass": lo > 0.5})
    return {"matches": matches, "rows": rows, "pass": all(r["pass"] for r in rows)}


def bots_text(f: dict[str, Any]) -> str:
    lines = [f"bots against a masher and a greedy script ({f['matches']} two-seat matches each, "
             f"{f['rate_hz']:g} presses/s, simulated clock): bot wins / matches (95 % interval), "
             "mean margin"]
    for row in f["rows"]:
        cells = []
        for level in LEVELS:
            cell = row.get(str(level))
            if cell is not None:
                called = f", {cell['called']} called" if cell["called"] else ""
                lo, hi = cell["interval_95"]
                cells.append(f"{level} {cell['won']:>2}/{f['matches']} ({cell['rate']:.0%}, "
                             f"{lo:.0%} to {hi:.0%}, "
                             f"{cell['mean_margin']:+.1f}{called}; {cell['rounds_per_match']:g} rounds, "
                             f"{cell['centre_share']:.0%} to the centre)")
        lines.append(f"  {row['game']:<8} {row['mash']:<6} " + "   ".join(cells)
                     + f"   {'PASS' if row['pass'] else 'FAIL'}")
    h2h = f.get("head_to_head")
    if h2h is not None:
        lines.append(f"hard against medium ({h2h['matches']} two-seat matches each): "
                     "hard's share, 95 % interval")
        for r in h2h["rows"]:
            lo, hi = r["interval_95"]
            lines.append(f"  {r['game']:<8} {r['hard_won']:>3} won, {r['drawn']} drawn: "
                         f"{r['hard_share']:.0%} ({lo:.0%} to {hi:.0%})   {'PASS' if r['pass'] else 'FAIL'}")
    for game, rules in HOUSE_RULES.items():
        lines.append(f"house rule for {game}: " + ", ".join(f"{k} = {v}" for k, v in rules.items())
                     + " (a bound for the bench; the table's default has none)")
    lines.append(f"{'PASS' if f['pass'] else 'FAIL'}: medium and hard win more than {TARGET:.0%} "
                 "against each masher and the greedy script, "
                 f"hard at least as often as medium, and beats medium head to head beyond chance "
                 f"({f['seconds']} s)")
    return "\n".join(lines)
