"""`table-host`: run the table, simulate matches, run scenarios, benchmark.

Bad input (an unknown game or option, a player count out of range, a broken
scenario file) ends with one line naming the problem and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .common import WORDS, add_version, one_line_errors, quiet_broken_pipe, refuse, version_text, with_games
from .completion import describe_subcommands

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise SystemExit(refuse(self.prog, message))


def _fail(message: str) -> NoReturn:
    """Bad input: one line naming it, exit 2 (with --json, `{"ok": false, "error": ...}` too)."""
    raise SystemExit(refuse("table-host", message))


def _emit(data: dict[str, Any], as_json: bool, human: str, ok: bool = True) -> int:
    """The report, and the status that goes with it: `ok` false is exit 1, as in the JSON."""
    print(json.dumps({"ok": ok, **data}, sort_keys=False) if as_json else human)
    return 0 if ok else 1


def build_parser() -> argparse.ArgumentParser:
    from ..bench.suite import BENCHES
    from ..control.protocol import BOT_LEVELS
    from ..engine.options import GAMES

    with_games()
    p = _Parser(prog="table-host", description="The Ligretto table: referee, simulator, tools.")
    add_version(p, "table-host")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout (commands with a report)")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    run = sub.add_parser("run", help="run the table (the default; emulated without Pi hardware)")
    run.add_argument("--emulate", action="store_true", help="emulated GPIO and displays even on a Pi")
    run.add_argument("--ui", choices=("textual", "plain", "none"),
                     help="terminal UI: textual (the default on a terminal), plain, or none (headless)")
    run.add_argument("--config", help="configuration file (default: ~/.config/table-host/table.toml, else "
                     "/etc/table-host/table.toml; the service: its ConfigurationDirectory)")
    run.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info",
                     help="the least a log line must weigh to be written (default info: game events)")
    run.add_argument("--debug", dest="log_level", action="store_const", const="debug",
                     help="--log-level debug: also each control connection and the arbiter's draws")

    power = sub.add_parser("power", help="the power budget of a build and the 5 V supply it calls for")
    power.add_argument("--config", help="configuration file (default: the 4-seat build, hardware/wiring/)")
    power.add_argument("--seats", type=int, default=4, help="without --config: the build for this many seats")
    power.add_argument("--pi", choices=("pi4", "pi5"), default="pi4",
                       help="the Pi it runs on (default pi4)")
    _json_too(power)

    bus = sub.add_parser("i2c", help="bus 1's load, pull-ups and rise time against the I2C specification")
    bus.add_argument("--config", help="configuration file (default: the 4-seat build, hardware/wiring/)")
    bus.add_argument("--seats", type=int, default=4, help="without --config: the build for this many seats")
    bus.add_argument("--cable-m", type=float, help="every seat cable this long (default: the build's)")
    bus.add_argument("--speed-hz", type=int, choices=(100_000, 400_000),
                     help="the bus clock (default: what boot-config writes into config.txt)")
    bus.add_argument("--seat-pullup-ohm", type=float,
                     help="each seat channel's fitted SDA/SCL pull-up (default 4700; 0: none)")
    bus.add_argument("--oled-pullup-ohm", type=float,
                     help="the pull-ups on each OLED module itself (default 4700, the strongest sold; "
                          "0: none or removed)")
    bus.add_argument("--mux-pullup-ohm", type=float,
                     help="the pull-ups on each TCA9548A board's upstream side (default 10000, Adafruit's; "
                          "0: none or cut)")
    bus.add_argument("--mux-idle", choices=("as-is", "disconnect"),
                     help="every multiplexer's idle state (default: as boot-config's overlay lines leave "
                          "each; as-is: an OS without disconnect_on_idle)")
    _json_too(bus)

    boot = sub.add_parser("boot-config", help="the config.txt lines a configuration needs (install.sh)")
    boot.add_argument("--config", help="configuration file (default: the 4-seat build, hardware/wiring/)")
    boot.add_argument("--modules", action="store_true",
                      help="the kernel modules to load at boot instead (/etc/modules-load.d)")
    _json_too(boot)

    watch = sub.add_parser("watch", help="watch bots play a match, round by round")
    watch.add_argument("--game", choices=GAMES, default=GAMES[0], help=f"the game (default {GAMES[0]})")
    watch.add_argument("--players", type=int, default=4, help="how many bots play (default 4)")
    watch.add_argument("--seed", default="0", help="the deal: the same seed plays the same match")
    watch.add_argument("--bots", default="medium", choices=BOT_LEVELS,
                       help="easy, medium (the default) or hard; instant bots play without a clock, "
                            "so there is nothing to watch: simulate plays them")
    watch.add_argument("--speed", type=float, default=1.0, help="faster than the table by this factor")
    watch.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                       help="the match's outcome as one JSON object (the play on stderr)")

    sim = sub.add_parser("simulate", help="bot against bot, headless")
    sim.add_argument("--game", help=f"one of {', '.join(GAMES)} (with --sweep: all unless given)")
    sim.add_argument("--players", type=int, help="required unless --sweep")
    sim.add_argument("--rounds", type=int, help="rounds to play (default: the game's match length)")
    sim.add_argument("--seed", default="0", help="the deal: the same seed plays the same match")
    sim.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                     help="one of the game's options (docs/rules.md), as often as needed, e.g. rounds=3")
    sim.add_argument("--bots", help="instant (the default), easy, medium or hard; --sweep: all unless given")
    _json_too(sim)
    sim.add_argument("--sweep", action="store_true",
                     help="one round of every game, player count, option set and bot level, per seed")
    sim.add_argument("--seeds", type=int, default=200, help="with --sweep: seeds per case")
    sim.add_argument("--matches", type=int, default=20,
                     help="with --sweep: whole matches (seeds 0 to N-1) per game, player count and "
                          "timed bot level; 0: none")

    sc = sub.add_parser("scenario", help="run a scenario file through the real engine")
    sc.add_argument("file", help="the scenario, a TOML file (docs/scenarios.md; examples in scenarios/)")
    _json_too(sc)

    bench = sub.add_parser("bench", help="print performance figures (exit 1 when a target is missed)")
    bench.add_argument("which", choices=(*BENCHES, "all"),
                       help=f"one of {', '.join(BENCHES)}, or all of them but bots (bots: medium and "
                            "hard bots against a one-button masher)")
    _json_too(bench)
    bench.add_argument("--rounds", type=_number(int, 1), default=1000, help="engine: rounds to time")
    bench.add_argument("--pairs", type=_number(int, 1), default=1_000_000,
                       help="arbitration: contested pairs")
    bench.add_argument("--seconds", type=_number(float, 0.1), default=10.0,
                       help="arbitration: seconds of the real-time latency run; history: of each phase")
    bench.add_argument("--load", type=_number(int, 0, 64), default=0,
                       help="arbitration: busy processes running beside the real-time run")
    bench.add_argument("--decisions", type=_number(int, 1), default=1500, help="display: decisions per game")
    bench.add_argument("--idle", type=_number(float, 0.1), default=10.0, help="daemon: seconds measured idle")
    bench.add_argument("--play", type=_number(float, 0.1), default=None,
                       help="daemon, web, attack: seconds of a bot match measured (web: each way, "
                            "default 15; attack: without the attack, then under it, default 30: "
                            "some 500 decisions each); daemon: default 15")
    bench.add_argument("--clients", type=_number(int, 1, 500), default=20,
                       help="web: browsers connected (WebSocket clients)")
    bench.add_argument("--kills", type=_number(int, 1), default=120,
                       help="faults: SIGKILLs at random moments")
    bench.add_argument("--configs", type=_number(int, 1), default=400,
                       help="faults: broken configurations tried")
    bench.add_argument("--soak-minutes", type=_number(float, 0.0), default=1.0,
                       help="faults: minutes of the daemon's memory soak (0: none)")
    bench.add_argument("--minutes", type=_number(float, 0.05), default=45.0,
                       help="soak: minutes of bot matches through the real daemon")
    bench.add_argument("--warm-up", type=_number(float, 0.0, 15.0), default=15.0,
                       help="soak: minutes of play before growth is measured (15 at most)")
    bench.add_argument("--matches", type=_number(int, 1), default=50,
                       help="bots: matches per game, button and level")
    bench.add_argument("--stored", type=_number(int, 1), default=10_000,
                       help="players: matches in the journal a player's page is read from")
    bench.add_argument("--runs", type=_number(int, 1), default=5,
                       help="startup: runs of each command (the median is reported)")
    return describe_subcommands(p)


def _json_too(parser: argparse.ArgumentParser) -> None:
    """`--json` after the subcommand too; given neither place, the main option's False stands."""
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="one JSON object on stdout")


def _number(kind: type[int] | type[float], lo: float, hi: float | None = None) -> Any:
    """An argparse type: a whole number or a number in lo..hi, else one line naming the range."""
    allowed = f"{lo:g} to {hi:g}" if hi is not None else f"at least {lo:g}"

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{'a whole number' if kind is int else 'a number'} {allowed}, not {text!r}") from None
        if not lo <= value <= (hi if hi is not None else float("inf")) or value != value:
            raise argparse.ArgumentTypeError(f"must be {allowed}, not {text}")
        return value

    return parse


SUBCOMMANDS = ("run", "power", "i2c", "boot-config", "watch", "simulate", "scenario", "bench")


def _command_in(args: Sequence[str]) -> str:
    """The subcommand, read before the parser exists: the first word, if it names one; else run."""
    word = next((a for a in args if not a.startswith("-")), None)
    return word if word in SUBCOMMANDS else "run"


def as_typed(parser: argparse.ArgumentParser, args: list[str]) -> list[str]:
    """`table-host` alone runs the table, so `table-host --debug` is `table-host run --debug`: with
    no subcommand named, the options are run's. A word that is no option's value is left for the
    parser to refuse as a subcommand it does not know; `--help` and `--version` stay the program's."""
    from .completion import subcommands

    if {"-h", "--help", "--version"} & set(args) or any(a in SUBCOMMANDS for a in args):
        return args
    valued = {flag for action in subcommands(parser)["run"]._actions if action.nargs != 0
              for flag in action.option_strings}
    words = iter(args)
    for word in words:
        if word in valued:
            next(words, None)
        elif not word.startswith("-"):
            return args
    return ["run", *args]


@quiet_broken_pipe
@one_line_errors("table-host")
def main(argv: Sequence[str] | None = None) -> int:
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:  # before the parser: building it
        print(version_text("table-host"))                               # loads every game's options
        return 0
    if argv is None and _command_in(sys.argv[1:]) == "run":
        from ..system.signals import hold

        hold()  # the first thing: a stop or a reload asked during start-up waits, and is honoured
    if argv is None and _command_in(sys.argv[1:]) in ("run", "bench"):  # a process of its own, not a test
        from ..system.memory import restart_with_allocator

        # The table's allocator (memory.py); the benches time the table's code on it too. Before
        # the parser is built: what is done before the restart is done twice.
        restart_with_allocator()  # returns when it is chosen
    WORDS[:] = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    args = parser.parse_args(as_typed(parser, list(WORDS)))
    command = args.command
    try:
        if command == "simulate":
            return _simulate(args)
        if command == "scenario":
            return _scenario(args)
        if command == "bench":
            return _bench(args)
        if command == "power":
            return _power(args)
        if command == "i2c":
            return _i2c(args)
        if command == "boot-config":
            return _boot_config(args)
        if command == "watch":
            return _watch(args)
        return _run(args)
    except KeyboardInterrupt:
        return 130


def _simulate(args: argparse.Namespace) -> int:
    from ..engine.options import GAMES, check_game, parse_assignments
    from ..play.simulate import simulate
    from ..table.bot_players import Level

    if args.sweep:
        return _sweep(args)
    if args.game is None or args.players is None:
        _fail("simulate needs --game and --players (or --sweep)")
    if args.game not in GAMES:
        _fail(f"unknown game {args.game!r} (choose {', '.join(GAMES)})")
    check_game(args.game, args.players)
    if args.rounds is not None and args.rounds < 1:
        _fail("--rounds must be at least 1")
    try:
        level = Level(args.bots or "instant")
    except ValueError:
        _fail(f"unknown bot level {args.bots!r} (choose {', '.join(lv.value for lv in Level)})")
    options = parse_assignments(args.option)
    progress = None
    bar = None
    if sys.stderr.isatty() and not args.json:
        from rich.console import Console
        from rich.progress import Progress

        # On stderr, so that the report on stdout can go to a file or a pipe.
        bar = Progress(console=Console(stderr=True), transient=True)
        bar.start()
        task = bar.add_task("playing", total=args.rounds)

        def progress(done: int) -> None:
            bar.update(task, completed=done)

    try:
        report = simulate(args.game, args.players, args.rounds, args.seed, options, level, progress)
    finally:
        if bar is not None:
            bar.stop()
    # Seats are numbered from 1 outside the engine, as on the table.
    for r in report["rounds"]:
        r["finishers"] = [s + 1 for s in r["finishers"]]
    report["winners"] = [s + 1 for s in report["winners"]]
    if args.json:
        print(json.dumps({"ok": True, **report}))
    else:
        from .show import print_all, simulate_shown

        print_all(*simulate_shown(report))
    return 0


def _sweep(args: argparse.Namespace) -> int:
    """Every round must end: exit 1 naming each case that stalled or raised."""
    from ..engine.options import GAMES
    from ..play.simulate import RUNAWAY, match_cases, match_sweep, sweep, sweep_cases
    from ..table.bot_players import Level

    if args.game is not None and args.game not in GAMES:
        _fail(f"unknown game {args.game!r} (choose {', '.join(GAMES)})")
    if args.seeds < 1:
        _fail("--seeds must be at least 1")
    if args.matches < 0:
        _fail("--matches must be 0 or more")
    try:
        levels = None if args.bots is None else [Level(args.bots)]
    except ValueError:
        _fail(f"unknown bot level {args.bots!r} (choose {', '.join(lv.value for lv in Level)})")
    games = [args.game] if args.game else list(GAMES)
    cases = sweep_cases(games, args.seeds, levels)
    whole = match_cases(games, args.matches, levels, args.players) if args.matches else []
    bar = None
    progress = None
    if sys.stderr.isatty() and not args.json:
        from rich.console import Console
        from rich.progress import Progress

        bar = Progress(console=Console(stderr=True), transient=True)
        bar.start()
        task = bar.add_task("sweeping", total=len(cases) + len(whole))

        def progress(done: int) -> None:
            bar.update(task, completed=done)

    try:
        report = sweep(cases, progress)
        matches = match_sweep(whole, progress=None if progress is None else
                              (lambda done: progress(len(cases) + done)))
    finally:
        if bar is not None:
            bar.stop()
    report["whole_matches"] = matches
    failures = report["failures"] + matches["failures"]
    text = [f"{report['rounds']} rounds in {report['elapsed_s']} s, at most {report['most_actions']} "
            f"actions and {report['most_game_seconds']} s of play in a round; "
            f"{len(report['failures'])} failed"]
    text += [f"  {f['case']}: {f['error']}" for f in report["failures"]]
    if whole:
        text.append(f"{matches['matches']} whole matches in {matches['elapsed_s']} s (default options), "
                    f"rounds a match took:")
        for r in matches["rows"]:
            text.append(f"  {r['game']:<8} {r['players']:>2} players {r['bots']:<6} median {r['median']:g}, "
                        f"90th percentile {r['p90']}, {r['shortest']} to {r['longest']}")
        text.append(f"{len(matches['failures'])} past {RUNAWAY} times their median (or no end)")
        text += [f"  {f['case']}: {f['error']}" for f in matches["failures"]]
    return _emit(report, args.json, "\n".join(text), ok=not failures)


def _scenario(args: argparse.Namespace) -> int:
    from ..play.scenario import ScenarioError, render, run_file

    try:
        result = run_file(args.file)
    except ScenarioError as exc:  # with --json, the place and line beside the error, for scripts
        raise SystemExit(refuse("table-host", str(exc), **_scenario_place(str(exc), args.file))) from None
    report = result.to_dict()
    if result.failures:
        report["error"] = f"{len(result.failures)} expectation(s) failed: {'; '.join(result.failures)}"
    return _emit(report, args.json, render(result), ok=not result.failures)


def _scenario_place(message: str, file: str) -> dict[str, Any]:
    """Where a refused scenario file is wrong, from its message: the file, the place and line."""
    import re
    from pathlib import Path

    name = Path(file).name
    place = None
    if message.startswith(name + "."):
        place = message[len(name) + 1:].split(": ", 1)[0]
    line = re.search(r"\(line (\d+)(?:, column \d+)?\)$|at line (\d+)", message)
    return {"file": file, "place": place, "line": int(line[1] or line[2]) if line else None}


def _bench(args: argparse.Namespace) -> int:
    """Figures on stdout; exit 0 when every target the benchmarks have was met, 1 when one was missed."""
    import signal

    from ..bench.suite import USES, missed, run_benches, unused
    from ..system.children import Stopped, stopped_by

    given = [dest for dest in USES if any(word == flag or word.startswith(flag + "=")
                                          for flag in ("--" + dest.replace("_", "-"),) for word in WORDS)]
    refused = unused(args.which, given)
    if refused:
        _fail(refused)
    try:  # `timeout`, `kill`, a closed terminal: the daemons it started are stopped on the way out
        with stopped_by(signal.SIGTERM, signal.SIGHUP):
            figures, text, met = run_benches(args.which, args, progress=not args.json)
    except Stopped as stopped:
        print(f"table-host bench: stopped by {stopped}", file=sys.stderr)
        return 128 + stopped.signum
    failed = [] if met else missed(figures, text)
    if failed and not args.json:
        print("table-host bench: missed: " + "; ".join(failed), file=sys.stderr)
    return _emit({**figures, **({"missed": failed} if failed else {})}, args.json, text, ok=met)


def _run(args: argparse.Namespace) -> int:
    from ..system.logs import configure, route_uncaught
    from .run import run

    ui = args.ui or ("textual" if sys.stdin.isatty() and sys.stdout.isatty() else "none")
    configure(args.log_level)  # the journal's priorities when stderr is the journal, else readable lines
    route_uncaught()
    return run(args.config, args.emulate, ui=ui)


def _power(args: argparse.Namespace) -> int:
    from ..config import ConfigError, default_config, load_config
    from ..devices.power import as_dict, power_budget

    try:
        config = load_config(args.config) if args.config else default_config(args.seats)
    except ConfigError as exc:
        _fail(str(exc))
    budget = power_budget(config, args.pi)
    return _emit(as_dict(budget), args.json, budget.text())


def _i2c(args: argparse.Namespace) -> int:
    """Exit 1 when the build, its modules' own pull-ups included, is outside UM10204; the report then
    names the pull-ups to remove (hardware/README.md, "Seat cables and the I2C bus")."""
    from ..config import ConfigError, default_config, load_config
    from ..devices.i2cload import i2c_load

    try:
        config = load_config(args.config) if args.config else default_config(args.seats)
        options = (("seat_pullup_ohm", args.seat_pullup_ohm), ("oled_pullup_ohm", args.oled_pullup_ohm),
                   ("mux_pullup_ohm", args.mux_pullup_ohm))
        given = {name: value for name, value in options if value is not None}
        load = i2c_load(config, args.cable_m, args.speed_hz, idle=args.mux_idle, **given)
    except (ConfigError, ValueError) as exc:
        _fail(str(exc))
    return _emit(load.as_dict(), args.json, load.text(), ok=load.ok)


def _boot_config(args: argparse.Namespace) -> int:
    """Only the buses the configuration uses: an enabled bus owns its GPIOs."""
    from ..config import ConfigError, boot_config, boot_modules, default_config, load_config

    try:
        config = load_config(args.config) if args.config else default_config(4)
    except ConfigError as exc:
        _fail(str(exc))
    lines, modules = boot_config(config), boot_modules(config)
    return _emit({"config_txt": lines, "modules": modules}, args.json,
                 "\n".join(modules if args.modules else lines))


def _watch(args: argparse.Namespace) -> int:
    """Watch bots play a match at the table's pace (`--speed` faster), round by round."""
    from ..engine.options import check_game
    from ..play.watch import watch
    from ..table.bot_players import Level
    from ..table.words import game_name

    check_game(args.game, args.players)
    level = args.bots  # argparse allows only the levels that play on a clock (BOT_LEVELS)
    if not args.speed > 0 or args.speed == float("inf"):
        _fail(f"--speed must be a number above 0, not {args.speed}")
    game = args.game
    print(f"table-host: watching {args.players} {level} bots play {game_name(game)} (seed {args.seed}) at "
          f"{args.speed:g}x the table's pace", file=sys.stderr)
    play = sys.stderr if args.json else sys.stdout  # with --json, stdout holds the one object
    outcome = watch(game, args.players, args.seed, Level(level), args.speed,
                    out=lambda line: print(line, file=play, flush=True))
    if args.json:
        print(json.dumps({"ok": True, "game": game, "players": args.players, "seed": args.seed, "bots": level,
                          "speed": args.speed, **outcome}))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
