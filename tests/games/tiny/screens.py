"""Tiny on the seat screen (its three cards, the cursor's inverted) and the centre matrix (the
number in the middle, as a digit)."""

from __future__ import annotations

from typing import Any

from PIL import Image, ImageDraw

from firmware_host.views.font import LARGE, draw_centred, draw_digit, draw_text

from .rules import TinyRound


def seat(img: Image.Image, c: Any, rnd: TinyRound) -> str:
    hand = c.choices()
    for i, card in enumerate(hand):
        x = i * 30
        selected = i == c.cursor % len(hand)
        ImageDraw.Draw(img).rectangle((x, 12, x + 26, 40), outline=1, fill=1 if selected else 0)
        draw_centred(img, 22, str(card), LARGE, 0 if selected else 1, x, x + 27)
    draw_text(img, (96, 20), f"ON {rnd.centre}")
    return f"LAID {rnd.laid[c.seat]} OF {rnd.goal}"


def centre(img: Image.Image, rnd: TinyRound, blink: bool, marks: dict[int, Any]) -> None:
    draw_digit(img, (1, 1), rnd.centre, (255, 255, 255), (2, 2))
