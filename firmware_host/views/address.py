"""The table's web address on a seat's screen: a QR code a phone can read, and the address in
words beside it, on the attract screen (docs/web.md, "Phones")."""

from __future__ import annotations

from functools import cache

from PIL import Image, ImageDraw

from .font import LARGE, SMALL, draw_centred, width
from .seat import SIZE

QUIET = 1  # modules of light margin kept around the code, at least (ISO/IEC 18004 asks 4; the
# screen around it is dark, so the code's own light margin is what a phone needs to find it)


@cache
def qr_rows(url: str) -> tuple[str, ...]:
    """`url` as a QR code's modules, a string of 1 (dark) and 0 a row, no margin: the web page
    draws it on the big screen (error correction L, as on the seats)."""
    import segno

    code = segno.make(url, error="l", micro=False, boost_error=False)
    return tuple("".join("1" if dark else "0" for dark in row) for row in code.matrix)


@cache
def qr_code(url: str, side: int = SIZE[1]) -> Image.Image | None:
    """`url` as a QR code (segno, error correction L) on a lit square `side` pixels wide, dark
    modules unlit (the usual dark-on-light a phone's camera expects), each module a whole number
    of pixels; None if it cannot fit."""
    rows = qr_rows(url)
    modules = len(rows)
    scale = side // (modules + 2 * QUIET)
    if scale < 1:
        return None
    img = Image.new("1", (side, side), 1)
    draw = ImageDraw.Draw(img)
    offset = (side - modules * scale) // 2
    for r, row in enumerate(rows):
        for c, dark in enumerate(row):
            if dark == "1":
                x, y = offset + c * scale, offset + r * scale
                draw.rectangle((x, y, x + scale - 1, y + scale - 1), fill=0)
    return img


def render_attract(url: str, qr: bool = True) -> Image.Image:
    """The attract screen with the address: the code on the left, the words on the right (or the
    words alone, the address split where it fits)."""
    img = Image.new("1", SIZE, 0)
    code = qr_code(url) if qr else None
    x0 = code.width + 2 if code is not None else 0
    if code is not None:
        img.paste(code, (0, 0))
    draw_centred(img, 4, "LIGRETTO" if width("LIGRETTO", LARGE) <= SIZE[0] - x0 else "PLAY", LARGE, x0=x0)
    draw_centred(img, 18, "SLAP TO PLAY", SMALL, x0=x0)
    draw_centred(img, 32, "WATCH AT", SMALL, x0=x0)
    y = 42
    for part in _split(url.removeprefix("http://").rstrip("/"), SIZE[0] - x0):
        draw_centred(img, y, part, SMALL, x0=x0)
        y += 8
    return img


def _split(text: str, room: int) -> list[str]:
    """The address in lines that fit `room` pixels, cut before a ':' or '/' where one is near."""
    lines = []
    while text:
        cut = len(text)
        while width(text[:cut]) > room and cut > 1:
            cut -= 1
        if cut < len(text):
            soft = max(text.rfind(":", 0, cut), text.rfind("/", 0, cut))
            cut = soft if soft > 0 else cut
        lines.append(text[:cut])
        text = text[cut:]
    return lines[:2]
