"""Dice for a terminal: the board's faces per colour, a seat's dice, the keys."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from ...engine.game import Controls
from ...views.readable import STYLE, chip, colour_word
from .rules import FACES, DiceRound, DieColour

KEYS = "←/→ choose a die · space places it · enter rerolls all your dice"


def keys(rnd: Any, direct: bool = False) -> str:
    return KEYS


def centre(rnd: DiceRound, table: Any) -> Text:
    out = Text("faces placed per colour\n", style="dim")
    for colour in DieColour:
        letter, placed = colour.letter, rnd.board[colour]
        out.append_text(colour_word(letter))
        for face in range(1, FACES + 1):
            out.append(f" {face}", style=f"bold black on {STYLE[letter]}" if face <= placed else "grey42")
        out.append("  full" if placed >= FACES else f"  next {placed + 1}", style=f"bold {STYLE[letter]}")
        out.append("\n")
    out.rstrip()
    return out


def seat(c: Controls, rnd: DiceRound) -> Text:
    dice = c.choices()
    out = Text("your dice ", style="dim")
    for i, die in enumerate(dice):
        out.append_text(chip(die.colour.letter, str(die.face), i == c.cursor % len(dice)))
    out.append(f"\n{len(dice)} left", style="dim")
    return out
