"""Dice on the seat screen (its dice, the board in a line) and the centre matrix (a row per
colour, a cell per face, lit when placed)."""

from __future__ import annotations

from typing import Any

from PIL import Image, ImageDraw

from ...engine.game import Controls
from ...views.centre import CARD_RGB, scale
from ...views.font import LARGE, draw_centred
from ...views.seat import box
from .rules import FACES, DiceRound, Die, DieColour


def seat(img: Image.Image, c: Controls, rnd: DiceRound) -> str:
    dice = c.choices()
    per_row = 6
    for i, die in enumerate(dice):
        assert isinstance(die, Die)
        x = (i % per_row) * 21
        y = 10 + (i // per_row) * 18
        ink = box(img, x, y, 20, 17, i == c.cursor % len(dice))
        draw_centred(img, y + 5, f"{die.colour.letter}{die.face}", LARGE, ink, x, x + 20)
    board = " ".join(f"{colour.letter}{n}" for colour, n in zip(DieColour, rnd.board, strict=True))
    return f"DICE {len(dice)}  {board}"


def centre(img: Image.Image, rnd: DiceRound, blink: bool, marks: dict[int, Any]) -> None:
    w, h = img.size
    cell_w, cell_h = w // FACES, h // len(DieColour)
    draw = ImageDraw.Draw(img)
    for row, colour in enumerate(DieColour):
        rgb = CARD_RGB[colour.letter]
        for face in range(FACES):
            lit = face < rnd.board[colour]
            box = (face * cell_w, row * cell_h, face * cell_w + cell_w - 2, row * cell_h + cell_h - 2)
            draw.rectangle(box, fill=rgb if lit else scale(rgb, 0.08))
