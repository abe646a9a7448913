"""Tiny's bot: lay the first card that fits (if it sees it), else draw a new hand."""

from __future__ import annotations

from types import MethodType
from typing import Any

from .rules import Lay, Redraw
from .sight import TinySight


def play(bot: Any, s: TinySight, now: int) -> Any:
    card = next((c for c in s.hand() if abs(c - s.centre()) == 1 and bot.sees()), None)
    return Lay(s.seat, card, now) if card is not None else Redraw(s.seat, now)


def policy(bot: Any, sight: TinySight) -> Any:
    return MethodType(play, bot)
