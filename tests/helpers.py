"""Small builders so tests can lay out a table the way the rulebook describes it."""

from __future__ import annotations

import random
from typing import Any

from firmware_host.rules.classic import Card, ClassicOptions, ClassicRound, Deal

OTHER_STACK = "R10 G10 B10 Y10 R9 G9 B9 Y9 R8 G8"


def cards(text: str) -> list[Card]:
    return [Card.parse(t) for t in text.split()]


def deal(row: str = "", stack: str = OTHER_STACK, hand: str = "", discard: str = "",
         rows: list[str] | None = None) -> Deal:
    """Row cards left to right; stack, hand and discard listed top first."""
    places = [cards(p) for p in rows] if rows is not None else [[c] for c in cards(row)]
    return Deal(row=places, stack=cards(stack)[::-1], hand=cards(hand)[::-1],
                discard=cards(discard)[::-1])


def classic(*deals: Deal, piles: list[str] = (), seed: int = 1, **options: Any) -> ClassicRound:
    """A round from explicit deals; piles as 'seat:card' runs with seats from 0."""
    laid = []
    for pile in piles:
        laid.append([(int(t.split(":")[0]), Card.parse(t.split(":")[1])) for t in pile.split()])
    return ClassicRound(len(deals), ClassicOptions(**options), random.Random(seed), list(deals), laid)
