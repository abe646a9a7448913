"""Fixtures several test files share, and the tiers every test belongs to (README.md, "Tests")."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import firmware_host.games  # noqa: F401  (registers the built-in games, as the command lines do)

# The tiers, by test name (the function's, without its parameters), so a test keeps its tier when
# its file moves. A test named in none is in the unit tier, which `./dev test unit` runs in
# parallel; `./dev test` with no arguments runs every tier.
BENCH = {
    # a `table-host bench` command run whole, or its driver: tens of seconds to minutes each
    "test_each_bench_runs_at_its_smallest_values_and_its_exit_status_says_if_a_target_was_missed",
    "test_bench_faults_says_if_a_target_was_missed_and_prints_the_soaks_memory_figures",
    "test_bench_faults_prints_kills_rounds_lost_configs_and_tracebacks",
    "test_bench_soak_prints_rss_growth_matches_and_a_verdict",
    "test_a_bench_killed_mid_run_leaves_no_process",
    "test_the_three_figures_are_measured_named_with_units_and_judged",
    "test_a_target_no_process_can_meet_exits_1_and_says_which",
    "test_bench_faults_counts_garbage_answers_deaths_and_a_crowd_of_tablectl",
    "test_bench_faults_probes_an_admin_through_both_attacks_and_stops_the_table_while_it_starts",
    "test_every_kind_is_tried_every_way_and_nothing_is_a_traceback",
    "test_bench_engine_prints_named_figures",
    "test_bench_arbitration_prints_order_and_latency_figures",
    "test_bench_display_prints_queue_times_bytes_and_bus_times",
    "test_bench_daemon_prints_idle_cpu_and_memory",
    "test_a_bench_shows_its_progress_on_a_terminal",
    "test_a_short_run_attacks_the_real_daemon_with_every_attacker",
}
STATS = {
    # many matches played to judge a rate: a bot's strength with its confidence interval
    "test_the_hard_bot_beats_every_masher_in_most_matches",
    "test_hard_beats_medium_head_to_head_beyond_chance",
}
# browser: every test that drives Chromium, i.e. uses a `browser` fixture.
TIER_MARKS = {"bench": BENCH, "stats": STATS}
# The order a tier runs in, for its wall time when its processes take tests as they are free: the
# longest first (20-250 s each here; a long one started last is waited for alone), and the test
# that waits for the `bench faults` run another started (plumbing.py) last, so its process works
# meanwhile.
FIRST = [
    "test_bench_faults_says_if_a_target_was_missed_and_prints_the_soaks_memory_figures",
    "test_every_command_of_the_hardware_readme_works_in_order_on_a_fresh_lite",
    "test_an_update_to_a_good_version_then_a_broken_one_then_back_by_hand",
    "test_the_races_above_do_lose_races_and_refuse_otherwise_in_every_game",
    "test_sigkill_mid_round_and_back_with_every_completed_round",
    "test_a_refusal_is_too_late_iff_the_round_without_the_other_seats_plays_takes_it",
    "test_sigterm_or_sigint_at_random_moments_of_start_up_stops_the_table_in_order",
]
LAST = ["test_bench_faults_prints_kills_rounds_lost_configs_and_tracebacks"]


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """systemd's state and runtime directories, private to the test."""
    for name in ("STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(name, str(tmp_path / name))
    return tmp_path


class Said:
    """What the table's loggers said, as text, live (threads log while a test waits), since the
    test's set-up began: a fixture's thread (a link, a daemon) often speaks while the set-up still
    runs, and caplog keeps those records apart from the test's own."""

    def __init__(self, caplog: pytest.LogCaptureFixture) -> None:
        self._caplog = caplog

    def __iter__(self) -> Iterator[str]:
        setup, now = self._caplog.get_records("setup"), self._caplog.records
        records = list(now) if now is setup else [*setup, *now]
        return iter([r.getMessage() for r in records])

    def __contains__(self, text: object) -> bool:
        return text in list(self)

    def __repr__(self) -> str:
        return repr(list(self))


@pytest.fixture
def said(caplog: pytest.LogCaptureFixture) -> Said:
    """Every record of the `table_host` loggers, DEBUG and up, as its message."""
    caplog.set_level(logging.DEBUG, logger="table_host")
    return Said(caplog)


# The user's own directories (XDG: a laptop's table keeps its journal and socket there), one set
# for each test process: a test that forgets its own never reaches the user's table, and two
# processes of a tier run in parallel never share a socket or a journal. What the processes of one
# run do share on purpose (one `bench faults` run read by two tests, plumbing.py) is in the folder
# TABLE_TESTS_SHARED, made by the run's first process (xdist's workers inherit its environment).
OWN_DIRS = ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME")


_OWN = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    home = Path(tempfile.mkdtemp(prefix="table-tests-"))
    config.stash[_OWN] = home
    for name in OWN_DIRS:
        (home / name).mkdir(mode=0o700)
        os.environ[name] = str(home / name)
    if "PYTEST_XDIST_WORKER" not in os.environ:
        (home / "shared").mkdir()
        os.environ["TABLE_TESTS_SHARED"] = str(home / "shared")


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_OWN, None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: every tier's names are checked
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks each test with its tier. Run on the whole suite, a name in the tables that matches no
    test is an error: a test renamed would otherwise fall into the unit tier unseen."""
    seen: set[str] = set()
    for item in items:
        name = getattr(item, "originalname", item.name)
        for mark, names in TIER_MARKS.items():
            if name in names:
                item.add_marker(mark)
                seen.add(name)
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker("browser")
    rank = {name: i - len(FIRST) for i, name in enumerate(FIRST)}
    rank |= {name: 1 + i for i, name in enumerate(LAST)}
    items.sort(key=lambda item: rank.get(getattr(item, "originalname", item.name), 0))  # stable otherwise
    seen |= {getattr(item, "originalname", item.name) for item in items} & set(rank)
    if config.args_source is pytest.Config.ArgsSource.TESTPATHS and not config.option.keyword:
        unknown = sorted((set().union(*TIER_MARKS.values()) | set(rank)) - seen)
        if unknown:
            raise pytest.UsageError(f"tests/conftest.py names tests that do not exist: {', '.join(unknown)}")
