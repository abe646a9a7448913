"""The Domino bot: lay the top card somewhere, jokers only when nothing else will do."""

from __future__ import annotations

from types import MethodType
from typing import Any

from ...engine.codec import Action
from ...table.bot_players import Bot, Level
from .rules import DiscardDomino
from .sight import DominoSight


def play(bot: Bot, s: DominoSight, now_ns: int) -> Action | None:
    if s.top_card() is None:
        return None
    options = [p for p in s.placements(now_ns) if bot.sees()] if s.top_fits(now_ns) else []
    if options:
        chosen = bot.rng.choice(options) if len(options) > 1 else options[0]
        return bot.played(chosen._replace(ts=now_ns))
    # Jokers are scarce: only after a whole pass through the hand found nothing
    # (two passes for an easy bot, which is slow to think of them), or when the
    # screen says the round waits for one.
    passes = 2 if bot.level == Level.EASY else 1
    if s.jokers() and (bot.fruitless > passes * s.held() or s.joker_needed()):
        joker = s.joker_for_top(now_ns)
        if joker is not None:
            return bot.played(joker._replace(ts=now_ns))
    bot.fruitless += 1
    return DiscardDomino(s.seat, now_ns)


def policy(bot: Bot, sight: Any) -> Any:
    return MethodType(play, bot)
