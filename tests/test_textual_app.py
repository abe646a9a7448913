"""The laptop table in Textual: keys take the Pi's path, the frames drawn are the devices' frames."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from firmware_host.config import emulated_config
from firmware_host.daemon import Daemon
from firmware_host.displays.terminal import mono_braille, rgb_cells
from firmware_host.table import Phase
from firmware_host.textual_app import TableApp, centre_text
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
    daemon = Daemon(emulated_config(4), ui="textual")
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
        await pilot.press("q")
        await until(pilot, lambda: not app._thread.is_alive())

    daemon, app = play(script)
    from firmware_host.store import Store

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
        daemon.events.put(("key", "unmapped"))  # wakes the loop, which redraws
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
    from firmware_host.tui import TableView

    dim = Image.new("RGB", (1, 2), (0, 40, 0))  # capped brightness is brightened for the screen
    text = centre_text(TableView("", dim, {}, []))
    assert text.plain == "\u2580\u2580" and "#00ff00 on #00ff00" in str(text.spans[0].style)


def test_each_sound_rings_the_terminals_bell_and_shows_in_the_log(dirs: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.widgets import RichLog

    rung: list[int] = []
    monkeypatch.setattr(TableApp, "bell", lambda self: rung.append(1))

    async def script(pilot: Any, daemon: Daemon, app: TableApp) -> None:
        await pilot.press("space")
        await until(pilot, lambda: daemon.table.joined == [0])
        await pilot.press("b", "enter")
        await until(pilot, lambda: [c.sound for c in daemon.buzzer.heard][:4] == ["count"] * 3 + ["go"])
        await until(pilot, lambda: len(rung) >= 4)  # three seconds and go, each a bell
        log = app.query_one("#log", RichLog)
        await until(pilot, lambda: "♪ go" in [line.text for line in log.lines])
        assert [line.text for line in log.lines].count("♪ countdown") >= 3
        await pilot.press("q")
        await until(pilot, lambda: not app._thread.is_alive())

    play(script)
