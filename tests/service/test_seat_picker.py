"""A seat names itself in the lobby with its own buttons, through the emulated pins of the
daemon's board: the list of known players, a new name letter by letter, the phone's QR code
read off the seat's frame by a real decoder, and the name in the corner during play."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from plumbing import qr_read, wait_for

from firmware_host.config import emulated_config
from firmware_host.service import players
from firmware_host.service.daemon import Daemon
from firmware_host.service.events import Signal
from firmware_host.table.machine import Phase
from firmware_host.table.picker import LETTERS, Picker
from firmware_host.views.font import drawable
from firmware_host.views.seat import SIZE, render_picker, render_seat


@pytest.fixture
def daemon(dirs: Path) -> Iterator[Daemon]:
    made = Daemon(emulated_config(4))
    made.address = "http://192.168.1.50:8080/"
    assert made.store is not None
    made.store.players_write(lambda db: players.add(db, "Zoë"))
    made.table.known = ("Zoë",)
    thread = threading.Thread(target=made.serve, daemon=True)
    thread.start()
    yield made
    made.loop.put(Signal("term"))
    thread.join(timeout=10)


class Hand:
    """Presses a seat's buttons through the emulated pins, 120 ms apart as a hand does."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon, self.at = daemon, 0

    def __call__(self, seat: int, *controls: str) -> None:
        for control in controls:
            self.at = max(time.monotonic_ns(), self.at + 120_000_000)
            traced = self.daemon.table.traced
            assert self.daemon.buttons is not None
            self.daemon.buttons.tap(seat, control, self.at, 35_000_000)
            wait_for(lambda t=traced: self.daemon.table.traced > t)


def frame(daemon: Daemon, seat: int) -> Image.Image:
    return daemon.screens.phase_seats[seat]


def test_a_seat_picks_a_known_player_or_enters_a_new_name_with_its_buttons(daemon: Daemon) -> None:
    hand = Hand(daemon)
    hand(0, "slap")  # the lobby, seat 1 joins as a guest, as always
    wait_for(lambda: daemon.table.phase is Phase.LOBBY)
    assert daemon.table.joined == [0] and daemon.table.names == {}
    hand(1, "down")  # seat 2 opens its picker: Zoë, NEW NAME, PHONE (QR), GUEST
    picker = daemon.table.pickers[1]
    assert picker.entries == ["Zoë", "NEW NAME", "PHONE (QR)", "GUEST"] and picker.index == 0
    wait_for(lambda: frame(daemon, 1).tobytes() == render_picker(picker, 1).tobytes())
    hand(1, "down", "up", "slap")
    wait_for(lambda: daemon.table.names == {1: "Zoë"})
    assert daemon.table.joined == [0, 1] and 1 not in daemon.table.pickers
    # seat 3: Zoë is seat 2's, so not offered; a new name, letter by letter: A, up twice: C;
    # right: a second C; down: B; right: a third letter, B; alt rubs it out; a slap takes "CB"
    hand(2, "down")
    assert daemon.table.pickers[2].entries == ["NEW NAME", "PHONE (QR)", "GUEST"]
    hand(2, "slap")
    assert daemon.table.pickers[2].mode == "letters"
    hand(2, "up", "up", "right", "down", "right", "alt")
    assert daemon.table.pickers[2].text == "CB" and daemon.table.pickers[2].cursor == 1
    hand(2, "slap")
    wait_for(lambda: daemon.table.names == {1: "Zoë", 2: "CB"})
    assert daemon.table.joined == [0, 1, 2]
    # seat 4 cannot take a name another seat has: said on its screen, the picker stays open
    hand(3, "down", "slap", "up", "up", "right", "down", "slap")
    assert daemon.table.pickers[3].message == "CB sits at seat 3 already"
    wait_for(lambda: frame(daemon, 3).tobytes() == render_picker(daemon.table.pickers[3], 3).tobytes())
    hand(3, "up", "slap")
    wait_for(lambda: daemon.table.names.get(3) == "CC")
    # during play each named seat has its name in the corner, the guest its seat number
    hand(0, "alt")  # seat 1 starts
    wait_for(lambda: daemon.table.phase is Phase.PLAYING, timeout=10)
    assert daemon.table.player_names() == [None, "Zoë", "CB", "CC"]
    assert daemon.screens.game is not None and daemon.screens.game.names == [None, "Zoë", "CB", "CC"]


def test_the_seats_qr_code_is_its_one_time_address(daemon: Daemon, tmp_path: Path) -> None:
    hand = Hand(daemon)
    hand(1, "slap")
    wait_for(lambda: daemon.table.phase is Phase.LOBBY)
    hand(1, "down", "down", "down", "slap")  # open, NEW NAME, PHONE (QR), chosen
    assert daemon.table.pickers[1].mode == "qr"
    token = daemon.table.tokens[1]
    wait_for(lambda: daemon.screens.phase_seats[1].getpixel((0, 0)) == 1)
    path = tmp_path / "seat2.png"
    frame(daemon, 1).convert("L").save(path)
    assert qr_read(path) == [f"http://192.168.1.50:8080/c/2/{token}"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{16}", token)
    hand(1, "slap")  # any key: back to the list; the code stays valid until used or the start
    assert daemon.table.pickers[1].mode == "list" and daemon.table.tokens[1] == token


def test_names_are_drawn_as_the_font_can_and_in_the_corner_during_play() -> None:
    assert drawable("Zoë") == "Zoe" and drawable("李<b>") == "?<b>"
    assert all(drawable(c) == c for c in LETTERS)
    img = render_picker(Picker(("Zoë", "李")), 0)
    assert img.size == SIZE and img.getbbox() is not None
    from firmware_host.table.controls import SeatController
    from firmware_host.table.matches import new_match

    seat = SeatController(0, new_match("dice", 2, 1))
    assert render_seat(seat, "Zoë").tobytes() != render_seat(seat).tobytes()
    assert render_seat(seat, "Zoë").crop((0, 0, 40, 8)).tobytes() == \
        render_seat(seat, "Zoe").crop((0, 0, 40, 8)).tobytes()
