"""Computer players for every game.

A bot looks at its seat's sight (only what a player at the table sees),
picks an action, and says how long a person of its level would take to make
it. Levels differ in reaction time (randomised, human-like) and in play
quality: weaker bots overlook fitting cards and choose less well. `instant`
plays well with no delay, for simulation and benchmarks.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..rules.classic import MoveToRow, PlayCard, TurnHand, VoteStuck
from ..rules.codec import Action
from ..rules.crazy import BOTTOM, TOP, CrazyCard, DiscardCrazy, PlayCrazy
from ..rules.dice import PlaceDie, Reroll
from ..rules.domino import DiscardDomino
from ..rules.sight import ClassicSight, CrazySight, DiceSight, DominoSight, Sight


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


_SNIPES = {Level.INSTANT: 1, Level.EASY: 99, Level.MEDIUM: 3, Level.HARD: 1}
"""Crazy: how many more of its 4s a bot lets others take than piles it wins before it stops making 4s."""


NOFIN = -1.0


class Bot:
    def __init__(self, level: Level | str, rng: random.Random) -> None:
        self.level = Level(level)
        self.skill = SKILLS[self.level]
        self.rng = rng
        self._fruitless = 0  # turns in a row without a play (pro_row stuck vote)
        self._four: int | None = None  # Crazy: the pile this bot last made a 4 on
        self._sniped = 0  # Crazy: its 4s someone else took, less the piles it won
        self._won = 0  # Crazy: its score pile when it last looked

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
        return self.policy(sight)(sight, now_ns)

    def policy(self, sight: Sight) -> Callable[[Any, int], Action | None]:
        """The decision function for this kind of game (looked up once per round)."""
        if isinstance(sight, ClassicSight):
            if self.level == Level.INSTANT and not sight.options.pro_row:
                return _instant_classic
            return self._classic
        if isinstance(sight, DiceSight):
            return self._dice
        if isinstance(sight, DominoSight):
            return self._domino
        if isinstance(sight, CrazySight):
            return self._crazy
        raise TypeError(f"no policy for {type(sight).__name__}")

    # ------------------------------------------------------------ games

    def _classic(self, s: ClassicSight, now: int) -> Action | None:
        seat = s.seat
        overlook = self.skill.overlook
        # Stack first (it scores -2 a card), then the row (which refills from the stack).
        if not overlook:
            card = s.first_fitting()
            if card is not None:
                self._fruitless = 0
                return PlayCard(seat, card, now)
        else:
            needs = s.needs
            for card in s.playable():
                if needs[card] > 0 and self.rng.random() >= overlook:
                    self._fruitless = 0
                    return PlayCard(seat, card, now)
        if s.options.pro_row:
            stack_top, discard_top = s.stack_top(), s.discard_top()
            for i, top in enumerate(s.row_tops()):
                if top is None:
                    continue
                for card in (stack_top, discard_top):
                    if card is not None and s.row_takes(top, card) and self._sees():
                        return self._played(MoveToRow(seat, card, i, now))
            passes = s.hand_size() // 3 + 3
            # A seat with nothing left to turn votes at once: it must never hold up the vote.
            if (self._fruitless > passes or not s.can_turn()) and not s.voted_stuck():
                return VoteStuck(seat, now)
        if s.can_turn():
            self._fruitless += 1
            return TurnHand(seat, now)
        return None

    def _played(self, action: Action) -> Action:
        self._fruitless = 0
        return action

    def _dice(self, s: DiceSight, now: int) -> Action:
        fitting = [d for d in s.dice() if s.fits(d) and self._sees()]
        if fitting:
            die = self.rng.choice(fitting) if self.level != Level.INSTANT else fitting[0]
            return PlaceDie(s.seat, die.colour, die.face, now)
        return Reroll(s.seat, now)

    def _domino(self, s: DominoSight, now_ns: int) -> Action | None:
        if s.top_card() is None:
            return None
        options = [p for p in s.placements(now_ns) if self._sees()]
        if options:
            chosen = self.rng.choice(options) if len(options) > 1 else options[0]
            return self._played(chosen._replace(ts=now_ns))
        # Jokers are scarce: only after a whole pass through the hand found nothing
        # (two passes for an easy bot, which is slow to think of them), or when the
        # screen says the round waits for one.
        passes = 2 if self.level == Level.EASY else 1
        if s.jokers() and (self._fruitless > passes * s.held() or s.joker_needed()):
            joker = s.joker_for_top(now_ns)
            if joker is not None:
                return self._played(joker._replace(ts=now_ns))
        self._fruitless += 1
        return DiscardDomino(s.seat, now_ns)

    def _crazy(self, s: CrazySight, now: int) -> Action | None:
        """Play to win piles: a 5 on a 4 first; never leave a 4 for others unless holding the 5
        that takes it; keep Crazy cards and 5s as finishers; discard only what cannot be played.

        Judgement by level: easy climbs greedily (it gifts 4s and plays Crazy cards anywhere);
        medium and hard keep their finishers and make no 4 (whoever is quickest takes it, and a 4
        then a 5 are two moves) but wait for others' 4s; hard also spoils a pile others are about
        to win (a 3 onto a 4 it cannot take)."""
        hand = s.hand()
        if not hand:
            return None
        seat = s.seat
        tops = s.pile_tops()
        won = s.won()
        if won != self._won:
            self._sniped -= won > self._won
            self._won = won
            self._four = None
        elif self._four is not None and tops.get(self._four) != TOP - 1:
            self._sniped += self._four not in tops  # gone, and not to us: someone was quicker
            self._four = None
        finishers = sorted((c for c in hand if c.value == TOP or c.crazy), key=lambda c: c.crazy)
        # A 5 on a 4 wins the pile: always the best play (a plain 5 before a Crazy card).
        for pid, top in tops.items():
            if top == TOP - 1:
                for card in finishers:
                    if self._sees():
                        return PlayCrazy(seat, card, pid, TOP if card.crazy else None, now)
        if self.level == Level.EASY:
            return self._crazy_greedy(s, hand, tops, now)
        best: tuple[float, PlayCrazy] | None = None
        for card in hand:
            if card.crazy or not self._sees():
                continue
            for pid, top in tops.items():
                if abs(card.value - top) != 1:
                    continue
                worth = self._crazy_worth(card, top, finishers)
                if best is None or worth > best[0]:
                    best = (worth, PlayCrazy(seat, card, pid, None, now))
            if card.value == BOTTOM and s.pile_room() > 0 and (best is None or best[0] < 0.5):
                best = (0.5, PlayCrazy(seat, card, None, None, now))
        if best is not None and best[0] >= 0:
            if best[1].card.value == TOP - 1:
                self._four = best[1].pile
            return best[1]
        # Nothing worth playing: discard the card least likely to fit soon, keeping finishers.
        plain = [c for c in hand if not c.crazy]
        fives = [c for c in plain if c.value == TOP]
        if len(finishers) > 1 and fives:  # one finisher is enough to wait with
            return DiscardCrazy(seat, fives[0], now)
        spare = [c for c in plain if c.value != TOP] or plain
        if spare:
            worst = max(spare, key=lambda c: min((abs(c.value - t) for t in tops.values()), default=9))
            return DiscardCrazy(seat, worst, now)
        card = hand[0]  # only Crazy cards in hand: start a pile, or lay one down making no 4
        if s.pile_room() > 0:
            return PlayCrazy(seat, card, None, BOTTOM, now)
        for pid, top in tops.items():
            for value in (top - 1, top + 1):
                if BOTTOM <= value < TOP - 1 or (value == TOP - 1 == top + 1 and len(hand) > 1):
                    return PlayCrazy(seat, card, pid, value, now)
        return DiscardCrazy(seat, card, now)

    def _crazy_worth(self, card: CrazyCard, top: int, finishers: list[CrazyCard]) -> float:
        """How good `card` on a pile showing `top` is; below 0 is worse than discarding."""
        if card.value == TOP - 1:  # makes a 4: a gift to whoever is quickest
            if finishers and self._sniped < _SNIPES[self.level]:
                return 3.0
            return NOFIN
        if top == TOP - 1:  # a 3 onto a 4 we cannot take: spoils it for the others
            return 2.0 if self.level in (Level.HARD, Level.INSTANT) else 0.2
        return 1.0 + 0.1 * card.value if card.value > top else 0.5

    def _crazy_greedy(self, s: CrazySight, hand: list[CrazyCard], tops: dict[int, int],
                      now: int) -> Action:
        """The easy bot: climb wherever it can, else start a pile, else discard."""
        plain = [c for c in hand if not c.crazy]
        moves = [(c, pid) for c in plain for pid, top in tops.items() if abs(c.value - top) == 1]
        moves.sort(key=lambda m: (-(m[0].value > tops[m[1]]), -m[0].value))
        for card, pid in moves:
            if self._sees():
                return PlayCrazy(s.seat, card, pid, None, now)
        if s.pile_room() > 0:
            for card in plain:
                if card.value == BOTTOM and self._sees():
                    return PlayCrazy(s.seat, card, None, None, now)
        if plain:
            worst = max(plain, key=lambda c: min((abs(c.value - t) for t in tops.values()), default=9))
            return DiscardCrazy(s.seat, worst, now)
        card = hand[0]
        if tops:
            pid, top = next(iter(tops.items()))
            return PlayCrazy(s.seat, card, pid, top + 1 if top < TOP else top - 1, now)
        if s.pile_room() > 0:
            return PlayCrazy(s.seat, card, None, BOTTOM, now)
        return DiscardCrazy(s.seat, card, now)


_tuple_new = tuple.__new__


def _instant_classic(s: ClassicSight, now: int) -> Action | None:
    """The instant bot without pro_row: play the first card that fits, else turn 3 cards.

    The same choice `Bot._classic` makes when nothing is overlooked, in one glance.
    Simulation and the engine benchmark spend most of their time here, so the
    actions are built with tuple's own constructor (a namedtuple's `__new__` is
    a Python function); the result is an ordinary PlayCard or TurnHand.
    """
    card = s.first_fitting()
    if card is not None:
        return _tuple_new(PlayCard, (s.seat, card, now))  # type: ignore[return-value]
    if s.can_turn():
        return _tuple_new(TurnHand, (s.seat, now))  # type: ignore[return-value]
    return None

