"""The benches `table-host bench` runs, and their runner: each bench is one entry (how to run it
from the command line's options, how to print it, whether it met its targets).

Every bench imports its own module only when it runs, so `table-host --version`, which lists
the benches' names, loads none of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

Figures = dict[str, Any]


class Bench:
    """One bench: `run(options)` measures, `text(figures)` prints, `met(figures)` judges;
    `expected_s(options)`, where a bench runs for a time it is given, how long that is (the
    progress shown on a terminal counts towards it)."""

    __slots__ = ("expected_s", "in_all", "met", "name", "run", "text")

    def __init__(self, name: str, run: Callable[[Any], Figures], text: Callable[[Figures], str],
                 met: Callable[[Figures], bool] = lambda f: bool(f["meets_target"]),
                 in_all: bool = True, expected_s: Callable[[Any], float] | None = None) -> None:
        self.name, self.run, self.text, self.met, self.in_all = name, run, text, met, in_all
        self.expected_s = expected_s


def _call(module: str, name: str, *args: Any, **kwargs: Any) -> Any:
    """`name` of the bench module `module`, imported only now, called."""
    return getattr(importlib.import_module(f"{__package__}.{module}"), name)(*args, **kwargs)


def _later(module: str, name: str) -> Callable[[Figures], str]:
    return lambda figures: _call(module, name, figures)


def _arbitration(o: Any) -> Figures:
    order = _call("arbitration", "bench_arbitration_order", o.pairs)
    latency = _call("arbitration", "bench_arbitration_latency", o.seconds, load=o.load)
    return {"order": order, "latency": latency}


PLAY_S = 15.0  # --play's default: seconds of a bot match measured (daemon, web)
ATTACK_PLAY_S = 30.0  # bench attack's: some 500 decisions each way with 12 hard bots (docs/web.md)

BENCHES = {b.name: b for b in (
    Bench("engine", lambda o: _call("engine", "bench_engine", o.rounds), _later("engine", "engine_text")),
    Bench("arbitration", _arbitration,
          lambda f: _call("arbitration", "arbitration_text", f["order"], f["latency"]),
          met=lambda f: bool(f["order"]["meets_target"] and f["latency"]["meets_target"]),
          expected_s=lambda o: o.seconds),
    Bench("display", lambda o: _call("display", "bench_display", o.decisions),
          _later("display", "display_text")),
    Bench("daemon", lambda o: _call("daemon", "bench_daemon", o.idle, o.play or PLAY_S),
          _later("daemon", "daemon_text"), expected_s=lambda o: o.idle + (o.play or PLAY_S)),
    Bench("startup", lambda o: _call("startup", "bench_startup", o.runs),
          _later("startup", "startup_text")),
    Bench("faults", lambda o: _call("faults", "bench_faults", o.kills, o.configs,
                                    soak_minutes=o.soak_minutes),
          _later("faults", "faults_text")),
    Bench("soak", lambda o: _call("soak", "bench_soak", o.minutes, o.warm_up),
          _later("soak", "soak_text"), expected_s=lambda o: o.minutes * 60),
    Bench("web", lambda o: _call("web", "bench_web", o.play or PLAY_S, o.clients), _later("web", "web_text")),
    Bench("history", lambda o: _call("history", "bench_history", o.seconds),
          _later("history", "history_text")),
    Bench("attack", lambda o: _call("attack", "bench_attack", o.play or ATTACK_PLAY_S),
          _later("attack", "attack_text"), expected_s=lambda o: 2 * (o.play or ATTACK_PLAY_S) + 20),
    Bench("players", lambda o: _call("players", "bench_players", o.stored),
          _later("players", "players_text")),
    Bench("bots", lambda o: _call("bots", "bench_bots", o.matches), _later("bots", "bots_text"),
          met=lambda f: bool(f["pass"]), in_all=False),
)}
"""In the order `all` runs them."""

USES = {"rounds": ("engine",), "pairs": ("arbitration",), "seconds": ("arbitration", "history"),
        "load": ("arbitration",), "decisions": ("display",), "idle": ("daemon",),
        "play": ("daemon", "web", "attack"), "clients": ("web",), "kills": ("faults",),
        "configs": ("faults",), "soak_minutes": ("faults",), "minutes": ("soak",), "warm_up": ("soak",),
        "matches": ("bots",), "runs": ("startup",)}
"""Each of `table-host bench`'s options (its argparse dest) and the benches that read it: one given
to a bench that does not read it is refused, naming the benches that would."""


def unused(which: str, given: list[str]) -> str | None:
    """Why options `given` (dests) do nothing for `which` ("all": for none of the benches it runs),
    or None when each is read."""
    runs = [which] if which != "all" else [b.name for b in BENCHES.values() if b.in_all]
    for dest in given:
        users = USES[dest]
        if not set(users) & set(runs):
            flag = "--" + dest.replace("_", "-")
            return (f"{flag} is not read by bench {which}: it is for bench "
                    f"{' and '.join(users)}")
    return None


def missed(figures: Figures, text: str) -> list[str]:
    """What benches that did not meet their targets missed, each by name: a failure the figures
    list, a target (`met`), a figure not judged; else the text's lines that say MISSES, FAIL or
    NOT JUDGED; else that the bench missed. Never empty: a failure names itself."""
    found = _missed(figures)
    if all(line.endswith(" missed a target") for line in found):
        said = [line.strip() for line in text.splitlines()
                if any(word in line for word in ("MISSES", "FAIL", "NOT JUDGED"))]
        found = said or found
    return found or ["a target was missed"]


def _missed(figures: Figures, where: str = "") -> list[str]:
    found: list[str] = []
    at = f"{where}: " if where else ""
    for key, value in figures.items():
        if key == "failures" and isinstance(value, list):
            found += [at + (v if isinstance(v, str) else
                            f"{v.get('case', '')}: {v.get('error', '')}" if isinstance(v, dict) else str(v))
                      for v in value]
        elif key == "met" and isinstance(value, dict):
            found += [f"{at}{name} missed its target" for name, ok in value.items() if ok is False]
        elif key == "judged" and value is False:
            found.append(f"{at}not judged: the run was too short to judge (see the text)")
        elif isinstance(value, dict):
            found += _missed(value, f"{where}.{key}" if where else key)
    if not found and (figures.get("meets_target") is False or figures.get("pass") is False):
        found.append(f"{where or 'the bench'} missed a target")
    return found


class Shown:
    """While a bench runs on a terminal: its name, the time it has taken and, for one that runs
    for a time it is given, how much of it has passed. On stderr, so that the figures on stdout
    can go to a file or a pipe; drawn only when stderr is a terminal."""

    def __init__(self, count: int, enabled: bool = True) -> None:
        import sys

        self.bar: Any = None
        if not enabled or not sys.stderr.isatty():
            return
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                            TimeElapsedColumn(), TextColumn("{task.fields[goal]}"),
                            console=Console(stderr=True), transient=True)
        self.count, self.done = count, 0

    def __enter__(self) -> Shown:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def running(self, bench: Bench, options: Any) -> Callable[[], None]:
        """Show `bench` running; the returned call marks it done."""
        if self.bar is None:
            return lambda: None
        import threading

        self.done += 1
        expected = bench.expected_s(options) if bench.expected_s is not None else None
        what = f"bench {bench.name}" + (f" ({self.done} of {self.count})" if self.count > 1 else "")
        task = self.bar.add_task(what, total=expected, goal=f"of about {expected:.0f} s" if expected else "")
        stop = threading.Event()

        def tick() -> None:  # a bench given a time: the bar follows the clock
            while not stop.wait(0.5):
                self.bar.update(task, completed=min(self.bar.tasks[task].elapsed or 0, expected))

        if expected:
            threading.Thread(target=tick, name="bench-progress", daemon=True).start()

        def finished() -> None:
            stop.set()
            self.bar.remove_task(task)

        return finished


def _measured(bench: Bench, options: Any, shown: Shown) -> Figures:
    finished = shown.running(bench, options)
    try:
        return bench.run(options)
    finally:
        finished()


def run_benches(which: str, options: Any, progress: bool = False) -> tuple[Figures, str, bool]:
    """The figures (one bench's own, or each bench's under its name for `all`), the text, and
    whether every target was met. `progress`: show each bench running on a terminal (stderr)."""
    from .. import games  # noqa: F401  (the benches' composition root: registers the built-in games)

    chosen = [BENCHES[which]] if which != "all" else [b for b in BENCHES.values() if b.in_all]
    with Shown(len(chosen), enabled=progress) as shown:
        if which != "all":
            bench = chosen[0]
            figures = _measured(bench, options, shown)
            if bench.in_all:  # as `all` reports it: under its name
                return {which: figures}, bench.text(figures), bench.met(figures)
            return figures, bench.text(figures), bench.met(figures)
        out: Figures = {}
        text, met = [], []
        for bench in chosen:
            out[bench.name] = figures = _measured(bench, options, shown)
            text.append(bench.text(figures))
            met.append(bench.met(figures))
    return out, "\n".join(text), all(met)
