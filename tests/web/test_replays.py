"""History and replays over HTTP (web/replays.py) with aiohttp's client, and in Debian's chromium
through Playwright: the JSON the pages read, what is refused, and what a person sees when
stepping through a match and looking at its races."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from helpers import play_recorded
from plumbing import MS, SHOTS, played_table, press, settle

from firmware_host.service.journal import Store
from firmware_host.table.matches import new_match
from firmware_host.web import replays
from firmware_host.web.server import Hub, build_app

CHROMIUM = "/usr/bin/chromium"


MARKUP = "<img src=x>Zoë"
"""A name that is markup: shown as its characters, never made an image."""

RACE_SEED = 188
"""The table's seed whose first classic deal for 2 seats gives seat 1 a Y1 (its 2nd place) with a
Y2 on its stack (which fills that place once Y1 is laid), and seat 2 a Y2 (its 1st place): seat 1
starts the yellow pile and both reach for the one place a yellow 2 can go."""


@pytest.fixture
def stored(tmp_path: Path) -> Iterator[tuple[Store, int, int, Any]]:
    """A store holding a classic match bots played and a race played at the table: seat 2
    false-starts by 0.5 ms, seat 1 (Ann) lays Y1, then slaps Y2 at 500.0 ms, 300 µs before seat 2.
    In the bot match seat 1 is a player whose name is markup (`MARKUP`), seat 3 a guest, seat 2 a bot."""
    store = Store(tmp_path / "table.db")
    match = new_match("classic", 3, "5/0", {"rounds": 1})
    played = store.begin_match(match, [0, 2, 1], {2: "hard"}, names={0: MARKUP})
    play_recorded(store, played, match, actions=120, seed=4)
    game, table = played_table(store, 2, RACE_SEED, "classic", {"rounds": 1}, names={0: "Ann"})
    assert table.match is not None and [str(c) for c in table.referee.seats[0].choices()][1] == "Y1"
    press(game, table, 1, "slap", -0.5)
    press(game, table, 0, "select2", 100.0)
    press(game, table, 0, "select2", 500.0)  # the Y2 from its stack has filled the place Y1 left
    press(game, table, 1, "select1", 500.3)
    settle(game, table, 600 * MS)
    store._drain()
    try:
        yield store, played, played + 1, match
    finally:
        store.close()


class Served:
    """The web view's application with the history's routes, on a port of its own in a thread."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.loop = asyncio.new_event_loop()
        self.runner = web.AppRunner(build_app(Hub(4), routes=[replays.routes(store)]), handle_signals=False)
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


@pytest.fixture
def served(stored: tuple[Store, int, int, Any]) -> Iterator[tuple[Served, int, int, Any]]:
    store, played, tie, match = stored
    server = Served(store)
    try:
        yield server, played, tie, match
    finally:
        server.close()


Answer = tuple[int, dict[str, str], bytes]


def get(url: str, method: str = "GET", headers: dict[str, str] | None = None) -> Answer:
    async def fetch() -> Answer:
        async with aiohttp.ClientSession() as session, session.request(method, url, headers=headers) as r:
            return r.status, dict(r.headers), await r.read()
    return asyncio.run(fetch())


def _piles(board: dict[str, Any]) -> list[dict[str, Any]]:
    """The open piles of a board in the page's vocabulary (views/boards.py)."""
    return next(e["cards"] for e in board["middle"] if e["type"] == "piles")


def test_the_json_the_pages_read(served: tuple[Served, int, int, Any]) -> None:
    server, played, tie, match = served
    status, headers, body = get(server.url + "/api/matches")
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    listed = json.loads(body)
    assert [m["match"] for m in listed] == [tie, played] and listed[1]["seats"] == [1, 3, 2]

    status, _, body = get(f"{server.url}/api/matches/{played}")
    timeline = json.loads(body)
    assert status == 200 and timeline["problem"] is None and timeline["races"] == []
    assert len(timeline["steps"]) == len(match.journal) + 1  # the deal, then each action
    last = timeline["steps"][-1]
    assert timeline["game"] == "classic" and timeline["title"] == listed[1]["title"] == "Ligretto"
    tops = [[p["c"], p["v"]] for p in _piles(last["board"])]  # the page's cards: colour AND value
    assert "state" not in last
    assert tops == [[p[-1][1].colour.letter, p[-1][1].value] for p in match.round.piles]

    plain_only = {"Accept-Encoding": "identity"}
    status, headers, plain = get(f"{server.url}/api/matches/{played}", headers=plain_only)
    assert "Content-Encoding" not in headers and json.loads(plain) == timeline  # gzip or not, the same
    rebuilder = server.runner.app[replays.REBUILDER]
    assert rebuilder.rebuilt == 1 and rebuilder.started == 1  # asked twice, rebuilt once: it has not changed
    store = server.store
    store.record_race(played, 0, {"kind": "false_start", "control": "slap", "loser": 1, "loser_ts": -7000,
                                  "go_ns": 0, "window_ns": 5 * MS, "epsilon_ns": MS // 5, "seed": 0})
    store._drain()
    again = json.loads(get(f"{server.url}/api/matches/{played}")[2])
    assert rebuilder.rebuilt == 2 and [r["delta_us"] for r in again["races"]] == [-7.0]  # the match changed

    raced = json.loads(get(f"{server.url}/api/matches/{tie}")[2])
    assert raced["problem"] is None and [s["text"] for s in raced["steps"]] == [
        "the cards are dealt", "Ann (seat 1) played Y1 to the centre", "Ann (seat 1) played Y2 to the centre"]
    assert [p["name"] for p in raced["people"]] == ["Ann", None] and listed[0]["names"] == ["Ann", None]
    assert [(r["kind"], r["seat"], r["by_seat"], r["delta_us"], r["step"]) for r in raced["races"]] == [
        ("false_start", 2, None, -500.0, 0), ("first", 2, 1, 300.0, 2)]

    status, headers, body = get(f"{server.url}/api/matches/{played}/journal.json")
    assert status == 200 and headers["Content-Disposition"] == f'attachment; filename="match-{played}.json"'
    assert len(json.loads(body)["journal"]) == len(match.journal)


def test_unknown_matches_strange_paths_and_writes_are_refused(served: tuple[Served, int, int, Any]) -> None:
    server, played, _, _ = served
    for path in ("/api/matches/999", "/api/matches/999/journal.json", "/api/matches/abc", "/api/matches/-1",
                 "/api/matches/1.5", f"/api/matches/{played}/../../../pyproject.toml",
                 "/history/..%2f..%2fpyproject.toml", "/static/..%2fhistory.py", "/static/history.py",
                 "/history/%2e%2e/server.py", "/api/matches/99999999999999999999"):
        status, headers, body = get(server.url + path)
        assert status == 404, path
        assert b"[project]" not in body and b"def " not in body
    status, headers, body = get(server.url + "/api/matches/999")
    assert body == b"no match 999 is stored\n" and "Content-Security-Policy" in headers
    for method in ("POST", "PUT", "DELETE"):
        assert get(f"{server.url}/api/matches/{played}", method)[0] == 405
    for page in ("/history", f"/history/{played}"):
        status, headers, body = get(server.url + page)
        assert status == 200 and headers["Content-Type"].startswith("text/html")
        assert b'<script src="/static/history.js"' in body


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


def pile_tops(page: Any) -> list[str]:
    """The middle's cards as a person reads them: colour (the card's class) and value (its text)."""
    return page.eval_on_selector_all(
        "#board .piles .card", "cards => cards.map(c => c.className.split(' ')[1] + ' '"
        " + c.querySelector('.value').textContent)")


COLOURS = {"R": "red", "G": "green", "B": "blue", "Y": "yellow"}


def test_stepping_through_a_match_shows_each_steps_piles(served: tuple[Served, int, int, Any],
                                                          browser: Any) -> None:
    server, played, _, match = served
    with urllib.request.urlopen(f"{server.url}/api/matches/{played}") as r:  # Playwright holds the loop
        timeline = json.load(r)
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{server.url}/history")
    page.wait_for_function("() => window.historyReady === true", timeout=10_000)
    listed = page.eval_on_selector_all("#matches tr", "trs => trs.map(tr => tr.children[0].textContent)")
    assert listed == ["match", f"#{played + 1}", f"#{played}"]
    seats = page.eval_on_selector_all("#matches tr", "trs => trs.map(tr => tr.children[2].textContent)")
    assert seats[1:] == ["Ann (seat 1), seat 2", f"{MARKUP} (seat 1), seat 3, bot (seat 2)"]
    assert page.query_selector("#matches img") is None  # the name is text, not markup
    links = page.eval_on_selector_all("#matches a.player",
                                      "as => as.map(a => [a.textContent, a.getAttribute('href')])")
    assert [name for name, _ in links] == ["Ann", MARKUP]
    assert all(href.startswith("/players/") and href[9:].isdigit() for _, href in links)
    page.screenshot(path=str(SHOTS / "history.png"))
    page.click(f"a[href='/history/{played}']")
    page.wait_for_function("() => window.historyReady === true && document.body.dataset.step === '0'",
                           timeout=10_000)
    assert pile_tops(page) == []  # the deal: no pile yet
    with_piles = next(s["step"] for s in timeline["steps"] if len(_piles(s["board"])) >= 2)
    for _ in range(with_piles):
        page.click("#forward")
    page.wait_for_function(f"() => document.body.dataset.step === '{with_piles}'")
    expected = [f"{COLOURS[p['c']]} {p['v']}" for p in _piles(timeline["steps"][with_piles]["board"])]
    assert pile_tops(page) == expected and len(expected) >= 2
    page.screenshot(path=str(SHOTS / "replay-classic.png"))
    page.click("#last")
    final = [f"{COLOURS[p[-1][1].colour.letter]} {p[-1][1].value}" for p in match.round.piles]
    assert pile_tops(page) == final
    assert page.text_content("#where") == f"step {len(timeline['steps'])} of {len(timeline['steps'])}"
    page.click("#first")
    page.click("#play")  # table speed: the bots' presses 1 ms apart
    last = len(timeline["steps"]) - 1
    page.wait_for_function(f"() => document.body.dataset.step === '{last}'", timeout=10_000)
    assert pile_tops(page) == final
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert errors == []


def test_the_list_pages_to_the_older_matches(served: tuple[Served, int, int, Any], browser: Any,
                                             monkeypatch) -> None:
    """A page of the list, and a link to the next one (the answer's Link header) while there is one."""
    server, played, tie, _ = served
    monkeypatch.setattr(replays, "MATCHES_MAX", 1)
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{server.url}/history")
    page.wait_for_function("() => window.historyReady === true", timeout=10_000)
    listed = "tds => tds.map(td => td.textContent)"
    assert page.eval_on_selector_all("#matches tr td:first-child", listed) == [f"#{tie}"]
    page.click("#older")
    page.wait_for_function("() => window.historyReady === true && location.search.includes('before')",
                           timeout=10_000)
    assert page.eval_on_selector_all("#matches tr td:first-child", listed) == [f"#{played}"]
    assert page.query_selector("#older") is None and page.text_content("#note") == ""
    assert errors == []


def test_the_race_view_shows_the_delta_of_a_contested_press(served: tuple[Served, int, int, Any],
                                                             browser: Any) -> None:
    server, _, raced, _ = served
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    page.goto(f"{server.url}/history/{raced}")
    page.wait_for_function("() => window.historyReady === true", timeout=10_000)
    rows = page.eval_on_selector_all("#race-table tr[data-kind]",
                                     "trs => trs.map(tr => [...tr.children].map(td => td.textContent))")
    assert [r[:9] for r in rows] == [
        ["1", "1", "seat 2", "-0.100500 s", "go", "-0.100000 s", "-500", "5000 / 200", "false start"],
        ["2", "1", "seat 2", "0.400300 s", "Ann (seat 1)", "0.400000 s", "300", "5000 / 200", "first"]]
    assert rows[1][9] == "first: Ann (seat 1) pressed 300 µs before seat 2; seat 2 too late"
    ann = page.eval_on_selector_all("#race-table tr[data-kind='first'] td.reason a",
                                    "as => as.map(a => a.href)")
    assert len(ann) == 1 and ann[0].startswith(server.url + "/players/")  # the name in the reason: her page
    page.click("#race-table tr[data-kind='first'] button.jump")  # to the step it was decided at
    page.wait_for_function("() => document.body.dataset.step === '2'")
    assert pile_tops(page) == ["yellow 2"]
    assert page.text_content("#step-text") == (
        "round 1: Ann (seat 1) played Y2 to the centre · 0.400000 s after the round's first play")
    assert page.eval_on_selector("#step-text a", "a => a.textContent") == "Ann"
    assert "Ann (seat 1)" in page.text_content("#facts") and "won by" not in page.text_content("#facts")
    page.screenshot(path=str(SHOTS / "replay-races.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(SHOTS / "replay-races-phone.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
