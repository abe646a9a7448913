"""Dice Ligretto on the web page: the board, a row of faces per colour (the faces laid in their
colour, the rest by number), and each seat's dice."""

from __future__ import annotations

from typing import Any

from ...views.boards import board as whole
from ...views.boards import card, cards, count, free, hand, rows
from .rules import FACES, DiceRound, DieColour


def board(rnd: DiceRound, seats: list[int]) -> dict[str, Any]:
    lines = [[card(colour.letter, face) if face <= rnd.board[colour] else free(face)
              for face in range(1, FACES + 1)] for colour in DieColour]
    hands = [hand(seats, player,
                  cards([card(d.colour.letter, d.face) for d in dice], small=True, shape="die"),
                  count(f"{len(dice)} dice"))
             for player, dice in enumerate(rnd.dice)]
    return whole("faces placed per colour", [rows(lines, shape="die")], hands)
