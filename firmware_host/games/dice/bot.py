"""The Dice bot: place a die that fits, else reroll."""

from __future__ import annotations

from types import MethodType

from ...engine.codec import Action
from ...engine.game import Policy
from ...table.bot_players import Bot, Level
from .rules import DiceAction, PlaceDie, Reroll
from .sight import DiceSight


def play(bot: Bot, s: DiceSight, now: int) -> Action:
    planned = bot.planned  # dice seen fitting at the last look: not overlooked now, placed first
    fitting = [d for d in s.dice() if s.fits(d) and (
        (planned and PlaceDie(s.seat, d.colour, d.face) in planned) or bot.sees())]
    if fitting:
        known = [d for d in fitting if PlaceDie(s.seat, d.colour, d.face) in planned] if planned else ()
        if known:  # seen at the last look: placed first
            die = known[0]
        elif bot.level == Level.INSTANT:
            die = fitting[0]
        else:
            die = bot.rng.choice(fitting)
        if bot.plans:  # the others it saw: placed next at a routine move's pace (Bot.planned)
            bot.plan(PlaceDie(s.seat, d.colour, d.face) for d in fitting if d != die)
        return PlaceDie(s.seat, die.colour, die.face, now)
    return Reroll(s.seat, now)


def policy(bot: Bot, sight: DiceSight) -> Policy[DiceSight, DiceAction]:
    return MethodType(play, bot)
