"""A game that lives only in tests/games/tiny registers itself and is played through the
emulated daemon, `tablectl` and a scenario file, with nothing outside its folder changed."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import tiny
from plumbing import wait_for

HERE = Path(__file__).resolve().parent
MS = 1_000_000


@pytest.fixture
def tiny_game() -> Iterator[None]:
    tiny.install()
    try:
        yield
    finally:
        tiny.uninstall()


def test_tiny_is_offered_once_registered_and_gone_after(tiny_game: None) -> None:
    from firmware_host.engine.options import GAMES, PLAYERS, parse_options

    assert list(GAMES) == ["classic", "dice", "domino", "crazy", "tiny"]
    assert PLAYERS["tiny"] == (2, 4)
    assert parse_options("tiny", 3, {"goal": "4"}) == {"rounds": 2, "goal": 4}
    tiny.uninstall()
    assert "tiny" not in GAMES
    tiny.install()


def test_tiny_joins_starts_plays_a_round_and_scores_through_the_emulated_daemon(
        tiny_game: None, dirs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from firmware_host.cli import ctl
    from firmware_host.config import emulated_config
    from firmware_host.service.daemon import Daemon
    from firmware_host.service.events import Signal
    from firmware_host.table.machine import Phase, Timing

    daemon = Daemon(emulated_config(4))
    daemon.table.timing = Timing(countdown_ns=300 * MS, round_result_ns=60_000 * MS)
    loop = threading.Thread(target=daemon.serve, daemon=True)
    loop.start()
    try:
        assert ctl.main(["new", "tiny", "rounds=1", "goal=3"]) == 0
        assert daemon.table.game == "tiny"
        daemon.buttons.tap(0, "slap", time.monotonic_ns(), 35 * MS)  # seat 1 joins with its own button
        wait_for(lambda: daemon.table.joined == [0])
        assert ctl.main(["bots", "2", "--level", "hard"]) == 0
        assert ctl.main(["start"]) == 0
        wait_for(lambda: daemon.table.phase is Phase.PLAYING)
        wait_for(lambda: daemon.table.match is not None and daemon.table.match.results, timeout=60)
        capsys.readouterr()
        assert ctl.main(["scores", "--json"]) == 0
        scores = json.loads(capsys.readouterr().out)
    finally:
        daemon.loop.put(Signal("term"))  # as SIGTERM comes to the loop
        loop.join(30)
    assert not loop.is_alive()
    match = daemon.table.match
    assert match.game == "tiny" and match.is_over
    result = match.results[0]
    assert max(result.scores) == 3 and result.finishers[0] in (1, 2)  # a bot laid its third card
    assert scores["totals"] == list(match.totals)
    from firmware_host.table.controls import SeatController
    from firmware_host.views.seat import render_seat

    seat = render_seat(SeatController(0, match))  # Tiny's own hook draws the middle of the screen
    assert seat.size == (128, 64) and seat.getbbox() is not None


def test_a_tiny_scenario_file_runs_through_table_host(tiny_game: None,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from firmware_host.cli import host

    assert host.main(["scenario", str(HERE / "tiny" / "scenario.toml")]) == 0
    out = capsys.readouterr().out
    assert "refused: too late (seat 2 was 0.4 ms earlier)" in out
    assert "round 1 ended (ligretto_stop, finished: seat 2): seat 1 +0, seat 2 +2" in out
