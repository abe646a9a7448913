"""A newcomer's first hour: where the table keeps things, and commands that behave
(--json anywhere, --version, seats from 1, bad input refused as typed, readable text, a reader
that stops early, a terminal that closes)."""

from __future__ import annotations

import json
import os
import pty
import queue
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import play_recorded
from plumbing import served_table, wait_for

from firmware_host import __version__
from firmware_host.cli import ctl
from firmware_host.control.server import ControlServer
from firmware_host.service.journal import Store
from firmware_host.system import paths
from firmware_host.system.children import ending_with_me
from firmware_host.table.machine import Table
from firmware_host.table.matches import new_match

ROOT = Path(__file__).resolve().parents[2]
SERVICE_VARIABLES = ("CONFIGURATION_DIRECTORY", "STATE_DIRECTORY", "RUNTIME_DIRECTORY", "TABLE_HOST_SOCKET",
                     "NOTIFY_SOCKET", "INVOCATION_ID", "WATCHDOG_USEC")


def laptop_env(tmp: Path) -> dict[str, str]:
    """A user's shell on a laptop: no systemd variables, the XDG ones in a private home."""
    env = {k: v for k, v in os.environ.items() if k not in SERVICE_VARIABLES and not k.startswith("XDG_")}
    (tmp / "home").mkdir(exist_ok=True)
    (tmp / "xdg-run").mkdir(mode=0o700, exist_ok=True)
    return env | {"HOME": str(tmp / "home"), "XDG_RUNTIME_DIR": str(tmp / "xdg-run"), "TMPDIR": str(tmp)}


@pytest.fixture
def laptop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in (*SERVICE_VARIABLES, "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    return tmp_path


def cli(*args: str, env: dict[str, str] | None = None, stdout: int | None = subprocess.PIPE,
        prog: str = "cli") -> subprocess.CompletedProcess:
    module = {"cli": "firmware_host", "ctl": "firmware_host.cli.ctl"}[prog]
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, env=env,
                          stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120)


def ctl_run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return cli(*args, env=env, prog="ctl")


# ------------------------------------------------------------------ where things are


def test_outside_a_service_each_user_has_own_state_socket_and_config(laptop: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    home = laptop / "home"
    assert paths.state_database() == home / ".local/state/table-host/table.db"
    assert paths.config_file() == home / ".config/table-host/table.toml"
    assert paths.control_socket() == laptop / f"table-host-{os.getuid()}" / "control.sock"
    monkeypatch.setenv("XDG_STATE_HOME", str(laptop / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(laptop / "config"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(laptop / "run"))
    assert paths.state_database() == laptop / "state/table-host/table.db"
    assert paths.config_file() == laptop / "config/table-host/table.toml"
    assert paths.control_socket() == laptop / "run/table-host/control.sock"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")  # invalid per the XDG specification: ignored
    assert paths.state_database() == home / ".local/state/table-host/table.db"


def test_systemd_variables_come_first(laptop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(laptop / "run"))
    monkeypatch.setenv("STATE_DIRECTORY", "/var/lib/table-host:/elsewhere")
    monkeypatch.setenv("RUNTIME_DIRECTORY", "/run/table-host")
    monkeypatch.setenv("CONFIGURATION_DIRECTORY", "/etc/table-host")
    assert paths.state_database() == Path("/var/lib/table-host/table.db")
    assert paths.control_socket() == Path("/run/table-host/control.sock")
    assert paths.socket_candidates() == [Path("/run/table-host/control.sock")]
    assert paths.config_file() == Path("/etc/table-host/table.toml")


def test_the_private_runtime_fallback_must_be_ours_and_closed(laptop: Path) -> None:
    made = paths.runtime_directory()
    assert made == laptop / f"table-host-{os.getuid()}"
    assert made.stat().st_mode & 0o777 == 0o700
    made.chmod(0o755)  # someone opened it (or made it first, for us to use)
    with pytest.raises(paths.PathError, match="not private"):
        paths.runtime_directory()
    made.rmdir()
    made.symlink_to(laptop)  # a link planted where our directory goes
    with pytest.raises(paths.PathError, match="not a directory"):
        paths.runtime_directory()


def test_tablectl_tries_the_users_socket_then_the_services(laptop: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    service = laptop / "service-run"
    service.mkdir()
    monkeypatch.setitem(paths.SYSTEM, "RUNTIME_DIRECTORY", service)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(laptop / "run"))
    own = laptop / "run/table-host/control.sock"
    assert paths.socket_candidates() == [own, service / "control.sock"]
    assert paths.find_socket() == own  # nothing running: the not-running message names both
    requests: queue.SimpleQueue = queue.SimpleQueue()
    system = ControlServer(service / "control.sock", requests)  # root on the Pi: only the service runs
    try:
        assert paths.find_socket() == service / "control.sock"
        mine = ControlServer(own, requests)  # a table of one's own is found first
        try:
            assert paths.find_socket() == own
        finally:
            mine.close()
    finally:
        system.close()


def test_a_service_socket_closed_to_us_is_named(laptop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not in the admin group: /run/table-host (0750) cannot be searched; tablectl must say
    "permission denied" on the service's socket, not fall over or blame a missing table."""
    service = Path("/run/table-host-closed/control.sock")
    monkeypatch.setitem(paths.SYSTEM, "RUNTIME_DIRECTORY", service.parent)
    real = Path.is_socket

    def is_socket(self: Path) -> bool:
        if self == service:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "is_socket", is_socket)
    assert paths.find_socket() == service


def test_a_laptop_daemon_and_tablectl_meet_with_no_variables_set(tmp_path: Path) -> None:
    env = laptop_env(tmp_path)
    mine = tmp_path / "mine.toml"
    mine.write_bytes((ROOT / "hardware/wiring/4-seat.toml").read_bytes())
    proc = subprocess.Popen([sys.executable, "-m", "firmware_host", "run", "--emulate", "--ui", "none",
                             "--config", str(mine)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=ending_with_me())
    try:
        sock = tmp_path / "xdg-run/table-host/control.sock"
        wait_for(sock.exists, timeout=30)
        status = json.loads(ctl_run("status", "--json", env=env).stdout)
        assert status["ok"] and status["phase"] == "attract"
        assert (tmp_path / "home/.local/state/table-host/table.db").exists()
        check = json.loads(ctl_run("config", "check", "--json", env=env).stdout)  # what the table runs
        assert check["ok"] and check["file"] == str(mine)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("where", ["a-file", "/proc/table-host-cannot-be-here"])
def test_an_unusable_runtime_directory_is_one_line(tmp_path: Path, where: str) -> None:
    (tmp_path / "a-file").write_text("")
    env = laptop_env(tmp_path) | {"XDG_RUNTIME_DIR": str(tmp_path / where)} if where == "a-file" else \
        laptop_env(tmp_path) | {"RUNTIME_DIRECTORY": where}
    result = cli("run", "--emulate", "--ui", "none", env=env)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert "ERROR daemon: runtime directory " in line and where.split("/")[-1] in line


@pytest.mark.parametrize("ui", ["none", "textual"])
def test_a_terminal_closing_stops_a_daemon_started_by_hand(tmp_path: Path, ui: str) -> None:
    """SIGHUP is the kernel's word that the terminal went away (tty_hangup, drivers/tty/tty_io.c);
    only a service or a detached daemon takes it as 'reload'. The terminal UI goes too: Textual's
    last writes to the vanished terminal must not keep the process (they did, for ever)."""
    env = laptop_env(tmp_path)
    master, slave = pty.openpty()

    def take_terminal() -> None:  # the new session's controlling terminal, as a login shell has
        import fcntl
        import termios

        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        ending()

    ending = ending_with_me()
    proc = subprocess.Popen([sys.executable, "-m", "firmware_host", "run", "--emulate", "--ui", ui],
                            cwd=ROOT, env=env | {"TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"},
                            stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True, preexec_fn=take_terminal)
    os.close(slave)
    try:
        seen = b""
        end = time.monotonic() + 60
        ready = b"table-host ready" if ui == "none" else b"space join"  # the lobby's key help
        while ready not in seen and time.monotonic() < end:  # its signals are caught
            seen += os.read(master, 65536)
        assert ready in seen, seen[-2000:]
        os.close(master)  # the terminal window closes: the session leader gets SIGHUP
        master = -1
        assert proc.wait(timeout=20) == 0
    finally:
        if master >= 0:
            os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# ------------------------------------------------------------------ commands that behave


@pytest.fixture
def table_daemon(tmp_path: Path):
    """A control server and the thread that owns the table, as the daemon's main loop."""
    table = Table(4)
    store = Store(tmp_path / "table.db")
    with served_table(tmp_path / "control.sock", table, store):
        yield {**os.environ, "TABLE_HOST_SOCKET": str(tmp_path / "control.sock")}, table, store
    store.close()


def test_json_goes_before_or_after_the_command(table_daemon) -> None:
    env, _, _ = table_daemon
    after, before = ctl_run("status", "--json", env=env), ctl_run("--json", "status", env=env)
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout) == json.loads(before.stdout)
    one = cli("power", "--json")
    other = cli("--json", "power")
    assert one.returncode == other.returncode == 0, other.stderr
    assert json.loads(one.stdout) == json.loads(other.stdout)
    assert json.loads(cli("boot-config", "--json").stdout)["config_txt"]


def test_version(tmp_path: Path) -> None:
    result = cli("--version", prog="ctl")
    assert result.returncode == 0
    assert re.fullmatch(r"tablectl \d+\.\d+\.\d+\S*\ncommit [^\n]+\nPython \d+\.\d+\.\d+\n", result.stdout)
    # table-host's names the LED controller's firmware too: no table runs here to ask it.
    from firmware_host.devices.displays.firmware import expected
    from firmware_host.system.build import commit_line, describe

    alone = {**os.environ, "TABLE_HOST_SOCKET": str(tmp_path / "none.sock")}
    result = cli("--version", env=alone)
    assert result.returncode == 0 and result.stdout == (
        f"table-host {__version__}\n{commit_line(describe())}\nPython {describe()['python']}\n"
        "LED controller firmware: no table runs to ask it\n"
        f"LED controller firmware this table-host carries: {expected()}\n")


def finished_dice_match(store: Store, seats: list[int]):
    match = new_match("dice", 2, 3, {"rounds": 1})
    mid = store.begin_match(match, seats)
    play_recorded(store, mid, match, 10**6)
    assert match.is_over
    return match


def test_scores_and_history_number_seats_from_1(table_daemon) -> None:
    env, table, store = table_daemon
    table.joined = [2]  # a person at seat 3, a bot in the first free seat, seat 1
    table.set_bots(1)
    assert table.seat_of_player == [2, 0]
    table.match = finished_dice_match(store, table.seat_of_player)
    seat_of = {0: 3, 1: 1}
    scores = json.loads(ctl_run("scores", "--json", env=env).stdout)
    assert scores["seats"] == [3, 1]
    assert scores["winners"] == [seat_of[p] for p in table.match.winners]
    assert scores["rounds"][0]["finishers"] == [seat_of[p] for p in table.match.results[0].finishers]
    history = json.loads(ctl_run("history", "--json", env=env).stdout)["matches"][0]
    assert history["seats"] == [3, 1]
    assert history["winners"] == scores["winners"]
    assert history["rounds"][0]["finishers"] == scores["rounds"][0]["finishers"]


def test_history_reads_as_text_with_local_dates(table_daemon) -> None:
    env, _, store = table_daemon
    match = finished_dice_match(store, [0, 1])
    started = store.history()[0]["started"]
    text = ctl_run("history", env={**env, "COLUMNS": "120"}).stdout
    day = time.strftime("%Y-%m-%d %H:%M", time.localtime(started))
    winners = ", ".join(str(p + 1) for p in match.winners)
    head, _, row = text.splitlines()[:3]
    assert head.split() == ["match", "started", "game", "players", "rounds", "outcome", "totals"]
    assert re.match(rf"\s*1\s+{day}\s+dice\s+2\s+1\s+ended ", row), text
    assert f"won by seat{'s' if len(match.winners) > 1 else ''} {winners}" in row
    assert "{" not in text


def test_config_get_reads_as_settings() -> None:
    text = ctl.human({"ok": True, "key": "arbiter", "value": {"window_ms": 5.0, "epsilon_ms": 0.2}}, "config")
    assert text.splitlines() == ["arbiter.window_ms = 5.0", "arbiter.epsilon_ms = 0.2"]
    text = ctl.human({"ok": True, "key": "", "value": {"hardware": {"backend": "pi", "chip": None},
                                                         "inputs": {"seats": [{"slap": 5}, {"slap": 6}]}}},
                     "config")
    assert text.splitlines() == ['hardware.backend = "pi"', "hardware.chip = (not set)",
                                 "inputs.seats.1.slap = 5", "inputs.seats.2.slap = 6"]


@pytest.mark.parametrize(("args", "words"), [
    (["new"], ["new needs a game: classic, dice, domino, crazy"]),
    (["new", "chess"], ["unknown game 'chess'", "classic, dice, domino, crazy"]),
    (["new", "classic", "foo=1"], ["unknown option 'foo' for classic", "rounds", "pro_row"]),
    (["new", "classic", "rounds=abc"], ["rounds=abc", "whole number"]),
    (["new", "classic", "rounds"], ["'rounds' is not KEY=VALUE"]),
    (["new", "domino", "layout=nope"], ["unknown layout 'nope' (known: four-players,", "two-players-long)"]),
    (["new", "dice", "handicap=0,0,0"], ["handicap: every seat needs at least 1 die"]),
    (["new", "dice", "handicap=20,9"], ["handicap: 29 dice asked for, the bag holds 24"]),
    (["bots", "13"], ["13 bots", "0 to 11"]),
    (["bots", "two"], ["'two' is not a number of bots"]),
    (["bots", "2", "--level", "godlike"], ["godlike", "easy", "medium", "hard"]),
    (["history", "--limit", "0"], ["positive"]),
])
def test_bad_commands_are_refused_as_typed(tmp_path: Path, args: list[str], words: list[str]) -> None:
    """No table is running: a refusal that names the allowed values proves it came from tablectl."""
    result = ctl_run(*args, env={**os.environ, "TABLE_HOST_SOCKET": str(tmp_path / "none.sock")})
    assert result.returncode == 2, result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert "KEY=VALUE" not in line or args == ["new", "classic", "rounds"]
    for word in words:
        assert word in line


def test_config_check_says_each_problem_once_and_fails(tmp_path: Path) -> None:
    bad = tmp_path / "table.toml"
    bad.write_text("[inputs]\nfoo = 1\n")
    human = ctl_run("config", "check", str(bad))
    as_json = ctl_run("config", "check", str(bad), "--json")
    assert human.returncode == as_json.returncode == 1
    answer = json.loads(as_json.stdout)
    assert answer["ok"] is False and answer["valid"] is False and len(answer["problems"]) == 2
    for problem in answer["problems"]:
        assert (as_json.stdout + as_json.stderr).count(problem.split(": ", 1)[1]) == 1
        assert (human.stdout + human.stderr).count(problem.split(": ", 1)[1]) == 1


def test_config_check_on_a_laptop_checks_the_built_in_wiring(tmp_path: Path) -> None:
    result = ctl_run("config", "check", "--json", env=laptop_env(tmp_path))
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["ok"] and answer["valid"] and answer["built_in"] == "4-seat.toml"


@pytest.mark.parametrize("args", [
    ("cli", "simulate", "--game", "classic", "--players", "4", "--rounds", "3"),
    ("cli", "boot-config"),
    ("ctl", "history"),
])
def test_a_reader_that_stops_early_gets_no_traceback(table_daemon, args: tuple[str, ...]) -> None:
    """`tablectl history | head -1`: head has gone when the rest is written (EPIPE)."""
    env, _, store = table_daemon
    finished_dice_match(store, [0, 1])
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    try:
        module = {"cli": "firmware_host", "ctl": "firmware_host.cli.ctl"}[args[0]]
        result = subprocess.run([sys.executable, "-m", module, *args[1:]], cwd=ROOT,
                                env=env, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert result.stderr == "" and result.returncode == 141


def test_sighup_still_reloads_under_systemd() -> None:
    """The service (INVOCATION_ID set by systemd) keeps SIGHUP as reload."""
    code = ("import os, signal\n"
            "from firmware_host.service.daemon import Daemon\n"
            "from firmware_host.service.loop import Loop\n"
            "class D: pass\n"
            "d = D(); d.loop = Loop()\n"
            "Daemon.catch_signals(d)\n"
            "os.kill(os.getpid(), signal.SIGHUP)\n"
            "event = d.loop.events.get(timeout=5)\n"
            "while type(event).__name__ == 'Wake':  # the signal's pipe woke the loop too\n"
            "    event = d.loop.events.get(timeout=5)\n"
            "print(event)\n")
    env = {**os.environ, "INVOCATION_ID": "0123"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=60, start_new_session=True)
    assert result.stdout.strip() == "Signal(name='hup')", result.stderr



# ------------------------------------------------------------------ ./dev


def fake_checkout(tmp: Path) -> Path:
    """`dev` and pyproject.toml beside a .venv whose python and table-host only say how they were
    called, so that what `./dev run` and `./dev test` install is seen without installing it."""
    import shutil

    shutil.copy(ROOT / "dev", tmp / "dev")
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    bin_dir = tmp / ".venv/bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "table-host", "ruff", "lint-imports", "mypy"):
        tool = bin_dir / name
        tool.write_text(f'#!/bin/sh\necho "{name} $*" >> "{tmp}/calls"\n')
        tool.chmod(0o755)
    return tmp


def dev(checkout: Path, *args: str) -> list[str]:
    (checkout / "calls").unlink(missing_ok=True)
    subprocess.run(["bash", str(checkout / "dev"), *args], check=True, timeout=60, capture_output=True)
    return (checkout / "calls").read_text().splitlines()


def test_dev_run_installs_only_what_running_needs(tmp_path: Path) -> None:
    checkout = fake_checkout(tmp_path)
    calls = dev(checkout, "run", "--ui", "none")
    assert calls[0].startswith("python -m pip install") and calls[0].endswith("-e .")
    assert calls[1:] == ["table-host run --ui none"]
    assert dev(checkout, "run") == ["table-host run"]  # installed once
    calls = dev(checkout, "test", "-x")
    assert calls[0].startswith("python -m pip install") and calls[0].endswith("-e .[dev,schematics]")
    assert calls[-4:] == ["ruff check firmware_host tests schematics", "lint-imports --no-logo --no-cache",
                          "mypy ", "python -m pytest -x"]


def test_running_needs_no_test_or_schematic_tools() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {re.split(r"[<>=\[ ]", d)[0].lower() for d in project["dependencies"]}
    assert not runtime & {"pytest", "hypothesis", "ruff", "skidl", "matplotlib", "numpy", "h5py"}
    extras = project["optional-dependencies"]
    assert any(d.startswith("skidl") for d in extras["schematics"])
    assert not any(d.startswith("skidl") for d in extras["dev"])


def test_decisions_are_read_from_a_cursor_over_the_socket_and_a_bad_cursor_is_named(table_daemon) -> None:
    """`decisions` (`table-host bench attack` reads the engine's decisions with it): the table's
    trace from a cursor; a cursor that is no whole number, or past the trace, is refused."""
    from firmware_host.control.client import ask

    env, table, _ = table_daemon
    path = Path(env["TABLE_HOST_SOCKET"])
    table._trace({"decided": "slap", "seat": 2, "ts_ns": 10, "decided_ns": 5_000_020, "refused": None})
    table._trace({"input": "press", "seat": 1, "control": "slap", "ts_ns": 30, "received_ns": 31})
    decided = {"decided": "slap", "seat": 2, "ts_ns": 10, "decided_ns": 5_000_020, "refused": None}
    assert ask({"cmd": "decisions", "since": 0}, path) == {"ok": True, "decisions": [decided], "next": 2,
                                                           "missed": 0, "window_ns": 5_000_000}
    assert ask({"cmd": "decisions", "since": 2}, path)["decisions"] == []
    whole = "a whole number 0 or more"
    for bad, said in ((-1, whole), ("2", whole), (3, "past the trace")):
        refused = ask({"cmd": "decisions", "since": bad}, path)
        assert refused["ok"] is False and said in refused["error"], refused
