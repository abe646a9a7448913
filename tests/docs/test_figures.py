"""Every figure the documents quote that has a source in code agrees with it.

Each row of FIGURES names a document, a phrase (a regular expression over the document with its
whitespace run together, so a line break never hides a figure) whose groups are the figures, and
where the figures come from: a constant, a default, a bound read off a live object, the unit
file, or a measurement (`systemd-analyze security`). A phrase that is no longer in its document
fails too: the figure was reworded, so its row must follow. `test_a_wrong_figure_is_caught`
shows the check fails when a document and its source disagree.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "table-host.service"
KIOSK = ROOT / "systemd" / "table-screen.service"
WORDS = {"five": 5, "forty": 40}


class Figure(NamedTuple):
    doc: str
    phrase: str
    source: Callable[[], Sequence[float]]
    what: str


def unit_setting(name: str) -> float:
    """`Name=VALUE` from the unit, its number (256M is 256)."""
    value = re.search(rf"^{name}=(\S+)$", UNIT.read_text(), flags=re.M)
    assert value, f"{UNIT.name} has no {name}="
    return float(re.match(r"[\d.]+", value[1])[0])  # type: ignore[index]


def exposure(unit: Path = UNIT) -> float:
    """A unit's exposure as systemd-analyze rates it, measured now."""
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze (Debian's systemd package) is needed to measure the unit's exposure"
    out = subprocess.run([analyze, "security", "--offline=true", "--no-pager", str(unit)],
                         capture_output=True, text=True, timeout=120).stdout
    found = re.search(rf"Overall exposure level for {re.escape(unit.name)}: ([\d.]+)", out)
    assert found, out[-2000:]
    return float(found[1])


def default_of(prog: str, sub: str, dest: str) -> Any:
    from firmware_host.cli import ctl, host
    from firmware_host.cli.completion import action_of

    parser = {"table-host": host.build_parser, "tablectl": ctl.build_parser}[prog]()
    action = action_of(parser, sub, dest)
    assert action is not None, f"{prog} {sub} has no {dest}"
    return action.default


def kept(append: Callable[[int], None], items: Callable[[], Sequence[Any]], times: int = 5000) -> int:
    """How many a record keeps: append more than it may, count what is left."""
    for i in range(times):
        append(i)
    return len(items())


def table_notices() -> int:
    import logging

    from firmware_host.table.machine import Table

    quiet = logging.getLogger("tests.figures.quiet")
    quiet.propagate = False
    table = Table(2)
    return kept(lambda i: table._note(f"notice {i}", to=quiet), lambda: table.notices)


def buzzer_heard() -> int:
    from firmware_host.devices.buzzer import BuzzerPlayer

    buzzer = BuzzerPlayer(None, None)
    return kept(lambda _: buzzer.play("go"), lambda: buzzer.heard)


def referee_bounds() -> tuple[int, int, int]:
    from firmware_host.table.arbiter import Arbiter
    from firmware_host.table.matches import new_match
    from firmware_host.table.referee import Referee

    arbiter = Arbiter()
    referee = Referee(new_match("classic", 2, 1), arbiter)
    return arbiter.decisions.maxlen, referee.contests.maxlen, referee.notices.maxlen  # type: ignore[return-value]


def constants(module: str, *names: str, scale: float = 1) -> Callable[[], list[float]]:
    def read() -> list[float]:
        import importlib

        found = importlib.import_module(module)
        return [getattr(found, name) / scale if scale != 1 else getattr(found, name) for name in names]

    return read


def defaults_of(module: str, function: str, *names: str) -> list[float]:
    import importlib
    import inspect

    parameters = inspect.signature(getattr(importlib.import_module(module), function)).parameters
    return [parameters[name].default for name in names]


def settle_figures() -> list[float]:
    from firmware_host.config import load

    return [load.SETTLE_WAIT_S, load.SETTLE_WAIT_S, load.SETTLE_S * 1000]


def config_defaults(*fields: str) -> Callable[[], list[float]]:
    def read() -> list[float]:
        from firmware_host.config.schema import TableConfig

        values = []
        for field in fields:
            section, name = field.split(".")
            model = TableConfig.model_fields[section].annotation
            values.append(model.model_fields[name].default)  # type: ignore[union-attr]
        return values

    return read


def config_bounds(field: str) -> list[float]:
    """A setting's lowest and highest value (its Field's ge and le)."""
    from annotated_types import Ge, Le

    from firmware_host.config.schema import TableConfig

    section, name = field.split(".")
    model = TableConfig.model_fields[section].annotation
    meta = model.model_fields[name].metadata  # type: ignore[union-attr]
    return [next(m.ge for m in meta if isinstance(m, Ge)), next(m.le for m in meta if isinstance(m, Le))]


def fault_default(name: str) -> Any:
    """A default of `bench_faults` that the command line does not set."""
    import inspect

    from firmware_host.bench.faults import bench_faults

    return inspect.signature(bench_faults).parameters[name].default


def startup_targets() -> list[float]:
    from firmware_host.bench.startup import TARGETS

    return [TARGETS[k] for k in ("tablectl_status_cpu_ms", "tablectl_status_human_cpu_ms", "version_cpu_ms",
                                 "daemon_ready_cpu_s")]


def result_hold_s() -> list[float]:
    from firmware_host.table.machine import Timing

    return [Timing().result_hold_ns / 1e9]


def timing() -> Any:
    """The table's timings, imported when a figure is checked."""
    from firmware_host.table.machine import Timing

    return Timing()


DAEMON = "docs/daemon.md"
PINS, OLED = "firmware_host.devices.emulated.pins", "firmware_host.devices.emulated.oled"
OLED_REAL = "firmware_host.devices.displays.oled"
TABLE, STORE = "firmware_host.table.machine", "firmware_host.service.journal"
SERVER = "firmware_host.control.server"
SOAK = "firmware_host.bench.soak"
HISTORY, PERSISTENCE = "firmware_host.bench.history", "docs/persistence.md"
FIGURES = [
    # docs/players.md: the statistics and ratings
    Figure("docs/players.md", r"ended after (\d+) minutes unasked", constants(
        "firmware_host.service.statistics", "IDLE_S", scale=60), "the statistics' process's idle end"),
    Figure("docs/players.md", r"looks at the journal once (\d+) s after the start", constants(
        "firmware_host.service.statistics", "FIRST_LOOK_S"), "the keeper's first look"),
    Figure("docs/players.md", r"builds a journal of ([\d,]+) matches \((\d+) bot matches of the four games "
           r"at 2 to 4 seats played through the real `Store`, (\d+) named players",
           lambda: (lambda b: [b.STORED, len(b.GAMES) * 3, len(b.NAMES)])(
               __import__("firmware_host.bench.players", fromlist=["GAMES"])),
           "bench players' journal"),
    Figure("docs/players.md", r"page as it is served takes longer than (\d+) ms", constants(
        "firmware_host.bench.players", "TARGET_MS"), "bench players' target"),
    Figure("docs/web.md", r"at most (\d+) of their matches per game", constants(
        "firmware_host.service.statistics", "CHART_POINTS"), "the rating chart's points"),
    Figure("docs/web.md", r"the matches begun in the last (\d+) hours", constants(
        "firmware_host.service.statistics", "TONIGHT_S", scale=3600), "tonight's leaderboard"),
    # docs/daemon.md: what the daemon keeps (Memory over weeks)
    Figure(DAEMON, r"the PWM settings lgpio is handed \| the first state and the newest (\d+) \|",
           constants(PINS, "HISTORY"), "emulated pin history"),
    Figure(DAEMON, r"`RecordingInterface`\) \| the driver's start-up and the newest (\d+) transfers",
           constants(OLED, "RECORDED"), "emulated OLED transfers"),
    Figure(DAEMON, r"the buzzer's cues asked for and tunes played \| the newest (\d+) \|",
           lambda: [buzzer_heard()], "buzzer cues kept"),
    Figure(DAEMON, r"the table's notices / input trace \(`tablectl inputs`\) \| (\d+) / (\d+) \|",
           lambda: [table_notices(), *constants(TABLE, "TRACE_LEN")()], "table notices and input trace"),
    Figure(DAEMON, r"the referee's contests and notices \| (\d+) / (\d+) / (\d+), per match",
           referee_bounds, "arbiter and referee records"),
    Figure(DAEMON, r"the store's journal position per match \| the newest (\d+) matches",
           constants(STORE, "KEPT_COUNTS"), "journal positions kept"),
    Figure(DAEMON, r"SQLite's page cache \| (\d+) KiB",
           constants("firmware_host.service.database", "CACHE_KIB"), "SQLite page cache"),
    Figure(DAEMON, r"`views/font.py`\) \| (\d+) strings",
           constants("firmware_host.views.font", "TEXTS_KEPT"), "text masks kept"),
    Figure(DAEMON, r"the control socket's handler threads \| (\d+), all started with the daemon",
           constants(SERVER, "HANDLERS"), "handler threads"),
    # the soak
    Figure(DAEMON, r"`table-host bench soak \[--minutes N\] \[--warm-up M\] \[--json\]` \((\d+) minutes "
                   r"and a (\d+)-minute warm-up by default",
           lambda: [default_of("table-host", "bench", "minutes"),
                    default_of("table-host", "bench", "warm_up")], "soak minutes"),
    Figure(DAEMON, r"Every (\d+) s it reads the daemon's `/proc/PID/status`",
           constants(SOAK, "SAMPLE_S"), "soak sampling"),
    Figure(DAEMON, r"`RssShmem` each grow less than (\d+) MB an hour after the warm-up",
           constants(SOAK, "TARGET_MB_PER_HOUR"), "soak target"),
    # systemd
    Figure(DAEMON, r"`SCHED_FIFO` at priority (\d+), below",
           constants("firmware_host.system.realtime", "PRIORITY"), "real-time priority"),
    Figure(DAEMON, r"The unit grants it with `LimitRTPRIO=(\d+)`",
           lambda: [unit_setting("LimitRTPRIO")], "the unit's LimitRTPRIO"),
    Figure(DAEMON, r"Limits: `MemoryMax=(\d+)M` and `TasksMax=(\d+)`",
           lambda: [unit_setting("MemoryMax"), unit_setting("TasksMax")], "the unit's limits"),
    Figure(DAEMON, r"The sandbox: its exposure, as `systemd-analyze security` rates it, is \*\*([\d.]+)\*\*",
           lambda: [exposure()], "the unit's exposure (measured)"),
    Figure("docs/web.md", r"`systemd-analyze security --offline=true systemd/table-screen.service` gives the "
           r"kiosk \*\*([\d.]+)\*\*", lambda: [exposure(KIOSK)], "the kiosk's exposure (measured)"),
    # configuration
    Figure(DAEMON, r"a file over (\d+) MiB \(not read whole\)",
           constants("firmware_host.config.load", "MAX_CONFIG_BYTES", scale=1 << 20), "configuration size"),
    Figure(DAEMON, r"A file is read only once it has settled: left alone \(the same inode, size, "
           r"modification and change times\) for (\d+) ms before the read",
           constants("firmware_host.config.load", "SETTLE_S", scale=1e-3), "a read waits for a settled file"),
    Figure(DAEMON, r"One that keeps changing is refused after (\d+) s, naming it "
           r"\(`/etc/table-host/table.toml: still being written: it changed while it was read, again and "
           r"again for (\d+) s; it is read once left alone for (\d+) ms`\)",
           lambda: settle_figures(), "an unsettled file refused"),
    Figure(DAEMON, r"(\d+) SIGKILLs of a process writing the last good copy over and over; and an editor "
           r"saving `table.toml` in place .* a reload at a random moment of each of (\d+) saves",
           lambda: defaults_of("firmware_host.bench.config_faults", "config_faults", "kills",
                               "editor_reloads"),
           "bench faults: the configuration part's kills and reloads"),
    Figure(DAEMON, r"mutates the 4-seat wiring file (\d+) times \(`--configs N`",
           lambda: [default_of("table-host", "bench", "configs")], "bench faults configs"),
    Figure(DAEMON, r"A round's or match's result stays at least (\d+) s however hard anyone slaps",
           result_hold_s, "result hold"),
    Figure("docs/rules.md", r"A match's result \(its podium\) stays up (\d+) s, then the table goes to",
           lambda: [timing().match_result_ns / 1e9], "match result, then attract"),
    Figure("docs/rules.md", r"a slap after its first (\d+) s \(`Timing.podium_hold_ns`\)",
           lambda: [timing().podium_hold_ns / 1e9], "podium hold"),
    Figure("docs/web.md", r"and at least (\d+) s however hard anyone slaps \(`Timing.podium_hold_ns`\)",
           lambda: [timing().podium_hold_ns / 1e9], "podium hold on the TV"),
    Figure(DAEMON, r"each key is a tap of its own \((\d+) ms held",
           constants("firmware_host.devices.emulated.keyboard", "HOLD_NS", scale=1_000_000), "key hold"),
    Figure(DAEMON, r"its\s+buttons are held (\d+) ms",
           constants("firmware_host.service.bot_hands", "BOT_HOLD_NS", scale=1_000_000), "bot hold"),
    # tablectl and the socket
    Figure(DAEMON, r"what reached the engine: the last (\d+) clean input events",
           constants(TABLE, "TRACE_LEN"), "tablectl inputs"),
    Figure(DAEMON, r"`--timeout` (\d+) s a control by default, above 0 and at most (\d+)",
           lambda: [default_of("tablectl", "selftest", "timeout"),
                    *constants("firmware_host.control.protocol", "SELFTEST_MAX_TIMEOUT_S")()],
           "selftest timeout"),
    Figure(DAEMON, r"and (\d+) handler threads take complete requests to the table; the socket's backlog "
                   r"holds (\d+) connections",
           constants(SERVER, "HANDLERS", "BACKLOG"), "socket under load"),
    Figure(DAEMON, r"A request must arrive whole within (\d+) s of its first byte \(a byte now and then does "
                   r"not keep it open\); a connection that asks nothing for (\d+) s is closed",
           constants(SERVER, "REQUEST_S", "IDLE_S"), "socket deadlines"),
    Figure(DAEMON, r"the control socket's connections \| (\d+) at once, (\d+) of them per user that is "
                   r"not an admin; (\d+) requests \((\d+) KiB\) waiting on one connection",
           lambda: [*constants(SERVER, "MAX_CONNECTIONS", "PER_PEER", "PIPELINE")(),
                    *constants(SERVER, "MAX_LINE", scale=1024)()], "socket limits"),
    Figure(DAEMON, r"A user that is not an admin asks (\d+) requests at once, then (\d+) a second",
           constants(SERVER, "PACE_BURST", "PACE_PER_S"), "socket pace"),
    Figure("docs/web.md", r"as the (\d+)-seat build \(its wiring file as its table.toml\), and a hard bot at "
                          r"every seat plays whole Ligretto matches [^.]*?: [^.]*?, so (\d+) s, the default",
           lambda: [*constants("firmware_host.bench.attack", "SEATS")(),
                    *constants("firmware_host.bench.suite", "ATTACK_PLAY_S")()], "bench attack's table"),
    Figure(DAEMON, r"for up to (\d+) s before it says it cannot reach the daemon",
           constants("firmware_host.control.client", "CONNECT_WAIT_S"), "tablectl connect wait"),
    Figure(DAEMON, r"gets (\d+) garbage messages, each on a connection of its own: random bytes, "
                   r"JSON cut short, lines past the (\d+) KiB limit",
           lambda: [fault_default("garbage"), *constants(SERVER, "MAX_LINE", scale=1024)()],
           "garbage messages and the line limit"),
    Figure(DAEMON, r"Then (\d+) `tablectl status` \(the real client, (\d+) processes\) start at once",
           lambda: [fault_default("clients")] * 2, "concurrent tablectl status"),
    Figure(DAEMON, r"`tablectl` polls `status` (\w+) times a second",
           lambda: [1 / constants("firmware_host.cli.ctl", "POLL_S")()[0]], "selftest polling"),
    # other documents
    Figure("docs/led-protocol.md", r"counts the whole block, (\d+) to (\d+) bytes",
           lambda: [8, *constants("firmware_host.devices.displays.ledproto", "MAX_BLOCK")()],
           "LED block length"),
    Figure("docs/displays.md", r"retried after ([\d.]+) s, [\d.]+ s, … up to (\d+) s",
           constants("firmware_host.devices.displays.oled", "BACKOFF_FIRST_S", "BACKOFF_MAX_S"),
           "display retries"),
    Figure("docs/displays.md", r"Table 13-4: 10 MHz\), so (\d+) MHz; the SH1106's serial interface is "
                               r"slower, and (\d+) MHz is taken",
           lambda: [v / 1e6 for v in constants(OLED_REAL, "SPI_HZ")()[0].values()],
           "OLED SPI clocks"),
    Figure("docs/persistence.md", r"tries again after ([\d.]+) s, doubling the pause up to (\d+) s",
           lambda: list(constants(STORE, "RETRY_S")()[0]), "store retries"),
    Figure("docs/persistence.md", r"at most ([\d,]+) journal rows are held \(`HELD_ACTIONS_MAX`",
           constants(STORE, "HELD_ACTIONS_MAX"), "rows held on a full disk"),
    Figure("docs/persistence.md", r"A page is 1 to (\d+) matches \(`limit`, (\d+) by default\)",
           lambda: [*constants("firmware_host.control.protocol", "HISTORY_MAX")(),
                    default_of("tablectl", "history", "limit")], "history page bound"),
    Figure("docs/persistence.md", r"A `limit` outside 1 to (\d+) is refused",
           constants("firmware_host.control.protocol", "HISTORY_MAX"), "history page refusal"),
    Figure(DAEMON, r"past matches \(newest first, (\d+) by default; asked (\d+) at a time",
           lambda: [default_of("tablectl", "history", "limit"),
                    *constants("firmware_host.control.protocol", "HISTORY_MAX")()], "tablectl history pages"),
    Figure(DAEMON, r"a page of at most (\d+) matches \(`docs/persistence.md`",
           constants("firmware_host.control.protocol", "HISTORY_MAX"), "history beside the game"),
    Figure("docs/web.md", r"`\?limit=M` \(1 to (\d+), (\d+) by default\)",
           lambda: [*constants("firmware_host.control.protocol", "HISTORY_MAX")(),
                    *constants("firmware_host.web.replays", "MATCHES_MAX")()], "the web list's pages"),
    Figure("README.md", r"with (\d+) read-only users asking `tablectl history` without pause while an "
                        r"admin asks `status` \(target p99 ≤ (\d+) ms, every `status` within (\d+) s\); "
                        r"and the game thread's CPU for one `tablectl history --limit 100000` with "
                        r"([\d,]+) matches stored \(target ≤ (\d+) ms\)",
           constants(HISTORY, "READERS", "TARGET_P99_MS", "PROBE_LIMIT_S", "LARGE", "TARGET_GAME_CPU_MS"),
           "bench history in the README"),
    Figure(PERSISTENCE, r"against the real daemon with (\d+) matches stored and four hard bots playing: "
                        r"(\d+) read-only users \(a uid each\) asking `tablectl history` without pause "
                        r"while an admin asks `status` every ([\d.]+) s; then, with ([\d,]+) stored",
           constants(HISTORY, "MATCHES", "READERS", "PROBE_EVERY_S", "LARGE"), "bench history's loads"),
    Figure(PERSISTENCE, r"Targets: decisions late by at most (\d+) ms at p99, every `status` within "
                        r"(\d+) s, the game thread's CPU for the large history within (\d+) ms",
           constants(HISTORY, "TARGET_P99_MS", "PROBE_LIMIT_S", "TARGET_GAME_CPU_MS"),
           "bench history's targets"),
    Figure("docs/rules-engine.md", r"Ligretto ≥ ([\d,]+) rounds/s, and Domino within (\d+) times Ligretto's",
           constants("firmware_host.bench.engine", "ENGINE_TARGET_ROUNDS_PER_S", "DOMINO_TARGET_RATIO"),
           "engine targets"),
    Figure("docs/fairness.md", r"every change in the next (\d+) ms \(`inputs.debounce_ms`\)",
           config_defaults("inputs.debounce_ms"), "debounce"),
    Figure("docs/fairness.md", r"once the line has been down for (\d+) ms in all \(`inputs.min_press_us`, "
                               r"(\d+) by default\)",
           lambda: [(us := config_defaults("inputs.min_press_us")()[0]) / 1000, us],
           "minimum press"),
    Figure("docs/inputs.md", r"min_press_us = (\d+) ", config_defaults("inputs.min_press_us"),
           "minimum press in the example"),
    Figure("docs/inputs.md", r"\(`docs/fairness.md`\)\. (\d+) µs by default, (\d+) to ([\d,]+) µs",
           lambda: [*config_defaults("inputs.min_press_us")(), *config_bounds("inputs.min_press_us")],
           "minimum press range"),
    Figure("docs/rules.md", r"The referee waits (\d+) ms after a press \(`arbiter.window_ms`, (\d+)\)",
           config_defaults("arbiter.window_ms", "arbiter.window_ms"), "arbiter window"),
    Figure("README.md", r"of `tablectl --json status` against a running emulated daemon "
                        r"\(target ≤ (\d+) ms\), of `tablectl status`, its rich tables \(≤ (\d+) ms\), "
                        r"of `table-host --version` \(≤ (\d+) ms\), and of the daemon `run --ui none` until "
                        r"it says READY=1 on a notify socket the bench listens on \(≤ ([\d.]+) s\)",
           startup_targets, "startup targets"),
    Figure("README.md", r"for N minutes \((\d+) by default\): RssAnon, RssFile and RssShmem at the start, "
                        r"after an M-minute warm-up \((\d+) at most and by default\) and at the end, "
                        r"each one's growth after the warm-up in MB an hour "
                        r"\(target: RssAnon and RssShmem < (\d+)\)",
           lambda: [default_of("table-host", "bench", "minutes"),
                    default_of("table-host", "bench", "warm_up"), *constants(SOAK, "TARGET_MB_PER_HOUR")()],
           "soak in the README"),
    Figure("README.md", r"N two-seat matches each \((\d+) by default\)",
           lambda: [default_of("table-host", "bench", "matches")], "bench bots matches"),
    Figure("README.md", r"for N seeds \((\d+) by default",
           lambda: [default_of("table-host", "simulate", "seeds")], "sweep seeds"),
    Figure("README.md", r"the unit tier, in (\d+) processes \(TEST_WORKERS",
           lambda: [float(re.search(r'-n "\$\{TEST_WORKERS:-(\d+)\}"', (ROOT / "dev").read_text())[1])],
           "the unit tier's processes (dev)"),
    Figure("docs/virtual-pi.md", r"a VM whose console has said nothing after (\d+) s of QEMU's CPU time",
           constants("hil.systemd_vm", "SILENT_S"), "silent VM"),
    Figure("docs/virtual-pi.md", r"A VM is stopped after ([\d,]+) s of its CPU time or ([\d,]+) s of the "
                                 r"wall clock's \(`HIL_SYSTEMD_TIMEOUT`\), and (\d+) s of its CPU time after",
           constants("hil.systemd_vm", "CPU_LIMIT_S", "TIMEOUT_S", "AFTER_RESULT_S"), "VM limits"),
]


def number(text: str) -> float:
    return float(WORDS[text]) if text in WORDS else float(text.replace(",", ""))


def disagreements(text: str, figure: Figure) -> list[str]:
    """What is wrong with one figure in `text` (the document's words, whitespace run together)."""
    found = re.search(figure.phrase, re.sub(r"\s+", " ", text))
    if found is None:
        return [f"{figure.doc}: no longer says /{figure.phrase}/ ({figure.what}): "
                "reword the row with the document"]
    quoted = [number(group) for group in found.groups()]
    source = [float(v) for v in figure.source()]
    if quoted != source:
        return [f"{figure.doc}: {figure.what}: the document says {quoted}, the code has {source}"]
    return []


@pytest.mark.parametrize("figure", FIGURES, ids=lambda f: f"{f.doc}: {f.what}")
def test_the_figure_agrees_with_its_source(figure: Figure) -> None:
    assert disagreements((ROOT / figure.doc).read_text(encoding="utf-8"), figure) == []


def test_a_wrong_figure_is_caught() -> None:
    """The check can fail: a document that says 2000 where the code keeps 500, or whose phrase has gone."""
    figure = next(f for f in FIGURES if f.what == "tablectl inputs")
    text = (ROOT / figure.doc).read_text(encoding="utf-8")
    wrong = text.replace("the last 500 clean input events", "the last 2000 clean\n  input events")
    assert disagreements(wrong, figure) == [
        "docs/daemon.md: tablectl inputs: the document says [2000.0], the code has [500.0]"]
    assert "no longer says" in disagreements(text.replace("clean input events", "input events"), figure)[0]


def test_the_exposure_is_written_once_and_referred_to() -> None:
    """One figure in one place: the README and the other documents point at docs/daemon.md."""
    quoted = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))
        rated = r"(rates (it|the unit)|exposure[^.]{0,60}is) \**\d\.\d"
        quoted += [path.name for _ in re.finditer(rated, text)]
    assert quoted == ["daemon.md"]
    kiosk = [path.name for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
             for _ in re.finditer(r"gives the kiosk \**\d\.\d", re.sub(r"\s+", " ", path.read_text()))]
    assert kiosk == ["web.md"]  # the kiosk's own figure, in its own one place
    assert re.search(r"`systemd-analyze security` exposure, measured: `docs/daemon.md`",
                     re.sub(r"\s+", " ", (ROOT / "README.md").read_text()))
