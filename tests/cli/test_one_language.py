"""Every command speaks one language: --json gives one object (an error object too), human output
never shows a Python value, a bad value is exit 2 naming the option as typed, and a person is
told what to do next."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import play_recorded
from plumbing import DaemonProcess, on_a_terminal, served_table, wait_for

from firmware_host.cli import host
from firmware_host.service.journal import Store
from firmware_host.system.children import ending_with_me
from firmware_host.table.machine import Table
from firmware_host.table.matches import new_match

ROOT = Path(__file__).resolve().parents[2]
PYTHON_VALUES = re.compile(r"\bNone\b|\bFalse\b|\bTrue\b|[{}]|\[\]|\[['\"]|'\w+':")
"""What a Python value looks like printed: None, False, True, braces, an empty or quoted list, a key."""


def tablectl(*args: str, env: dict[str, str], stdin: int | None = subprocess.DEVNULL
             ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", *args], cwd=ROOT, env=env,
                          stdin=stdin, capture_output=True, text=True, timeout=60)


def table_host(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "firmware_host", *args], cwd=ROOT, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)


def no_python_values(text: str, what: str) -> None:
    """`config get` prints TOML (`mute = []`, what `config set` takes): only its Python words count."""
    found = (re.search(r"\bNone\b|\bFalse\b|\bTrue\b|[{}]", text) if what.startswith("tablectl config get")
             else PYTHON_VALUES.search(text))
    assert found is None, f"{what} shows a Python value {found[0]!r}:\n{text}"


def nobody_home(tmp: Path) -> dict[str, str]:
    """A laptop with no table running and no configuration file."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("XDG_") and k not in ("CONFIGURATION_DIRECTORY", "STATE_DIRECTORY",
                                                    "RUNTIME_DIRECTORY", "NOTIFY_SOCKET", "INVOCATION_ID")}
    (tmp / "home").mkdir(exist_ok=True)
    return env | {"HOME": str(tmp / "home"), "TABLE_HOST_SOCKET": str(tmp / "none.sock")}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """The real daemon, emulated and headless, for the whole module (its start is the slow part)."""
    d = DaemonProcess(tmp_path_factory.mktemp("daemon"))
    d.start()
    try:
        yield d
    finally:
        d.close()


# ------------------------------------------------------------------ --json everywhere


def test_no_table_running_is_a_json_error_object_with_json(tmp_path: Path) -> None:
    env = nobody_home(tmp_path)
    for args in (["--json", "status"], ["status", "--json"], ["--json", "seats"], ["--json", "selftest"]):
        result = tablectl(*args, env=env)
        assert result.returncode == 1, args
        answer = json.loads(result.stdout)
        assert answer["ok"] is False and "not running" in answer["error"], args
    human = tablectl("status", env=env)
    assert human.stdout == "" and human.returncode == 1 and "not running" in human.stderr


def test_debug_bundle_config_set_get_and_check_answer_in_json(tmp_path: Path, daemon: DaemonProcess) -> None:
    bundle = json.loads(tablectl("--json", "debug-bundle", str(tmp_path / "b.tar.gz"), env=daemon.env).stdout)
    assert bundle["ok"] and bundle["file"] == str(tmp_path / "b.tar.gz") and bundle["daemon_running"]
    assert "daemon.json" in bundle["holds"] and (tmp_path / "b.tar.gz").exists()

    got = json.loads(tablectl("config", "get", "arbiter.window_ms", "--json", env=daemon.env).stdout)
    assert got == {"ok": True, "key": "arbiter.window_ms", "value": 5.0}
    seat = json.loads(tablectl("--json", "config", "get", "inputs.seats.1", env=daemon.env).stdout)
    assert seat["value"]["slap"] == 5  # counted from 1, as config set and the problems count
    unknown = tablectl("config", "get", "arbiter.colour", env=daemon.env)
    assert unknown.returncode == 2 and unknown.stderr == "tablectl: no setting 'arbiter.colour'\n"

    config = tmp_path / "table.toml"
    config.write_text((ROOT / "hardware" / "wiring" / "4-seat.toml").read_text())
    alone = {**daemon.env, "TABLE_HOST_SOCKET": str(tmp_path / "none.sock")}
    result = tablectl("--json", "config", "set", "arbiter.window_ms", "4.5", "--file", str(config), env=alone)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["ok"] and answer["key"] == "arbiter.window_ms" and answer["reloaded"] is None
    assert "window_ms = 4.5" in config.read_text()

    checked = json.loads(tablectl("config", "check", str(config), "--json", env=alone).stdout)
    assert checked == {"ok": True, "valid": True, "file": str(config)}


def test_watch_gives_its_outcome_as_json_and_the_play_on_stderr() -> None:
    result = table_host("watch", "--game", "dice", "--players", "2", "--bots", "hard", "--speed", "5000",
                        "--json")
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["game"] == "dice" and outcome["bots"] == "hard" and outcome["rounds"] >= 1
    assert all(1 <= seat <= 2 for seat in outcome["winners"]) and len(outcome["totals"]) == 2
    assert "round 1" in result.stderr


# ------------------------------------------------------------------ human output


def test_human_output_of_every_reading_command_shows_no_python_values(daemon: DaemonProcess) -> None:
    env = daemon.env
    start = tablectl("start", env=env)  # in attract: no game chosen yet
    assert start.returncode == 1
    assert start.stderr.strip() == ("tablectl: nothing to start: no game is chosen yet; run tablectl new "
                                    "GAME first (classic, dice, domino, crazy)")
    shown = {}
    for args in (["status"], ["seats"], ["inputs"], ["history"], ["config", "get"],
                 ["config", "get", "arbiter"],
                 ["new", "classic", "rounds=2", "pro_row=yes"], ["bots", "3", "--level", "hard"], ["seats"]):
        result = tablectl(*args, env=env)
        assert result.returncode == 0, (args, result.stderr)
        no_python_values(result.stdout, f"tablectl {' '.join(args)}")
        shown[" ".join(args)] = result.stdout
    new = shown["new classic rounds=2 pro_row=yes"]
    assert re.search(r"options\s+rounds 2, pro row yes", new), new  # the options with their own types
    assert re.search(r"seats joined\s+none", new)
    assert [line.split() for line in shown["seats"].splitlines() if re.match(r"\s+\d", line)] == [
        ["1", "bot"], ["2", "bot"], ["3", "bot"], ["4", "free"]]
    status = shown["status"]
    assert re.search(r"hardware\s+board emulated, missing none", status)
    assert re.search(r"memory\s+[\d.]+ MB resident, \d+ threads, allocator malloc", status)

    started = tablectl("start", env=env)
    assert started.returncode == 0, started.stderr
    no_python_values(started.stdout, "tablectl start")
    wait_for(lambda: json.loads(tablectl("--json", "inputs", env=env).stdout)["events"], timeout=60)
    for args in (["status"], ["scores"], ["inputs"], ["history"]):
        result = tablectl(*args, env=env)
        assert result.returncode == 0, (args, result.stderr)
        no_python_values(result.stdout, f"tablectl {' '.join(args)} during a match")
    inputs = tablectl("inputs", env=env).stdout
    assert re.search(r"edge ms\s+seat\s+control\s+what\s+after ms", inputs)
    assert re.search(r"^\s+\d+\.\d{3}\s+[1-3]\s+\w+\s+press\s+-?\d+\.\d{3}\s*$", inputs, flags=re.M), inputs
    assert "arbiter window 5 ms" in inputs
    scores = tablectl("scores", env=env).stdout
    assert re.search(r"round\s+ending\s+seat 1\s+seat 2\s+seat 3", scores) and "not over yet" in scores
    aborted = tablectl("abort", env=env)
    assert aborted.returncode == 0, aborted.stderr
    no_python_values(aborted.stdout, "tablectl abort")
    for args in (["config", "check"], ["debug-bundle", str(daemon.tmp / "bundle.tar.gz")]):
        result = tablectl(*args, env=env)
        assert result.returncode == 0, (args, result.stderr)
        no_python_values(result.stdout, f"tablectl {args[0]}")


def test_history_is_one_row_per_match(tmp_path: Path) -> None:
    table = Table(4)
    store = Store(tmp_path / "table.db")
    with served_table(tmp_path / "control.sock", table, store):
        for _ in range(2):
            match = new_match("dice", 2, 3, {"rounds": 1})
            play_recorded(store, store.begin_match(match, [0, 1]), match, 10**6)
        env = {**os.environ, "COLUMNS": "120", "TABLE_HOST_SOCKET": str(tmp_path / "control.sock")}
        text = tablectl("history", env=env).stdout
    store.close()
    no_python_values(text, "tablectl history")
    day = r"\d{4}-\d\d-\d\d \d\d:\d\d"
    rows = [line for line in text.splitlines() if re.match(rf"\s+\d+\s+{day}\s+dice", line)]
    assert [row.split()[0] for row in rows] == ["2", "1"], text  # newest first, one line each
    assert all(re.search(r"ended \d\d:\d\d, won by seats? [\d, ]+\s+seat 1 [+-]\d+, seat 2 [+-]\d+\s*$", row)
               for row in rows), text


def test_selftest_report_and_simulate_read_as_tables(daemon: DaemonProcess) -> None:
    """It was: `selftest --probe` printed its log, then the same lines again as a table; its JSON
    had no `ok`."""
    result = tablectl("selftest", "--probe", env=daemon.env)
    assert result.returncode == 0, result.stdout + result.stderr
    no_python_values(result.stdout, "tablectl selftest --probe")
    assert not re.search(r"part\s+where\s+result\s+detail", result.stdout)
    assert len(re.findall(r"expander nav1\s+bus 1, 0x20", result.stdout)) == 1, result.stdout
    probed = tablectl("--json", "selftest", "--probe", env=daemon.env)
    assert probed.returncode == 0 and json.loads(probed.stdout)["ok"] is True, probed.stdout
    simulated = table_host("simulate", "--game", "domino", "--players", "3", "--rounds", "2", "--seed", "4")
    assert simulated.returncode == 0, simulated.stderr
    no_python_values(simulated.stdout, "table-host simulate")
    assert re.search(r"round\s+ending\s+seat 1\s+seat 2\s+seat 3", simulated.stdout)
    assert re.search(r"^\s*total\s+-?\d+\s+-?\d+\s+-?\d+\s*$", simulated.stdout, flags=re.M)


# ------------------------------------------------------------------ bad values, next steps


def test_a_bad_value_is_exit_2_naming_the_option_as_typed(tmp_path: Path) -> None:
    env = nobody_home(tmp_path)
    for value in ("0", "-1", "nan", "601", "soon"):
        result = tablectl("selftest", "--timeout", value, env=env)
        assert result.returncode == 2, (value, result.stderr)
        assert "--timeout" in result.stderr and "timeout_s" not in result.stderr
    config = tmp_path / "table.toml"
    config.write_text((ROOT / "hardware" / "wiring" / "4-seat.toml").read_text())
    before = config.read_text()
    # it was: "arbiter.window_ms: Input should be greater than 0", pydantic's words, no range
    for key, value, words in (("arbiter.window_ms", "-3",
                               "arbiter.window_ms: -3 is out of range: it must be above 0 and at most 100"),
                              ("arbiter.window_ms", '"fast"', "valid number"),
                              ("arbiter.colour", "1", "colour"),
                              ("nothing.here", "1", "no setting 'nothing.here'")):
        result = tablectl("config", "set", key, value, "--file", str(config), env=env)
        assert result.returncode == 2, (key, value, result.stderr)
        assert words in result.stderr.splitlines()[-1] and "Traceback" not in result.stderr
        as_json = tablectl("--json", "config", "set", key, value, "--file", str(config), env=env)
        assert as_json.returncode == 2 and json.loads(as_json.stdout)["ok"] is False
    assert config.read_text() == before
    # it was: "e.g. 7,7,5,5 (dice per seat, e.g. 7,7,5,5 (total at most 24))"
    handicap = tablectl("new", "dice", "handicap=a,b", env=env)
    assert handicap.returncode == 2 and handicap.stderr.count("e.g.") == 1, handicap.stderr
    for args in (["--json", "history", "--limit", "0"], ["bots", "two", "--json"]):
        result = tablectl(*args, env=env)
        assert result.returncode == 2
        assert json.loads(result.stdout) == {"ok": False, "error": result.stderr.splitlines()[-1]}
    watched = table_host("watch", "--bots", "instant")
    assert watched.returncode == 2 and "Traceback" not in watched.stderr
    assert "--bots" in watched.stderr and "'instant'" in watched.stderr and watched.stdout == ""


def test_config_set_with_no_file_says_how_and_creates_one_when_asked(tmp_path: Path) -> None:
    env = nobody_home(tmp_path)
    where = tmp_path / "home" / ".config" / "table-host" / "table.toml"
    result = tablectl("config", "set", "arbiter.window_ms", "4", env=env)
    assert result.returncode == 1 and not where.exists()
    assert result.stderr.strip() == (f"tablectl: no configuration file at {where}: `tablectl config set "
                                     "KEY VALUE --create` starts one from the built-in 4-seat wiring "
                                     "(4-seat.toml), emulated")
    result = tablectl("config", "set", "arbiter.window_ms", "4", "--create", env=env)
    assert result.returncode == 0, result.stderr
    assert f"created {where} from 4-seat.toml (backend emulated)" in result.stderr
    text = where.read_text()
    assert 'backend = "emulated"' in text and "window_ms = 4" in text
    assert tablectl("config", "check", env=env).returncode == 0


# ------------------------------------------------------------------ table-host alone is run


def test_run_options_work_without_run() -> None:
    parser = host.build_parser()
    typed = {
        ("--debug",): ["run", "--debug"],
        ("--config", "my.toml", "--ui", "none"): ["run", "--config", "my.toml", "--ui", "none"],
        ("--log-level", "warning", "--emulate"): ["run", "--log-level", "warning", "--emulate"],
        (): ["run"],
        ("nonsense",): ["nonsense"],  # refused as an unknown subcommand, not as run's argument
        ("--help",): ["--help"],
        ("--json", "bench", "engine"): ["--json", "bench", "engine"],
        ("run", "--debug"): ["run", "--debug"],
    }
    for args, expected in typed.items():
        assert host.as_typed(parser, list(args)) == expected, args
    args = parser.parse_args(host.as_typed(parser, ["--debug", "--ui", "none"]))
    assert (args.command, args.log_level, args.ui) == ("run", "debug", "none")


def test_table_host_debug_alone_runs_the_table_at_debug(tmp_path: Path) -> None:
    d = DaemonProcess(tmp_path)
    try:
        d.log = open(tmp_path / "daemon.log", "a")  # noqa: SIM115 - DaemonProcess.close closes it
        command = [sys.executable, "-m", "firmware_host", "--debug", "--emulate", "--ui", "none"]
        d.proc = subprocess.Popen(command, cwd=ROOT, env=d.env, stdout=subprocess.DEVNULL, stderr=d.log,
                                  text=True, preexec_fn=ending_with_me())
        d.wait_for("READY=1")
        assert d.ctl("status")["ok"]
        wait_for(lambda: "DEBUG" in (tmp_path / "daemon.log").read_text(), timeout=10)
    finally:
        d.close()


# ------------------------------------------------------------------ the package


def test_python_m_firmware_host_is_table_host_and_only_firmware_host_is_installed() -> None:
    import tomllib
    from importlib.metadata import distribution

    from setuptools import find_packages

    version = table_host("--version")
    script = Path(sys.executable).with_name("table-host")
    assert version.returncode == 0 and version.stdout.startswith("table-host ")
    if script.exists():
        installed = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
        assert installed.stdout == version.stdout
    found = find_packages(str(ROOT), **tomllib.loads((ROOT / "pyproject.toml").read_text())
                          ["tool"]["setuptools"]["packages"]["find"])
    assert found and all(p.split(".")[0] == "firmware_host" for p in found), found
    assert distribution("table-host").read_text("top_level.txt").split() == ["firmware_host"]


# ------------------------------------------------------------------ long benches


def test_a_bench_shows_its_progress_on_a_terminal() -> None:
    shown, out, status = on_a_terminal([sys.executable, "-m", "firmware_host", "bench", "arbitration",
                                        "--pairs", "2000", "--seconds", "2"])
    assert status in (0, 1)  # 1: a target missed on a loaded machine
    assert b"bench arbitration" in shown and b"of about 2 s" in shown and b"\x1b[" in shown
    assert "order" in out and b"Traceback" not in shown
    piped = table_host("bench", "engine", "--rounds", "20")
    assert "bench engine" not in piped.stderr and "\x1b[" not in piped.stderr
