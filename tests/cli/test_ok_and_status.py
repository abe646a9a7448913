"""One rule for both command lines (issue 33, items 1 and 2): with --json, `ok` is false exactly when
the exit status is not 0, a failure names itself (`error`, or the bench's `missed`), and bad input
is exit 2 with `{"ok": false, "error": ...}` on stdout, from `table-host` as from `tablectl`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from plumbing import DaemonProcess

from firmware_host.bench import suite
from firmware_host.cli import ctl, host
from firmware_host.cli.completion import subcommands

ROOT = Path(__file__).resolve().parents[2]


def run_host(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    """`table-host ARGS` in this process: its status, its one JSON object, its stderr."""
    try:
        status = host.main(list(args))
    except SystemExit as exit_:
        status = int(exit_.code or 0)
    out, err = capsys.readouterr()
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, f"table-host {' '.join(args)}: not one JSON line on stdout:\n{out}"
    return status, json.loads(lines[0]), err


def the_rule(status: int, said: dict[str, Any], what: str) -> None:
    assert said["ok"] is (status == 0), f"{what}: exit {status} with ok {said['ok']}"
    if status:
        named = said.get("error") or said.get("missed") or said.get("failures") or said.get("problems")
        assert named, f"{what}: exit {status} names no failure: {said}"


@pytest.mark.parametrize("args", [
    ("simulate", "--game", "bogus", "--players", "3", "--json"),
    ("power", "--seats", "13", "--json"),
    ("scenario", "README.md", "--json"),
    ("--json", "watch", "--game", "dice", "--players", "1"),
    ("--json", "bench", "startup", "--kills", "3"),
])
def test_the_issues_bad_input_is_exit_2_and_a_json_error_on_stdout(capsys: pytest.CaptureFixture[str],
                                                                   args: tuple[str, ...],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    status, said, err = run_host(capsys, *args)
    assert status == 2 and said["ok"] is False
    assert said["error"].startswith("table-host") and said["error"] == err.strip().splitlines()[-1]


def test_every_table_host_subcommand_refuses_an_unknown_option_in_json(
        capsys: pytest.CaptureFixture[str]) -> None:
    for name in subcommands(host.build_parser()):
        status, said, err = run_host(capsys, name, "--json", "--no-such-option")
        assert status == 2 and said["ok"] is False and set(said) == {"ok", "error"}, name
        assert said["error"].startswith("table-host") and said["error"] == err.strip().splitlines()[-1]


def test_a_bench_option_another_bench_reads_is_refused_naming_that_bench(
        capsys: pytest.CaptureFixture[str]) -> None:
    status, said, _ = run_host(capsys, "bench", "startup", "--kills", "3", "--json")
    assert status == 2 and said["error"] == ("table-host: error: --kills is not read by bench startup: "
                                             "it is for bench faults")
    status, said, _ = run_host(capsys, "bench", "bots", "--play=3", "--json")
    assert status == 2 and "for bench daemon and web and attack" in said["error"]
    for dest, users in suite.USES.items():  # every option is one bench's, and the parser has it
        assert set(users) <= set(suite.BENCHES), dest
        assert any(a.dest == dest for a in subcommands(host.build_parser())["bench"]._actions), dest


@pytest.mark.parametrize("args", [
    ("power", "--json"), ("i2c", "--json"), ("i2c", "--seats", "12", "--json"), ("boot-config", "--json"),
    ("simulate", "--game", "dice", "--players", "2", "--rounds", "1", "--json"),
    ("scenario", "scenarios/dice-race.toml", "--json"),
    ("watch", "--game", "dice", "--players", "2", "--speed", "100000", "--json"),
    ("simulate", "--sweep", "--game", "dice", "--seeds", "1", "--matches", "0", "--json"),
])
def test_every_report_says_ok_as_its_exit_status_says(capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      args: tuple[str, ...]) -> None:
    monkeypatch.chdir(ROOT)
    status, said, _ = run_host(capsys, *args)
    the_rule(status, said, " ".join(args))
    assert status in (0, 1)


def test_a_scenario_that_fails_its_expectations_is_ok_false_and_exit_1(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    scenario = (ROOT / "scenarios" / "dice-worked-example.toml").read_text()
    assert "expect_scores = [8, -3, -1, -4]" in scenario
    broken = tmp_path / "broken.toml"
    broken.write_text(scenario.replace("expect_scores = [8, -3, -1, -4]", "expect_scores = [9, -3, -1, -4]"))
    status, said, _ = run_host(capsys, "scenario", str(broken), "--json")
    assert status == 1
    the_rule(status, said, "scenario broken.toml")


@pytest.fixture
def two_benches(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bench that meets its target and one that misses it: the runner, not the measuring, is tested."""
    good = suite.Bench("engine", lambda o: {"rounds": o.rounds, "meets_target": True}, lambda f: "fine")
    bad = suite.Bench("startup", lambda o: {"runs": o.runs, "failures": [], "met": {"version_cpu_ms": False},
                                            "meets_target": False},
                      lambda f: "version: MISSES")
    soak = suite.Bench("soak", lambda o: {"judged": False, "meets_target": False},
                       lambda f: "target: NOT JUDGED: that takes a run of 30 minutes")
    monkeypatch.setattr(suite, "BENCHES", {"engine": good, "startup": bad, "soak": soak})


def test_a_bench_is_ok_exactly_when_it_meets_its_targets_and_a_miss_names_itself(
        capsys: pytest.CaptureFixture[str], two_benches: None) -> None:
    status, said, _ = run_host(capsys, "bench", "engine", "--json")
    assert (status, said["ok"], "missed" in said) == (0, True, False)
    status, said, _ = run_host(capsys, "bench", "startup", "--json")
    assert (status, said["ok"], said["missed"]) == (1, False, ["startup: version_cpu_ms missed its target"])
    status, said, _ = run_host(capsys, "bench", "soak", "--json")
    assert (status, said["ok"]) == (1, False)
    assert said["missed"] == ["soak: not judged: the run was too short to judge (see the text)"]
    status, said, _ = run_host(capsys, "bench", "all", "--json")
    assert (status, said["ok"]) == (1, False) and len(said["missed"]) == 2
    assert host.main(["bench", "startup"]) == 1
    said_err = capsys.readouterr().err.strip()
    assert said_err == "table-host bench: missed: startup: version_cpu_ms missed its target"


# ------------------------------------------------------------------ tablectl


def ctl_json(*args: str, env: dict[str, str]) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", *args], cwd=ROOT, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, f"tablectl {' '.join(args)}: not one JSON line:\n{done.stdout}{done.stderr}"
    return done.returncode, json.loads(lines[0])


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonProcess(tmp_path_factory.mktemp("daemon"))
    d.start()
    try:
        yield d
    finally:
        d.close()


def test_every_tablectl_command_refuses_an_unknown_option_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    for name in subcommands(ctl.build_parser()):
        with pytest.raises(SystemExit) as exit_:
            ctl.main(["--json", name, "--no-such-option"])
        out = capsys.readouterr().out
        assert exit_.value.code == 2 and json.loads(out)["ok"] is False, name


def test_config_reload_without_a_file_is_ok_false_with_its_exit_1(daemon: DaemonProcess) -> None:
    """It was: exit 1 with "ok": true."""
    status, said = ctl_json("--json", "config", "reload", env=daemon.env)
    assert status == 1 and said["ok"] is False and said["reloaded"] is False
    assert said["error"] == "no configuration file: the built-in one runs"
    status, said = ctl_json("--json", "status", env=daemon.env)
    the_rule(status, said, "tablectl status")
    assert status == 0
    status, said = ctl_json("--json", "config", "set", "arbiter.nope", "3", env=daemon.env)
    the_rule(status, said, "tablectl config set arbiter.nope 3")
    assert status != 0


def test_no_table_running_is_ok_false_with_exit_1(tmp_path: Path) -> None:
    env = {**os.environ, "TABLE_HOST_SOCKET": str(tmp_path / "none.sock")}
    status, said = ctl_json("--json", "status", env=env)
    assert status == 1
    the_rule(status, said, "tablectl status, no table")
