"""Tiny on the web page: the number in the middle, each seat's hand and how many it has laid.
Tiny's cards have no colour: each shows its number alone."""

from __future__ import annotations

from typing import Any

from firmware_host.views.boards import board as whole
from firmware_host.views.boards import cards, count, free, hand, piles

from .rules import TinyRound


def board(rnd: TinyRound, seats: list[int]) -> dict[str, Any]:
    hands = [hand(seats, player, cards([free(n) for n in held], small=True),
                  count(f"laid {rnd.laid[player]} of {rnd.goal}"))
             for player, held in enumerate(rnd.hands)]
    return whole("the number in the middle", [piles([free(rnd.centre)], "")], hands)
