"""Tiny for a terminal: the number in the middle, a seat's hand, the keys."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from .rules import HAND, TinyRound

KEYS = "←/→ choose a card · space lays it · enter draws a new hand"


def keys(rnd: Any, direct: bool = False) -> str:
    """The direct keys too where the seat has select buttons: one per card of the hand."""
    return KEYS + (f" · 1-{HAND} lays that card" if direct else "")


def centre(rnd: TinyRound, table: Any) -> Text:
    return Text(f"the number is {rnd.centre}", style="bold")


def seat(c: Any, rnd: TinyRound) -> Text:
    cards = (f"[{n}]" if i == c.cursor else f" {n} " for i, n in enumerate(c.choices()))
    return Text("hand " + " ".join(cards))
