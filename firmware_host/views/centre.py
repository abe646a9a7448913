"""The centre matrix: RGB at the matrix's size (32x16 by default, 32x32 too), for all to see.

Players read it from their seats, so values are digits, never pixels to count
(docs/displays.md has the layout rules):
- Ligretto: each open pile's top value as a 3x5 digit in the card's colour, a
  1 px gap between piles, 8 to a row on 32 px (16 piles on 32x16, 40 on 32x32);
  10 is a Roman X. Complete piles are dots along the bottom row. More open piles
  than digit cells fall back to 1 px bars as tall as the value (`pile_layout`).
- Dice: the board, a row per colour, a cell per face, lit when placed.
- Domino: the board a pixel per square (two on 32x32 for the small two-player
  board), free squares at half brightness,
  covered ones dim, tokens the only full white with ticks in the margins on their
  row and column; each seat's candidate placement in its seat colour.
- Crazy: a slot per pile the round allows, the pile's value as large a digit as
  the slots allow, in its top card's colour.
A brightness cap (0..1) from configuration scales every pixel.
"""

from __future__ import annotations

from functools import cache

from PIL import Image, ImageDraw

from ..rules.classic import ClassicRound
from ..rules.crazy import CrazyRound
from ..rules.dice import FACES, DiceRound
from ..rules.domino import JOKER, DominoRound, PlaceDomino
from ..rules.match import Match
from .font import DIGIT_H, DIGIT_W, draw_centred, draw_digit, draw_text, width

DEFAULT_SIZE = (32, 16)
CARD_RGB = {"R": (255, 0, 0), "G": (0, 200, 0), "B": (0, 60, 255), "Y": (255, 200, 0),
            "P": (170, 0, 255)}
SEAT_RGB = [(255, 255, 255), (255, 0, 160), (0, 255, 255), (255, 120, 0), (120, 255, 0),
            (160, 120, 255), (255, 255, 0), (0, 120, 255), (255, 60, 60), (60, 255, 120),
            (200, 200, 120), (120, 200, 200)]
SLOT_DIM = 0.15  # an empty Crazy pile slot's base line


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


def _ligretto_piles(img: Image.Image, open_piles: list[tuple[tuple[int, int, int], int]],
                    complete: list[tuple[int, int, int]]) -> None:
    """Open piles as their top value in 3x5 digits in the card's colour, 8 to a row on 32 px
    with a 1 px gap; complete piles as dots along the bottom row. Piles that do not fit as
    digits fall back to 1 px bars as tall as the value (see `pile_layout`)."""
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
            draw.line((x, bottom, x, bottom - value + 1), fill=_scale(rgb, BAR_SHADE) if shaded else rgb)
    pitch = 2 if len(complete) <= (w + 1) // 2 else 1
    px = img.load()
    for i, rgb in enumerate(complete[:w]):
        px[i * pitch, h - 1] = rgb


def _classic(img: Image.Image, rnd: ClassicRound) -> None:
    tops = sorted(rnd.pile_tops(), key=lambda c: (c.colour, c.value))
    done = sorted(rnd.complete_tops(), key=lambda c: c.colour)
    _ligretto_piles(img, [(CARD_RGB[c.colour.letter], c.value) for c in tops],
                    [CARD_RGB[c.colour.letter] for c in done])


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


BOARD_SHADE = 0.45  # free domino squares: colours plain, yet well under a token's white
COVERED_SHADE = 0.1
JOKER_RGB = (40, 40, 40)
TOKEN_RGB = (255, 255, 255)


def _domino(img: Image.Image, rnd: DominoRound, blink: bool,
            candidates: dict[int, PlaceDomino]) -> None:
    """A square of k x k pixels, k as large as fits with a pixel of margin (1 on the usual
    boards, 2 for a small one on 32x32). Tokens are the only full white on the board, and a
    white tick in the margin beside and above/below the board marks each token's row and
    column, so the four can be found in a five-colour grid without blinking."""
    squares = rnd.board.colours
    rows = max(r for r, _ in squares) + 1
    cols = max(c for _, c in squares) + 1
    w, h = img.size
    k = max(1, min((w - 2) // cols, (h - 2) // rows))
    ox = max(0, (img.width - cols * k) // 2)
    oy = max(0, (img.height - rows * k) // 2)
    draw = ImageDraw.Draw(img)
    px = img.load()

    def put(x: int, y: int, rgb: tuple[int, int, int], wide: int = 1, tall: int = 1) -> None:
        if wide == tall == 1:  # the usual case, and a rectangle costs ten times a pixel
            if 0 <= x < img.width and 0 <= y < img.height:
                px[x, y] = rgb
        else:
            draw.rectangle((x, y, x + wide - 1, y + tall - 1), fill=rgb)

    def square(r: int, c: int, rgb: tuple[int, int, int]) -> None:
        put(ox + c * k, oy + r * k, rgb, k, k)

    free, under = _domino_shades()
    covered = rnd.covered
    for (r, c), colour in squares.items():
        on = covered.get((r, c))
        rgb = free[colour.letter] if on is None else JOKER_RGB if on[1] == JOKER else under[colour.letter]
        if k == 1:
            if c + ox < w and r + oy < h:  # a board wider than the matrix is cut, not an error
                px[c + ox, r + oy] = rgb
        else:
            square(r, c, rgb)
    if blink:
        for seat, placement in candidates.items():
            for r, c in (placement.near, placement.far):
                square(r, c, seat_colour(seat))
    for tok in rnd.tokens:
        r, c = tok.square
        square(r, c, TOKEN_RGB if blink or tok.reserved_by is None else (0, 0, 0))
        for x in _beside(ox, cols * k, img.width):
            put(x, oy + r * k, TOKEN_RGB, tall=k)
        for y in _beside(oy, rows * k, img.height):
            put(ox + c * k, y, TOKEN_RGB, wide=k)


@cache
def _domino_shades() -> tuple[dict[str, tuple[int, int, int]], dict[str, tuple[int, int, int]]]:
    return ({k: _scale(v, BOARD_SHADE) for k, v in CARD_RGB.items()},
            {k: _scale(v, COVERED_SHADE) for k, v in CARD_RGB.items()})


def _beside(start: int, length: int, limit: int) -> tuple[int, int]:
    """Where the ticks go on each side of the board: a pixel clear of it if the margin
    allows, else right against it (off the matrix when there is no margin: not drawn)."""
    before = start - 2 if start >= 2 else start - 1
    end = start + length
    return before, end + 1 if end + 1 < limit else end


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


def _crazy(img: Image.Image, rnd: CrazyRound) -> None:
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
        draw.line((x, base, x + DIGIT_W * sx - 1, base), fill=_scale((255, 255, 255), SLOT_DIM))
        if i < len(piles):
            pile = piles[i]
            rgb = CARD_RGB[pile.cards[-1][1].colour.letter]
            draw_digit(img, (x, base - 1 - DIGIT_H * sy), pile.top, rgb, (sx, sy))
