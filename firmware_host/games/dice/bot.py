"""The Dice bot: place a die that fits, else reroll."""

from __future__ import annotations

from types import MethodType
from typing import Any

from ...engine.codec import Action
from ...table.bot_players import Bot, Level
from .rules import PlaceDie, Reroll
from .sight import DiceSight


def play(bot: Bot, s: DiceSight, now: int) -> Action:
    fitting = [d for d in s.dice() if s.fits(d) and bot.sees()]
    if fitting:
        die = bot.rng.choice(fitting) if bot.level != Level.INSTANT else fitting[0]
        return PlaceDie(s.seat, die.colour, die.face, now)
    return Reroll(s.seat, now)


def policy(bot: Bot, sight: Any) -> Any:
    return MethodType(play, bot)
