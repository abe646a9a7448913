"""The seat screen: 128x64, one bit per pixel, what one player needs and nothing more.

Header: seat, round, total. Middle: the game (cards, dice, top domino card or
hand) with the cursor drawn inverted. Bottom: counts, and the last refusal on
an inverted bar so it is seen at a glance.
"""

from __future__ import annotations

from PIL import Image, ImageDraw

from ..game.controls import SeatController
from ..rules.classic import Card, ClassicRound
from ..rules.crazy import CrazyCard, CrazyRound
from ..rules.dice import DiceRound, Die, DieColour
from ..rules.domino import DominoRound, PlaceDomino
from ..rules.match import Match
from .font import LARGE, SMALL, draw_centred, draw_text, width

SIZE = (128, 64)
WORDS = {1: "ONE", 2: "TWO", 3: "THREE", 4: "FOUR", 5: "FIVE"}
PIPS = {
    1: [(1, 1)],
    2: [(0, 0), (2, 2)],
    3: [(0, 0), (1, 1), (2, 2)],
    4: [(0, 0), (2, 0), (0, 2), (2, 2)],
    5: [(0, 0), (2, 0), (1, 1), (0, 2), (2, 2)],
}


def render_seat(controller: SeatController) -> Image.Image:
    """The seat's screen during play."""
    match = controller.match
    seat = controller.seat
    img = Image.new("1", SIZE, 0)
    total = match.totals[seat]
    draw_text(img, (0, 0), f"SEAT {seat + 1}")
    draw_centred(img, 0, f"ROUND {match.round_no + 1}")
    right = f"{total:+d}"
    draw_text(img, (SIZE[0] - width(right), 0), right)
    rnd = match.round
    if isinstance(rnd, ClassicRound):
        status = _classic(img, controller, rnd)
    elif isinstance(rnd, DiceRound):
        status = _dice(img, controller, rnd)
    elif isinstance(rnd, DominoRound):
        status = _domino(img, controller, rnd)
    else:
        status = _crazy(img, controller, rnd)
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


def _box(img: Image.Image, x: int, y: int, w: int, h: int, selected: bool) -> int:
    """A card outline; filled when the cursor is on it. Returns the ink to write with."""
    draw = ImageDraw.Draw(img)
    draw.rectangle((x, y, x + w - 1, y + h - 1), outline=1, fill=1 if selected else 0)
    return 0 if selected else 1


def _card_face(img: Image.Image, x: int, y: int, w: int, h: int, letter: str, value: str,
               selected: bool) -> None:
    ink = _box(img, x, y, w, h, selected)
    draw_centred(img, y + 2, letter, SMALL, ink, x, x + w)
    draw_centred(img, y + h - 10, value, LARGE, ink, x, x + w)


def _classic(img: Image.Image, c: SeatController, rnd: ClassicRound) -> str:
    st = rnd.seats[c.seat]
    places = c.choices()
    n = len(places)
    w = min(17, (SIZE[0] - (n - 1) * 1) // n)
    row = len(st.row)
    for i, card in enumerate(places):
        x = i * (w + 1) + (4 if i >= row else 0)
        selected = i == c.cursor % n
        if card is None:
            ImageDraw.Draw(img).rectangle((x, 12, x + w - 1, 37), outline=1 if selected else 0)
            draw_centred(img, 22, "-", SMALL, 1, x, x + w)
        else:
            assert isinstance(card, Card)
            _card_face(img, x, 12, w, 26, card.colour.letter, str(card.value), selected)
        label = str(i + 1) if i < row else ("STK" if i == row and not rnd.options.stack_face_down else "DIS")
        draw_centred(img, 40, label, SMALL, 1, x, x + w)
        if c.destination == i:
            draw_centred(img, 7, "V", SMALL, 1, x, x + w)
    return f"STACK {len(st.stack)}  HAND {len(st.hand)}"


def _dice(img: Image.Image, c: SeatController, rnd: DiceRound) -> str:
    dice = c.choices()
    per_row = 6
    for i, die in enumerate(dice):
        assert isinstance(die, Die)
        x = (i % per_row) * 21
        y = 10 + (i // per_row) * 18
        ink = _box(img, x, y, 20, 17, i == c.cursor % len(dice))
        draw_centred(img, y + 5, f"{die.colour.letter}{die.face}", LARGE, ink, x, x + 20)
    board = " ".join(f"{colour.letter}{n}" for colour, n in zip(DieColour, rnd.board, strict=True))
    return f"DICE {len(dice)}  {board}"


def _domino(img: Image.Image, c: SeatController, rnd: DominoRound) -> str:
    st = rnd.seats[c.seat]
    top = rnd.top_card(c.seat)
    if top is not None:
        for i, colour in enumerate((top.a, top.b)):
            _card_face(img, 2 + i * 25, 12, 24, 26, "", colour.letter, False)
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


def _crazy(img: Image.Image, c: SeatController, rnd: CrazyRound) -> str:
    hand = c.choices()
    for i, card in enumerate(hand):
        assert isinstance(card, CrazyCard)
        x = i * 42
        selected = i == c.cursor % len(hand)
        ink = _box(img, x, 9, 40, 32, selected)
        draw_text(img, (x + 2, 11), card.colour.letter, SMALL, ink)
        _crazy_value(img, x + 4, 18, card, ink)
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


def _crazy_value(img: Image.Image, x: int, y: int, card: CrazyCard, ink: int) -> None:
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


def render_round_result(match: Match, seat: int) -> Image.Image:
    """After a round: how it ended, this seat's score, and everyone's, best first."""
    result = match.results[-1]
    img = Image.new("1", SIZE, 0)
    ending = str(result.ending).replace("_", " ").upper()
    draw_centred(img, 0, f"ROUND {len(match.results)} {ending}: YOU {result.scores[seat]:+d}")
    _standings(img, [result.scores[s] for s in range(match.players)], seat, 10)
    return img


def render_match_result(match: Match, seat: int) -> Image.Image:
    """The end: winner(s) and the totals."""
    img = Image.new("1", SIZE, 0)
    won = seat in match.winners
    draw_centred(img, 0, "YOU WIN!" if won and len(match.winners) == 1 else
                 "SHARED WIN!" if won else f"SEAT {match.winners[0] + 1} WINS", LARGE)
    _standings(img, list(match.totals), seat, 11)
    return img


def _standings(img: Image.Image, scores: list[int], seat: int, y: int) -> None:
    """Everyone, best first, top to bottom; this seat inverted. Up to 5 seats in one
    column ("1. SEAT 3  +12"), more in two columns of "seat:score" in the 8-pixel font."""
    order = sorted(range(len(scores)), key=lambda s: -scores[s])
    columns = 2 if len(order) > 5 else 1
    per_column = -(-len(order) // columns)
    line = 7 if columns == 1 else 8
    font = SMALL if columns == 1 else LARGE
    for rank, s in enumerate(order):
        col, row = divmod(rank, per_column)
        x, top = col * 64, y + row * line
        text = f"{rank + 1}. SEAT {s + 1}  {scores[s]:+d}" if columns == 1 else f"{s + 1}:{scores[s]:+d}"
        if s == seat:
            ImageDraw.Draw(img).rectangle((x, top - 1, x + 62, top + line - 2), fill=1)
        draw_text(img, (x + 2, top), text, font, 0 if s == seat else 1)
