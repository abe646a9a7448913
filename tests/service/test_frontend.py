"""The Frontend seam: a frontend attached by a test is shown the table and hears its sounds,
beside another one (a terminal and, later, the web)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from plumbing import wait_for

from firmware_host.config import emulated_config
from firmware_host.devices.buzzer import Cue
from firmware_host.service.daemon import Daemon
from firmware_host.service.events import Key, Signal
from firmware_host.service.frontend import TableView
from firmware_host.table.machine import Phase


class FakeFrontend:
    def __init__(self) -> None:
        self.views: list[TableView] = []
        self.rung: list[Cue] = []
        self.put: Any = None
        self.stopped = False

    def start(self, put: Any) -> None:
        self.put = put

    def show(self, view: TableView) -> None:
        self.views.append(view)

    def ring(self, cue: Cue) -> None:
        self.rung.append(cue)

    def stop(self) -> None:
        self.stopped = True


def test_two_frontends_see_the_table_hear_its_sounds_and_their_keys_play_seat_1(dirs: Path) -> None:
    daemon = Daemon(emulated_config(2), terminal=True)
    one, two = FakeFrontend(), FakeFrontend()
    daemon.attach(one)
    daemon.attach(two)
    thread = threading.Thread(target=daemon.serve, daemon=True)
    thread.start()
    try:
        wait_for(lambda: one.views and two.views)
        assert one.views[-1].status.startswith("waiting for players") and len(one.views[-1].scores) == 0
        one.put(Key("space"))  # a key from a frontend presses seat 1's emulated slap: it joins
        wait_for(lambda: daemon.table.joined == [0])
        two.put(Key("b"))
        wait_for(lambda: two.views and "seats joined: 1; bots: 1" in two.views[-1].status)
        assert one.views[-1].scores == ["seat  1 you", "seat  2 bot (medium)"]
        one.put(Key("enter"))  # start: the countdown sounds on both
        wait_for(lambda: daemon.table.phase is Phase.PLAYING, timeout=10)
        wait_for(lambda: [c.sound for c in two.rung][:4] == ["count"] * 3 + ["go"])
        assert one.rung == two.rung
        assert 0 in one.views[-1].seats and one.views[-1].centre is not None  # the frames the devices got
    finally:
        daemon.loop.put(Signal("term"))
        thread.join(timeout=10)
    assert one.stopped and two.stopped and not thread.is_alive()


def test_nothing_is_drawn_when_nothing_changed(dirs: Path) -> None:
    daemon = Daemon(emulated_config(2))
    seen = FakeFrontend()
    try:
        daemon.attach(seen)
        daemon.loop.settle(time.monotonic_ns())
        daemon.frontends.draw(daemon.views)
        daemon.frontends.draw(daemon.views)
        assert len(seen.views) == 1
    finally:
        daemon.close()


def test_a_frontend_asks_for_the_views_it_draws_and_only_those_are_made(dirs: Path) -> None:
    """The terminal's words and the web's live state were built into every TableView; now each
    frontend names what it draws (VIEWS), and a frontend with a view of its own needs no change
    in the service: its maker gets the table as the loop sees it, on the loop's thread."""
    from firmware_host.ui.words import VIEWS as TERMINAL
    from firmware_host.ui.words import Words
    from firmware_host.web.frontend import WebView

    made: list[tuple[str, int]] = []

    class Seats(FakeFrontend):
        VIEWS: ClassVar[dict[str, Any]] = {
            "joined": lambda sight: made.append(("joined", threading.get_ident()))
            or list(sight.table.joined)}

    daemon = Daemon(emulated_config(2), terminal=True)
    try:
        daemon.loop.settle(time.monotonic_ns())
        assert daemon.view().made == {}  # nobody watches: nothing made
        seats = Seats()
        daemon.attach(seats)
        daemon.table._join(1)
        daemon.frontends.draw(daemon.views)
        assert seats.views[-1].made == {"joined": [1]} and made == [("joined", threading.get_ident())]
        daemon.frontends.draw(daemon.views)  # nothing changed: nothing made again
        assert len(made) == 1
        assert isinstance(daemon.view(TERMINAL).made["words"], Words)
        assert set(daemon.view(WebView.VIEWS).made) == {"live"}
        assert set(daemon.view({**TERMINAL, **WebView.VIEWS}).made) == {"words", "live"}
    finally:
        daemon.close()
