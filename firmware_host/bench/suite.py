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
    """One bench: `run(options)` measures, `text(figures)` prints, `met(figures)` judges."""

    __slots__ = ("in_all", "met", "name", "run", "text")

    def __init__(self, name: str, run: Callable[[Any], Figures], text: Callable[[Figures], str],
                 met: Callable[[Figures], bool] = lambda f: bool(f["meets_target"]),
                 in_all: bool = True) -> None:
        self.name, self.run, self.text, self.met, self.in_all = name, run, text, met, in_all


def _call(module: str, name: str, *args: Any, **kwargs: Any) -> Any:
    """`name` of the bench module `module`, imported only now, called."""
    return getattr(importlib.import_module(f"{__package__}.{module}"), name)(*args, **kwargs)


def _later(module: str, name: str) -> Callable[[Figures], str]:
    return lambda figures: _call(module, name, figures)


def _arbitration(o: Any) -> Figures:
    order = _call("arbitration", "bench_arbitration_order", o.pairs)
    latency = _call("arbitration", "bench_arbitration_latency", o.seconds, load=o.load)
    return {"order": order, "latency": latency}


BENCHES = {b.name: b for b in (
    Bench("engine", lambda o: _call("engine", "bench_engine", o.rounds), _later("engine", "engine_text")),
    Bench("arbitration", _arbitration,
          lambda f: _call("arbitration", "arbitration_text", f["order"], f["latency"]),
          met=lambda f: bool(f["order"]["meets_target"] and f["latency"]["meets_target"])),
    Bench("display", lambda o: _call("display", "bench_display", o.decisions),
          _later("display", "display_text")),
    Bench("daemon", lambda o: _call("daemon", "bench_daemon", o.idle, o.play),
          _later("daemon", "daemon_text")),
    Bench("startup", lambda o: _call("startup", "bench_startup", o.runs),
          _later("startup", "startup_text")),
    Bench("faults", lambda o: _call("faults", "bench_faults", o.kills, o.configs,
                                    soak_minutes=o.soak_minutes),
          _later("faults", "faults_text")),
    Bench("soak", lambda o: _call("soak", "bench_soak", o.minutes, o.warm_up),
          _later("soak", "soak_text")),
    Bench("web", lambda o: _call("web", "bench_web", o.play, o.clients), _later("web", "web_text")),
    Bench("history", lambda o: _call("history", "bench_history", o.seconds),
          _later("history", "history_text")),
    Bench("bots", lambda o: _call("bots", "bench_bots", o.matches), _later("bots", "bots_text"),
          met=lambda f: bool(f["pass"]), in_all=False),
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
