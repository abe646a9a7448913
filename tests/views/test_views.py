"""Views: golden images for every screen of every game, and pixels that must mean something.

Goldens live in tests/golden/. After an intended change of a view, look at the
new images and rewrite them with `UPDATE_GOLDEN=1 ./dev test tests/test_views.py`.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers import deal
from PIL import Image, ImageChops

from firmware_host.engine.match import Match
from firmware_host.engine.round import Ending, Reason, Refusal, RoundResult
from firmware_host.games.classic.rules import Card, PlayCard
from firmware_host.games.crazy.rules import PlayCrazy
from firmware_host.games.crazy.scenario import setup as _crazy_setup
from firmware_host.games.dice.rules import Die
from firmware_host.games.domino.rules import DominoCard, PlaceDomino
from firmware_host.table.controls import SeatController
from firmware_host.table.matches import new_match
from firmware_host.views.centre import render_centre, render_winner, render_word
from firmware_host.views.seat import render_banner, render_seat

GOLDEN = Path(__file__).parents[1] / "golden"
C = Card.parse


def golden(name: str, img: Image.Image) -> None:
    path = GOLDEN / f"{name}.png"
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        img.save(path)
    assert path.exists(), f"no golden image {path.name}: run with UPDATE_GOLDEN=1 and look at it"
    want = Image.open(path)
    want.load()
    assert want.mode == img.mode and want.size == img.size
    diff = ImageChops.difference(want.convert("RGB"), img.convert("RGB")).getbbox()
    assert diff is None, f"{name} differs from its golden image in {diff}"


def classic() -> Match:
    deals = [deal("R1 G6 B2", stack="Y9 R5 G5 B5 Y5 R6 G7 B7 Y7 R8", hand="Y1 R2 B1"),
             deal("B1 Y4 Y8", hand="G1"), deal("R3 R4 R5", hand="Y2")]
    match = new_match("classic", 3, 1, {}, setup={"deals": deals})
    match.apply(PlayCard(0, C("R1")))
    match.apply(PlayCard(1, C("B1")))
    match.apply(PlayCard(0, C("B2")))
    return match


def dice() -> Match:
    hands = [[Die.parse(t) for t in h.split()] for h in ("Y6 R2 B3", "G1 G2", "R5 B6 Y1", "B4")]
    return new_match("dice", 4, 1, {}, setup={"dice": hands, "board": [1, 4, 0, 3]})


def domino() -> Match:
    hands = [[DominoCard.parse(t) for t in h.split()][::-1] for h in ("RR YG", "PB", "GY", "YY BB")]
    match = new_match("domino", 4, 2, {}, setup={"hands": hands})
    match.apply(PlaceDomino(0, DominoCard.parse("RR"), 2, (4, 2), (4, 1)))
    return match


def crazy() -> Match:
    from firmware_host.games.crazy.deck import crazy_deck

    rnd = {"seat": [{"hand": ["R1", "R2p", "R*"], "draw": ["R3t", "R4w"]},
                    {"hand": ["Y2f", "Y5d", "Y3w"], "draw": ["Y4p"]}]}
    match = new_match("crazy", 2, 1, {}, setup=_crazy_setup(rnd, 2, "x", crazy_deck(), random.Random(1)))
    match.apply(PlayCrazy(0, match.round.seats[0].hand[0], None))
    return match


def classic_piles(tops: str, descending: bool = False, players: int = 12) -> SimpleNamespace:
    """A round whose centre piles end in these tops ("R3 G10 ..."), each run laid up to its top
    by the seats in turn; a run that reaches its last card is a complete pile."""
    from helpers import classic as classic_round

    piles = []
    for i, top in enumerate(tops.split()):
        colour, value = top[0], int(top[1:])
        run = range(10, value - 1, -1) if descending else range(1, value + 1)
        piles.append(" ".join(f"{i % players}:{colour}{v}" for v in run))
    rnd = classic_round(*[deal("R5 G5 B5") for _ in range(players)], piles=piles, descending=descending)
    return SimpleNamespace(round=rnd)


def classic_many() -> SimpleNamespace:
    """14 open piles, three complete: digits on both sizes, complete piles as dots."""
    return classic_piles("R1 R4 R9 G2 G2 G7 B3 B5 B6 B8 Y1 Y5 Y9 Y3 R10 G10 Y10")


def classic_crowded() -> SimpleNamespace:
    """24 open piles: 16 fit as digits on 32x16, so bars there; digits on 32x32."""
    tops = [f"{c}{v}" for c in "RGBY" for v in (1, 2, 3, 5, 7, 9)]
    return classic_piles(" ".join([*tops, "B10", "B10"]))


def classic_descending() -> SimpleNamespace:
    """Piles going down from 10: a fresh pile shows 10, and red has reached 1 (complete)."""
    return classic_piles("R10 G10 B7 Y9 R1", descending=True, players=4)


def domino_two() -> Match:
    """The two-player board (8 x 12 squares): two pixels a square on 32x32."""
    return new_match("domino", 2, 1, {"layout": "two-players"})


def crazy_five() -> Match:
    """Five players, five piles (the most a round allows), one topped by a Crazy card."""
    from firmware_host.games.crazy.deck import crazy_deck

    rnd = {"seat": [{"hand": ["R1", "R2", "R3"], "draw": ["R4", "R5"]},
                    {"hand": ["Y1", "Y2"], "draw": ["Y3"]},
                    {"hand": ["G1", "G2"], "draw": ["G3"]},
                    {"hand": ["B1", "B*"], "draw": ["B3"]},
                    {"hand": ["P1", "P2", "P3"], "draw": ["P4", "P5"]}]}
    match = new_match("crazy", 5, 1, {}, setup=_crazy_setup(rnd, 5, "x", crazy_deck(), random.Random(1)))
    plays = [(0, "R1", None), (1, "Y1", None), (2, "G1", None), (3, "B1", None), (4, "P1", None),
             (0, "R2", 0), (0, "R3", 0), (2, "G2", 2), (3, "B*", 3), (4, "P2", 4), (4, "P3", 4)]
    for seat, text, pile in plays:
        card = next(c for c in match.round.seats[seat].hand if str(c).startswith(text))
        refusal = match.apply(PlayCrazy(seat, card, pile, 2 if card.crazy else None))
        assert refusal is None, (text, refusal)
    return match


MATCHES = {"classic": classic, "dice": dice, "domino": domino, "crazy": crazy}
CENTRES = {**MATCHES, "classic-many": classic_many, "classic-crowded": classic_crowded,
           "classic-descending": classic_descending, "domino-two": domino_two, "crazy-five": crazy_five}


@pytest.mark.parametrize("game", MATCHES)
def test_seat_screens_match_their_golden_images(game: str) -> None:
    match = MATCHES[game]()
    seat = SeatController(0, match)
    seat.nav("right")
    golden(f"seat-{game}", render_seat(seat))
    seat.message = Refusal(Reason.TOO_LATE, by_seat=2, delta_ns=4_200_000).short()
    golden(f"seat-{game}-too-late", render_seat(seat))


def test_crazy_cards_are_drawn_in_their_five_styles() -> None:
    match = crazy()
    seat = SeatController(1, match)
    golden("seat-crazy-styles", render_seat(seat))  # fingers 2, digit 5, word THREE
    styles = [c.style for c in match.round.seats[1].hand]
    assert styles == ["fingers", "digit", "word"]


@pytest.mark.parametrize("game", CENTRES)
@pytest.mark.parametrize("size", [(32, 16), (32, 32)])
def test_centre_views_match_their_golden_images(game: str, size: tuple[int, int]) -> None:
    match = CENTRES[game]()
    candidates = None
    if game == "domino":
        candidates = {s: SeatController(s, match).selected() for s in range(4)}
        candidates = {s: c for s, c in candidates.items() if c is not None}
    golden(f"centre-{game}-{size[0]}x{size[1]}", render_centre(match, size, candidates=candidates))


def test_menu_countdown_and_results_on_the_seat() -> None:
    from firmware_host.play.simulate import make_bots, play_round
    from firmware_host.views.seat import (
        render_countdown,
        render_match_result,
        render_menu,
        render_round_result,
    )

    golden("seat-menu", render_menu("choose a game", ["Ligretto", "Dice", "Domino", "Crazy"], 2))
    golden("seat-countdown-3", render_countdown(3, "Ligretto"))
    golden("seat-countdown-go", render_countdown(0, "Ligretto"))
    match = new_match("classic", 12, 5, {"rounds": 1})
    import random

    play_round(match, make_bots(12, "instant", 5), random.Random(5))
    golden("seat-round-result", render_round_result(match, 3))
    golden("seat-round-result-named", render_round_result(match, 3, "Zoë Ångström-Smith"))
    four = new_match("classic", 4, 5, {"rounds": 1})
    play_round(four, make_bots(4, "instant", 5), random.Random(5))
    golden("seat-round-result-4", render_round_result(four, 1, "Ana"))
    golden("seat-match-result", render_match_result(match, 3))


def test_the_round_end_names_the_seats_place_with_ties_and_english_suffixes() -> None:
    from firmware_host.views.seat import place

    scores = [5, 9, 5, -2, 9, 0, 1, 2, 3, 4, 6, 7, 8]
    assert [place(scores, s) for s in (1, 0, 3, 12)] == ["=1ST", "=6TH", "13TH", "3RD"]
    assert [place(list(range(30, 0, -1)), s) for s in (0, 1, 2, 10, 11, 12, 20, 21, 22)] == [
        "1ST", "2ND", "3RD", "11TH", "12TH", "13TH", "21ST", "22ND", "23RD"]


def test_the_seats_round_end_shows_its_place_and_points_large() -> None:
    """Issue 31: at round end a seat reads its place and points at a glance: 16 px tall, not one
    line of 5-pixel letters among twelve."""
    from firmware_host.views.font import LARGE, draw_text, width
    from firmware_host.views.seat import place, render_round_result

    match = new_match("dice", 3, 1, {"rounds": 2})
    match.results.append(RoundResult(Ending.LIGRETTO, (2,), (4, -3, 10)))
    img = render_round_result(match, 0)
    text = f"{place([4, -3, 10], 0)} {4:+d}"
    assert text == "2ND +4"
    mask = Image.new("1", (width(text, LARGE), 8), 0)
    draw_text(mask, (0, 0), text, LARGE)
    big = mask.resize((mask.width * 2, 16), Image.Resampling.NEAREST)
    x = (128 - big.width) // 2
    assert ImageChops.difference(img.crop((x, 8, x + big.width, 24)), big).getbbox() is None


def test_banners_countdown_ligretto_and_winner() -> None:
    golden("seat-lobby", render_banner("seat 1: choose a game", "slap to join", big="LIGRETTO"))
    golden("centre-go", render_word("GO", (255, 255, 255)))
    golden("centre-ligretto", render_word("LIGRETTO!", (255, 0, 160), frame=14))
    golden("centre-winner", render_winner(2, 4))


# ---------------------------------------------------------------- pixels that mean something


def test_the_cursor_card_is_inverted_and_the_others_are_not() -> None:
    seat = SeatController(0, classic())
    img = render_seat(seat)
    # A point inside each row card, between its colour letter and its value.
    assert [img.getpixel((i * 18 + 2, 20)) for i in range(3)] == [1, 0, 0]
    seat.nav("right")
    img = render_seat(seat)
    assert [img.getpixel((i * 18 + 2, 20)) for i in range(3)] == [0, 1, 0]


def test_a_refusal_is_shown_on_an_inverted_bar() -> None:
    seat = SeatController(0, classic())
    assert img_row(render_seat(seat), 63) == [0] * 128
    seat.message = "doesn't fit"
    bar = img_row(render_seat(seat), 63)
    assert bar == [1] * 128


def img_row(img: Image.Image, y: int) -> list[int]:
    return [img.getpixel((x, y)) for x in range(img.width)]


RED, GREEN, BLUE, YELLOW = (255, 0, 0), (0, 200, 0), (0, 60, 255), (255, 200, 0)


def read_digit(img: Image.Image, x: int, y: int, scale: tuple[int, int] = (1, 1)) -> tuple[Any, int] | None:
    """The (colour, value) a 3x5 digit at (x, y) shows, as a player reads it; None when dark."""
    from firmware_host.views.font import DIGITS_3X5

    sx, sy = scale
    lit = {(c, r): img.getpixel((x + c * sx, y + r * sy)) for c in range(3) for r in range(5)}
    on = {k for k, rgb in lit.items() if rgb != (0, 0, 0)}
    if not on:
        return None
    for value, rows in DIGITS_3X5.items():
        if on == {(c, r) for r, bits in enumerate(rows) for c, bit in enumerate(bits) if bit == "#"}:
            colours = {lit[k] for k in on}
            assert len(colours) == 1, f"a digit in {colours}"
            return colours.pop(), value
    raise AssertionError(f"no digit at {(x, y)}: {sorted(on)}")


def read_piles(img: Image.Image) -> list[tuple[Any, int]]:
    """Digit cells 3 px wide with a 1 px gap, rows 5 px tall with a 1 px gap, in reading order."""
    out = []
    for y in range(0, img.height - 6, 6):
        for x in range(0, img.width - 2, 4):
            cell = read_digit(img, x, y)
            if cell is not None:
                out.append(cell)
    return out


@pytest.mark.parametrize("size", [(32, 16), (32, 32)])
def test_every_open_ligretto_pile_reads_as_its_top_value_in_its_colour(size: tuple[int, int]) -> None:
    img = render_centre(classic_many(), size)  # type: ignore[arg-type]
    # By colour (red, green, blue, yellow), then value: one digit per pile, a gap between piles.
    assert read_piles(img) == [(RED, 1), (RED, 4), (RED, 9), (GREEN, 2), (GREEN, 2), (GREEN, 7),
                               (BLUE, 3), (BLUE, 5), (BLUE, 6), (BLUE, 8),
                               (YELLOW, 1), (YELLOW, 3), (YELLOW, 5), (YELLOW, 9)]
    assert img.getpixel((3, 0)) == img.getpixel((3, 4)) == (0, 0, 0)  # the gap after the first pile
    assert read_piles(render_centre(classic())) == [(RED, 1), (BLUE, 2)]


def test_complete_piles_are_dots_along_the_bottom_row() -> None:
    img = render_centre(classic_many())  # type: ignore[arg-type]
    assert [img.getpixel((x, 15)) for x in range(7)] == [RED, (0, 0, 0), GREEN, (0, 0, 0), YELLOW,
                                                        (0, 0, 0), (0, 0, 0)]
    assert all(img.getpixel((x, 14)) == (0, 0, 0) for x in range(32))  # a gap above the dots


def test_a_ten_is_a_roman_x_when_piles_go_down() -> None:
    img = render_centre(classic_descending())  # type: ignore[arg-type]
    assert read_piles(img) == [(RED, 10), (GREEN, 10), (BLUE, 7), (YELLOW, 9)]
    assert img.getpixel((0, 15)) == RED  # red went down to 1: complete


def test_piles_that_do_not_fit_as_digits_fall_back_to_bars() -> None:
    from firmware_host.views.centre import pile_layout

    # 8 digits across 32 px; 2 rows on 32x16, 5 on 32x32; bars: 32 across, 1 band or 2.
    assert [pile_layout((32, 16), n) for n in (16, 17, 32, 33)] == ["digits", "bars", "bars", "bars+more"]
    assert [pile_layout((32, 32), n) for n in (40, 41, 64, 65)] == ["digits", "bars", "bars", "bars+more"]
    img = render_centre(classic_crowded())  # type: ignore[arg-type]  # 24 open piles
    heights, colours = [], []
    for x in range(32):
        lit = [img.getpixel((x, y)) for y in range(14) if img.getpixel((x, y)) != (0, 0, 0)]
        heights.append(len(lit))
        colours.append(lit[0] if lit else None)
    assert heights == [1, 2, 3, 5, 7, 9] * 4 + [0] * 8
    # Neighbours alternate full and half brightness, so two touching bars stay two.
    assert colours[:2] == [RED, (127, 0, 0)] and colours[6:8] == [GREEN, (0, 100, 0)]
    assert read_piles(render_centre(classic_crowded(), (32, 32)))[:8] == [  # type: ignore[arg-type]
        (RED, 1), (RED, 2), (RED, 3), (RED, 5), (RED, 7), (RED, 9), (GREEN, 1), (GREEN, 2)]


def test_more_piles_than_bars_end_in_a_white_bar() -> None:
    tops = " ".join(f"{c}{v}" for c in "RGBY" for v in range(1, 10))  # 36 open piles
    img = render_centre(classic_piles(tops))  # type: ignore[arg-type]
    column = [img.getpixel((31, y)) for y in range(10)]
    assert column == [(255, 255, 255)] * 10
    assert sum(1 for y in range(10) if img.getpixel((30, y)) != (0, 0, 0)) == 4  # yellow 4 is the last shown


def test_the_terminal_shows_the_matrix_frame_led_for_led() -> None:
    from firmware_host.ui.terminal import rgb_cells

    img = render_centre(classic_many(), (32, 32))  # type: ignore[arg-type]
    cells = rgb_cells(img, width=1)
    assert len(cells) == 16 and len(cells[0]) == 32
    # The red 1's top two rows (".#." over "##."), then the gap: two LED rows a terminal cell.
    assert cells[0][:4] == [("#000000", "#ff0000"), ("#ff0000", "#ff0000"), ("#000000", "#000000"),
                            ("#000000", "#000000")]


PURPLE = (170, 0, 255)


def test_crazy_piles_read_as_large_digits_in_their_top_cards_colour() -> None:
    from firmware_host.games.crazy.screens import crazy_grid

    want = [(RED, 3), (YELLOW, 1), (GREEN, 2), (BLUE, 2), (PURPLE, 3)]  # blue: a Crazy card as 2
    assert crazy_grid((32, 16), 5) == (1, 5, (1, 2))  # one row of 6 px slots, digits 3x10
    img = render_centre(crazy_five())
    assert [read_digit(img, i * 6 + 1, 4, (1, 2)) for i in range(5)] == want
    assert crazy_grid((32, 32), 5) == (2, 3, (2, 2))  # 3 + 2 slots of 10x16, digits 6x10
    img = render_centre(crazy_five(), (32, 32))
    assert [read_digit(img, col * 10 + 2, row * 16 + 4, (2, 2)) for row, col in
            ((0, 0), (0, 1), (0, 2), (1, 0), (1, 1))] == want


def test_an_empty_crazy_pile_slot_is_a_dim_base_line() -> None:
    img = render_centre(crazy())  # two players: two slots, one pile
    assert read_digit(img, 5, 4, (2, 2)) == (RED, 1)
    assert read_digit(img, 21, 4, (2, 2)) is None
    assert {img.getpixel((x, 15)) for x in range(21, 27)} == {(38, 38, 38)}


def test_domino_tokens_are_the_only_white_on_the_board_and_ticked_in_the_margins() -> None:
    match = domino()
    rnd = match.round
    img = render_centre(match)
    ox, oy = 6, 4  # an 8 x 20 board in the middle of 32 x 16
    tokens = {tok.square for tok in rnd.tokens}
    for (r, c) in rnd.board.colours:
        rgb = img.getpixel((ox + c, oy + r))
        if (r, c) in tokens:
            assert rgb == (255, 255, 255)
        else:
            assert max(rgb) < 128, f"square {(r + 1, c + 1)} is {rgb}, as bright as a token"
    for r, c in tokens:
        assert img.getpixel((ox - 2, oy + r)) == img.getpixel((ox + 21, oy + r)) == (255, 255, 255)
        assert img.getpixel((ox + c, oy - 2)) == img.getpixel((ox + c, oy + 9)) == (255, 255, 255)
    assert img.getpixel((ox + 2, oy + 4)) == (25, 0, 0)  # under seat 1's red-red card: dim


def test_a_small_domino_board_gets_two_pixels_a_square_where_it_fits() -> None:
    match = domino_two()
    img = render_centre(match, (32, 32))
    ox, oy = 4, 8  # 12 x 8 squares of 2 x 2 px in the middle of 32 x 32
    for r, c in (tok.square for tok in match.round.tokens):
        block = {img.getpixel((ox + 2 * c + dx, oy + 2 * r + dy)) for dx in (0, 1) for dy in (0, 1)}
        assert block == {(255, 255, 255)}
        assert img.getpixel((ox - 2, oy + 2 * r + 1)) == (255, 255, 255)  # its tick, two rows tall
    assert render_centre(match).getpixel((10, 4)) != (0, 0, 0)  # 32x16: one pixel a square


def test_dice_board_lights_one_cell_per_placed_face() -> None:
    img = render_centre(dice())
    lit = {(x // 5, y // 4) for x in range(30) for y in range(16) if max(img.getpixel((x, y))) > 100}
    # Red has 1 face placed, yellow 4, green none, blue 3.
    assert lit == {(0, 0)} | {(f, 1) for f in range(4)} | {(f, 3) for f in range(3)}


def test_the_brightness_cap_scales_every_pixel() -> None:
    full = render_centre(dice())
    capped = render_centre(dice(), brightness=0.25)
    assert max(hi for _, hi in capped.getextrema()) <= 64
    assert max(hi for _, hi in full.getextrema()) == 255


def test_domino_tokens_blink_and_candidates_show_in_seat_colours() -> None:
    match = domino()
    candidates = {1: SeatController(1, match).selected()}
    on = render_centre(match, candidates=candidates, blink=True)
    off = render_centre(match, candidates=candidates, blink=False)
    assert on.tobytes() != off.tobytes()


def test_a_domino_seat_the_round_waits_on_shows_its_joker_control() -> None:
    from types import SimpleNamespace

    from helpers import waiting_domino_round

    rnd = waiting_domino_round()
    assert rnd.joker_needed(0)
    holder = render_seat(SeatController(0, SimpleNamespace(round=rnd, totals=(0, 0), round_no=0)))  # type: ignore[arg-type]
    golden("seat-domino-joker-wait", holder)
    without = render_seat(SeatController(1, SimpleNamespace(round=rnd, totals=(0, 0), round_no=0)))  # type: ignore[arg-type]
    assert ImageChops.difference(holder.convert("RGB"), without.convert("RGB")).getbbox() is not None
