"""Domino on the seat screen (the top card, the placement or joker square under the cursor)
and the centre matrix: the board a pixel per square (two on 32x32 for the small two-player
board), free squares at half brightness, covered ones dim, tokens the only full white with ticks
in the margins on their row and column; each seat's candidate placement in its seat colour."""

from __future__ import annotations

from functools import cache

from PIL import Image, ImageDraw

from ...engine.game import Controls
from ...views.centre import CARD_RGB, scale, seat_colour
from ...views.font import draw_text
from ...views.seat import card_face
from .rules import JOKER, DominoRound, PlaceDomino


def seat(img: Image.Image, c: Controls, rnd: DominoRound) -> str:
    st = rnd.seats[c.seat]
    top = rnd.top_card(c.seat)
    if top is not None:
        for i, colour in enumerate((top.a, top.b)):
            card_face(img, 2 + i * 25, 12, 24, 26, "", colour.letter, False)
    options = c.choices()
    mode = "JOKER" if c.joker_mode else "PLACE"
    if options:
        draw_text(img, (58, 14), f"{mode} {c.cursor % len(options) + 1}/{len(options)}")
        choice = options[c.cursor % len(options)]
        where = choice.near if isinstance(choice, PlaceDomino) else choice[1]
        token = choice.token if isinstance(choice, PlaceDomino) else choice[0]
        draw_text(img, (58, 24), f"TOKEN {token + 1} AT {where[0]},{where[1]}")
    else:
        draw_text(img, (58, 14), f"NO {mode}")
        draw_text(img, (58, 24), "ALT: DISCARD" if not c.joker_mode else "DOWN: BACK")
    if st.jokers and not c.joker_mode and not rnd.owed(c.seat) and (not options or rnd.joker_needed(c.seat)):
        # The round may be waiting for this seat's joker (joker_wait_s): say which button plays one.
        draw_text(img, (58, 34), "UP: JOKER")
    return f"HAND {len(st.hand)}  PILE {len(st.discard)}  JOKERS {st.jokers}"


BOARD_SHADE = 0.45  # free domino squares: colours plain, yet well under a token's white
COVERED_SHADE = 0.1
JOKER_RGB = (40, 40, 40)
TOKEN_RGB = (255, 255, 255)


def centre(img: Image.Image, rnd: DominoRound, blink: bool,
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
    return ({k: scale(v, BOARD_SHADE) for k, v in CARD_RGB.items()},
            {k: scale(v, COVERED_SHADE) for k, v in CARD_RGB.items()})


def _beside(start: int, length: int, limit: int) -> tuple[int, int]:
    """Where the ticks go on each side of the board: a pixel clear of it if the margin
    allows, else right against it (off the matrix when there is no margin: not drawn)."""
    before = start - 2 if start >= 2 else start - 1
    end = start + length
    return before, end + 1 if end + 1 < limit else end
