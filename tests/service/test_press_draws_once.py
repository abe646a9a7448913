"""A press is drawn once: the screens draw every seat a step changed after the table took it,
the pressed seat with the seats the decision changed, never once for the press and again for
its decision in the same turn of the loop."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from firmware_host.config import emulated_config
from firmware_host.service import screen_feed
from firmware_host.service.daemon import Daemon
from firmware_host.table.machine import Phase
from firmware_host.table.presses import Event, InputEvent

S = 1_000_000_000


@pytest.mark.parametrize("control", ["slap", "alt", "select1", "right"])
def test_a_press_draws_its_seat_once_in_its_turn(dirs: Path, monkeypatch: pytest.MonkeyPatch,
                                                 control: str) -> None:
    daemon = Daemon(emulated_config(4))
    try:
        table = daemon.table
        t = time.monotonic_ns()
        table.new("classic")
        table._join(0)
        table._join(1)
        table.start(t)
        t += 5 * S
        daemon.loop.settle(t)
        assert table.phase is Phase.PLAYING
        steps: list[Any] = []
        daemon.feed.follow(steps.append)
        drawn: list[int] = []
        render = screen_feed.render_seat
        monkeypatch.setattr(screen_feed, "render_seat",
                            lambda seat, *name: drawn.append(seat.seat) or render(seat, *name))
        t += S
        # Stamped half a second ago (a busy loop): the arbiter's window is over, so a contested
        # press is decided in this same turn, and the old press handler had drawn it already.
        daemon.loop.dispatch(InputEvent(Event.PRESS, 0, control, t - S // 2), t)
        daemon.loop.settle(t)
        assert [s.pressed for s in steps] == [[0]]
        decided = bool(steps[0].outcomes)
        assert decided == (control != "right")  # a cursor's move decides nothing, and is drawn too
        assert drawn == [0]
        daemon.loop.dispatch(InputEvent(Event.RELEASE, 0, control, t + 1000), t + 1000)
        daemon.loop.settle(t + 1000)
        assert drawn == [0]  # a release changes no screen
    finally:
        daemon.close()
