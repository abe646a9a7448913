"""The TV page (/big) fits any TV: in chromium at 1280x720, 1920x1080 and 3840x2160, with 2 and
12 seats, in every phase (attract, lobby, countdown, play, round end, match end), nothing lies
outside the screen, nothing overlaps anything else, nothing scrolls; the smallest text a
spectator reads is measured from the page against 15 arc-minutes from 3 m on a 55-inch TV; every
text's contrast is computed against WCAG AA; every colour has its shape, at least 40 % of its
card's height. Screenshots of every screen go to docs/web/ (`TABLE_WEB_SHOTS=docs`, docs/web.md).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from plumbing import SHOTS, journaled, wait_for
from test_browser import LiveTable, browser, live  # noqa: F401  (the fixtures)

from firmware_host.system.paths import state_database
from firmware_host.table.bot_players import SKILLS, Level
from firmware_host.table.machine import Phase

SIZES = {"720p": (1280, 720), "1080p": (1920, 1080), "4k": (3840, 2160)}
MS = 1_000_000
S = 1000 * MS

# The smallest text: its capital letters' height seen from 3 m on a 55-inch 16:9 TV, whatever
# its resolution, at least 15 arc-minutes.
DISTANCE_MM = 3000.0
SCREEN_HEIGHT_MM = 55 * 25.4 * 9 / math.hypot(16, 9)  # 684.9 mm
LEAST_MM = 2 * DISTANCE_MM * math.tan(math.radians(15 / 60 / 2))  # 13.09 mm
LEAST_SHARE = LEAST_MM / SCREEN_HEIGHT_MM  # of the screen's height: 20.6 px at 1080p


def arc_minutes(cap_px: float, screen_px: int) -> float:
    """The angle a capital letter `cap_px` tall subtends from 3 m on a 55-inch TV `screen_px` high."""
    mm = cap_px / screen_px * SCREEN_HEIGHT_MM
    return math.degrees(2 * math.atan(mm / 2 / DISTANCE_MM)) * 60


# One script, one consistent page: every box on it, what lies outside the screen, what
# overlaps, the smallest capital letter, the lowest contrast, and colours without their shape.
CHECK = (Path(__file__).parent / "tv_check.js").read_text()


def check(page: Any, label: str, inject: dict[str, Any] | None = None) -> dict[str, Any]:
    """The page as a spectator sees it: everything on the screen, apart, large and clear enough."""
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    got = page.evaluate(CHECK, inject)
    assert got["outside"] == [], f"{label}: outside the screen"
    assert got["scroll"] == [width, height], f"{label}: the page scrolls"
    assert got["overlaps"] == [], f"{label}: overlapping"
    assert got["lows"] == [], f"{label}: below WCAG AA contrast"
    assert got["shapeless"] == [], f"{label}: a colour without its shape"
    least = got["least"]
    assert least["cap"] >= LEAST_SHARE * height, \
        f"{label}: {least['what']} {least['cap']:.1f} px capitals, {arc_minutes(least['cap'], height):.1f}′"
    return got


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"tv-{name}.png"))


def pages(browser: Any, table: LiveTable) -> dict[str, Any]:  # noqa: F811
    out = {}
    for size, (width, height) in SIZES.items():
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(table.url + "big")
        page.wait_for_function("() => window.tableFrames > 0", timeout=10_000)
        out[size] = page
    return out


def at_phase(pages_: dict[str, Any], phase: str) -> None:
    for page in pages_.values():  # a round of 12 bots on a loaded machine: minutes, at worst
        page.wait_for_function(f"() => window.tableState.phase === '{phase}'", timeout=300_000)


def _leaders() -> dict[str, Any]:
    """The attract screen's standings as the table makes them (views/standings.py) from what the
    statistics' keeper says (`Figurer.standings`): 8 players tonight and all time, the longest
    names and one with markup, and the last match's highlights in the table's own words."""
    from firmware_host.views.standings import highlights, leaderboard

    names = ["Maximilian-Alexa", "<b>Zoë</b>", "Ana", "Ben", "Chloé", "Dmitri", "Eve", "Farid"]
    kept = {"leaderboard": {
        "tonight": [{"player": n, "name": name, "matches": 9, "wins": 9 - n, "rounds": 27,
                     "points_per_round": 1.5} for n, name in enumerate(names, start=1)],
        "all_time": {"classic": [{"player": n, "name": name, "shown": 40.25 - n, "mu": 45.0 - n, "sigma": 1.6,
                                  "matches": 30} for n, name in enumerate(names, start=1)]}},
        "highlights": {"match": 9, "game": "classic",
                       "closest_race": {"margin_ms": 0.04, "seat": 7, "name": "<b>Zoë</b>"},
                       "fastest_reaction": {"ms": 212.4, "seat": 3, "name": "guest"}}}
    return {"leaderboard": {"tonight": leaderboard(kept, "tonight", "classic"),
                            "all_time": leaderboard(kept, "all time", "classic")},
            "highlights": highlights(kept)}


LEADERS = _leaders()


@pytest.mark.parametrize("seats", [2, 12])
def test_the_tv_page_fits_every_tv_in_every_phase(browser: Any, live: Any, seats: int) -> None:  # noqa: F811
    table = live(seats, shown="http://192.168.1.23/")  # as the Pi says it: its network address
    views = pages(browser, table)
    figures: dict[str, float] = {}

    def every(phase: str, inject: dict[str, Any] | None = None, name: str | None = None) -> None:
        at_phase(views, phase)
        if name:  # taken first, so a screen that fails its checks is there to be looked at
            if inject:
                views["1080p"].evaluate("(i) => draw({...window.tableState, ...i})", inject)
            shot(views["1080p"], f"{name}-{seats}")
        for size, page in views.items():
            got = check(page, f"{seats} seats, {phase}, {size}", inject)
            height = page.viewport_size["height"]
            figures[f"{phase} {size}"] = arc_minutes(got["least"]["cap"], height)

    every("attract", name="attract")
    every("attract", LEADERS, name="attract-standings")
    table.do(lambda now: (table.daemon.table.new("classic", {"rounds": 2}, now),
                          table.daemon.table.set_bots(seats, "easy")))
    every("lobby", name="lobby")
    t = table.daemon.table

    def timing(**times: int) -> None:
        table.do(lambda now: (setattr(t, "timing", replace(t.timing, **times)), t.tick(now)))

    timing(countdown_ns=600 * S)
    table.do(lambda now: t.start(now))
    every("countdown", name="countdown")
    timing(countdown_ns=300 * MS)
    wait_for(lambda: table.daemon.table.phase is Phase.PLAYING, timeout=10)
    wait_for(lambda: journaled(state_database()) >= 3, timeout=60, every=0.1)
    every("playing", name="play")
    race = {"race": {"winner": 1, "loser": 2, "winner_name": "seat 1", "loser_name": "bot", "tie": False,
                     "margin_ns": 400_000, "margin": "0.4 ms", "ts_ns": time.monotonic_ns()}}
    every("playing", race, name="race")
    def instant(_now: int) -> None:  # the round to its end, quickly
        for bot in t.bots.values():
            bot.level, bot.skill = Level.INSTANT, SKILLS[Level.INSTANT]

    table.do(instant)
    for page in views.values():  # the round's fastest reaction: replayed once the round is stored
        page.wait_for_function("() => window.tableState.phase === 'round_result' && "
                               "(window.tableState.round_end || {}).fastest", timeout=300_000)
    every("round_result", name="round-end")
    timing(round_result_ns=0)
    every("match_result", name="match-end")
    print(seats, "seats, the smallest text in arc-minutes:",
          ", ".join(f"{k} {v:.1f}′" for k, v in figures.items()))
    for page in views.values():
        page.close()


def test_the_arc_minutes_of_a_55_inch_tv() -> None:
    """A 55-inch 16:9 screen is 684.9 mm high; 15′ from 3 m is 13.09 mm, 20.6 px at 1080p."""
    assert round(SCREEN_HEIGHT_MM, 1) == 684.9 and round(LEAST_MM, 2) == 13.09
    assert round(LEAST_SHARE * 1080, 1) == 20.6
    assert round(arc_minutes(20.64, 1080), 1) == 15.0


def test_a_lost_connection_dims_the_board_says_since_when_and_retries_every_2_s(
        browser: Any, live: Any) -> None:  # noqa: F811
    table = live(2)
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    attempts: list[float] = []
    page.on("websocket", lambda _ws: attempts.append(time.monotonic()))
    page.goto(table.url + "big")
    page.wait_for_function("() => window.tableFrames > 0", timeout=10_000)
    assert page.locator("#lost").is_hidden()
    table.web.stop()  # the table's web view gone: the page's socket closes
    page.wait_for_function("() => document.body.classList.contains('lost')", timeout=10_000)
    lost = time.monotonic()
    overlay = page.locator("#lost")
    assert overlay.is_visible()
    box = overlay.bounding_box()
    assert box == {"x": 0, "y": 0, "width": 1920, "height": 1080}  # over the whole board, dimming it
    assert page.evaluate("() => getComputedStyle(document.getElementById('lost')).backgroundColor") == \
        "rgba(0, 0, 0, 0.733)"
    said = page.locator("#lost-since").inner_text()
    assert said.startswith("since ") and said[6:14].count(":") == 2, said  # since HH:MM:SS (N s ago)
    page.wait_for_timeout(7000)
    tries = [t for t in attempts if t >= lost - 0.1]
    gaps = [b - a for a, b in itertools.pairwise(tries)]
    assert len(tries) >= 4, tries  # at once, then after 0.5, 1 and 2 s, then every 2 s
    # The page waits 2 s at most; the slack is this loaded machine's, not the page's.
    assert max(gaps) < 2.0 + 1.0, gaps
    assert "ago)" in page.locator("#lost-since").inner_text()
    page.close()


# Machado, Oliveira and Fernandes (2009), "A physiologically-based model for simulation of color
# vision deficiency", deuteranopia at severity 1.0, on linear RGB.
DEUTERANOPIA = ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413),
                (-0.011820, 0.042940, 0.968881))


def deuteranope(png: bytes) -> Any:
    """A screenshot as a deuteranope sees it (Machado 2009 on linear RGB), as sRGB floats 0-255."""
    import io

    import numpy as np
    from PIL import Image

    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.float64) / 255
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    seen = np.clip(linear @ np.array(DEUTERANOPIA).T, 0, 1)
    return 255 * np.where(seen <= 0.0031308, seen * 12.92, 1.055 * seen ** (1 / 2.4) - 0.055)


def test_red_and_green_cards_differ_by_their_shapes_to_a_deuteranope(
        browser: Any, live: Any) -> None:  # noqa: F811
    """A red 5 and a green 5 drawn side by side on the TV page, seen through a simulated
    deuteranopia: with their shapes they differ over a large share of the card; without them
    (the shapes hidden) they differ little, since the colours alone look alike."""
    import numpy as np

    table = live(2)
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    page.goto(table.url + "big")
    page.wait_for_function("() => window.tableFrames > 0", timeout=10_000)
    page.evaluate("""() => { const box = document.createElement('div'); box.id = 'pair';
      box.style.cssText = 'position: fixed; left: 0; top: 0; z-index: 20; display: flex; gap: 10px;';
      box.append(card({c: 'R', v: 5}), card({c: 'G', v: 5})); document.body.append(box); }""")
    cards = page.locator("#pair .card")

    def differing() -> float:
        red, green = (deuteranope(cards.nth(i).screenshot()) for i in range(2))
        assert red.shape == green.shape
        return float((np.abs(red - green).max(axis=2) > 40).mean())

    with_shapes = differing()
    page.evaluate("""() => { for (const s of document.querySelectorAll('#pair .shape'))
                               s.style.visibility = 'hidden'; }""")
    without = differing()
    print(f"deuteranope: {with_shapes:.0%} of the card differs with the shapes, {without:.0%} without")
    assert with_shapes >= 0.08 and without < 0.02  # measured: 12 % and 0 %
    page.close()
