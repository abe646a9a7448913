"""A phone claims a seat, end to end in Chromium: the seat's QR code read off its OLED frame by
zbarimg, opened, a name with markup typed, and the name on the seat, on the TV page (/big) and in
the history, shown as text; a code from another seat, one used twice and one after the start
refused, each with a clear message; a claim from another site's page refused."""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from plumbing import SHOTS, qr_read, wait_for

from firmware_host.config import emulated_config
from firmware_host.service import players
from firmware_host.service.daemon import Daemon
from firmware_host.system.paths import state_database
from firmware_host.table.machine import Phase, Timing
from firmware_host.web.process import WebProcess

CHROMIUM = "/usr/bin/chromium"
MS = 1_000_000
PHONE = {"width": 390, "height": 844}
TV = {"width": 1920, "height": 1080}
MARKUP = "<b>Ann</b>"


@dataclass(frozen=True)
class OnTable:
    work: Callable[[int], None]


class LiveTable:
    """The emulated daemon with its web view (and the state database it reads), on a thread."""

    def __init__(self, seats: int) -> None:
        self.daemon = Daemon(emulated_config(seats))
        self.daemon.table.timing = Timing(countdown_ns=300 * MS)
        self.daemon.loop.on(OnTable, lambda event, now: event.work(now) or True)
        # As cli/run.py attaches it: the web view in a process of its own, so a claim goes from
        # that process to the table's loop and its answer back (web/child.py, web/process.py).
        self.web = WebProcess("127.0.0.1", 0, database=state_database())
        self.daemon.address = self.web.listen()
        self.daemon.attach(self.web)
        self.thread = threading.Thread(target=self.daemon.serve, daemon=True)
        self.thread.start()
        wait_for(lambda: self.web.serving, timeout=60)
        self.at = 0

    @property
    def url(self) -> str:
        return self.daemon.address

    def do(self, work: Callable[[int], Any]) -> None:
        done = threading.Event()
        self.daemon.loop.put(OnTable(lambda now: (work(now), done.set())))
        assert done.wait(10), "the table's thread did not take the work"

    def press(self, seat: int, *controls: str) -> None:
        """Presses on a seat's emulated pins (seat from 1), 120 ms apart as a hand presses."""
        for control in controls:
            self.at = max(time.monotonic_ns(), self.at + 120 * MS)
            traced = self.daemon.table.traced
            self.daemon.buttons.tap(seat - 1, control, self.at, 35 * MS)
            wait_for(lambda t=traced: self.daemon.table.traced > t)

    def close(self) -> None:
        self.daemon.loop.stop()
        self.daemon.loop.put(OnTable(lambda _now: None))
        self.thread.join(10)
        self.web.stop()
        assert self.web.pid == 0, "the web view's process outlived the table"


@pytest.fixture
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: `./dev test` installs it as root (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        yield chromium
        chromium.close()


@pytest.fixture
def table(dirs: Path) -> Iterator[LiveTable]:
    made = LiveTable(4)
    yield made
    made.close()


def seat_code(table: LiveTable, seat: int, tmp: Path) -> str:
    """The seat's QR code as a phone reads it off the seat's OLED frame."""
    table.press(seat, "down", "down", "down", "slap")  # the picker: Zoë, NEW NAME, PHONE (QR)
    assert table.daemon.table.pickers[seat - 1].mode == "qr"
    wait_for(lambda: table.daemon.screens.phase_seats[seat - 1].getpixel((0, 0)) == 1)
    path = tmp / f"seat{seat}.png"
    table.daemon.screens.phase_seats[seat - 1].convert("L").save(path)
    read = qr_read(path)
    assert len(read) == 1
    return read[0]


def post_claim(table: LiveTable, body: dict[str, Any], origin: str | None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json"} | ({"Origin": origin} if origin else {})
    request = urllib.request.Request(table.url + "api/claim", data=json.dumps(body).encode(), headers=headers,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def test_a_phone_claims_a_seat_from_its_qr_code(table: LiveTable, browser: Any, tmp_path: Path) -> None:
    assert table.daemon.store is not None
    table.daemon.store.players_write(lambda db: players.add(db, "Zoë"))
    table.do(lambda _now: setattr(table.daemon.table, "known", ("Zoë",)))
    table.press(2, "slap")
    wait_for(lambda: table.daemon.table.phase is Phase.LOBBY)
    code2 = seat_code(table, 2, tmp_path)
    token2 = table.daemon.table.tokens[1]
    assert code2 == f"{table.url}c/2/{token2}"
    code3 = seat_code(table, 3, tmp_path)
    token3 = code3.rsplit("/", 1)[1]
    origin = table.url.rstrip("/")
    # another site's page may not claim; a code of another seat is refused, naming it
    assert post_claim(table, {"seat": 2, "token": token2, "name": "Eve"}, "http://evil.example") == (403, {
        "ok": False, "error": "a seat is claimed from the table's own page (the QR code on the seat), not "
                              "from another site"})
    assert post_claim(table, {"seat": 2, "token": token3, "name": "Eve"}, origin) == (409, {
        "ok": False, "error": "this code is seat 3's, not seat 2's"})

    page = browser.new_page(viewport=PHONE)
    page.goto(code2)
    page.wait_for_function("() => document.querySelectorAll('#known option').length === 2", timeout=10_000)
    assert page.locator("#known option").all_inner_texts() == ["(choose)", "Zoë"]
    page.fill("#name", MARKUP)
    page.click("#take")
    page.wait_for_function("() => document.querySelector('#said').className === 'ok'", timeout=10_000)
    assert page.locator("#said").inner_text() == f"Seat 2 is yours, {MARKUP}. Slap in when the match starts!"
    assert page.locator("#said b").count() == 0
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "claim-phone.png"))  # docs/web.md, "A seat's claim"
    assert table.daemon.table.names == {1: MARKUP} and table.daemon.table.tokens.keys() == {2}
    # used twice (the page opened again, as by a second phone): refused, in words
    page.goto(code2)
    page.wait_for_function("() => document.querySelectorAll('#known option').length === 2", timeout=10_000)
    page.fill("#name", "Eve")
    page.click("#take")
    page.wait_for_function("() => document.querySelector('#said').className === 'refused'", timeout=10_000)
    assert page.locator("#said").inner_text() == \
        "this code for seat 2 is used or no longer valid: show the seat's code again"

    tv = browser.new_page(viewport=TV)
    tv.goto(table.url + "big")
    tv.wait_for_function("() => window.tableFrames > 0", timeout=10_000)
    named = "() => [...document.querySelectorAll('.seat .who')]" \
            f".some(e => e.textContent === {json.dumps(MARKUP)})"
    tv.wait_for_function(named, timeout=10_000)
    assert tv.locator(".seat b").count() == 0

    table.press(3, "slap")  # back to seat 3's list, then it joins as a guest
    table.press(3, "alt", "slap")
    wait_for(lambda: table.daemon.table.joined == [1, 2])
    table.do(lambda now: table.daemon.table.start(now))
    wait_for(lambda: table.daemon.table.phase is not Phase.LOBBY)
    assert post_claim(table, {"seat": 3, "token": token3, "name": "Cy"}, origin) == (409, {
        "ok": False, "error": "the match has started: names are chosen in the lobby"})
    assert table.daemon.table.tokens == {}  # gone at the start
    table.do(lambda now: table.daemon.table.abort(now))
    wait_for(lambda: table.daemon.store.history(1)[0]["names"] == [MARKUP, None])

    history = browser.new_page(viewport=TV)
    history.goto(table.url + "history")
    history.wait_for_function("() => window.historyReady === true", timeout=10_000)
    assert f"{MARKUP} (seat 2), seat 3" in history.locator("#matches").inner_text()  # a guest: its seat
    assert history.locator("#matches b").count() == 0
    page_of = history.locator("#matches a.player").get_attribute("href")  # the name: the player's page
    assert page_of == f"/players/{table.daemon.store.history(1)[0]['ids'][0]}"


def test_a_claim_is_bounded_like_everything_on_the_web(table: LiveTable) -> None:
    origin = table.url.rstrip("/")
    request = urllib.request.Request(table.url + "api/claim", data=b"seat=2", method="POST",
                                     headers={"Content-Type": "application/x-www-form-urlencoded",
                                              "Origin": origin})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 415  # a form from anywhere is no claim
    big = {"seat": 2, "token": "x", "name": "A" * 2000}
    request = urllib.request.Request(table.url + "api/claim", data=json.dumps(big).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Origin": origin})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 413  # over the app's 1 KB
    said = [post_claim(table, {"seat": 2, "token": "guessed", "name": "Eve"}, origin) for _ in range(6)]
    assert said == [(409, {"ok": False, "error": "this code for seat 2 is used or no longer valid: show the "
                                                 "seat's code again"})] * 5 + [
        (429, {"ok": False, "error": "6 tries a minute from one address at most: wait a minute"})]
    assert post_claim(table, {"seat": "2", "token": "x", "name": "Eve"}, origin)[0] == 429
    assert table.daemon.table.names == {} and table.daemon.table.phase is Phase.ATTRACT
