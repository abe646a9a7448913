"""The Crazy bot: win piles with a 5 on a 4, keep finishers, discard what cannot be played."""

from __future__ import annotations

from dataclasses import dataclass
from types import MethodType
from typing import Any

from ...game.bots import Bot, Level
from ...rules.codec import Action
from ...rules.crazy import BOTTOM, TOP, CrazyCard, DiscardCrazy, PlayCrazy
from ...rules.sight import CrazySight

_SNIPES = {Level.INSTANT: 1, Level.EASY: 99, Level.MEDIUM: 3, Level.HARD: 1}
"""How many more of its 4s a bot lets others take than piles it wins before it stops making 4s."""

NOFIN = -1.0


@dataclass(slots=True)
class Memory:
    """What a Crazy bot keeps between decisions."""

    four: int | None = None  # the pile this bot last made a 4 on
    sniped: int = 0  # its 4s someone else took, less the piles it won
    won: int = 0  # its score pile when it last looked


def play(bot: Bot, s: CrazySight, now: int) -> Action | None:
    """Play to win piles: a 5 on a 4 first; never leave a 4 for others unless holding the 5
    that takes it; keep Crazy cards and 5s as finishers; discard only what cannot be played.

    Judgement by level: easy climbs greedily (it gifts 4s and plays Crazy cards anywhere);
    medium and hard keep their finishers and make no 4 (whoever is quickest takes it, and a 4
    then a 5 are two moves) but wait for others' 4s; hard also spoils a pile others are about
    to win (a 3 onto a 4 it cannot take)."""
    hand = s.hand()
    if not hand:
        return None
    mem = bot.memory.setdefault("crazy", Memory())
    seat = s.seat
    tops = s.pile_tops()
    won = s.won()
    if won != mem.won:
        mem.sniped -= won > mem.won
        mem.won = won
        mem.four = None
    elif mem.four is not None and tops.get(mem.four) != TOP - 1:
        mem.sniped += mem.four not in tops  # gone, and not to us: someone was quicker
        mem.four = None
    finishers = sorted((c for c in hand if c.value == TOP or c.crazy), key=lambda c: c.crazy)
    # A 5 on a 4 wins the pile: always the best play (a plain 5 before a Crazy card).
    for pid, top in tops.items():
        if top == TOP - 1:
            for card in finishers:
                if bot.sees():
                    return PlayCrazy(seat, card, pid, TOP if card.crazy else None, now)
    if bot.level == Level.EASY:
        return _greedy(bot, s, hand, tops, now)
    best: tuple[float, PlayCrazy] | None = None
    for card in hand:
        if card.crazy or not bot.sees():
            continue
        for pid, top in tops.items():
            if abs(card.value - top) != 1:
                continue
            worth = _worth(bot, mem, card, top, finishers)
            if best is None or worth > best[0]:
                best = (worth, PlayCrazy(seat, card, pid, None, now))
        if card.value == BOTTOM and s.pile_room() > 0 and (best is None or best[0] < 0.5):
            best = (0.5, PlayCrazy(seat, card, None, None, now))
    if best is not None and best[0] >= 0:
        if best[1].card.value == TOP - 1:
            mem.four = best[1].pile
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

def _worth(bot: Bot, mem: Memory, card: CrazyCard, top: int, finishers: list[CrazyCard]) -> float:
    """How good `card` on a pile showing `top` is; below 0 is worse than discarding."""
    if card.value == TOP - 1:  # makes a 4: a gift to whoever is quickest
        if finishers and mem.sniped < _SNIPES[bot.level]:
            return 3.0
        return NOFIN
    if top == TOP - 1:  # a 3 onto a 4 we cannot take: spoils it for the others
        return 2.0 if bot.level in (Level.HARD, Level.INSTANT) else 0.2
    return 1.0 + 0.1 * card.value if card.value > top else 0.5

def _greedy(bot: Bot, s: CrazySight, hand: list[CrazyCard], tops: dict[int, int],
                  now: int) -> Action:
    """The easy bot: climb wherever it can, else start a pile, else discard."""
    plain = [c for c in hand if not c.crazy]
    moves = [(c, pid) for c in plain for pid, top in tops.items() if abs(c.value - top) == 1]
    moves.sort(key=lambda m: (-(m[0].value > tops[m[1]]), -m[0].value))
    for card, pid in moves:
        if bot.sees():
            return PlayCrazy(s.seat, card, pid, None, now)
    if s.pile_room() > 0:
        for card in plain:
            if card.value == BOTTOM and bot.sees():
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


def policy(bot: Bot, sight: Any) -> Any:
    return MethodType(play, bot)
