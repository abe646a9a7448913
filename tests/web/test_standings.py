"""The players' pages over HTTP (web/standings.py) with aiohttp's client, and in Debian's chromium
through Playwright: a player's statistics, rating over time (drawn) and matches, the leaderboard
tonight and all time, what is refused, and a name with markup shown as text."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from helpers import MATCH_A, MATCH_B, RACES_A, RACES_B, stored_dice_matches
from plumbing import SHOTS

from firmware_host.service.statistics import Figurer, catch_up_in
from firmware_host.web import standings
from firmware_host.web.server import Hub, build_app

CHROMIUM = "/usr/bin/chromium"
BEN = "<b>Ben</b>"  # a name is text: ten characters, never markup


class Served:
    """The web view's application with the players' routes, on a port of its own in a thread."""

    def __init__(self, figurer: Figurer) -> None:
        self.loop = asyncio.new_event_loop()
        app = build_app(Hub(4), routes=[standings.routes(figurer)])
        self.runner = web.AppRunner(app, handle_signals=False)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The two Dice matches of tests/helpers.py, the second begun an hour ago (tonight), figured."""
    db = tmp_path_factory.mktemp("standings") / "table.db"
    now = time.time()
    stored_dice_matches(db, [(1, now - 20 * 3600, MATCH_A, RACES_A, [-1, 1], [1]),
                             (2, now - 3600, MATCH_B, RACES_B, [2, -2], [0])],
                        {1: [(1, "player", 1), (2, "player", 2)], 2: [(1, "player", 1), (2, "player", 2)]},
                        names={1: "Ana", 2: BEN})
    figurer = Figurer(db)
    assert figurer.ask(catch_up_in) == 2
    server = Served(figurer)
    try:
        yield server
    finally:
        server.close()
        figurer.close()


Answer = tuple[int, dict[str, str], bytes]


def get(url: str, method: str = "GET") -> Answer:
    async def fetch() -> Answer:
        async with aiohttp.ClientSession() as session, session.request(method, url) as r:
            return r.status, dict(r.headers), await r.read()
    return asyncio.run(fetch())


def test_the_json_the_pages_read(served: Served) -> None:
    import json

    status, headers, body = get(f"{served.url}/api/players/1")
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    ana = json.loads(body)
    assert ana["name"] == "Ana" and ana["all"]["median_reaction_ms"] == 30.0
    assert [m["match"] for m in ana["matches"]] == [2, 1] and len(ana["ratings"]["dice"]) == 2
    status, _, body = get(f"{served.url}/api/players/1?since={time.time() - 2 * 3600}")
    assert status == 200 and json.loads(body)["all"]["matches"] == 1
    status, _, body = get(f"{served.url}/api/leaderboard")
    board = json.loads(body)
    assert [e["name"] for e in board["tonight"]] == ["Ana", BEN]
    assert {e["name"] for e in board["all_time"]["dice"]} == {"Ana", BEN}
    status, _, body = get(f"{served.url}/api/highlights")
    assert json.loads(body)["fastest_reaction"] == {"ms": 10.0, "seat": 1, "name": "Ana"}
    for path in ("/players/1", "/leaderboard"):
        status, headers, body = get(served.url + path)
        assert status == 200 and headers["Content-Type"].startswith("text/html") and b"players.js" in body


def test_unknown_players_bad_periods_and_writes_are_refused(served: Served) -> None:
    status, _, body = get(f"{served.url}/api/players/9")
    assert status == 404 and body == b"no player 9 is known\n"
    status, _, body = get(f"{served.url}/api/players/1?since=yesterday")
    assert status == 400
    assert body == b"since must be a time in seconds since 1970 (Unix time), not 'yesterday'\n"
    for path in ("/api/players/1234567890123", "/players/x", "/players/../../pyproject.toml"):
        assert get(served.url + path)[0] == 404
    assert get(f"{served.url}/api/players/1", "POST")[0] == 405
    assert get(f"{served.url}/api/leaderboard", "DELETE")[0] == 405


# ---------------------------------------------------------------- in a real browser


@pytest.fixture
def browser() -> Iterator[Any]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium (./dev test does it as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


def test_the_leaderboard_and_a_players_page_in_chromium(served: Served, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{served.url}/leaderboard")
    page.wait_for_selector("#tonight tr:nth-child(2)")
    tonight = page.eval_on_selector_all("#tonight tr", "trs => trs.map(tr => tr.children[1].textContent)")
    assert tonight == ["player", "Ana", BEN]  # the markup is the name, as text
    assert page.query_selector("#tonight b") is None
    assert page.text_content("#all-time h3") == "Ligretto Dice"  # the game as people call it
    page.screenshot(path=str(SHOTS / "leaderboard.png"))
    page.click("#tonight a[href='/players/2']")
    page.wait_for_selector("#figures tr")
    assert page.text_content("#name") == BEN
    figures = dict(page.eval_on_selector_all(
        "#figures tr", "trs => trs.slice(1).map(tr => [tr.children[0].textContent, "
        "tr.children[1].textContent])"))
    assert figures["matches"] == "2" and figures["wins"] == "1" and figures["points per round"] == "-0.5"
    assert figures["median reaction"] == "300 ms" and figures["best reaction"] == "300 ms"
    assert figures["median margin of a race won"] == "0.8 ms" and figures["false starts"] == "1"
    mu = page.get_attribute("#ratings svg polyline.mu", "points")
    assert mu is not None and len(mu.split()) == 2  # a point after each of the two matches
    assert page.get_attribute("#ratings svg polyline.shown", "points") is not None
    assert page.eval_on_selector_all("#matches a", "links => links.map(a => a.getAttribute('href'))") == [
        "/history/2", "/history/1"]
    page.screenshot(path=str(SHOTS / "player.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert errors == []
