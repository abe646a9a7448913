"""The seat screen: 128x64, one bit per pixel, what one player needs and nothing more.

Header: seat, round, total. Middle: the game's own (`Game.draw_seat`), the cursor drawn
inverted. Bottom: counts, and the last refusal on
an inverted bar so it is seen at a glance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PIL import Image, ImageDraw

from ..engine.match import Match
from ..table.controls import SeatController
from ..table.picker import Picker
from .font import LARGE, SMALL, draw_centred, draw_text, drawable, width

SIZE = (128, 64)


def render_seat(controller: SeatController, name: str | None = None) -> Image.Image:
    """The seat's screen during play; `name`: the player's, in the corner (else the seat's number)."""
    match = controller.match
    seat = controller.seat
    img = Image.new("1", SIZE, 0)
    total = match.totals[seat]
    draw_text(img, (0, 0), fitted(drawable(name), 44) if name else f"SEAT {seat + 1}")
    draw_centred(img, 0, f"ROUND {match.round_no + 1}")
    right = f"{total:+d}"
    draw_text(img, (SIZE[0] - width(right), 0), right)
    rnd = match.round
    status = controller.entry.draw_seat(img, controller, rnd)
    draw_text(img, (0, 49), status)
    if rnd.result is not None:
        bottom_bar(img, f"ROUND OVER  {rnd.result.scores[seat]:+d}")
    elif controller.message:
        bottom_bar(img, controller.message.upper())
    return img


def render_banner(*lines: str, big: str = "") -> Image.Image:
    """Lobby, menus, countdown, results: a big word and a few lines of text."""
    img = Image.new("1", SIZE, 0)
    y = 4
    if big:
        draw_centred(img, 8, big, LARGE)
        y = 24
    for line in lines[:6]:
        draw_centred(img, y, line.upper())
        y += 8
    return img


# ---------------------------------------------------------------- pieces


def bottom_bar(img: Image.Image, text: str) -> None:
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 56, SIZE[0] - 1, 63), fill=1)
    while text and width(text) > SIZE[0] - 2:
        text = text[:-1]
    draw_centred(img, 57, text, fill=0)


def box(img: Image.Image, x: int, y: int, w: int, h: int, selected: bool) -> int:
    """A card outline; filled when the cursor is on it. Returns the ink to write with."""
    draw = ImageDraw.Draw(img)
    draw.rectangle((x, y, x + w - 1, y + h - 1), outline=1, fill=1 if selected else 0)
    return 0 if selected else 1


def card_face(img: Image.Image, x: int, y: int, w: int, h: int, letter: str, value: str,
               selected: bool) -> None:
    ink = box(img, x, y, w, h, selected)
    draw_centred(img, y + 2, letter, SMALL, ink, x, x + w)
    draw_centred(img, y + h - 10, value, LARGE, ink, x, x + w)


def render_menu(title: str, items: list[str], selected: int, hint: str = "SLAP: CHOOSE") -> Image.Image:
    """Seat 1's menus (game, options): a title, up to 5 items around the selection."""
    img = Image.new("1", SIZE, 0)
    draw_centred(img, 0, title.upper())
    ImageDraw.Draw(img).line((0, 7, SIZE[0] - 1, 7), fill=1)
    first = max(0, min(selected - 2, len(items) - 5))
    for row, i in enumerate(range(first, min(len(items), first + 5))):
        y = 9 + row * 9
        if i == selected:
            ImageDraw.Draw(img).rectangle((0, y - 1, SIZE[0] - 1, y + 6), fill=1)
        draw_text(img, (3, y), items[i].upper(), SMALL, 0 if i == selected else 1)
    bottom_bar(img, hint)
    return img


def render_countdown(count: int, game: str) -> Image.Image:
    """3, 2, 1, GO - big, with the game under it."""
    img = Image.new("1", SIZE, 0)
    word = str(count) if count > 0 else "GO!"
    mask = Image.new("1", (width(word, LARGE), 8), 0)
    draw_text(mask, (0, 0), word, LARGE)
    big = mask.resize((mask.width * 4, 32), Image.Resampling.NEAREST)
    img.paste(1, ((SIZE[0] - big.width) // 2, 8), big)
    draw_centred(img, 50, game.upper())
    return img


def render_round_result(match: Match, seat: int, name: str | None = None,
                        moments: Sequence[str] = ()) -> Image.Image:
    """After a round: this seat's place and points large enough to read at arm's length (issue 31),
    its total and place in the match, then everyone's, best first. `name`: the player's.
    `moments`: the round's closest race and fastest reaction, a line each, in the rows the
    scores leave free (up to 3 players: 4 rows; 4 and more fill them)."""
    result = match.results[-1]
    img = Image.new("1", SIZE, 0)
    ending = str(result.ending).replace("_", " ").upper()
    head = f"ROUND {len(match.results)} {ending}"
    who = fitted(drawable(name), SIZE[0] - width(head) - 4) if name else f"SEAT {seat + 1}"
    draw_text(img, (0, 0), who)
    draw_text(img, (SIZE[0] - width(head), 0), head)
    scores = [result.scores[s] for s in range(match.players)]
    _large(img, f"{place(scores, seat)} {scores[seat]:+d}", 8, scale=2)
    totals = list(match.totals)
    draw_centred(img, 26, f"TOTAL {totals[seat]:+d}, {place(totals, seat)} OF {match.players}")
    ImageDraw.Draw(img).line((0, 33, SIZE[0] - 1, 33), fill=1)
    _standings(img, scores, seat, 36, rows=4)
    for row, line in enumerate(list(moments)[:max(0, 4 - match.players)], start=match.players):
        draw_text(img, (2, 36 + row * 7), fitted(line, SIZE[0] - 2))
    return img


def place(scores: list[int], seat: int) -> str:
    """The seat's place among `scores` ("1ST", "2ND"; "=2ND" when another seat has the same score)."""
    rank = 1 + sum(1 for s in scores if s > scores[seat])
    suffix = "TH" if 10 <= rank % 100 <= 20 else {1: "ST", 2: "ND", 3: "RD"}.get(rank % 10, "TH")
    tied = sum(1 for s in scores if s == scores[seat]) > 1
    return f"{'=' if tied else ''}{rank}{suffix}"


def _large(img: Image.Image, text: str, y: int, scale: int) -> None:
    """`text` in the 8-pixel font scaled up `scale` times, centred (cut to fit)."""
    text = fitted(text, SIZE[0] // scale, LARGE)
    mask = Image.new("1", (max(1, width(text, LARGE)), 8), 0)
    draw_text(mask, (0, 0), text, LARGE)
    big = mask.resize((mask.width * scale, 8 * scale), Image.Resampling.NEAREST)
    img.paste(1, ((SIZE[0] - big.width) // 2, y), big)


def render_match_result(match: Match, seat: int, names: Mapping[int, str] | None = None,
                        seats: Sequence[int] = ()) -> Image.Image:
    """The end: winner(s) and the totals. `names`: the named players' names by player (a guest
    is not in it); `seats`: each player's physical seat (from 0; in order when not given). The
    winner is named as the round end names a seat, a guest as "SEAT N"."""
    img = Image.new("1", SIZE, 0)
    won = seat in match.winners
    draw_centred(img, 0, "YOU WIN!" if won and len(match.winners) == 1 else
                 "SHARED WIN!" if won else winners_line(match, names or {}, seats), LARGE)
    _standings(img, list(match.totals), seat, 11)
    return img


def winners_line(match: Match, names: Mapping[int, str], seats: Sequence[int] = ()) -> str:
    """Who won, in the 8-pixel font across the screen: "Ann WINS" (the name as the font draws it,
    cut to fit), "SEAT 3 WINS" for a guest or a bot, "Ann & SEAT 2 WIN" for a shared win, or
    "3 SHARE THE WIN" when the names do not fit."""
    def label(player: int) -> str:
        name = names.get(player)
        return drawable(name) if name else f"SEAT {(seats[player] if player < len(seats) else player) + 1}"

    if len(match.winners) == 1:
        name = label(match.winners[0])
        while name and width(name + " WINS", LARGE) > SIZE[0]:
            name = name[:-1]
        return name + " WINS"
    line = " & ".join(label(p) for p in match.winners) + " WIN"
    return line if width(line, LARGE) <= SIZE[0] else f"{len(match.winners)} SHARE THE WIN"


def _standings(img: Image.Image, scores: list[int], seat: int, y: int, rows: int = 0) -> None:
    """Everyone, best first, top to bottom; this seat inverted. Up to 5 seats in one
    column ("1. SEAT 3  +12"), more in two columns of "seat:score" in the 8-pixel font.
    `rows`: at most that many rows, in the small font (three columns for 12 seats in 4 rows)."""
    order = sorted(range(len(scores)), key=lambda s: -scores[s])
    limit = rows or 5
    columns = 1 if len(order) <= limit else 2 if not rows else -(-len(order) // rows)
    per_column = -(-len(order) // columns)
    line = 7 if columns == 1 or rows else 8
    font = SMALL if columns == 1 or rows else LARGE
    col_w = SIZE[0] // columns if rows else 64
    for rank, s in enumerate(order):
        col, row = divmod(rank, per_column)
        x, top = col * col_w, y + row * line
        text = f"{rank + 1}. SEAT {s + 1}  {scores[s]:+d}" if columns == 1 else f"{s + 1}:{scores[s]:+d}"
        if s == seat:
            ImageDraw.Draw(img).rectangle((x, top - 1, x + col_w - 2, top + line - 2), fill=1)
        draw_text(img, (x + 2, top), text, font, 0 if s == seat else 1)


# ---------------------------------------------------------------- the name picker (table/picker.py)


def fitted(text: str, room: int, font: str = SMALL) -> str:
    """`text` cut to `room` pixels (a long name on a small screen)."""
    while text and width(text, font) > room:
        text = text[:-1]
    return text


def render_picker(picker: Picker, seat: int, claim_url: str = "") -> Image.Image:
    """A seat choosing its name: the list, the letters, or the QR code of its one-time address
    (`claim_url`; none when the web view is off). Names are drawn as the font can
    (`drawable`), in their own case."""
    img = Image.new("1", SIZE, 0)
    draw = ImageDraw.Draw(img)
    if picker.mode == "qr":
        from .address import qr_code  # address.py draws on this module's screen size

        code = qr_code(claim_url) if claim_url else None
        x0 = 0
        if code is not None:
            img.paste(code, (0, 0))
            x0 = code.width + 2
        lines = ["SCAN WITH", "A PHONE TO", "NAME THIS", "SEAT"] if code is not None else \
            ["NO WEB VIEW:", "NO PHONE CODE"]
        lines = [f"SEAT {seat + 1}", *lines, "", "ANY KEY: BACK"]
        for row, line in enumerate(lines):
            draw_centred(img, 2 + row * 9, line, SMALL, x0=x0)
        return img
    if picker.mode == "letters":
        draw_centred(img, 0, f"SEAT {seat + 1}: YOUR NAME")
        draw.line((0, 7, SIZE[0] - 1, 7), fill=1)
        text = drawable(picker.text)
        before = width(text[:picker.cursor], LARGE) + (1 if picker.cursor else 0)
        full = width(text, LARGE)
        x = max(0, min((SIZE[0] - full) // 2, SIZE[0] - 4 - before))  # the cursor stays on screen
        x -= max(0, before + 10 - SIZE[0])
        draw_text(img, (x, 14), text, LARGE)
        under = width(text[picker.cursor], LARGE) if text else 6
        draw.line((x + before, 24, x + before + under - 1, 24), fill=1)
        draw_centred(img, 30, "UP DOWN: LETTER")
        draw_centred(img, 38, "LEFT RIGHT: MOVE  ALT: RUB OUT")
        bottom_bar(img, drawable(picker.message).upper() if picker.message else "SLAP: DONE")
        return img
    draw_centred(img, 0, f"SEAT {seat + 1}: WHO PLAYS?")
    draw.line((0, 7, SIZE[0] - 1, 7), fill=1)
    entries = picker.entries
    first = max(0, min(picker.index - 2, len(entries) - 5))
    for row, i in enumerate(range(first, min(len(entries), first + 5))):
        y = 9 + row * 9
        if i == picker.index:
            draw.rectangle((0, y - 1, SIZE[0] - 1, y + 6), fill=1)
        ink = 0 if i == picker.index else 1
        draw_text(img, (3, y), fitted(drawable(entries[i]), SIZE[0] - 6), SMALL, ink)
    bottom_bar(img, drawable(picker.message).upper() if picker.message else "SLAP: CHOOSE  ALT: BACK")
    return img
