"""The centre matrix: RGB at the matrix's size (32x16 by default, 32x32 too), for all to see.

Players read it from their seats, so values are digits, never pixels to count
(docs/displays.md has the layout rules). During a round the game draws it (`Game.draw_centre`,
in each game's screens.py) with the pieces here: the cards' and seats' colours, open piles as
digits (`digit_piles`); around the rounds this module draws the words, the countdown and the
winner. A brightness cap (0..1) from configuration scales every pixel.
"""

from __future__ import annotations

from PIL import Image, ImageDraw

from ..engine.game import find
from ..engine.match import Match
from .font import DIGIT_H, DIGIT_W, draw_centred, draw_digit, draw_text, width

DEFAULT_SIZE = (32, 16)
CARD_RGB = {"R": (255, 0, 0), "G": (0, 200, 0), "B": (0, 60, 255), "Y": (255, 200, 0),
            "P": (170, 0, 255)}
SEAT_RGB = [(255, 255, 255), (255, 0, 160), (0, 255, 255), (255, 120, 0), (120, 255, 0),
            (160, 120, 255), (255, 255, 0), (0, 120, 255), (255, 60, 60), (60, 255, 120),
            (200, 200, 120), (120, 200, 200)]


def seat_colour(seat: int) -> tuple[int, int, int]:
    return SEAT_RGB[seat % len(SEAT_RGB)]


def render_centre(match: Match, size: tuple[int, int] = DEFAULT_SIZE, brightness: float = 1.0,
                  blink: bool = True, candidates: dict[int, object] | None = None) -> Image.Image:
    """The centre matrix for the round in progress. `blink` is the blink phase (the
    caller flips it a few times a second); `candidates` the seats' selections (`Game.mark`)."""
    img = Image.new("RGB", size, (0, 0, 0))
    find(match.round.game).draw_centre(img, match.round, blink, candidates or {})
    return cap(img, brightness)


def render_word(text: str, rgb: tuple[int, int, int], size: tuple[int, int] = DEFAULT_SIZE,
                brightness: float = 1.0, frame: int = 0) -> Image.Image:
    """A countdown digit, "GO", a finisher's "LIGRETTO!" in their seat colour. Text wider
    than the matrix scrolls through from the right, one pixel per `frame`."""
    img = Image.new("RGB", size, (0, 0, 0))
    text = text.upper()
    y = (size[1] - 6) // 2
    wide = width(text)
    if wide <= size[0]:
        draw_centred(img, y, text, fill=rgb)
    else:
        draw_text(img, (size[0] - frame % (wide + size[0]), y), text, fill=rgb)
    return cap(img, brightness)


def render_winner(seat: int, frame: int, size: tuple[int, int] = DEFAULT_SIZE,
                  brightness: float = 1.0) -> Image.Image:
    """A winner animation: the seat's colour in a ring that grows and wraps with `frame`."""
    img = Image.new("RGB", size, (0, 0, 0))
    draw = ImageDraw.Draw(img)
    w, h = size
    r = frame % (max(w, h) // 2 + 1)
    draw.rectangle((w // 2 - r - 1, h // 2 - r - 1, w // 2 + r, h // 2 + r), outline=seat_colour(seat))
    draw_centred(img, (h - 6) // 2, str(seat + 1), fill=seat_colour(seat))
    return cap(img, brightness)


def cap(img: Image.Image, brightness: float) -> Image.Image:
    """Scale every channel so the supply never sees more than the cap allows."""
    if brightness >= 1.0:
        return img
    level = max(0.0, brightness)
    return img.point(lambda v: int(v * level))


def scale(rgb: tuple[int, int, int], k: float) -> tuple[int, int, int]:
    return (int(rgb[0] * k), int(rgb[1] * k), int(rgb[2] * k))


PITCH, ROW_PITCH = DIGIT_W + 1, DIGIT_H + 1  # a digit cell and its 1 px gap
BAR_BAND = 11  # fallback bars: up to 10 px and a 1 px gap
BAR_SHADE = 0.5  # every other fallback bar, so touching bars of one colour stay apart
MORE = (255, 255, 255)  # the last bar when even the bars do not fit: more piles than shown


def pile_layout(size: tuple[int, int], piles: int) -> str:
    """How `piles` open piles are shown at this matrix size: "digits", "bars" or "bars+more".
    The bottom row is kept for the complete piles, the one above it as a gap."""
    w, h = size
    if piles <= ((w + 1) // PITCH) * ((h - 2 + 1) // ROW_PITCH):
        return "digits"
    if piles <= w * max(1, (h - 1) // BAR_BAND):
        return "bars"
    return "bars+more"


def digit_piles(img: Image.Image, open_piles: list[tuple[tuple[int, int, int], int]],
                complete: list[tuple[int, int, int]]) -> None:
    """Open piles as their top value in 3x5 digits in the card's colour (10 a Roman X), 8 to a
    row on 32 px with a 1 px gap (16 piles on 32x16, 40 on 32x32); complete piles as dots along
    the bottom row. Piles that do not fit as digits fall back to 1 px bars as tall as the value
    (see `pile_layout`)."""
    w, h = img.size
    layout = pile_layout(img.size, len(open_piles))
    if layout == "digits":
        per_row = (w + 1) // PITCH
        for i, (rgb, value) in enumerate(open_piles):
            row, col = divmod(i, per_row)
            draw_digit(img, (col * PITCH, row * ROW_PITCH), value, rgb)
    else:
        bands = max(1, (h - 1) // BAR_BAND)
        room = w * bands
        shown = open_piles if layout == "bars" else [*open_piles[: room - 1], (MORE, 10)]
        draw = ImageDraw.Draw(img)
        for i, (rgb, value) in enumerate(shown):
            band, x = divmod(i, w)
            bottom = band * BAR_BAND + BAR_BAND - 2
            shaded = x % 2 == 1 and rgb != MORE
            draw.line((x, bottom, x, bottom - value + 1), fill=scale(rgb, BAR_SHADE) if shaded else rgb)
    pitch = 2 if len(complete) <= (w + 1) // 2 else 1
    px = img.load()
    assert px is not None  # a PIL image that exists in memory always has its pixels
    for i, rgb in enumerate(complete[:w]):
        px[i * pitch, h - 1] = rgb


