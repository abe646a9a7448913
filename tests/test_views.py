"""Views: golden images for every screen of every game, and pixels that must mean something.

Goldens live in tests/golden/. After an intended change of a view, look at the
new images and rewrite them with `UPDATE_GOLDEN=1 ./dev test tests/test_views.py`.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from helpers import deal
from PIL import Image, ImageChops

from firmware_host.catalog import new_match
from firmware_host.rules.classic import Card, PlayCard
from firmware_host.rules.common import Reason, Refusal
from firmware_host.rules.crazy import PlayCrazy
from firmware_host.rules.dice import Die
from firmware_host.rules.domino import DominoCard, PlaceDomino
from firmware_host.rules.match import Match
from firmware_host.scenario import _crazy_setup
from firmware_host.seat import SeatController
from firmware_host.views.centre import render_centre, render_winner, render_word
from firmware_host.views.seat import render_banner, render_seat

GOLDEN = Path(__file__).parent / "golden"
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
    from firmware_host.catalog import crazy_deck

    rnd = {"seat": [{"hand": ["R1", "R2p", "R*"], "draw": ["R3t", "R4w"]},
                    {"hand": ["Y2f", "Y5d", "Y3w"], "draw": ["Y4p"]}]}
    match = new_match("crazy", 2, 1, {}, setup=_crazy_setup(rnd, 2, "x", crazy_deck(), random.Random(1)))
    match.apply(PlayCrazy(0, match.round.seats[0].hand[0], None))
    return match


MATCHES = {"classic": classic, "dice": dice, "domino": domino, "crazy": crazy}


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


@pytest.mark.parametrize("game", MATCHES)
@pytest.mark.parametrize("size", [(32, 16), (32, 32)])
def test_centre_views_match_their_golden_images(game: str, size: tuple[int, int]) -> None:
    match = MATCHES[game]()
    candidates = None
    if game == "domino":
        candidates = {s: SeatController(s, match).selected() for s in range(4)}
        candidates = {s: c for s, c in candidates.items() if c is not None}
    golden(f"centre-{game}-{size[0]}x{size[1]}", render_centre(match, size, candidates=candidates))


def test_menu_countdown_and_results_on_the_seat() -> None:
    from firmware_host.simulate import make_bots, play_round
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
    golden("seat-match-result", render_match_result(match, 3))


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


def test_centre_pile_columns_are_as_tall_as_their_top_values() -> None:
    img = render_centre(classic())
    heights = []
    for x in range(img.width):
        column = [img.getpixel((x, y)) for y in range(img.height)]
        heights.append(sum(1 for px in column if px != (0, 0, 0)))
    # Open piles by colour (red, green, blue, yellow): red 1, then blue 1-2.
    assert heights[:3] == [1, 2, 0]
    assert img.getpixel((0, 15))[0] > 200 and img.getpixel((1, 14))[2] > 200


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

    from test_rounds_end import _waiting_round

    rnd = _waiting_round()
    assert rnd.joker_needed(0)
    holder = render_seat(SeatController(0, SimpleNamespace(round=rnd, totals=(0, 0), round_no=0)))  # type: ignore[arg-type]
    golden("seat-domino-joker-wait", holder)
    without = render_seat(SeatController(1, SimpleNamespace(round=rnd, totals=(0, 0), round_no=0)))  # type: ignore[arg-type]
    assert ImageChops.difference(holder.convert("RGB"), without.convert("RGB")).getbbox() is not None
