"""Colour is never the only signal (issue 31), on the centre LED matrix: its 3x5 digits leave no
room for a shape, so what else tells a red pile from a green one is said in docs/displays.md
("Centre matrix", "Red and green on the matrix") and held here, pixel by pixel."""

from __future__ import annotations

from helpers import deal
from PIL import Image

from firmware_host.games.classic.rules import Card, PlayCard
from firmware_host.games.dice.rules import Die, DieColour
from firmware_host.table.matches import new_match
from firmware_host.views.centre import CARD_RGB, PITCH, render_centre
from firmware_host.views.font import DIGIT_H, DIGIT_W

C = Card.parse
# Machado, Oliveira and Fernandes (2009), deuteranopia at severity 1.0, on linear RGB (as
# tests/web/test_tv.py looks at the web's cards).
DEUTERANOPIA = ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413),
                (-0.011820, 0.042940, 0.968881))


def deuteranope(rgb: tuple[int, int, int]) -> tuple[float, ...]:
    def linear(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    def srgb(v: float) -> float:
        v = min(1.0, max(0.0, v))
        return 255 * (v * 12.92 if v <= 0.0031308 else 1.055 * v ** (1 / 2.4) - 0.055)

    lin = [linear(c / 255) for c in rgb]
    return tuple(srgb(sum(m * c for m, c in zip(row, lin, strict=True))) for row in DEUTERANOPIA)


def cell(img: Image.Image, index: int) -> tuple[bytes, set[tuple[int, int, int]]]:
    """A digit cell of the top row: which pixels are lit, and in which colours."""
    box = img.crop((index * PITCH, 0, index * PITCH + DIGIT_W, DIGIT_H))
    pixels = [box.getpixel((x, y)) for y in range(box.height) for x in range(box.width)]
    return bytes(1 if px != (0, 0, 0) else 0 for px in pixels), {px for px in pixels if px != (0, 0, 0)}


def test_a_red_and_a_green_pile_differ_by_their_place_not_their_digit() -> None:
    """Ligretto: a green 1 laid before a red 1. The matrix draws the same digit for both, and to a
    deuteranope their colours are near alike; what differs is the place: the piles are laid out
    in the colours' fixed order, red before green before blue before yellow, whatever the order
    they were started in."""
    match = new_match("classic", 2, 1, {}, setup={"deals": [deal("G1 B4 Y8", hand="Y2"),
                                                             deal("R1 Y4 B8", hand="G2")]})
    assert match.apply(PlayCard(0, C("G1"))) is None
    assert match.apply(PlayCard(1, C("R1"))) is None
    img = render_centre(match)
    red, green = cell(img, 0), cell(img, 1)
    assert red[1] == {CARD_RGB["R"]} and green[1] == {CARD_RGB["G"]}  # red first, though laid second
    assert red[0] == green[0] and sum(red[0]) >= 5  # the same digit, lit the same
    assert cell(img, 2)[1] == set()  # nothing else
    seen_red, seen_green = deuteranope(CARD_RGB["R"]), deuteranope(CARD_RGB["G"])
    assert max(abs(a - b) for a, b in zip(seen_red, seen_green, strict=True)) < 45  # alike to them
    assert max(abs(a - b) for a, b in zip(CARD_RGB["R"], CARD_RGB["G"], strict=True)) > 200


def test_dice_colours_each_have_their_own_row() -> None:
    """Dice: the board's four colours are four rows in a fixed order (red, yellow, green, blue from
    the top), so a row's place says its colour."""
    hands = [[Die.parse("R2")], [Die.parse("G2")]]
    match = new_match("dice", 2, 1, {}, setup={"dice": hands, "board": [1, 1, 1, 1]})
    img = render_centre(match)
    rows = img.height // len(DieColour)
    assert [c.name for c in DieColour] == ["RED", "YELLOW", "GREEN", "BLUE"]
    for row, colour in enumerate(DieColour):
        assert img.getpixel((0, row * rows)) == CARD_RGB[colour.letter]
