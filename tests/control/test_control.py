"""The control socket and tablectl: commands, refusals, garbage, permissions."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import pytest
from plumbing import served_table

from firmware_host.cli import ctl
from firmware_host.control.server import HANDLERS
from firmware_host.service.journal import Store
from firmware_host.system.logs import TerminalFormatter, escape
from firmware_host.table.machine import Table

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def daemon(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """A control server and a thread that owns the table, as the daemon's main loop will."""
    caplog.set_level(logging.DEBUG, logger="table_host")
    table = Table(4)
    store = Store(tmp_path / "table.db")
    with served_table(tmp_path / "control.sock", table, store):
        yield tmp_path / "control.sock", table, caplog
    store.close()


def tablectl(sock: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TABLE_HOST_SOCKET": str(sock)}
    return subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def test_status_new_bots_and_seats_through_tablectl(daemon) -> None:
    sock, table, log = daemon
    result = tablectl(sock, "status")
    assert result.returncode == 0 and re.search(r"^phase\s+attract\s*$", result.stdout, flags=re.M)
    result = tablectl(sock, "--json", "new", "dice", "handicap=7,5")
    assert result.returncode == 0
    answer = json.loads(result.stdout)
    assert answer["ok"] and answer["game"] == "dice" and answer["phase"] == "lobby"
    assert table.options == {"handicap": [7, 5]}  # sent as its type, checked by tablectl
    assert tablectl(sock, "bots", "2", "--level", "hard").returncode == 0
    seats = json.loads(tablectl(sock, "--json", "seats").stdout)
    assert seats["bots"] == 2 and seats["seats_wired"] == 4
    said = [(r.name, r.levelno, r.getMessage()) for r in log.records]
    assert ("table_host.control", logging.DEBUG) in {(name, level) for name, level, text in said
                                                     if text.startswith("connection from pid")}  # peer
    assert not [text for name, level, text in said if name == "table_host.control" and level >= logging.INFO]
    assert tablectl(sock, "start").returncode == 0 and table.match is not None
    assert table.match.players == 2


def test_refusals_are_one_line_and_exit_1(daemon) -> None:
    sock, _, _ = daemon
    result = tablectl(sock, "new", "chess")  # a bad command line: said before the table is asked
    assert result.returncode == 2 and result.stderr.strip() == (
        "tablectl: unknown game 'chess' (choose classic, dice, domino, crazy)")
    result = tablectl(sock, "abort")
    assert result.returncode == 1 and "no match to abort" in result.stderr


def test_new_refuses_options_for_the_players_at_the_table_in_starts_words_exit_2(daemon) -> None:
    sock, table, _ = daemon
    assert tablectl(sock, "bots", "4").returncode == 0
    result = tablectl(sock, "new", "dice", "handicap=7,7")
    assert result.returncode == 2
    assert result.stderr.strip() == "tablectl: handicap gives 2 counts for 4 players"
    assert table.phase == "attract" and table.options == {}  # nothing taken
    result = tablectl(sock, "--json", "new", "domino", "layout=two-players")
    assert result.returncode == 2 and json.loads(result.stdout) == {
        "ok": False, "error": "layout 'two-players' is for 2 players", "bad_request": True}
    assert tablectl(sock, "new", "dice", "handicap=7,7,5,5").returncode == 0


def test_no_daemon_is_said_plainly(tmp_path: Path) -> None:
    result = tablectl(tmp_path / "nothing.sock", "status")
    assert result.returncode == 1
    assert "the table daemon is not running (no control socket at" in result.stderr
    assert "Traceback" not in result.stderr


def test_garbage_on_the_socket_gets_errors_and_hurts_nothing(daemon) -> None:
    sock, _, _ = daemon
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(sock))
        noise = bytes(range(256)).replace(b"\n", b"") * 2  # every byte value but newline
        conn.sendall(b"\xff\xfe not json\n[1, 2]\n{\"cmd\": 7}\n{\"cmd\": \"fly\"}\n" + noise
                     + b"\n{\"cmd\": \"status\"}\n")
        answers = []
        data = b""
        while len(answers) < 6:
            data += conn.recv(65536)
            *lines, data = data.split(b"\n")
            answers += [json.loads(line) for line in lines if line]
    errors = [a.get("error", "") for a in answers[:5]]
    assert all(a["ok"] is False for a in answers[:5])
    assert "not a JSON request" in errors[0]
    assert 'a request is an object with "cmd"' in errors[1]
    assert "unknown command 'fly'" in errors[3]
    assert answers[5]["ok"] is True and answers[5]["phase"] == "attract"  # still serving
    assert tablectl(sock, "status").returncode == 0


def _status_on(conn: socket.socket) -> dict:
    conn.sendall(b'{"cmd": "status"}\n')
    data = b""
    while not data.endswith(b"\n"):
        data += conn.recv(65536)
    return json.loads(data)


def test_every_connection_handler_is_there_from_the_start_and_no_more_come(tmp_path: Path) -> None:
    """A pool grown on demand added a thread whenever a call raced the last handler back to idle,
    which a loaded machine makes likely, and each thread's stack stayed: memory crept up."""
    def handlers() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name.startswith("control-conn")}

    earlier = handlers()  # other tests' servers: theirs end once their connections do
    with served_table(tmp_path / "control.sock", Table(4)):
        ours = handlers() - earlier
        assert len(ours) == HANDLERS
        conns = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(HANDLERS + 4)]
        for conn in conns:
            conn.connect(str(tmp_path / "control.sock"))
        busy, waiting = conns[:HANDLERS], conns[HANDLERS:]
        assert all(_status_on(conn)["ok"] for conn in busy)  # every handler holds a connection
        for conn in busy:
            conn.close()
        assert all(_status_on(conn)["ok"] for conn in waiting)  # the rest waited their turn
        for conn in waiting:
            conn.close()
        for _ in range(300):  # one call after another, as `bench soak` and a watching script make
            assert ctl.ask({"cmd": "status"}, tmp_path / "control.sock")["ok"]
        assert handlers() - earlier == ours


def test_the_socket_is_for_the_admin_group_only(daemon) -> None:
    sock, _, _ = daemon
    assert stat.S_IMODE(sock.stat().st_mode) == 0o660


def test_terminal_keys_are_parsed_like_a_keyboard_seat_expects() -> None:
    from firmware_host.ui.plain import parse_keys

    assert parse_keys("\x1b[A\x1b[D \r1q") == ["up", "left", "space", "enter", "1", "q"]


def test_config_set_validates_keeps_comments_and_replaces_the_file_whole(tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    config.write_text((ROOT / "systemd" / "table.toml.example").read_text())
    nobody = tmp_path / "none.sock"
    ok = tablectl(nobody, "config", "set", "arbiter.window_ms", "4.5", "--file", str(config))
    assert ok.returncode == 0 and "daemon is not running" in ok.stdout
    text = config.read_text()
    assert "window_ms = 4.5" in text and text.startswith("# hardware/wiring/4-seat.toml")
    bad = tablectl(nobody, "config", "set", "inputs.seats.2.slap", "5", "--file", str(config))
    assert bad.returncode == 2 and "GPIO5 is already used by inputs.seats[1].slap" in bad.stderr
    assert config.read_text() == text  # refused: the file is as it was
    first = tablectl(nobody, "config", "set", "inputs.seats.1.slap", "26", "--file", str(config))
    assert first.returncode == 0, first.stderr  # arrays count from 1, as config get prints them
    assert tomllib.loads(config.read_text())["inputs"]["seats"][0]["slap"] == 26
    text = config.read_text()
    zero = tablectl(nobody, "config", "set", "inputs.seats.0.slap", "27", "--file", str(config))
    assert zero.returncode == 2 and "no setting 'inputs.seats.0.slap'" in zero.stderr
    assert config.read_text() == text
    unknown = tablectl(nobody, "config", "set", "arbiter.speed", "9", "--file", str(config))
    assert unknown.returncode == 2 and "speed" in unknown.stderr
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".table.toml")] == []


def test_bots_are_bounded_by_the_wired_seats(daemon) -> None:
    sock, table, _log = daemon
    result = tablectl(sock, "bots", "100000")  # more than any table has: refused as it is typed
    assert result.returncode == 2 and "0 to 11 bots" in result.stderr.strip().splitlines()[-1]
    result = tablectl(sock, "bots", "7")  # more than this table has: the table says how many
    assert result.returncode == 1
    assert result.stderr.strip() == "tablectl: at most 4 bots: 4 seats are wired, 0 joined"
    assert table.bots == {}
    assert tablectl(sock, "bots", "4").returncode == 0 and len(table.bots) == 4
    assert tablectl(sock, "bots", "5").returncode == 1 and len(table.bots) == 4


def test_a_newline_in_a_command_cannot_forge_a_log_line(daemon) -> None:
    sock, _table, log = daemon
    log.clear()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(str(sock))
        s.sendall(json.dumps({"cmd": "status\nFAKE LINE", "game": "x\x1b[2J"}).encode() + b"\n")
        answer = json.loads(s.makefile().readline())
    assert not answer["ok"]
    asks = [r for r in log.records if "asks" in r.getMessage()]
    assert len(asks) == 1 and asks[0].levelno == logging.DEBUG
    assert asks[0].getMessage().endswith("asks status\\nFAKE LINE (game=x\\x1b[2J)")
    lines = "\n".join(TerminalFormatter().format(r) for r in log.records).split("\n")
    assert len(lines) == len(log.records)  # one line a record, whatever the client sent
    assert not any(line.startswith("FAKE LINE") or "\x1b" in line for line in lines)


def test_escape_writes_control_characters_as_python_does() -> None:
    assert escape("a\nb\tc\x1b[31m\x7f\x9bé\\") == "a\\nb\\tc\\x1b[31m\\x7f\\x9bé\\\\"
