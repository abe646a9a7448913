"""Computer players for every game.

A bot looks at its seat's sight (only what a player at the table sees),
picks an action, and says how long a person of its level would take to make
it. Levels differ in reaction time (randomised, human-like) and in play
quality: weaker bots overlook fitting cards and choose less well. `instant`
plays well with no delay, for simulation and benchmarks.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

from .rules.classic import MoveToRow, PlayCard, TurnHand, VoteStuck
from .rules.codec import Action
from .rules.crazy import BOTTOM, TOP, DiscardCrazy, PlayCrazy
from .rules.dice import PlaceDie, Reroll
from .rules.domino import DiscardDomino
from .rules.sight import ClassicSight, CrazySight, DiceSight, DominoSight, Sight


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


class Bot:
    def __init__(self, level: Level | str, rng: random.Random) -> None:
        self.level = Level(level)
        self.skill = SKILLS[self.level]
        self.rng = rng
        self._fruitless = 0  # turns in a row without a play (pro_row stuck vote)

    def delay_ns(self, action: Action) -> int:
        """How long this bot takes to make `action`, drawn afresh each time."""
        s = self.skill
        if s.reaction_ms == 0:
            return 0
        routine = type(action) in (TurnHand, Reroll, DiscardDomino, DiscardCrazy)
        mean = s.quick_ms if routine else s.reaction_ms
        ms = max(_MIN_MS, self.rng.gauss(mean, s.spread_ms * (0.5 if routine else 1.0)))
        return int(ms * 1e6)

    def _sees(self) -> bool:
        return self.skill.overlook == 0 or self.rng.random() >= self.skill.overlook

    def choose(self, sight: Sight, now_ns: int = 0) -> Action | None:
        """The bot's next action, or None when it has nothing to do."""
        if sight.over:
            return None
        if isinstance(sight, ClassicSight):
            return self._classic(sight)
        if isinstance(sight, DiceSight):
            return self._dice(sight)
        if isinstance(sight, DominoSight):
            return self._domino(sight, now_ns)
        return self._crazy(sight)

    # ------------------------------------------------------------ games

    def _classic(self, s: ClassicSight) -> Action | None:
        seat = s.seat
        stack_top = s.stack_top()
        # Stack first (it scores -2 a card), then the row (which refills from the stack).
        if stack_top is not None and s.fits(stack_top) and self._sees():
            return self._played(PlayCard(seat, stack_top))
        for top in s.row_tops():
            if top is not None and s.fits(top) and self._sees():
                return self._played(PlayCard(seat, top))
        discard_top = s.discard_top()
        if discard_top is not None and s.fits(discard_top) and self._sees():
            return self._played(PlayCard(seat, discard_top))
        if s.options.pro_row:
            for i, top in enumerate(s.row_tops()):
                if top is None:
                    continue
                for card in (stack_top, discard_top):
                    if card is not None and s.row_takes(top, card) and self._sees():
                        return self._played(MoveToRow(seat, card, i))
            passes = s.hand_size() // 3 + 3
            if self._fruitless > passes and not s.voted_stuck():
                return VoteStuck(seat)
        if s.can_turn():
            self._fruitless += 1
            return TurnHand(seat)
        return None

    def _played(self, action: Action) -> Action:
        self._fruitless = 0
        return action

    def _dice(self, s: DiceSight) -> Action:
        fitting = [d for d in s.dice() if s.fits(d) and self._sees()]
        if fitting:
            die = self.rng.choice(fitting) if self.level != Level.INSTANT else fitting[0]
            return PlaceDie(s.seat, die.colour, die.face)
        return Reroll(s.seat)

    def _domino(self, s: DominoSight, now_ns: int) -> Action | None:
        if s.top_card() is None:
            return None
        options = [p for p in s.placements(now_ns) if self._sees()]
        if options:
            return self._played(self.rng.choice(options) if len(options) > 1 else options[0])
        # Jokers are scarce: only after a whole pass through the hand found nothing.
        if s.jokers() and self._fruitless > s.held() and self.level != Level.EASY:
            joker = s.joker_for_top(now_ns)
            if joker is not None:
                return self._played(joker)
        self._fruitless += 1
        return DiscardDomino(s.seat)

    def _crazy(self, s: CrazySight) -> Action | None:
        hand = s.hand()
        if not hand:
            return None
        tops = s.pile_tops()
        # A 5 on a 4 wins the pile: always the best play.
        for card in hand:
            for pid, top in tops.items():
                if top == TOP - 1 and (card.value == TOP or card.crazy) and self._sees():
                    return PlayCrazy(s.seat, card, pid, TOP if card.crazy else None)
        plain = [c for c in hand if not c.crazy]
        moves = [(c, pid) for c in plain for pid, top in tops.items() if abs(c.value - top) == 1]
        # Prefer moves that climb toward a 5 (4 after 3 sets up a win, but others may take it).
        moves.sort(key=lambda m: (-(m[0].value > tops[m[1]]), -m[0].value))
        for card, pid in moves:
            if self._sees():
                return PlayCrazy(s.seat, card, pid)
        if s.pile_room() > 0:
            for card in plain:
                if card.value == BOTTOM and self._sees():
                    return PlayCrazy(s.seat, card, None)
        # Nothing fits: get rid of the card least likely to fit soon, keeping Crazy cards.
        if plain:
            worst = max(plain, key=lambda c: min((abs(c.value - t) for t in tops.values()), default=9))
            return DiscardCrazy(s.seat, worst)
        card = hand[0]
        if tops:
            pid, top = next(iter(tops.items()))
            return PlayCrazy(s.seat, card, pid, top + 1 if top < TOP else top - 1)
        if s.pile_room() > 0:
            return PlayCrazy(s.seat, card, None, BOTTOM)
        return DiscardCrazy(s.seat, card)
