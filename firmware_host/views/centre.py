"""The centre matrix: RGB at the matrix's size (32x16 by default, 32x32 too), for all to see.

- Ligretto: one column per open pile, in its colour, as tall as its top value
  (1 to 10 pixels); complete piles leave. Up to 32 piles across, a second band
  on a 32x32 matrix.
- Dice: the board, a row per colour, a cell per face, lit when placed.
- Domino: the board one pixel per square; covered squares dim, jokers white,
  tokens white, each seat's candidate placement blinking in its seat colour.
- Crazy: one column per pile, as tall as twice its top value.
A brightness cap (0..1) from configuration scales every pixel.
"""

from __future__ import annotations

from PIL import Image, ImageDraw

from ..rules.classic import ClassicRound
from ..rules.crazy import CrazyRound
from ..rules.dice import FACES, DiceRound
from ..rules.domino import JOKER, DominoRound, PlaceDomino
from ..rules.match import Match
from .font import draw_centred, draw_text, width

DEFAULT_SIZE = (32, 16)
CARD_RGB = {"R": (255, 0, 0), "G": (0, 200, 0), "B": (0, 60, 255), "Y": (255, 200, 0),
            "P": (170, 0, 255)}
SEAT_RGB = [(255, 255, 255), (255, 0, 160), (0, 255, 255), (255, 120, 0), (120, 255, 0),
            (160, 120, 255), (255, 255, 0), (0, 120, 255), (255, 60, 60), (60, 255, 120),
            (200, 200, 120), (120, 200, 200)]
DIM = 0.25


def seat_colour(seat: int) -> tuple[int, int, int]:
    return SEAT_RGB[seat % len(SEAT_RGB)]


def render_centre(match: Match, size: tuple[int, int] = DEFAULT_SIZE, brightness: float = 1.0,
                  blink: bool = True, candidates: dict[int, PlaceDomino] | None = None) -> Image.Image:
    """The centre matrix for the round in progress. `blink` is the blink phase (the
    caller flips it a few times a second); `candidates` the seats' selected placements."""
    img = Image.new("RGB", size, (0, 0, 0))
    rnd = match.round
    if isinstance(rnd, ClassicRound):
        _classic(img, rnd)
    elif isinstance(rnd, DiceRound):
        _dice(img, rnd)
    elif isinstance(rnd, DominoRound):
        _domino(img, rnd, blink, candidates or {})
    elif isinstance(rnd, CrazyRound):
        _crazy(img, rnd)
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


def _scale(rgb: tuple[int, int, int], k: float) -> tuple[int, int, int]:
    return (int(rgb[0] * k), int(rgb[1] * k), int(rgb[2] * k))


def _columns(img: Image.Image, columns: list[tuple[tuple[int, int, int], int]], unit: int) -> None:
    """Bars from the bottom of each band: (colour, height in units)."""
    w, h = img.size
    bands = max(1, h // 16)
    band_h = h // bands
    draw = ImageDraw.Draw(img)
    for i, (rgb, height) in enumerate(columns[: w * bands]):
        band, x = divmod(i, w)
        bottom = (band + 1) * band_h - 1
        draw.line((x, bottom, x, bottom - height * unit + 1), fill=rgb)


def _classic(img: Image.Image, rnd: ClassicRound) -> None:
    tops = sorted(rnd.pile_tops(), key=lambda c: (c.colour, c.value))
    value = (lambda c: 11 - c.value) if rnd.options.descending else (lambda c: c.value)
    _columns(img, [(CARD_RGB[c.colour.letter], value(c)) for c in tops], 1)


def _dice(img: Image.Image, rnd: DiceRound) -> None:
    from ..rules.dice import DieColour

    w, h = img.size
    cell_w, cell_h = w // FACES, h // len(DieColour)
    draw = ImageDraw.Draw(img)
    for row, colour in enumerate(DieColour):
        rgb = CARD_RGB[colour.letter]
        for face in range(FACES):
            lit = face < rnd.board[colour]
            box = (face * cell_w, row * cell_h, face * cell_w + cell_w - 2, row * cell_h + cell_h - 2)
            draw.rectangle(box, fill=rgb if lit else _scale(rgb, 0.08))


def _domino(img: Image.Image, rnd: DominoRound, blink: bool,
            candidates: dict[int, PlaceDomino]) -> None:
    squares = rnd.board.colours
    rows = max(r for r, _ in squares) + 1
    cols = max(c for _, c in squares) + 1
    ox = max(0, (img.width - cols) // 2)
    oy = max(0, (img.height - rows) // 2)
    px = img.load()
    for (r, c), colour in squares.items():
        if 0 <= c + ox < img.width and 0 <= r + oy < img.height:
            covered = rnd.covered.get((r, c))
            rgb = CARD_RGB[colour.letter]
            if covered is not None:
                rgb = (255, 255, 255) if covered[1] == JOKER else _scale(rgb, DIM)
            px[c + ox, r + oy] = rgb
    if blink:
        for seat, placement in candidates.items():
            for r, c in (placement.near, placement.far):
                if 0 <= c + ox < img.width and 0 <= r + oy < img.height:
                    px[c + ox, r + oy] = seat_colour(seat)
    for tok in rnd.tokens:
        r, c = tok.square
        if 0 <= c + ox < img.width and 0 <= r + oy < img.height:
            px[c + ox, r + oy] = (255, 255, 255) if blink or tok.reserved_by is None else (0, 0, 0)


def _crazy(img: Image.Image, rnd: CrazyRound) -> None:
    columns = []
    for pile in rnd.piles.values():
        top_card = pile.cards[-1][1]
        rgb = CARD_RGB[top_card.colour.letter]
        columns += [(rgb, pile.top)] * 3 + [((0, 0, 0), 0)]
    _columns(img, columns, 3 if img.height >= 16 else 1)
