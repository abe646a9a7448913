"""The log: game events at INFO in the players' words, internals at DEBUG, priorities for the journal."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import deal, play_dice_round, seed_where_the_later_press_wins
from plumbing import table_box

from firmware_host.cli.host import build_parser
from firmware_host.config import ConfigError, emulated_config
from firmware_host.engine.match import Match
from firmware_host.games.classic.rules import Card
from firmware_host.system import logs
from firmware_host.table.arbiter import Arbiter
from firmware_host.table.machine import Phase, Timing
from firmware_host.table.presses import Event, InputEvent
from firmware_host.table.referee import Referee

S = 1_000_000_000
ROOT = Path(__file__).resolve().parents[2]


def records(caplog: pytest.LogCaptureFixture, level: int = logging.INFO) -> list[tuple[str, int, str]]:
    return [(r.name, r.levelno, r.getMessage()) for r in caplog.records if r.levelno >= level]


def test_a_match_is_logged_at_info_with_seats_numbered_from_1(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="table_host")
    table, tap = table_box(Timing(countdown_ns=3 * S))
    table.new("dice", {"rounds": 2})
    tap(2, "slap", 1 * S)  # seat 3 joins first: player 0 sits at seat 3
    tap(0, "slap", 2 * S)
    table.set_bots(1)  # the bot takes the first free seat, seat 2
    table.start(3 * S)
    table.tick(6 * S)
    assert table.phase is Phase.PLAYING
    caplog.clear()
    play_dice_round(table.match)
    table.tick(7 * S)
    first = table.match.results[0]
    seat = [3, 1, 2]  # player -> seat, as the players see them
    scores = ", ".join(f"seat {seat[p]} {s:+d}" for p, s in enumerate(first.scores))
    totals = ", ".join(f"seat {seat[p]} {t}" for p, t in enumerate(table.match.totals))
    winner = first.finishers[0]
    who = "bot at seat 2" if winner == 2 else f"seat {seat[winner]}"
    assert records(caplog) == [("table_host.table", logging.INFO,
                             f"Round 1 over: {who} placed their last die. Scores {scores}; "
                             f"totals {totals}")]
    table.next(8 * S)
    table.tick(11 * S)
    caplog.clear()
    play_dice_round(table.match)
    table.tick(12 * S)
    lines = [text for _, _, text in records(caplog)]
    assert lines[0].startswith("Round 2 over: ")
    best = max(table.match.totals)
    winners = [p for p, t in enumerate(table.match.totals) if t == best]
    names = " and ".join("bot at seat 2" if p == 2 else f"seat {seat[p]}" for p in winners)
    assert lines[1] == (f"Match over: {names} {'wins' if len(winners) == 1 else 'share the win'} with "
                        f"{best} after 2 rounds")


def test_match_started_names_every_seat_and_the_bots(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="table_host")
    table, tap = table_box(Timing(countdown_ns=3 * S))
    tap(1, "slap", 1 * S)
    tap(0, "slap", 2 * S)
    table.set_bots(2)
    table.start(3 * S)
    started = "Match started: Ligretto, 4 players: seat 2, seat 1, bot at seat 3, bot at seat 4"
    assert ("table_host.table", logging.INFO, started) in records(caplog)


def test_a_tie_is_debug_and_only_a_contest_for_one_spot_reaches_the_players(
        caplog: pytest.LogCaptureFixture) -> None:
    """Both players race for the same pile, 0.1 ms apart: a tie the arbiter draws. Player 0 sits
    at seat 4, player 1 at seat 2: the log speaks of seats 4 and 2, never players 0 and 1."""
    seed = seed_where_the_later_press_wins()
    caplog.set_level(logging.DEBUG, logger="table_host")
    deals = [deal("B2 G6 G7", hand="R3 R4 R1"), deal("B2 Y5 Y8", hand="G3 G4 G1")]
    match = Match("classic", 2, 1, {"rounds": 1}, setup={"deals": deals, "piles": [[(0, Card.parse("B1"))]]})
    race = Referee(match, Arbiter(5_000_000, 200_000, seed=seed), seats=[3, 1])
    race.on_input(InputEvent(Event.PRESS, 0, "slap", 1_000_000))
    race.on_input(InputEvent(Event.PRESS, 1, "slap", 1_100_000))
    race.decide(10_000_000)
    assert records(caplog) == [("table_host.table", logging.INFO, "Seats 2 and 4 wanted the same spot: "
                                "seat 2 won a tie with seat 4, pressed 0.1 ms later")]
    debug = [(name, text) for name, level, text in records(caplog, logging.DEBUG) if level == logging.DEBUG]
    assert [name for name, _ in debug] == ["table_host.arbiter", "table_host.arbiter"]
    assert debug[0][1].startswith("arbiter: tie within 0.100 ms broken by draw")
    assert "seat 4 slap @1.000 ms" in debug[0][1] and "seat 2 slap @1.100 ms" in debug[0][1]
    assert debug[1][1].startswith("contest over {")  # the engine's action, for whoever debugs


def test_the_journal_formatter_prefixes_each_line_with_its_priority() -> None:
    out = io.StringIO()
    logs.configure("debug", stream=out, journal=True)
    try:
        table = logs.logger("table")
        table.debug("a press")
        table.info("Match started")
        table.warning("Seat 2's display is not answering")
        table.error("hardware unavailable")
        logs.logger("daemon").critical("two\nlines")
    finally:
        logs.configure("warning", stream=io.StringIO())
    assert out.getvalue().splitlines() == [
        "<7>table: a press", "<6>table: Match started", "<4>table: Seat 2's display is not answering",
        "<3>table: hardware unavailable", "<3>daemon: two", "<3>lines"]


def test_on_a_terminal_a_line_reads_time_level_component_message() -> None:
    record = logging.LogRecord("table_host.control", logging.DEBUG, __file__, 1, "connection from %s",
                               ("pid 7",), None)
    line = logs.TerminalFormatter().format(record)
    assert line[:9].count(":") == 2 and line[8:] == " DEBUG control: connection from pid 7"


def test_stderr_is_the_journal_when_journal_stream_names_it(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    with open(tmp_path / "stream", "w") as stream, open(tmp_path / "other", "w") as other:
        st = os.fstat(stream.fileno())
        monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino}")
        assert logs.to_journal(stream) and not logs.to_journal(other)
        monkeypatch.delenv("JOURNAL_STREAM")
        assert not logs.to_journal(stream)


def test_table_host_run_writes_priorities_when_stderr_is_the_journal(tmp_path: Path) -> None:
    """The entry point end to end: a broken file is one <3> line on the stream systemd named."""
    config = tmp_path / "table.toml"
    config.write_text("[arbiter]\nwindow_ms = -1\n")
    env = {**os.environ, "STATE_DIRECTORY": str(tmp_path), "RUNTIME_DIRECTORY": str(tmp_path)}
    with open(tmp_path / "journal", "w") as journal:
        st = os.fstat(journal.fileno())
        env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
        result = subprocess.run([sys.executable, "-m", "firmware_host", "run", "--ui", "none",
                                 "--config", str(config)], cwd=ROOT, env=env, stderr=journal,
                                stdout=subprocess.DEVNULL, timeout=120)
    lines = (tmp_path / "journal").read_text().splitlines()
    assert result.returncode == 2 and len(lines) == 1, lines
    assert lines[0].startswith("<3>daemon: ") and "window_ms" in lines[0]


def test_log_level_and_debug_options() -> None:
    parser = build_parser()
    assert parser.parse_args(["run"]).log_level == "info"
    assert parser.parse_args(["run", "--log-level", "warning"]).log_level == "warning"
    assert parser.parse_args(["run", "--debug"]).log_level == "debug"
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--log-level", "loud"])


def test_the_maintainers_lines_go_to_the_log_not_the_players_pane() -> None:
    """It was: "memory: allocator malloc, 2 C arenas" in the players' log pane."""
    out = io.StringIO()
    logs.configure("info", stream=out)
    pane = logs.PaneHandler().attach()
    try:
        logs.logger("daemon").info("memory: allocator %s", "malloc, 2 C arenas", extra=logs.MAINTAINER)
        logs.logger("table").info("Match started: Ligretto, 2 players")
        assert pane.snapshot() == (["Match started: Ligretto, 2 players"], 1)
        assert "INFO  daemon: memory: allocator malloc, 2 C arenas\n" in out.getvalue()
    finally:
        pane.detach()
        logs.configure("warning", stream=io.StringIO())


def test_the_log_pane_takes_info_and_the_terminal_stays_quiet_meanwhile() -> None:
    out = io.StringIO()
    logs.configure("info", stream=out)
    pane = logs.PaneHandler(keep=2).attach()
    logs.logger("daemon").error("before the UI holds the terminal: still written there")
    pane.hold_terminal()
    out.seek(0)
    out.truncate()
    try:
        table = logs.logger("table")
        table.debug("the arbiter drew")
        for n in (1, 2, 3):
            table.info("Round %d won by seat 1", n)
        assert pane.snapshot() == (["Round 2 won by seat 1", "Round 3 won by seat 1"], 4)
        assert out.getvalue() == ""
    finally:
        pane.detach()
    table.info("after the UI")
    assert out.getvalue().endswith("INFO  table: after the UI\n")
    logs.configure("warning", stream=io.StringIO())


def test_reloaded_and_refused_configurations_are_said(dirs: Path, caplog: pytest.LogCaptureFixture) -> None:
    from firmware_host.service.daemon import Daemon

    caplog.set_level(logging.INFO, logger="table_host")
    daemon = Daemon(emulated_config(2))
    try:
        caplog.clear()
        daemon.apply_config(ConfigError(["arbiter.window_ms: must be above 0"]))
        daemon.apply_config(emulated_config(2))
    finally:
        daemon.close()
    assert [r for r in records(caplog) if r[0] == "table_host.config"] == [
        ("table_host.config", logging.WARNING,
         "Configuration refused, the running one stays: arbiter.window_ms: must be above 0"),
        ("table_host.config", logging.INFO, "Configuration reloaded")]


def test_an_uncaught_exception_in_a_thread_is_one_error_record_with_its_traceback(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    monkeypatch.setattr(threading, "excepthook", threading.excepthook)  # put back after the test
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    out = io.StringIO()
    logs.configure("info", stream=out, journal=True)
    logs.route_uncaught()
    thread = threading.Thread(target=lambda: 1 / 0, name="led-link")
    thread.start()
    thread.join()
    logs.configure("warning", stream=io.StringIO())
    lines = out.getvalue().splitlines()
    assert lines[0] == "<3>daemon: uncaught ZeroDivisionError in thread led-link"
    assert lines[-1] == "<3>ZeroDivisionError: division by zero" and all(x.startswith("<3>") for x in lines)
