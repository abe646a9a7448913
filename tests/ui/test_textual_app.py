"""The laptop table in Textual: keys take the Pi's path, the frames drawn are the devices' frames."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from textual.widgets import Static

from firmware_host.config import emulated_config
from firmware_host.service.daemon import Daemon
from firmware_host.service.events import Key
from firmware_host.table.machine import Phase
from firmware_host.ui.terminal import mono_braille, rgb_cells
from firmware_host.ui.textual_app import LogPane, TableApp, centre_text
from firmware_host.ui.words import words_of
from firmware_host.views.seat import render_countdown


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("STATE_DIRECTORY", "RUNTIME_DIRECTORY", "CONFIGURATION_DIRECTORY"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(name, str(tmp_path / name))
    return tmp_path


async def until(pilot: Any, check: Any, timeout: float = 15.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "the table never got there"
        await pilot.pause(0.05)


def play(script: Any, size: tuple[int, int] = (200, 60)) -> tuple[Daemon, TableApp]:
    daemon = Daemon(emulated_config(4), terminal=True)
    app = TableApp(daemon)

    async def go() -> None:
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: app.view is not None)
            await script(pilot, daemon, app)

    asyncio.run(go())
    return daemon, app


def test_a_laptop_player_joins_adds_bots_and_plays_through_the_pins(dirs: Path) -> None:
    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        await pilot.press("space")
        await until(pilot, lambda: daemon.table.joined == [0])
        await pilot.press("b", "b", "b")
        await until(pilot, lambda: len(daemon.table.bots) == 3)
        await pilot.press("B")
        await until(pilot, lambda: len(daemon.table.bots) == 2)
        await pilot.press("b", "enter")
        counting = {render_countdown(k, "classic").tobytes() for k in (1, 2, 3)}
        await until(pilot, lambda: app.view.seats[0].tobytes() in counting)  # 3-2-1 on seat 1's OLED
        await until(pilot, lambda: daemon.table.phase is Phase.PLAYING)
        await until(pilot, lambda: app.view is not None and "playing" in app.view.status)
        assert sorted(app.view.seats) == [0, 1, 2, 3]
        assert app.view.scores[0].split()[:3] == ["seat", "1", "you"]
        assert all("bot (medium)" in line for line in app.view.scores[1:])
        before = app.view.seats[0].tobytes()
        await pilot.press("right")  # the cursor moves on seat 1's OLED: the key went through its pin
        await until(pilot, lambda: app.view.seats[0].tobytes() != before)
        await until(pilot, lambda: len(app.view.centre.getcolors(1 << 16)) > 1, timeout=30)  # bots play
        await pilot.press("q")  # a match is running: q asks first, as x does
        assert app.query_one("#confirm").has_class("shown") and "Quit the table?" in app.query_one(
            "#confirm").render().plain
        await pilot.pause(0.3)
        assert app._thread.is_alive()
        await pilot.press("y")
        await until(pilot, lambda: not app._thread.is_alive())

    daemon, app = play(script)
    from firmware_host.service.journal import Store

    saved = Store(None).history(5)  # the match the laptop played went to the table's database
    assert [(m["game"], m["players"]) for m in saved] == [("classic", 4)]
    assert app.return_code == 0
    assert not daemon.control.path.exists()  # closed down cleanly: the socket is gone


def test_watching_another_seat_and_the_sharp_view(dirs: Path) -> None:
    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        assert app.sharp is True  # a big terminal starts with the half-block view
        await pilot.press("v")
        assert app.watching == 1 and app.query_one("#seat").border_title == "seat 2 (watching)"
        await pilot.press("v", "v", "v")
        assert app.watching == 0 and app.query_one("#seat").border_title == "seat 1 (you)"
        await pilot.press("z")
        assert app.sharp is False
        await pilot.press("q")
        await until(pilot, lambda: not app._thread.is_alive())

    play(script)


def test_a_broken_configuration_is_shown_in_red(dirs: Path) -> None:
    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        daemon.config_problem = "configuration invalid, running the last good one: arbiter.window_ms"
        daemon.loop.put(Key("unmapped"))  # wakes the loop, which redraws
        await until(pilot, lambda: app.view.problem.startswith("configuration invalid"))
        assert app.query_one("#problem").has_class("shown")
        assert app.view.status.startswith("CONFIGURATION INVALID")
        await pilot.press("q")
        await until(pilot, lambda: not app._thread.is_alive())

    play(script)


def test_braille_keeps_every_pixel_of_a_seat_frame() -> None:
    img = Image.new("1", (4, 8))
    img.putpixel((1, 3), 1)  # bottom right dot of the first cell
    img.putpixel((2, 4), 1)  # top left dot of the cell below, to the right
    assert mono_braille(img) == "\u2880\u2800\n\u2800\u2801"


def test_the_centre_is_drawn_in_its_own_colours_led_by_led() -> None:
    img = Image.new("RGB", (2, 2))
    img.putpixel((0, 0), (255, 0, 0))
    img.putpixel((1, 1), (0, 0, 255))
    assert rgb_cells(img, width=1) == [[("#ff0000", "#000000"), ("#000000", "#0000ff")]]
    from firmware_host.service.frontend import TableView

    dim = Image.new("RGB", (1, 2), (0, 40, 0))  # capped brightness is brightened for the screen
    text = centre_text(TableView("", dim, {}, []))
    assert text.plain == "\u2580\u2580" and "#00ff00 on #00ff00" in str(text.spans[0].style)


def test_each_sound_rings_the_terminals_bell_and_shows_in_the_log(dirs: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    rung: list[int] = []
    monkeypatch.setattr(TableApp, "bell", lambda self: rung.append(1))

    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        await pilot.press("space")
        await until(pilot, lambda: daemon.table.joined == [0])
        await pilot.press("b", "enter")
        await until(pilot, lambda: [c.sound for c in daemon.buzzer.heard][:4] == ["count"] * 3 + ["go"])
        await until(pilot, lambda: len(rung) >= 4)  # three seconds and go, each a bell
        log = app.query_one("#log", LogPane)
        await until(pilot, lambda: "♪ go" in log.lines)
        assert list(log.lines).count("♪ countdown") >= 3
        await pilot.press("q", "y")  # a match is running: q asks first
        await until(pilot, lambda: not app._thread.is_alive())

    play(script)


# ---------------------------------------------------------------- a newcomer's first hour


async def _playing(pilot: Any, daemon: Daemon, app: TableApp, game_steps: int = 0) -> None:
    """Seat 1 joins, two bots, the game `game_steps` to the right of classic, start, go."""
    await pilot.press("space")
    await until(pilot, lambda: daemon.table.joined == [0])
    await pilot.press("b", "b", *["right"] * game_steps)
    await until(pilot, lambda: len(daemon.table.bots) == 2)
    await pilot.press("enter")
    await until(pilot, lambda: daemon.table.phase is Phase.PLAYING)
    await until(pilot, lambda: app.view is not None and "playing" in app.view.status
                and bool(words_of(app.view).hands.get(0)) and words_of(app.view).hands[0].plain != "")


def _fits(app: TableApp, selector: str) -> tuple[int, int]:
    """(longest line of the panel's text, the columns it has): the text must not be cut or wrapped."""
    widget = app.query_one(selector)
    text = widget.render()
    plain = text.plain if hasattr(text, "plain") else str(text)
    return max(len(line) for line in plain.splitlines() or [""]), widget.content_region.width


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
def test_the_table_view_fits_80x24_and_100x30_without_cutting_a_panel(dirs: Path,
                                                                      size: tuple[int, int]) -> None:
    """It was: at 80x24 the seat panel was cut to 9-12 columns and the log collapsed."""

    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        await _playing(pilot, daemon, app)
        await pilot.pause(0.3)
        for panel, least in (("#words", 40), ("#hand", 70), ("#scores", 26)):
            assert app.query_one(panel).region.width >= least, panel
            longest, room = _fits(app, panel)
            assert longest <= room, f"{panel}: a line of {longest} in {room} columns"
        assert "stack" in app.query_one("#hand").render().plain  # the seat's whole text is there
        assert app.query_one("#log").region.height >= 4
        assert app.query_one("#help").region.bottom <= size[1]
        await pilot.press("t")  # the faithful frames, one key away
        await pilot.pause(0.2)
        seat = app.query_one("#seat")
        assert seat.display and seat.region.width >= 66  # 64 braille cells and the border
        if size[0] >= 100:
            assert app.query_one("#left").region.width >= 34  # the matrix beside it, an LED a cell
        else:
            await pilot.press("t")
            await pilot.pause(0.2)
            assert app.query_one("#left").region.width >= 34 and not app.query_one("#seat").display
        await pilot.press("q", "y")  # a match is running: q asks first
        await until(pilot, lambda: not app._thread.is_alive())

    play(script, size)


def test_key_help_shows_the_games_keys_and_a_confirmed_abort_returns_to_the_lobby(dirs: Path) -> None:
    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        assert "space join" in app.query_one("#help").render().plain
        await _playing(pilot, daemon, app, game_steps=2)  # domino
        keys = app.query_one("#help").render().plain
        assert keys.startswith("Ligretto Domino:") and "joker" in keys and "enter discards" in keys
        assert "x abort to lobby" in keys
        await pilot.press("x")
        assert app.query_one("#confirm").has_class("shown")
        await pilot.press("q")  # anything but y is a no, and does nothing else
        assert not app.query_one("#confirm").has_class("shown")
        await pilot.pause(0.3)
        assert daemon.table.phase is Phase.PLAYING and app._thread.is_alive()
        await pilot.press("x", "y")
        await until(pilot, lambda: daemon.table.phase is Phase.LOBBY and daemon.table.match is None)
        await until(pilot, lambda: app.view.status.startswith("lobby"))
        await pilot.press("q")
        await until(pilot, lambda: not app._thread.is_alive())

    play(script, (80, 24))


def test_twelve_seats_fit_beside_the_table_at_80x24(dirs: Path) -> None:
    daemon = Daemon(emulated_config(12), terminal=True)
    app = TableApp(daemon)

    async def go() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.view is not None)
            await _playing_with(pilot, daemon, app, 11)
            await pilot.pause(0.3)
            scores = app.query_one("#scores")
            assert scores.region.height <= 8 and "12 bot" in scores.render().plain  # two columns
            longest, room = _fits(app, "#scores")
            assert longest <= room
            assert app.query_one("#help").region.bottom <= 24 and app.query_one("#log").region.height >= 3
            await pilot.press("q", "y")  # a match is running: q asks first
            await until(pilot, lambda: not app._thread.is_alive())

    asyncio.run(go())


async def _playing_with(pilot: Any, daemon: Daemon, app: TableApp, bots: int) -> None:
    await pilot.press("space")
    await until(pilot, lambda: daemon.table.joined == [0])
    await pilot.press(*["b"] * bots)
    await until(pilot, lambda: len(daemon.table.bots) == bots)
    await pilot.press("enter")
    await until(pilot, lambda: daemon.table.phase is Phase.PLAYING)
    await until(pilot, lambda: app.view is not None and "playing" in app.view.status)


# ---------------------------------------------------------------- a second newcomer's hour


def _screen(app: TableApp) -> list[str]:
    """What a person sees: the terminal's rows as text."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def _pane_rows(app: TableApp, selector: str) -> list[str]:
    """The rows inside a bordered panel, as drawn on the screen."""
    region = app.query_one(selector).region
    rows = _screen(app)[region.y + 1 : region.bottom - 1]
    return [row[region.x + 1 : region.right - 1] for row in rows]


def test_the_log_wraps_every_line_whole_at_80x24_and_never_scrolls_sideways(dirs: Path) -> None:
    """It was: a RichLog rendered each line at 78 columns; once its scrollbar took two, the pane
    scrolled sideways and hid the first characters ("able-host ready", "und 4 won by"), and a
    wrapped "+42" read "42"."""
    said = ("Round 4 won by seat 3: this round seat 3 +12, seat 1 -4; "
            "totals seat 1 -62, seat 2 +42, seat 3 +90")

    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        await _playing(pilot, daemon, app)
        log = app.query_one("#log", LogPane)
        for n in range(30):  # more than the pane holds: its scrollbar appears
            log.write(f"{n}: {said}")
        await pilot.pause(0.3)
        assert log.max_scroll_x == 0 and log.scroll_x == 0
        screen = _screen(app)
        assert len(screen) == 24 and all(len(row) <= 80 for row in screen)
        rows = [row.rstrip("▁▂▃▄▅▆▇█▉▊▋▌▍▎▏ ").strip() for row in _pane_rows(app, "#log")]
        shown = " ".join(rows)
        assert f"29: {said}" in shown  # the newest line, whole, its signs and digits all there
        await pilot.resize_terminal(100, 30)  # wrapped again to the new width

        def rewrapped() -> bool:
            rows = [row.rstrip("▁▂▃▄▅▆▇█▉▊▋▌▍▎▏ ").strip() for row in _pane_rows(app, "#log")]
            return len(_screen(app)) == 30 and f"29: {said}" in " ".join(rows)

        await until(pilot, rewrapped)
        assert log.max_scroll_x == 0
        await pilot.press("q", "y")
        await until(pilot, lambda: not app._thread.is_alive())

    play(script, (80, 24))


def test_a_burst_of_right_presses_moves_the_choice_as_often(dirs: Path) -> None:
    """It was: three Right presses in one burst moved the choice by one (the emulated debounce)."""

    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        await _playing(pilot, daemon, app)
        seat = daemon.table.referee.seats[0]
        choices = len(seat.choices())
        start = seat.cursor
        await pilot.press("right", "right", "right")  # one burst: well inside 30 ms
        await until(pilot, lambda: seat.cursor == (start + 3) % choices)
        await pilot.pause(0.4)
        assert seat.cursor == (start + 3) % choices  # and no further
        await pilot.press("q", "y")
        await until(pilot, lambda: not app._thread.is_alive())

    play(script, (80, 24))


def test_keys_1_to_5_play_a_row_place_and_the_footer_offers_only_what_the_seat_has(dirs: Path) -> None:
    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        await _playing(pilot, daemon, app)  # classic, 3 players: a row of 4
        help_text = " ".join(app.query_one("#help").render().plain.split())
        assert "1-4 plays that row place" in help_text and "z sharp seat" in help_text
        await pilot.press("2")
        await until(pilot, lambda: any(e.get("decided") == "select2" and e["seat"] == 1
                                       for e in daemon.table.trace))
        pressed = [e for e in daemon.table.trace if e.get("input") == "press" and e["seat"] == 1]
        assert pressed[-1]["control"] == "select2"  # through seat 1's own pin, as a button
        from firmware_host.views.readable import key_help

        assert "plays that row place" not in key_help(daemon.table, direct=False)
        await pilot.press("q", "y")
        await until(pilot, lambda: not app._thread.is_alive())

    play(script, (80, 24))
    daemon = Daemon(emulated_config(4))  # headless: no keyboard, and the build wires no direct buttons
    try:
        assert daemon.keys.direct is False
    finally:
        daemon.close()


def test_the_lobby_chooses_each_bots_level(dirs: Path) -> None:
    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        await pilot.press("space")
        await until(pilot, lambda: daemon.table.joined == [0])
        assert "l next bot: medium" in " ".join(app.query_one("#help").render().plain.split())
        await pilot.press("l", "b", "l", "b", "l", "b")  # hard, easy, medium
        await until(pilot, lambda: len(daemon.table.bots) == 3)
        assert [str(daemon.table.bots[p].level) for p in (1, 2, 3)] == ["hard", "easy", "medium"]
        await until(pilot, lambda: "seat 4 (bot, medium)" in words_of(app.view).centre.plain)
        words = " ".join(words_of(app.view).centre.plain.split())
        assert "seat 1 (you), seat 2 (bot, hard), seat 3 (bot, easy), seat 4 (bot, medium)" in words
        await pilot.press("B")  # the last one added leaves; the others keep their levels
        await until(pilot, lambda: len(daemon.table.bots) == 2)
        assert [str(b.level) for _, b in sorted(daemon.table.bots.items())] == ["hard", "easy"]
        await pilot.press("enter")
        await until(pilot, lambda: daemon.table.phase is Phase.PLAYING)
        await until(pilot, lambda: "bot (easy)" in app.view.scores[2])
        assert "bot (hard)" in app.view.scores[1]
        await pilot.press("q", "y")
        await until(pilot, lambda: not app._thread.is_alive())

    play(script, (80, 24))


def test_sharp_seat_only_where_it_fits(dirs: Path) -> None:
    """It was: `z` at 100x30 drew the 128-column half-block seat past the edge."""

    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        await _playing(pilot, daemon, app)
        await pilot.press("t")
        await pilot.pause(0.2)
        assert not app.sharp
        await pilot.press("z")
        await pilot.pause(0.2)
        assert not app.sharp and "z: the sharp seat needs a terminal of 196x44" in app.query_one(
            "#log", LogPane).lines[-1]
        assert [n.message for n in app._notifications][-1].startswith("z: the sharp seat needs")
        seat = app.query_one("#seat").region
        assert seat.right <= 100 and seat.bottom <= 30
        assert all(len(row) <= 100 for row in _screen(app))
        await pilot.resize_terminal(200, 60)
        await until(pilot, lambda: tuple(app.size) == (200, 60))
        await pilot.press("z")
        await until(pilot, lambda: app.sharp)  # a pause is not enough on a loaded machine
        await until(pilot, lambda: app.query_one("#seat").region.right <= 200)
        for panel in ("#left", "#seat", "#scores"):  # it was: the seats' panel drawn at 195-225
            widget = app.query_one(panel)
            assert not widget.display or widget.region.right <= 200, panel
        await pilot.resize_terminal(100, 30)  # smaller again: back to the compact seat
        await until(pilot, lambda: not app.sharp and app.query_one("#seat").region.right <= 100)
        await pilot.press("q", "y")
        await until(pilot, lambda: not app._thread.is_alive())

    play(script, (100, 30))


# ---------------------------------------------------------------- a maintainer's first hour (issue 33)


def test_watching_ends_with_the_match_and_keys_never_play_seat_1_unseen(dirs: Path) -> None:
    """It was: `v` carried over into the next match, which opened on "seat 4 (watching)", and keys
    moved seat 1's cursor while seat 2 was on screen."""

    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        await _playing(pilot, daemon, app)
        mine = daemon.table.referee.seats[0]
        cursor = mine.cursor
        await pilot.press("v")
        assert app.watching == 1 and app.query_one("#hand").border_title == "seat 2 (watching)"
        await pilot.press("right")  # brings seat 1 back, plays nothing
        assert app.watching == 0 and app.query_one("#hand").border_title == "seat 1 (you)"
        assert "back to your seat, seat 1" in " ".join(app.query_one("#log", LogPane).lines)
        await pilot.pause(0.5)
        assert mine.cursor == cursor
        await pilot.press("right")  # now seen: it plays
        await until(pilot, lambda: mine.cursor != cursor)
        await pilot.press("v", "v")
        assert app.watching == 2
        await pilot.press("x", "y")
        await until(pilot, lambda: daemon.table.phase is Phase.LOBBY)
        await pilot.press("enter")
        await until(pilot, lambda: daemon.table.phase is Phase.PLAYING and app.view.in_match)
        assert app.watching == 0 and app.query_one("#seat").border_title == "seat 1 (you)"
        await pilot.press("q", "y")
        await until(pilot, lambda: not app._thread.is_alive())

    play(script, (80, 24))


def test_x_without_a_match_says_so_and_t_keeps_what_happened_at_80x24(dirs: Path) -> None:
    """It was: `x` in the lobby asked "Abort the match…?" with no match; `t` shrank "what
    happened" to its borders."""

    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        await pilot.press("x")
        assert not app.query_one("#confirm").has_class("shown")
        assert app.query_one("#log", LogPane).lines[-1] == "x: no match is running, nothing to abort"
        await _playing(pilot, daemon, app, game_steps=3)  # Crazy: its headline takes two lines
        for _ in range(3):  # the seat's frame, the centre's, the words, at 80x24
            await pilot.press("t")
            await pilot.pause(0.2)
            assert app.query_one("#log").content_region.height >= 2, app.mode
            assert app.query_one("#log").region.bottom <= 24, app.mode
            screen = "\n".join(_screen(app))
            assert "t table/frames" in screen and "q quit" in screen, (app.mode, screen)
        await pilot.press("q", "y")
        await until(pilot, lambda: not app._thread.is_alive())

    play(script, (80, 24))


def test_the_newest_line_stays_in_view_when_the_log_shrinks(dirs: Path) -> None:
    """It was: back in the lobby, whose words are longer, the log's pane shrank and hid "Match
    over…" below it."""

    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        log = app.query_one("#log", LogPane)
        for n in range(40):
            log.write(f"line {n}")
        log.write("Match over: seat 1 wins with 12 after 5 rounds")
        await pilot.pause(0.3)
        app.query_one("#words", Static).update("\n".join(f"lobby line {n}" for n in range(8)))
        await pilot.pause(0.5)
        rows = " ".join(row.strip() for row in _pane_rows(app, "#log"))
        assert "Match over: seat 1 wins" in rows
        await pilot.press("q")
        await until(pilot, lambda: not app._thread.is_alive())

    play(script, (80, 24))


SPAWN_UNDER_TEXTUAL = """
import multiprocessing, sys
from concurrent.futures import ProcessPoolExecutor
from textual.app import _PrintCapture
from firmware_host.service.statistics import tracker_started
if sys.argv[1] == "tracker first":
    tracker_started()
sys.stderr = _PrintCapture(None, stderr=True)  # what Textual puts there while it runs: fileno() -1
try:
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        print("answered", pool.submit(abs, -7).result(60))
except Exception as exc:
    print("failed:", exc)
sys.stderr = sys.__stderr__  # the capture has no app to flush to at exit
"""


@pytest.mark.parametrize("order, said", [("tracker first", "answered 7"),
                                         ("as before", "failed: bad value(s) in fds_to_keep")])
def test_the_statistics_process_starts_under_textuals_stderr_only_with_the_tracker_first(
        order: str, said: str) -> None:
    """A fresh clone's `./dev run` kept no figures: the statistics' process (spawned) failed once
    Textual had taken stderr. `run_app` starts multiprocessing's resource tracker before."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", SPAWN_UNDER_TEXTUAL, order], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert out.strip() == said


def test_run_app_starts_the_tracker_before_textual_takes_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    from firmware_host.ui import textual_app

    happened: list[str] = []

    class App:
        _thread = None
        end_process_if_stuck = False

        def __init__(self, daemon: object) -> None:
            happened.append("app made")

        def run(self) -> int:
            happened.append("app runs")
            return 0

    monkeypatch.setattr(textual_app, "tracker_started", lambda: happened.append("tracker"))
    monkeypatch.setattr(textual_app, "TableApp", App)
    assert textual_app.run_app(object()) == 0  # type: ignore[arg-type]
    assert happened == ["tracker", "app made", "app runs"]
