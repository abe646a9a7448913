"""Crazy on the seat screen (the hand in each card's own style, where the selected card goes)
and the centre matrix (a slot per pile the round allows, the pile's value as large a digit as
the slots allow, in its top card's colour)."""

from __future__ import annotations

from typing import Any

from PIL import Image, ImageDraw

from ...engine.game import Controls
from ...views.centre import CARD_RGB, scale
from ...views.font import DIGIT_H, DIGIT_W, LARGE, SMALL, draw_centred, draw_digit, draw_text
from ...views.seat import box
from .rules import CrazyCard, CrazyRound

SLOT_DIM = 0.15  # an empty pile slot's base line
WORDS = {1: "ONE", 2: "TWO", 3: "THREE", 4: "FOUR", 5: "FIVE"}
PIPS = {
    1: [(1, 1)],
    2: [(0, 0), (2, 2)],
    3: [(0, 0), (1, 1), (2, 2)],
    4: [(0, 0), (2, 0), (0, 2), (2, 2)],
    5: [(0, 0), (2, 0), (1, 1), (0, 2), (2, 2)],
}


def seat(img: Image.Image, c: Controls, rnd: CrazyRound) -> str:
    hand = c.choices()
    for i, card in enumerate(hand):
        assert isinstance(card, CrazyCard)
        x = i * 42
        selected = i == c.cursor % len(hand)
        ink = box(img, x, 9, 40, 32, selected)
        draw_text(img, (x + 2, 11), card.colour.letter, SMALL, ink)
        crazy_value(img, x + 4, 18, card, ink)
    targets = c.targets()
    if hand and targets:
        pile, value = targets[c.target % len(targets)]
        text = "NEW PILE" if pile is None else f"ON PILE {pile + 1}"
        if value is not None:
            text += f" AS {value}"
        draw_text(img, (0, 42), f"> {text}  ({c.target % len(targets) + 1}/{len(targets)})")
    elif hand:
        draw_text(img, (0, 42), "> NO PLACE  ALT: DISCARD")
    st = rnd.seats[c.seat]
    return f"DRAW {len(st.draw)}  WON {len(st.score)}  OFF {len(st.discard)}"


def crazy_value(img: Image.Image, x: int, y: int, card: CrazyCard, ink: int) -> None:
    """The value in the card's own style: pips, tally, digit, word or fingers."""
    draw = ImageDraw.Draw(img)
    v = card.value
    if card.crazy:
        draw_centred(img, y + 2, "CRAZY", SMALL, ink, x - 4, x + 36)
    elif card.style == "pips":
        for px, py in PIPS[v]:
            draw.rectangle((x + 8 + px * 7, y + py * 7, x + 10 + px * 7, y + 2 + py * 7), fill=ink)
    elif card.style == "tally":
        for i in range(min(v, 4)):
            draw.line((x + 6 + i * 5, y, x + 6 + i * 5, y + 16), fill=ink)
        if v == 5:
            draw.line((x + 3, y + 14, x + 24, y + 2), fill=ink)
    elif card.style == "digit":
        draw_centred(img, y + 4, str(v), LARGE, ink, x - 4, x + 36)
    elif card.style == "word":
        draw_centred(img, y + 5, WORDS[v], SMALL, ink, x - 4, x + 36)
    else:  # fingers: a palm and v raised fingers
        draw.rectangle((x + 4, y + 10, x + 27, y + 18), outline=ink)
        for i in range(v):
            fx = x + 5 + i * 5
            draw.line((fx, y + 2 if i else y + 6, fx, y + 9), fill=ink)
            draw.line((fx + 1, y + 2 if i else y + 6, fx + 1, y + 9), fill=ink)


def crazy_grid(size: tuple[int, int], slots: int) -> tuple[int, int, tuple[int, int]]:
    """(rows, slots per row, digit scale) for `slots` piles: the grid whose digits are largest.
    A digit may be stretched to twice as tall as wide, no more."""
    w, h = size
    best = (1, slots, (1, 1))
    best_area = 0
    for rows in range(1, slots + 1):
        per_row = -(-slots // rows)
        cw, ch = w // per_row, h // rows
        sx_max, sy_max = (cw - 1) // DIGIT_W, (ch - 2) // DIGIT_H  # a gap; the slot's base line
        if sx_max < 1 or sy_max < 1:
            continue
        sx = min(sx_max, sy_max)
        sy = min(sy_max, 2 * sx)
        if sx * sy > best_area:
            best, best_area = (rows, per_row, (sx, sy)), sx * sy
    return best


def centre(img: Image.Image, rnd: CrazyRound, blink: bool, marks: dict[int, Any]) -> None:
    """One slot per pile the round allows (as many as players): a dim base line, and over it
    the pile's value in the colour of its top card, as large as the slots allow."""
    slots = rnd.pile_limit
    rows, per_row, (sx, sy) = crazy_grid(img.size, slots)
    cw, ch = img.width // per_row, img.height // rows
    piles = list(rnd.piles.values())
    draw = ImageDraw.Draw(img)
    for i in range(slots):
        row, col = divmod(i, per_row)
        x = col * cw + (cw - DIGIT_W * sx) // 2
        base = row * ch + ch - 1
        draw.line((x, base, x + DIGIT_W * sx - 1, base), fill=scale((255, 255, 255), SLOT_DIM))
        if i < len(piles):
            pile = piles[i]
            rgb = CARD_RGB[pile.cards[-1][1].colour.letter]
            draw_digit(img, (x, base - 1 - DIGIT_H * sy), pile.top, rgb, (sx, sy))
