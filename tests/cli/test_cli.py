"""The commands as a person or a script runs them: output, exit status, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from plumbing import on_a_terminal

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))


def run(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "firmware_host", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env=env)


def one_line_error(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0]


@pytest.mark.parametrize(("game", "players"), [("classic", 4), ("dice", 3), ("domino", 2),
                                                ("crazy", 5)])
def test_simulate_prints_rounds_totals_counts_and_rates_as_json(game: str, players: int) -> None:
    result = run("simulate", "--game", game, "--players", str(players), "--rounds", "2",
                 "--seed", "7", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert len(report["rounds"]) == 2 or (game == "crazy" and len(report["rounds"]) <= 2)
    totals = [sum(r["scores"][s] for r in report["rounds"]) for s in range(players)]
    assert report["totals"] == totals
    assert report["actions"] == sum(r["actions"] for r in report["rounds"])
    assert report["rounds_per_s"] > 0 and report["actions_per_s"] > 0
    assert all(1 <= s <= players for r in report["rounds"] for s in r["finishers"])
    assert sum(report["endings"].values()) == len(report["rounds"])


def test_simulate_with_options_and_human_output() -> None:
    result = run("simulate", "--game", "classic", "--players", "3", "--rounds", "3",
                 "--seed", "1", "--option", "pro_row=yes", "--option", "recycle=turn_over",
                 "--bots", "medium")
    assert result.returncode == 0, result.stderr
    assert "total" in result.stdout and "winner" in result.stdout
    assert "refusals" in result.stdout


@pytest.mark.parametrize(("args", "words"), [
    (["--game", "poker", "--players", "4"], ["unknown game 'poker'"]),
    (["--game", "dice", "--players", "5"], ["dice takes 2 to 4 players, not 5"]),
    (["--game", "classic", "--players", "4", "--option", "colour=blue"], ["unknown option 'colour'"]),
    (["--game", "classic", "--players", "4", "--option", "pro_row=sometimes"], ["pro_row"]),
    (["--game", "classic", "--players", "4", "--option", "nokey"], ["not key=value"]),
    (["--game", "dice", "--players", "4", "--option", "handicap=9,9,9,9"], ["bag holds 24"]),
    (["--game", "classic", "--players", "four"], ["invalid int value"]),
    (["--game", "classic", "--players", "4", "--bots", "genius"], ["unknown bot level"]),
    (["--game", "classic", "--players", "4", "--rounds", "0"], ["--rounds"]),
    (["--game", "classic"], ["--game and --players"]),
    (["--sweep", "--game", "poker"], ["unknown game 'poker'"]),
    (["--sweep", "--seeds", "0"], ["--seeds"]),
    (["--sweep", "--bots", "genius"], ["unknown bot level"]),
    (["--sweep", "--matches", "-1"], ["--matches"]),
])
def test_bad_simulate_input_is_one_line_and_exit_2(args: list[str], words: list[str]) -> None:
    one_line_error(run("simulate", *args), *words)


def test_simulate_sweep_plays_every_case_and_reports_failures_by_command() -> None:
    result = run("simulate", "--sweep", "--game", "dice", "--bots", "hard", "--seeds", "2", "--matches", "3",
                 "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["rounds"] == 3 * 2 and report["failures"] == []  # 2 to 4 players, 2 seeds
    whole = report["whole_matches"]  # and whole matches, judged by their length
    assert whole["matches"] == 3 * 3 and whole["failures"] == []
    assert [(r["players"], r["matches"]) for r in whole["rows"]] == [(2, 3), (3, 3), (4, 3)]
    assert report["most_actions"] > 0 and report["most_game_seconds"] > 0


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_shipped_scenarios_meet_their_own_expectations(path: Path) -> None:
    result = run("scenario", str(path), "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["expectations_failed"] == []
    assert report["actions"], "a scenario without actions checks nothing"


def test_rulebook_worked_examples_come_out_exactly() -> None:
    def scores(name: str) -> list[int]:
        report = json.loads(run("scenario", str(ROOT / "scenarios" / name), "--json").stdout)
        return report["rounds"][0]["scores"]

    assert scores("classic-worked-example.toml") == [19, 20]
    assert scores("dice-worked-example.toml") == [8, -3, -1, -4]
    assert scores("domino-worked-example.toml") == [2, 1, 1, 0]


def test_scenario_human_report_names_players_and_outcomes() -> None:
    result = run("scenario", str(ROOT / "scenarios" / "classic-race.toml"))
    assert result.returncode == 0
    assert "Ben" in result.stdout and "too late (seat 1 was 0.4 ms earlier)" in result.stdout


def test_a_failed_expectation_exits_1(tmp_path: Path) -> None:
    text = (ROOT / "scenarios" / "dice-worked-example.toml").read_text()
    bad = tmp_path / "wrong.toml"
    bad.write_text(text.replace("expect_scores = [8, -3, -1, -4]", "expect_scores = [9, -3, -1, -4]"))
    result = run("scenario", str(bad))
    assert result.returncode == 1
    assert "EXPECTATION FAILED wrong.toml.round[1].expect_scores" in result.stdout


@pytest.mark.parametrize(("text", "words"), [
    ("game = 'classic'\nplayers = 2\n[[round]\n", ["line 3"]),
    ("game = 'classic'\nplayers = 2\n", ["no [[round]]"]),
    ("players = 2\n[[round]]\n", ["missing game"]),
    ("game = 'chess'\nplayers = 2\n[[round]]\n", ["unknown game 'chess'"]),
    ("game = 'classic'\nplayers = 2\ncolour = 1\n[[round]]\n", ["unknown key 'colour'"]),
    ("game = 'classic'\nplayers = 2\n[[round]]\nactions = [{seat = 1, do = 'play', card = 'Q7'}]\n",
     ["round[1].actions[1]", "not a Ligretto card: 'Q7'"]),
    ("game = 'classic'\nplayers = 2\n[[round]]\nactions = [{seat = 3, do = 'turn'}]\n",
     ["round[1].actions[1].seat", "seat must be 1 to 2"]),
    ("game = 'classic'\nplayers = 2\n[[round]]\nactions = [{seat = 1, do = 'fly'}]\n",
     ["unknown action do='fly'"]),
    ("game = 'dice'\nplayers = 2\n[[round]]\nboard = {purple = 1}\n", ["unknown colour 'purple'"]),
    ("game = 'classic'\nplayers = 2\n[[round]]\npile = ['1:R2']\n", ["cannot start with R2"]),
    ("game = 'classic'\nplayers = 2\n[[round]]\n[[round.seat]]\nrow = ['R1', 'R1']\n", ["give all 2 seats"]),
    ("game = 'domino'\nplayers = 2\n[[round]]\ntokens = [[0, 0]]\n", ["4 tokens"]),
    ("game = 'crazy'\nplayers = 2\n[[round]]\n[[round.seat]]\nhand = ['Y1']\n[[round.seat]]\n",
     ["seat 1 plays red"]),
])
def test_broken_scenario_files_get_one_line_naming_the_place(tmp_path: Path, text: str,
                                                           words: list[str]) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(text)
    one_line_error(run("scenario", str(path)), "broken.toml", *words)


def test_errors_in_table_form_actions_give_the_line(tmp_path: Path) -> None:
    path = tmp_path / "lines.toml"
    path.write_text("game = 'classic'\nplayers = 2\n\n[[round]]\n\n[[round.actions]]\nseat = 1\n"
                    "do = 'turn'\n\n[[round.actions]]\nseat = 1\ndo = 'play'\ncard = 'Z9'\n")
    one_line_error(run("scenario", str(path)), "round[1].actions[2]", "(line 10)")


def test_missing_scenario_file(tmp_path: Path) -> None:
    one_line_error(run("scenario", str(tmp_path / "nope.toml")), "cannot read")


def test_bench_engine_prints_named_figures() -> None:
    result = run("bench", "engine", "--rounds", "40", "--json")
    assert result.returncode in (0, 1), result.stderr  # 1: a target missed (a loaded machine)
    engine = json.loads(result.stdout)["engine"]
    assert engine["rounds"] == 40 and engine["players"] == 4
    assert list(engine["games"]) == ["classic", "dice", "domino", "crazy"]
    for game, g in engine["games"].items():
        assert g["game"] == game and g["rounds"] == 40, g
        assert g["rounds_per_s"] > 0 and g["actions_per_s"] > g["rounds_per_s"]
        assert g["with_bots_rounds_per_s"] > 0 and g["with_bots_actions_per_s"] > g["with_bots_rounds_per_s"]
        assert len(g["rounds_per_s_all_runs"]) == 3 == len(g["with_bots_rounds_per_s_all_runs"])
        assert g["actions_per_round"] > 20  # whole rounds were played, not stubs
    classic, domino = engine["games"]["classic"], engine["games"]["domino"]
    ratio = classic["actions_per_s"] / domino["actions_per_s"]
    assert engine["domino_vs_classic_per_action"] == round(ratio, 2)
    targets = engine["targets"]
    assert set(targets) == {"engine_rounds_per_s", "engine_domino_ratio", "classic_bots_speedup",
                            "dice_bots_ratio", "domino_bots_ratio", "crazy_bots_ratio", "journal_us"}
    assert targets["engine_rounds_per_s"]["met"] == (classic["rounds_per_s"] >= 1500)
    assert targets["engine_domino_ratio"]["met"] == (ratio <= 3)
    us = classic["with_bots_us_per_action"]
    assert abs(us - 1e6 / classic["with_bots_actions_per_s"]) < 0.01
    assert targets["classic_bots_speedup"]["met"] is None  # judged only at the 1,000 rounds measured before
    for game in ("dice", "domino", "crazy"):
        t = targets[f"{game}_bots_ratio"]
        assert t["met"] == (engine["games"][game]["with_bots_us_per_action"] / us <= 3), (game, t)
    assert targets["journal_us"]["met"] == (classic["journal_us_per_action"] <= 1.76)
    assert engine["meets_target"] == all(t["met"] for t in targets.values() if t["met"] is not None)
    assert result.returncode == (0 if engine["meets_target"] else 1)
    text = run("bench", "engine", "--rounds", "6").stdout
    assert "Domino's engine within 3x Ligretto's time per action" in text
    assert "crazy with the bots within 3x Ligretto's time per action" in text
    assert "the journal (Store.record) on the game thread <= 1.76 us" in text


def test_watch_shows_bots_play_a_match() -> None:
    result = run("watch", "--game", "dice", "--players", "2", "--bots", "hard", "--speed", "2000")
    assert result.returncode == 0, result.stderr
    assert "round 1" in result.stdout and "seat 2" in result.stdout and "winner" in result.stdout


def test_tablectl_says_when_no_daemon_is_running(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", "status"], cwd=ROOT,
                            capture_output=True, text=True,
                            env={"TABLE_HOST_SOCKET": str(tmp_path / "control.sock"), "PATH": ""})
    assert result.returncode == 1
    assert "not running" in result.stderr and "Traceback" not in result.stderr


def test_simulate_shows_a_progress_bar_on_a_terminal() -> None:
    shown, out, status = on_a_terminal([sys.executable, "-m", "firmware_host", "simulate", "--game",
                                        "dice", "--players", "2", "--rounds", "30", "--seed", "1",
                                        "--bots", "medium"])
    assert status == 0
    assert b"playing" in shown and b"\x1b[" in shown  # drawn, then cleared
    assert "total" in out and b"Traceback" not in shown


def test_bench_arbitration_prints_order_and_latency_figures() -> None:
    result = run("bench", "arbitration", "--pairs", "3000", "--seconds", "1", "--json")
    assert result.returncode in (0, 1), result.stderr  # 1: a target missed (a loaded machine)
    figures = json.loads(result.stdout)["arbitration"]
    order, latency = figures["order"], figures["latency"]
    assert order["pairs"] == 3000 and order["fraction_in_order"] == 1.0
    assert latency["seats"] == 12 and latency["decisions"] > 50  # 12 seats x ~8 arbitrated presses/s
    assert latency["p50_ms"] >= latency["window_ms"]  # nothing is decided before the window closes
    assert latency["target_p99_ms"] == latency["window_ms"] + 0.5
    assert latency["meets_target"] == (latency["p99_ms"] <= latency["target_p99_ms"]
                                       and latency["fraction_in_order"] == 1.0)
    assert latency["load"] == 0 and latency["wakeups"] > 0 and latency["wake_late_p99_ms"] is not None
    assert set(latency["priority"]) == {"game", "edges"}


def test_bench_arbitration_load_runs_busy_processes_that_stop_with_it() -> None:
    from firmware_host.bench.arbitration import _busy_processes

    with _busy_processes(2) as procs:
        assert all(p.poll() is None for p in procs)
        pids = [p.pid for p in procs]
    assert all(p.poll() is not None for p in procs)
    assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()]
    result = run("bench", "arbitration", "--load", "-1")
    assert result.returncode == 2 and "--load: must be 0 to 64" in result.stderr


def test_bench_display_prints_queue_times_bytes_and_bus_times() -> None:
    result = run("bench", "display", "--decisions", "60", "--json")
    assert result.returncode in (0, 1), result.stderr  # 1: a target missed (a loaded machine)
    figures = json.loads(result.stdout)["display"]
    assert set(figures["games"]) == {"classic_12", "classic_4", "dice_4", "domino_4", "crazy_5"}
    assert figures["bytes_per_frame"]["oled_ssd1306_i2c"] == 1096
    assert figures["bytes_per_frame"]["centre_usb_serial_32x16"] == 8 + 2 + 32 * 16 * 3  # protocol 2
    assert figures["bus_time_per_frame"]["oled_ssd1306_i2c_ms"] == round(1096 * 9 / 400_000 * 1e3, 2)
    assert all(g["frames_queued_per_decision"] >= 1 for g in figures["games"].values())
    assert figures["meets_target"] == (figures["queue_p99_ms"] <= 5.0)


def test_bench_daemon_prints_idle_cpu_and_memory() -> None:
    result = run("bench", "daemon", "--idle", "2", "--json")
    assert result.returncode in (0, 1), result.stderr  # 1: a target missed (a loaded machine)
    f = json.loads(result.stdout)["daemon"]
    assert f["idle_seconds"] == 2 and f["idle_cpu_percent"] >= 0 and 10 < f["peak_rss_mb"] < 1000
    assert f["phase_after_play"] in ("playing", "round_result", "countdown")  # the bots played
    assert f["meets_target"] == (f["idle_cpu_percent"] < 0.5 and f["peak_rss_mb"] < 80)


def test_the_subcommand_read_before_the_parser_is_the_parser_s() -> None:
    """table-host restarts with its allocator before building its parser (the restart would do
    the work twice): the command it reads then must be the one the parser knows."""
    from firmware_host.cli.completion import subcommands
    from firmware_host.cli.host import SUBCOMMANDS, _command_in, build_parser

    assert tuple(subcommands(build_parser())) == SUBCOMMANDS
    assert [_command_in(a) for a in ([], ["--ui", "plain"], ["--json", "bench", "engine"], ["simulate"])] == [
        "run", "run", "bench", "simulate"]
