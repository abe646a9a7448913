"""Computer players for every game (each game's entry brings its policy).

A bot looks at its seat's sight (only what a player at the table sees),
picks an action, and says how long a person of its level would take to make
it. Levels differ in reaction time (randomised, human-like) and in play
quality: weaker bots overlook fitting cards and choose less well. `instant`
plays well with no delay, for simulation and benchmarks.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..engine.codec import Action
from ..engine.game import Policy, Sight, find, routine_actions


class Level(StrEnum):
    INSTANT = "instant"
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


@dataclass(frozen=True, slots=True)
class Skill:
    reaction_ms: float  # mean time to notice and act
    spread_ms: float  # standard deviation of that time
    overlook: float  # chance of not seeing a given fitting card
    quick_ms: float  # time for a routine move (turning cards, rerolling)


SKILLS: dict[Level, Skill] = {
    Level.INSTANT: Skill(0.0, 0.0, 0.0, 0.0),
    Level.EASY: Skill(1500.0, 450.0, 0.35, 700.0),
    Level.MEDIUM: Skill(950.0, 280.0, 0.15, 450.0),
    Level.HARD: Skill(600.0, 160.0, 0.04, 300.0),
}
_MIN_MS = 120.0  # nobody reacts faster than this
CHAIN = 2
"""Planned plays in a row made at the routine pace: the rest of a run seen in a hand of three.
Then the next play is a fresh reaction again. With no bound a bot's runs of drawn cards went on at
that pace and Crazy bots took each other for mashers (four cards laid within a second, 7
sightings in 30 three-seat medium matches against none), so played the eager way and matches
grew long (one of 100 past five times the median)."""


class Bot:
    def __init__(self, level: Level | str, rng: random.Random) -> None:
        self.level = Level(level)
        self.skill = SKILLS[self.level]
        self.rng = rng
        self.fruitless = 0  # turns in a row without a play (pro_row stuck vote, Domino jokers)
        self.memory: dict[str, Any] = {}
        """What a game's policy keeps between decisions (its own keys, so its own values: `Any`
        here, as the game that reads one is known only at run time)."""
        self.planned: set[Action] = set()
        """Plays (stamped 0) seen at the previous look beside the one made then: a person who
        saw two fitting cards makes the second as quickly as a routine move (`delay_ns`)."""
        self._planning: set[Action] = set()  # what this look saw, the next look's `planned`
        self.chain = 0  # planned plays made in a row at the routine pace (at most `CHAIN`)
        self.plans = self.level in (Level.MEDIUM, Level.HARD)
        """Whether it plans a second play while making one (an easy player reacts to each card
        afresh; an instant one takes no time either way)."""

    def delay_ns(self, action: Action | None) -> int:
        """How long this bot takes to make `action`, which it just chose (`choose`), drawn afresh
        each time: a play it planned at its last look comes at the routine pace. None: a fresh
        reaction. The table's bots wait this long before their first press, as `simulate` does
        before an action lands (service/bot_hands.py)."""
        s = self.skill
        if s.reaction_ms == 0:
            return 0
        planned = (action is not None and bool(self.planned) and self.chain < CHAIN
                   and action._replace(ts=0) in self.planned)
        self.chain = self.chain + 1 if planned else 0
        routine = planned or type(action) in routine_actions()
        mean = s.quick_ms if routine else s.reaction_ms
        ms = max(_MIN_MS, self.rng.gauss(mean, s.spread_ms * (0.5 if routine else 1.0)))
        return int(ms * 1e6)

    def plan(self, plays: Iterable[Action]) -> None:
        """Remember the plays seen at this look beside the one made (only a bot that `plans`).
        `plays` are actions; their stamps are ignored."""
        if self.plans:
            self._planning = {a._replace(ts=0) for a in plays}

    def sees(self) -> bool:
        """Whether the bot notices a given fitting card (weaker bots overlook some)."""
        return self.skill.overlook == 0 or self.rng.random() >= self.skill.overlook

    def choose(self, sight: Sight, now_ns: int = 0) -> Action | None:
        """The bot's next action, or None when it has nothing to do."""
        if sight.over:
            return None
        self.look()
        return self.policy(sight)(sight, now_ns)

    def look(self) -> None:
        """A new look at the table: what the last one planned is what it knows now."""
        self.planned, self._planning = self._planning, set()

    def policy(self, sight: Sight) -> Policy[Any, Action]:
        """The decision function for this kind of game (looked up once per round); it takes that
        game's own sight, a type known only at run time."""
        policy: Policy[Any, Action] = find(sight.game).policy(self, sight)
        return policy

    def played(self, action: Action) -> Action:
        """A play after turns without one: the count of fruitless turns starts again."""
        self.fruitless = 0
        return action
