"""The live page in a real browser: Debian's chromium driven by Playwright (its own browser
downloads are not used), against the emulated daemon with the web view attached. Scenarios are
played through the seats' emulated pins; the tests read what the page shows, check every game
fits a TV (1920×1080) and a phone (390×844) with nothing overflowing, and keep screenshots in
docs/web/ (looked at, docs/web.md)."""

from __future__ import annotations

import http.server
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from plumbing import ROOT, SHOTS, journaled, qr_read, wait_for

from firmware_host.config import emulated_config
from firmware_host.play.scenario import load, run
from firmware_host.service.daemon import Daemon
from firmware_host.system.paths import state_database
from firmware_host.table.machine import Phase, Timing
from firmware_host.views.live import seat_name
from firmware_host.web.frontend import WebView

CHROMIUM = "/usr/bin/chromium"
MS = 1_000_000
S = 1000 * MS
TV = {"width": 1920, "height": 1080}
PHONE = {"width": 390, "height": 844}

OVERFLOWING = """() => [...document.querySelectorAll('body *')]
    .filter(e => e.scrollWidth > e.clientWidth && getComputedStyle(e).display !== 'inline')
    .map(e => `${e.tagName}.${e.className} ${e.scrollWidth}>${e.clientWidth}`)"""


@dataclass(frozen=True)
class OnTable:
    """Work a test does on the table's thread (as everything that touches the table must)."""

    work: Callable[[int], None]


class LiveTable:
    """The emulated daemon, its loop in a thread, the web view attached on a free port."""

    def __init__(self, seats: int, shown: str = "") -> None:
        """`shown`: the address the table says it is at, when not where the test's browser opens it
        (a network address, as on the Pi, for what the attract screen shows)."""
        self.daemon = Daemon(emulated_config(seats))
        self.daemon.table.timing = Timing(countdown_ns=300 * MS, round_result_ns=600 * S,
                                          match_result_ns=600 * S)
        self.daemon.loop.on(OnTable, lambda event, now: event.work(now) or True)
        self.web = WebView("127.0.0.1", 0)
        self.opened = self.web.listen()
        self.daemon.address = shown or self.opened
        self.daemon.attach(self.web)
        self.thread = threading.Thread(target=self.daemon.serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return self.opened

    def do(self, work: Callable[[int], Any]) -> None:
        done = threading.Event()
        self.daemon.loop.put(OnTable(lambda now: (work(now), done.set())))
        assert done.wait(10), "the table's thread did not take the work"

    def tap(self, seat: int, control: str, at: int | None = None) -> None:
        """A press on a seat's emulated pin (seat from 1), stamped `at` (now if not given)."""
        self.daemon.buttons.tap(seat - 1, control, time.monotonic_ns() if at is None else at, 35 * MS)

    def close(self) -> None:
        self.daemon.loop.stop()
        self.daemon.loop.put(OnTable(lambda _now: None))
        self.thread.join(10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: `./dev test` installs it as root (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # rebound.example: another site's name pointed at the table (DNS rebinding), as an
        # attacker's DNS would
        chromium = p.chromium.launch(executable_path=CHROMIUM,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                           "--host-resolver-rules=MAP rebound.example 127.0.0.1"])
        yield chromium
        chromium.close()


@pytest.fixture
def live(dirs: Path, request: pytest.FixtureRequest) -> Iterator[Callable[[int], LiveTable]]:
    tables: list[LiveTable] = []

    def make(seats: int, shown: str = "") -> LiveTable:
        tables.append(LiveTable(seats, shown))
        return tables[-1]

    yield make
    for table in tables:
        table.close()


def open_page(browser: Any, url: str, viewport: dict[str, int]) -> Any:
    page = browser.new_page(viewport=viewport)
    page.goto(url)
    page.wait_for_function("() => window.tableFrames > 0", timeout=10_000)
    return page


def shown(page: Any, selector: str) -> list[str]:
    return [t.strip() for t in page.locator(selector).all_inner_texts()]


def fits(page: Any, whole_screen: bool) -> None:
    """Nothing wider than its box; on a TV, nothing below the screen's edge either."""
    assert page.evaluate(OVERFLOWING) == []
    width, height = page.evaluate("() => [document.documentElement.scrollWidth, "
                                  "document.documentElement.scrollHeight]")
    assert width <= page.viewport_size["width"]
    if whole_screen:
        assert height <= page.viewport_size["height"], f"{height} px tall"


def scenario_match(name: str) -> Any:
    """A scenario file's first deal, no action played yet (the test's presses play them)."""
    data = load(ROOT / "scenarios" / f"{name}.toml")
    data["round"] = [{k: v for k, v in data["round"][0].items() if k not in ("actions", "expect")}]
    return run(data, name).match


# ---------------------------------------------------------------- what the page shows


def test_a_race_shows_the_pile_top_and_the_lost_press_with_its_delta(browser: Any, live: Any) -> None:
    """scenarios/classic-race.toml: seats 1 and 2 both slap a blue 2 onto the blue 1, seat 2
    0.4 ms later: the pile shows B2, and the decision says seat 2 was too late, Δ 400 µs."""
    table = live(3)
    match = scenario_match("classic-race")
    table.do(lambda now: table.daemon.table.resume(match, now, seats=[0, 1, 2]))
    page = open_page(browser, table.url, TV)
    page.wait_for_function("() => window.tableState.phase === 'playing'", timeout=10_000)
    assert shown(page, "#board .piles .card .value") == ["1"]
    assert page.locator("#board .piles .card.blue > .shape.square").count() == 1  # its shape too
    assert shown(page, '.seat[data-seat="1"] .holding .card .value')[:4] == ["2", "5", "7", "9"]
    table.tap(2, "right")  # seat 2's cursor to its row's second place, its blue 2
    wait_for(lambda: table.daemon.table.referee.seats[1].cursor == 1)
    at = time.monotonic_ns()
    table.tap(1, "slap", at)
    table.tap(2, "slap", at + 400_000)
    page.wait_for_function("() => window.tableState.decisions.length >= 2", timeout=10_000)
    assert shown(page, "#board .piles .card .value") == ["2"]
    lines = shown(page, "#decisions li")
    assert lines[0] == "seat 2 slap: too late · Δ 400.0 µs behind seat 1"
    assert lines[1] == "seat 1 slap: taken"
    assert shown(page, '.seat[data-seat="2"] .message') == ["too late, seat 1 +0.4ms"]  # its OLED's words


def test_scores_after_a_round_and_names_are_text_never_markup(browser: Any, live: Any) -> None:
    table = live(4)
    table.do(lambda now: (table.daemon.table.new("dice", {"rounds": 1}, now),
                          table.daemon.table.set_bots(3, "instant"), table.daemon.table.start(now)))
    page = open_page(browser, table.url, PHONE)
    page.wait_for_function("() => window.tableState.phase === 'match_result'", timeout=60_000)
    match = table.daemon.table.match
    totals = [f"{t:+d}" if t else "0" for t in match.totals]
    assert shown(page, ".seat .total") == totals
    assert shown(page, ".scores tr.totals td") == ["total", *totals]
    winners = [table.daemon.table.seat_of_player[p] + 1 for p in match.winners]
    assert len(winners) == 1, "a shared win: the banner below reads differently"
    name = seat_name(table.daemon.table, match.winners[0])  # "bot" today: a bot won
    assert shown(page, "#banner .big-word") == [f"{name} (seat {winners[0]}) wins!"]
    assert shown(page, ".podium .step-name")[0] == f"{name} (seat {winners[0]})"
    fits(page, whole_screen=False)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "match-end-phone.png"), full_page=True)  # the podium, the round
    # A notice with markup in it shows as the characters it is. Drawn and read in one script:
    # the table's next frame may come at any moment and draw its own status over it.
    drawn = page.evaluate("""() => {
      draw({...window.tableState, status: '<img src=x onerror=alert(1)>'});
      const status = document.querySelector('#status');
      return [status.innerText, status.querySelectorAll('img').length];
    }""")
    assert drawn == ["<img src=x onerror=alert(1)>", 0]
    # A name with markup in it: the seat, the round's table and the podium show its characters.
    named = page.evaluate("""() => { const s = window.tableState, name = '<img src=x onerror=alert(1)>';
      draw({...s, seats: s.seats.map((x) => ({...x, name})),
            podium: s.podium.map((p) => ({...p, name})),
            round_end: {...s.round_end, ranked: s.round_end.ranked.map((r) => ({...r, name}))}});
      const said = (q) => document.querySelector(q).innerText;
      return [said('.seat .who'), said('.ranked .name'), said('.podium .step-name'),
              document.querySelectorAll('img').length]; }""")
    seat = page.evaluate("() => window.tableState.podium[0].seat")
    assert named == ["<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)> (seat " + str(seat) + ")",
                     "<img src=x onerror=alert(1)> (seat " + str(seat) + ")", 0]


def test_the_attract_screen_shows_the_address_and_a_code_that_reads_back(browser: Any, live: Any,
                                                                          tmp_path: Path) -> None:
    table = live(4, shown="http://192.168.1.23/")  # the Pi's address on its network, port 80
    page = open_page(browser, table.url + "big", TV)
    assert page.locator("#banner .watch").inner_text() == "Watch on your phone: http://192.168.1.23/"
    page.locator("svg.qr").screenshot(path=str(tmp_path / "qr.png"))
    assert qr_read(tmp_path / "qr.png") == ["http://192.168.1.23/"]
    fits(page, whole_screen=True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "attract-big.png"))
    table.tap(1, "slap")  # seat 1 joins: the lobby keeps the address, the match will not
    page.wait_for_function("() => window.tableState.phase === 'lobby'", timeout=10_000)
    assert page.locator("svg.qr").count() == 1


def test_a_table_on_its_own_loopback_shows_no_address_a_phone_cannot_open(browser: Any, live: Any) -> None:
    """127.0.0.1 (a laptop's default) on a phone is the phone itself: no code of it, and the page
    says why."""
    table = live(2)
    page = open_page(browser, table.url + "big", TV)
    assert page.locator("svg.qr").count() == 0
    assert page.locator("#banner .watch").inner_text() == (
        f"This page is on this computer only ({table.url}): to watch on a phone, give the web view "
        "a network address ([web] bind, docs/web.md)")
    fits(page, whole_screen=True)


# ---------------------------------------------------------------- every game, every screen

# Cards, dice, board squares and domino halves whose colour is shown with no shape beside it
# (a covered square shows its seat, a token square its token: the colour under them is out of play).
COLOUR_ALONE = """() => [...document.querySelectorAll('.card, .square, .half')]
  .filter(n => ['red', 'green', 'blue', 'yellow', 'purple'].some(c => n.classList.contains(c)))
  .filter(n => !n.classList.contains('covered') && !n.querySelector('.token'))
  .filter(n => !n.querySelector(':scope > .shape')).map(n => n.outerHTML.slice(0, 80))"""

GAMES = [("classic", 12, {"rounds": 1}), ("dice", 4, {"rounds": 1}), ("domino", 4, {"rounds": 1}),
         ("crazy", 5, {"rounds": 1})]


@pytest.mark.parametrize(("game", "seats", "options"), GAMES, ids=[g for g, _, _ in GAMES])
def test_every_game_fits_a_tv_and_a_phone(browser: Any, live: Any, game: str, seats: int,
                                         options: dict[str, Any]) -> None:
    table = live(seats)
    table.do(lambda now: (table.daemon.table.new(game, options, now),
                          table.daemon.table.set_bots(seats, "easy"), table.daemon.table.start(now)))
    wait_for(lambda: table.daemon.table.phase is Phase.PLAYING, timeout=10)
    # The bots lay some cards first (easy ones: a round outlasts the screenshots).
    wait_for(lambda: journaled(state_database()) >= 3, timeout=60, every=0.1)
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, url, viewport in (("big", table.url + "big", TV), ("phone", table.url, PHONE),
                                ("desktop", table.url, TV)):
        page = open_page(browser, url, viewport)
        page.wait_for_function("() => window.tableState.board !== null", timeout=10_000)
        page.evaluate("() => window.tableFrames")  # the newest frame is drawn
        fits(page, whole_screen=name == "big")
        assert page.locator(".seat").count() == seats
        assert page.evaluate(COLOUR_ALONE) == []  # every colour a person needs also has its shape
        if name != "desktop":
            page.screenshot(path=str(SHOTS / f"{game}-{name}.png"), full_page=name == "phone")
        page.close()
    if game == "classic":  # the most piles a round can open: four 1s a player, 48
        held = threading.Event()
        table.daemon.loop.put(OnTable(lambda _now: held.wait(30)))  # no frame comes meanwhile
        try:
            for url, viewport in ((table.url + "big", TV), (table.url, PHONE)):
                page = open_page(browser, url, viewport)
                page.evaluate("""() => { const s = window.tableState;
                    const cards = s.board.hands.flatMap(h => h.holding).filter(e => e.type === "cards")
                        .flatMap(e => e.cards).filter(c => c && c.c);
                    const piles = {type: "piles", empty: "", cards: Array.from({length: 48}, (_, i) =>
                        ({c: cards[i % cards.length].c, v: cards[i % cards.length].v, size: 1, seat: 1}))};
                    draw({...s, board: {...s.board, middle: [piles]}}); }""")
                assert page.locator("#board .piles .card").count() == 48
                fits(page, whole_screen=viewport == TV)
                if viewport == TV:
                    page.screenshot(path=str(SHOTS / "classic-48-piles-big.png"))
                page.close()
        finally:
            held.set()


# ---------------------------------------------------------------- other sites


class AnotherSite(http.server.BaseHTTPRequestHandler):
    """A page of another site, served on this machine (so the browser lets it reach the
    loopback, as a rebinding attacker's page on the table's network would be)."""

    def do_GET(self) -> None:
        body = b"<!doctype html><title>another site</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        pass


def test_another_sites_page_cannot_watch_the_table(browser: Any, live: Any) -> None:
    """A page of another site opens a WebSocket to the table: refused (403, its Origin is not the
    table's). The other site's name pointed at the table (DNS rebinding): refused (421, not one of
    the table's names). The table's own page still watches."""
    table = live(2)
    wait_for(lambda: table.web.hub is not None)
    port = int(table.url.rstrip("/").rsplit(":", 1)[1])
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), AnotherSite)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    page = browser.new_page()
    try:
        page.goto(f"http://rebound.example:{site.server_address[1]}/")
        got = page.evaluate("""url => new Promise(done => { const ws = new WebSocket(url);
            ws.onmessage = () => done("it read the table"); ws.onclose = e => done("closed " + e.code); })""",
                            f"ws://127.0.0.1:{port}/live")
        assert got == "closed 1006"  # the handshake was refused: the page learns nothing more
        assert table.web.hub.refused["origin"] == 1 and table.web.hub.clients == set()
        rebound = page.goto(f"http://rebound.example:{port}/")  # the table, asked by the other name
        assert rebound is not None and rebound.status == 421
        assert table.web.hub.refused["host"] >= 1  # and /favicon.ico, if the browser asks for it
        assert table.web.hub.clients == set()
        own = open_page(browser, table.url, TV)
        assert own.evaluate("() => window.tableFrames") > 0
        own.close()
    finally:
        page.close()
        site.shutdown()
        site.server_close()


def test_a_page_watching_the_real_daemon_sees_its_web_process_killed_and_the_table_again(
        browser: Any, tmp_path: Path) -> None:
    """The web view's own process killed while a browser watches: started again by the daemon,
    and the page, which tries again by itself, draws the live table off the new one."""
    import signal

    from plumbing import DaemonProcess

    daemon = DaemonProcess(tmp_path)
    page = None
    try:
        daemon.start()
        process: dict[str, Any] = {}

        def serving(other_than: int = 0) -> bool:
            process.update(daemon.ctl("status").get("web_view", {}).get("process", {}))
            return bool(process.get("serving")) and process.get("pid") not in (None, 0, other_than)

        wait_for(serving, timeout=30, every=0.2)
        assert daemon.ctl("new", "classic", "rounds=1")["ok"] and daemon.ctl("bots", "3")["ok"]
        assert daemon.ctl("start")["ok"]
        page = open_page(browser, daemon.ctl("status")["web"], TV)
        first = process["pid"]
        os.kill(first, signal.SIGKILL)
        page.wait_for_function("() => document.body.classList.contains('lost')", timeout=10_000)
        wait_for(lambda: serving(other_than=first), timeout=30, every=0.2)
        drawn = page.evaluate("() => window.tableFrames")
        page.wait_for_function(f"() => window.tableFrames > {drawn} && "
                               "!document.body.classList.contains('lost')", timeout=20_000)
        assert shown(page, "#link") == ["live"]
        assert page.evaluate("() => document.body.dataset.phase") in ("countdown", "playing", "round_result",
                                                                    "match_result")  # the match, live
    finally:
        if page is not None:
            page.close()
        daemon.close()
