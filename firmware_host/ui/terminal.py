"""The real frames, drawn in a terminal and captured as PNG (emulation, debugging).

Two pixel rows per character cell with half blocks; RGB frames in 24-bit colour (rich writes
the escapes). What is drawn is the very image sent to the device, never a re-render.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image

UPPER, LOWER, FULL, EMPTY = "\u2580", "\u2584", "\u2588", " "


def mono_text(img: Image.Image) -> str:
    """A 1-bit frame as text, two pixel rows per line."""
    px = img.convert("1").load()
    w, h = img.size
    lines = []
    for y in range(0, h, 2):
        row = []
        for x in range(w):
            top = bool(px[x, y])
            bottom = bool(px[x, y + 1]) if y + 1 < h else False
            row.append(FULL if top and bottom else UPPER if top else LOWER if bottom else EMPTY)
        lines.append("".join(row).rstrip())
    return "\n".join(lines)


# Braille dots of a 2x4 cell, (x, y) -> bit: U+2800 plus the sum of the lit ones.
BRAILLE_BITS = ((0, 0, 0x01), (0, 1, 0x02), (0, 2, 0x04), (1, 0, 0x08), (1, 1, 0x10), (1, 2, 0x20),
                (0, 3, 0x40), (1, 3, 0x80))


def mono_braille(img: Image.Image) -> str:
    """A 1-bit frame at a quarter of the cells: 2x4 pixels a braille character, every pixel kept."""
    px = img.convert("1").load()
    w, h = img.size
    lines = []
    for y in range(0, h, 4):
        row = []
        for x in range(0, w, 2):
            code = 0
            for dx, dy, bit in BRAILLE_BITS:
                if x + dx < w and y + dy < h and px[x + dx, y + dy]:
                    code |= bit
            row.append(chr(0x2800 + code))
        lines.append("".join(row))
    return "\n".join(lines)


def _half_block_rows(img: Image.Image) -> list[list[tuple[tuple[int, int, int], tuple[int, int, int]]]]:
    """Rows of (upper, lower) RGB pixel pairs: one terminal cell each, drawn as an upper half block."""
    px = img.convert("RGB").load()
    w, h = img.size
    return [[(px[x, y], px[x, y + 1] if y + 1 < h else (0, 0, 0)) for x in range(w)] for y in range(0, h, 2)]


def rgb_cells(img: Image.Image, width: int = 2) -> list[list[tuple[str, str]]]:
    """An RGB frame as rows of (foreground, background) colours, upper pixel over lower: a
    terminal widget draws each as `width` upper half blocks (2 keeps the LEDs square)."""
    return [[("#{:02x}{:02x}{:02x}".format(*top), "#{:02x}{:02x}{:02x}".format(*bottom))
             for top, bottom in row for _ in range(width)] for row in _half_block_rows(img)]


def rgb_text(img: Image.Image) -> str:
    """An RGB frame in 24-bit colour for a plain terminal: upper half blocks, foreground over
    background, the escapes written by rich (as the Textual UI's are), never by hand."""
    from rich.console import Console
    from rich.text import Text

    frame = Text("\n".join(UPPER * img.width for _ in range(0, img.height, 2)))
    line = img.width + 1  # the row and its newline
    for y, row in enumerate(rgb_cells(img, 1)):
        for x, (fg, bg) in enumerate(row):
            frame.stylize(f"{fg} on {bg}", y * line + x, y * line + x + 1)
    console = Console(color_system="truecolor", force_terminal=True, width=img.width, no_color=False,
                      legacy_windows=False, highlight=False)
    with console.capture() as captured:
        console.print(frame, end="", soft_wrap=True)
    return captured.get()


def capture_png(path: str | Path, centre: Image.Image, seats: list[Image.Image], scale: int = 2,
                centre_scale: int = 8) -> Image.Image:
    """One picture of the table: the centre matrix in the middle, seat screens around it."""
    big = centre.convert("RGB").resize((centre.width * centre_scale, centre.height * centre_scale),
                                       Image.Resampling.NEAREST)
    tiles = [s.convert("RGB").resize((s.width * scale, s.height * scale), Image.Resampling.NEAREST)
             for s in seats]
    tw, th = (tiles[0].size if tiles else (0, 0))
    per_row = max(1, (len(tiles) + 1) // 2)
    width = max(big.width, per_row * (tw + 8)) + 16
    height = big.height + 2 * (th + 16) + 16
    sheet = Image.new("RGB", (width, height), (30, 30, 30))
    for i, tile in enumerate(tiles):
        row, col = divmod(i, per_row)
        y = 8 if row == 0 else big.height + th + 32
        sheet.paste(tile, (8 + col * (tw + 8), y))
    sheet.paste(big, ((width - big.width) // 2, th + 24))
    sheet.save(path)
    return sheet
