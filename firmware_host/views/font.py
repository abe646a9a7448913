"""Bitmap text for tiny screens, from luma.core's legacy fonts.

Every glyph is turned into a small 1-bit image once and pasted after that, so a
seat view renders in well under a millisecond and identically on every machine
(no FreeType, no anti-aliasing).
"""

from __future__ import annotations

import unicodedata
from functools import cache, lru_cache

from luma.core.legacy.font import CP437_FONT, TINY_FONT, proportional
from PIL import Image

SMALL = "small"  # 4 px wide glyphs, 5-6 px tall: 30 characters across 128 px
LARGE = "large"  # the 8x8 CP437 font, proportional: card values and headings

_FONTS = {SMALL: proportional(TINY_FONT), LARGE: proportional(CP437_FONT)}
TEXTS_KEPT = 256
"""Strings whose width and mask are kept. Screens repeat a few texts, but numbers in them (scores,
counts, places) make new ones all match long: each mask holds C memory PIL allocates, so a
larger cache only fills, slowly, for hours (the daemon's soak saw it as a leak)."""


@cache
def _glyph(font: str, ch: str) -> Image.Image:
    columns = _FONTS[font][ord(ch) if ord(ch) < 256 else ord("?")]
    img = Image.new("1", (max(len(columns), 1), 8), 0)
    px = img.load()
    for x, byte in enumerate(columns):
        for y in range(8):
            if byte >> y & 1:
                px[x, y] = 1
    return img


@lru_cache(maxsize=TEXTS_KEPT)
def drawable(text: str) -> str:
    """`text` (a player's name) as these fonts can draw it: printable ASCII as it is, a letter
    with an accent as the letter ("Zoé" is "Zoe"), anything else "?". The web and the terminal
    show the name itself."""
    out = []
    for ch in text:
        if " " <= ch <= "~":
            out.append(ch)
            continue
        bare = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        out.append(bare if bare and all(" " <= c <= "~" for c in bare) else "?")
    return "".join(out)


@lru_cache(maxsize=TEXTS_KEPT)
def width(text: str, font: str = SMALL) -> int:
    return sum(_glyph(font, ch).width + 1 for ch in text) - (1 if text else 0)


@lru_cache(maxsize=TEXTS_KEPT)
def _line(font: str, text: str) -> Image.Image:
    """A whole string as one mask: screens repeat their texts, so one paste each."""
    img = Image.new("1", (max(width(text, font), 1), 8), 0)
    x = 0
    for ch in text:
        glyph = _glyph(font, ch)
        img.paste(1, (x, 0), glyph)
        x += glyph.width + 1
    return img


def draw_text(img: Image.Image, xy: tuple[int, int], text: str, font: str = SMALL,
              fill: int | tuple[int, int, int] = 1) -> int:
    """Draw `text` with its top-left at `xy`; returns the x just after it."""
    if not text:
        return xy[0]
    mask = _line(font, text)
    img.paste(fill, xy, mask)
    return xy[0] + mask.width + 1


def draw_centred(img: Image.Image, y: int, text: str, font: str = SMALL,
                 fill: int | tuple[int, int, int] = 1, x0: int = 0, x1: int | None = None) -> None:
    x1 = img.width if x1 is None else x1
    draw_text(img, (x0 + (x1 - x0 - width(text, font)) // 2, y), text, font, fill)


# 3x5 digits for the centre matrix, one string per pixel row. A pile's top value must be read
# from a seat a metre away on a 32-pixel-wide matrix: 3 px wide + a 1 px gap puts 8 piles
# across 32 px. Ten would need two digits (7 px), so it is the Roman X, which no digit resembles.
DIGITS_3X5: dict[int, tuple[str, ...]] = {
    0: ("###", "#.#", "#.#", "#.#", "###"),
    1: (".#.", "##.", ".#.", ".#.", "###"),
    2: ("###", "..#", "###", "#..", "###"),
    3: ("###", "..#", "###", "..#", "###"),
    4: ("#.#", "#.#", "###", "..#", "..#"),
    5: ("###", "#..", "###", "..#", "###"),
    6: ("###", "#..", "###", "#.#", "###"),
    7: ("###", "..#", "..#", "..#", "..#"),
    8: ("###", "#.#", "###", "#.#", "###"),
    9: ("###", "#.#", "###", "..#", "###"),
    10: ("#.#", "#.#", ".#.", "#.#", "#.#"),
}
DIGIT_W, DIGIT_H = 3, 5


@cache
def _digit(value: int, sx: int, sy: int) -> Image.Image:
    mask = Image.new("1", (DIGIT_W, DIGIT_H), 0)
    mask.putdata([1 if bit == "#" else 0 for row in DIGITS_3X5[value] for bit in row])
    return mask.resize((DIGIT_W * sx, DIGIT_H * sy), Image.Resampling.NEAREST)


def draw_digit(img: Image.Image, xy: tuple[int, int], value: int, fill: tuple[int, int, int],
               scale: tuple[int, int] = (1, 1)) -> None:
    """One value 0..10 as a 3x5 glyph, each pixel `scale` (x, y) pixels; clipped at the edges."""
    img.paste(fill, xy, _digit(value, *scale))
