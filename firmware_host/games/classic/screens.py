"""Ligretto on the seat screen (its row, stack and discard as cards) and the centre matrix:
each open pile's top value as a 3x5 digit in the card's colour, complete piles as dots along
the bottom row, more open piles than digit cells as 1 px bars as tall as the value
(views/centre.py `digit_piles`)."""

from __future__ import annotations

from typing import Any

from PIL import Image, ImageDraw

from ...engine.game import Controls
from ...views.centre import CARD_RGB, digit_piles
from ...views.font import SMALL, draw_centred
from ...views.seat import SIZE, card_face
from .rules import Card, ClassicRound


def seat(img: Image.Image, c: Controls, rnd: ClassicRound) -> str:
    st = rnd.seats[c.seat]
    places = c.choices()
    n = len(places)
    w = min(17, (SIZE[0] - (n - 1) * 1) // n)
    row = len(st.row)
    for i, card in enumerate(places):
        x = i * (w + 1) + (4 if i >= row else 0)
        selected = i == c.cursor % n
        if card is None:
            ImageDraw.Draw(img).rectangle((x, 12, x + w - 1, 37), outline=1 if selected else 0)
            draw_centred(img, 22, "-", SMALL, 1, x, x + w)
        else:
            assert isinstance(card, Card)
            card_face(img, x, 12, w, 26, card.colour.letter, str(card.value), selected)
        label = str(i + 1) if i < row else ("STK" if i == row and not rnd.options.stack_face_down else "DIS")
        draw_centred(img, 40, label, SMALL, 1, x, x + w)
        if c.destination == i:
            draw_centred(img, 7, "V", SMALL, 1, x, x + w)
    return f"STACK {len(st.stack)}  HAND {len(st.hand)}"


def centre(img: Image.Image, rnd: ClassicRound, blink: bool, marks: dict[int, Any]) -> None:
    tops = sorted(rnd.pile_tops(), key=lambda c: (c.colour, c.value))
    done = sorted(rnd.complete_tops(), key=lambda c: c.colour)
    digit_piles(img, [(CARD_RGB[c.colour.letter], c.value) for c in tops],
                    [CARD_RGB[c.colour.letter] for c in done])
