"""The benches `table-host bench` runs, and their runner: each bench is one entry (how to run it
from the command line's options, how to print it, whether it met its targets).

Every bench imports its own module only when it runs, so `table-host --version`, which lists
the benches' names, loads none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Figures = dict[str, Any]


class Bench:
    """One bench: `run(options)` measures, `text(figures)` prints, `met(figures)` judges."""

    __slots__ = ("in_all", "met", "name", "run", "text")

    def __init__(self, name: str, run: Callable[[Any], Figures], text: Callable[[Figures], str],
                 met: Callable[[Figures], bool] = lambda f: bool(f["meets_target"]),
                 in_all: bool = True) -> None:
        self.name, self.run, self.text, self.met, self.in_all = name, run, text, met, in_all


def _engine(o: Any) -> Figures:
    from .engine import bench_engine

    return bench_engine(o.rounds)


def _engine_text(f: Figures) -> str:
    from .engine import engine_text

    return engine_text(f)


def _arbitration(o: Any) -> Figures:
    from .arbitration import bench_arbitration_latency, bench_arbitration_order

    order = bench_arbitration_order(o.pairs)
    return {"order": order, "latency": bench_arbitration_latency(o.seconds, load=o.load)}


def _arbitration_text(f: Figures) -> str:
    from .arbitration import arbitration_text

    return arbitration_text(f["order"], f["latency"])


def _display(o: Any) -> Figures:
    from .display import bench_display

    return bench_display(o.decisions)


def _display_text(f: Figures) -> str:
    from .display import display_text

    return display_text(f)


def _daemon(o: Any) -> Figures:
    from .daemon import bench_daemon

    return bench_daemon(o.idle, o.play)


def _daemon_text(f: Figures) -> str:
    from .daemon import daemon_text

    return daemon_text(f)


def _startup(o: Any) -> Figures:
    from .startup import bench_startup

    return bench_startup(o.runs)


def _startup_text(f: Figures) -> str:
    from .startup import startup_text

    return startup_text(f)


def _faults(o: Any) -> Figures:
    from .faults import bench_faults

    return bench_faults(o.kills, o.configs, soak_minutes=o.soak_minutes)


def _faults_text(f: Figures) -> str:
    from .faults import faults_text

    return faults_text(f)


def _soak(o: Any) -> Figures:
    from .soak import bench_soak

    return bench_soak(o.minutes)


def _soak_text(f: Figures) -> str:
    from .soak import soak_text

    return soak_text(f)


def _bots(o: Any) -> Figures:
    from .bots import bench_bots

    return bench_bots(o.matches)


def _bots_text(f: Figures) -> str:
    from .bots import bots_text

    return bots_text(f)


BENCHES = {b.name: b for b in (
    Bench("engine", _engine, _engine_text),
    Bench("arbitration", _arbitration, _arbitration_text,
          met=lambda f: bool(f["order"]["meets_target"] and f["latency"]["meets_target"])),
    Bench("display", _display, _display_text),
    Bench("daemon", _daemon, _daemon_text),
    Bench("startup", _startup, _startup_text),
    Bench("faults", _faults, _faults_text),
    Bench("soak", _soak, _soak_text),
    Bench("bots", _bots, _bots_text, met=lambda f: bool(f["pass"]), in_all=False),
)}
"""In the order `all` runs them."""


def run_benches(which: str, options: Any) -> tuple[Figures, str, bool]:
    """The figures (one bench's own, or each bench's under its name for `all`), the text, and
    whether every target was met."""
    if which != "all":
        bench = BENCHES[which]
        figures = bench.run(options)
        if bench.in_all:  # as `all` reports it: under its name
            return {which: figures}, bench.text(figures), bench.met(figures)
        return figures, bench.text(figures), bench.met(figures)
    out: Figures = {}
    text, met = [], []
    for bench in BENCHES.values():
        if bench.in_all:
            out[bench.name] = figures = bench.run(options)
            text.append(bench.text(figures))
            met.append(bench.met(figures))
    return out, "\n".join(text), all(met)
