"""Inside the VM: the table on a real kernel's GPIO chip (gpio-sim), pressed through sysfs.

Run by `python -m hil` as the VM's one command (`python -m hil.gpio --out DIR`); DIR is shared
with the host (virtme-ng `--rwdir`) and gets `gpio.json` (the checks and figures) and the
daemon's log. What is real here: the kernel (its GPIO character device, edge interrupts and
CLOCK_MONOTONIC stamps from gpio-sim's irq), lgpio, gpiozero's LGPIOFactory, the daemon as
`table-host run` starts it, the control socket. What is simulated: the buttons (a line's pull
written through sysfs, docs/virtual-pi.md).

Each press the bench makes is a sysfs write, timed just before and just after. The kernel stamps
the edge inside that write (the pull is applied and the irq handled synchronously), so an event
the engine got is matched to its press by seat and by its stamp lying inside that write's window:
that proves the time the table used is the kernel's edge time on the guest's CLOCK_MONOTONIC,
not the moment our code ran.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .simchip import SimChip

MS = 1_000_000
S = 1_000_000_000
SLAPS = (5, 6, 13, 19)  # the 4-seat build's slap buttons (hardware/wiring/4-seat.toml), BCM numbers
REVISION = "c03111"  # a Pi 4 B 4 GB: gpiozero's BCM numbering for the line offsets
TAP_HOLD = 0.08
TAP_GAP = 0.15


def hil_config(chip_label: str, seats: tuple[int, ...] = SLAPS) -> str:
    """The table's configuration for the VM: the 4-seat build's slaps on the simulated chip.

    Navigation stays off: it sits on MCP23017 expanders over I2C, which this VM does not have.
    """
    lines = ["[hardware]", 'backend = "gpiochip"', f'chip = "{chip_label}"', f'board_revision = "{REVISION}"',
             "", "[inputs]", "debounce_ms = 30", "stuck_s = 2.0", "false_start_lockout_ms = 0", ""]
    for n, gpio in enumerate(seats, 1):
        lines += [f"[[inputs.seats]]  # seat {n}", f"slap = {gpio}", ""]
    lines += ["[arbiter]", "window_ms = 5.0", "epsilon_ms = 0.2", ""]
    return "\n".join(lines)


@dataclass
class Sent:
    """One press the bench made: which seat, the write's window, what should come of it."""

    scenario: str
    seat: int  # from 1
    before_ns: int
    after_ns: int
    expect: str  # "decided", "false_start", "join", "bounce", "stuck"
    group: int = -1  # presses of one race or one bounce burst share a group


@dataclass
class Bench:
    chip: SimChip
    seats: tuple[int, ...] = SLAPS
    sent: list[Sent] = field(default_factory=list)
    releases: list[tuple[int, int, int]] = field(default_factory=list)  # seat, before, after
    _group: int = 0

    def press(self, seat: int, scenario: str, expect: str, group: int = -1) -> Sent:
        before, after = self.chip.press(self.seats[seat - 1])
        s = Sent(scenario, seat, before, after, expect, group)
        self.sent.append(s)
        return s

    def release(self, seat: int) -> None:
        before, after = self.chip.release(self.seats[seat - 1])
        self.releases.append((seat, before, after))

    def tap(self, seat: int, scenario: str, expect: str = "decided", hold: float = TAP_HOLD) -> Sent:
        s = self.press(seat, scenario, expect)
        time.sleep(hold)
        self.release(seat)
        time.sleep(TAP_GAP)
        return s

    def group(self) -> int:
        self._group += 1
        return self._group


def ask(body: dict[str, Any], sock: Path) -> dict[str, Any]:
    from firmware_host.ctl import ask as ctl_ask

    answer = ctl_ask(body, sock, timeout=30.0)
    if not answer.get("ok"):
        raise RuntimeError(f"tablectl {body['cmd']}: {answer.get('error')}")
    return answer


def wait_for(what: str, check: Any, timeout: float) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with contextlib.suppress(Exception):
            value = check()
            if value:
                return value
        time.sleep(0.1)
    raise TimeoutError(f"waited {timeout:.0f} s for {what}")


# ------------------------------------------------------------------ scenarios


def scenarios(bench: Bench, sock: Path) -> None:
    """The presses, in one match: join, a false start, singles, races, bounces, a stuck button."""
    for seat in (1, 2, 3, 4):  # the first slap wakes the table, each seat's slap joins it
        bench.tap(seat, "join", "join")
    wait_for("four seats joined", lambda: ask({"cmd": "status"}, sock)["seats_joined"] == [1, 2, 3, 4], 10)
    ask({"cmd": "start"}, sock)  # 3 s countdown
    time.sleep(1.0)
    bench.tap(2, "false start", "false_start")
    wait_for("play", lambda: ask({"cmd": "status"}, sock)["phase"] == "playing", 10)
    time.sleep(0.2)

    for i in range(16):  # single presses, every seat in turn
        bench.tap(i % 4 + 1, "single")

    for i, gap in enumerate((0.0, 0.0, 0.001, 0.001, 0.003, 0.003, 0.010, 0.010)):  # one after the other
        g = bench.group()
        a, b = (1, 3) if i % 2 else (4, 2)
        bench.press(a, "race in turn", "decided", g)
        if gap:
            time.sleep(gap)
        bench.press(b, "race in turn", "decided", g)
        time.sleep(TAP_HOLD)
        bench.release(a)
        bench.release(b)
        time.sleep(TAP_GAP)

    for _ in range(10):  # two seats at once: two threads released together, one per vCPU
        g = bench.group()
        barrier = threading.Barrier(2)

        def slap(seat: int, g: int = g, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            bench.press(seat, "race at once", "decided", g)

        threads = [threading.Thread(target=slap, args=(seat,)) for seat in (2, 3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        time.sleep(TAP_HOLD)
        bench.release(2)
        bench.release(3)
        time.sleep(TAP_GAP)

    for _ in range(5):  # contact bounce: down-up-down-up-down as fast as sysfs takes it
        g = bench.group()
        bench.press(3, "bounce", "decided", g)
        for _ in range(2):
            bench.release(3)
            bench.press(3, "bounce", "bounce", g)
        time.sleep(0.1)
        bench.release(3)
        time.sleep(TAP_GAP)

    bench.press(4, "stuck", "stuck")  # held 2.6 s: reported stuck at 2 s, ignored till released
    time.sleep(0.5)
    bench.tap(1, "single while stuck")  # another seat is not blocked by it
    time.sleep(2.1)
    bench.release(4)
    time.sleep(TAP_GAP)
    bench.tap(4, "after stuck")  # works again
    time.sleep(0.2)


# ------------------------------------------------------------------ checks (pure)


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100), None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def analyse(sent: list[dict[str, Any]], trace: dict[str, Any]) -> dict[str, Any]:
    """Match each press the bench made to what reached the engine; the checks and figures.

    `sent`: Sent records as dicts; `trace`: the daemon's `tablectl inputs` answer.
    """
    events = trace["events"]
    eps = trace["epsilon_ns"]
    inputs = [e for e in events if "input" in e]
    decisions = [e for e in events if "decided" in e]

    def within(s: dict[str, Any], e: dict[str, Any]) -> bool:
        return e["seat"] == s["seat"] and s["before_ns"] <= e["ts_ns"] <= s["after_ns"]

    problems: list[str] = []
    checks: dict[str, bool] = {}

    # Every event the engine got carries a stamp inside one of the bench's writes for that seat.
    presses_in = [e for e in inputs if e["input"] in ("press", "false_start")]
    unmatched = [e for e in presses_in if not any(within(s, e) for s in sent)]
    checks["kernel_stamps"] = not unmatched and all(e["ts_ns"] <= e["received_ns"] for e in inputs)
    if unmatched:
        problems.append(f"{len(unmatched)} presses carry a time outside every write, e.g. {unmatched[0]}")

    to_decide = [s for s in sent if s["expect"] == "decided"]
    decided_of = {id(s): [d for d in decisions if within(s, d)] for s in to_decide}
    missing = [s for s in to_decide if len(decided_of[id(s)]) != 1]
    checks["every_press_decided"] = not missing
    for s in missing[:3]:
        problems.append(f"{s['scenario']}: seat {s['seat']}'s press decided {len(decided_of[id(s)])} times")

    joins = [s for s in sent if s["expect"] == "join"]
    checks["joins"] = all(any(within(s, e) and e["input"] == "press" for e in inputs) for s in joins)

    # A false start is reported with its own stamp and never decided.
    falses = [s for s in sent if s["expect"] == "false_start"]
    checks["false_start"] = bool(falses) and all(
        any(within(s, e) and e["input"] == "false_start" for e in inputs)
        and not any(within(s, d) for d in decisions) for s in falses)
    if not checks["false_start"]:
        problems.append("a press before go was not reported as a false start (or was decided)")

    # Bounces: only the first contact counts; the later contacts of the burst are dropped.
    bounced = [s for s in sent if s["expect"] == "bounce"]
    bursts: dict[int, list[dict[str, Any]]] = {}
    for s in sent:
        if s["scenario"] == "bounce":
            bursts.setdefault(s["group"], []).append(s)
    slow = [g for g, b in bursts.items() if b[-1]["before_ns"] - b[0]["after_ns"] >= 30 * MS]
    leaked = [s for s in bounced if s["group"] not in slow and any(within(s, d) for d in decisions)]
    checks["debounce"] = bool(bursts) and not leaked and len(slow) < len(bursts)
    if leaked:
        problems.append(f"{len(leaked)} bounce contacts were decided as presses")

    # Stuck: reported once while held, the other seats play on, released works again.
    stuck = [s for s in sent if s["expect"] == "stuck"]
    stuck_ok = False
    for s in stuck:
        flagged = [e for e in inputs if e["seat"] == s["seat"] and e["input"] == "stuck"]
        freed = [e for e in inputs if e["seat"] == s["seat"] and e["input"] == "unstuck"]
        on_time = [e for e in flagged if 2 * S <= e["ts_ns"] - s["before_ns"] <= 3 * S]
        stuck_ok = len(on_time) == 1 and len(freed) == 1 and not any(within(s, d) for d in decisions)
    checks["stuck_button"] = stuck_ok
    if not stuck_ok:
        problems.append("the held button was not reported stuck once after 2 s and unstuck on release")

    # Order: decisions in the order the engine got them; each is in order when no press decided
    # before it has a later stamp, except within epsilon, where the arbiter draws (fairness.md).
    in_order = 0
    newest = None
    out_of_order: list[dict[str, Any]] = []
    for d in decisions:
        if newest is None or d["ts_ns"] >= newest - (eps - 1 if eps else 0):
            in_order += 1
        else:
            out_of_order.append(d)
        newest = d["ts_ns"] if newest is None else max(newest, d["ts_ns"])
    fraction = in_order / len(decisions) if decisions else None
    checks["in_order"] = fraction == 1.0
    if out_of_order:
        problems.append(f"{len(out_of_order)} decisions came after a later-stamped press, "
                        f"e.g. seat {out_of_order[0]['seat']} at {out_of_order[0]['ts_ns']} ns")

    # Races: the measured gap between the two stamps says which rule applies.
    ties = [frozenset(p["ts_ns"] for p in a["presses"]) for a in trace["arbiter"] if a["kind"] == "tie"]
    late = [a for a in trace["arbiter"] if a["kind"] == "late"]
    races = {"within_epsilon": 0, "beyond_epsilon": 0, "tie_drawn": 0, "in_stamp_order": 0}
    for g, pair in _groups(sent, "race").items():
        ds = [d for s in pair for d in decided_of.get(id(s), [])] if len(pair) == 2 else []
        if len(ds) != 2:
            continue
        gap = abs(ds[0]["ts_ns"] - ds[1]["ts_ns"])
        if gap < eps:
            races["within_epsilon"] += 1
            races["tie_drawn"] += any({d["ts_ns"] for d in ds} <= t for t in ties)
        else:
            races["beyond_epsilon"] += 1
            first = min(decisions.index(d) for d in ds)
            races["in_stamp_order"] += decisions[first]["ts_ns"] == min(d["ts_ns"] for d in ds)
        del g
    checks["races"] = (races["tie_drawn"] == races["within_epsilon"]
                       and races["in_stamp_order"] == races["beyond_epsilon"] > 0)
    if not checks["races"]:
        problems.append(f"races: {races}")

    latencies = [(d["decided_ns"] - d["ts_ns"]) / MS for d in decisions]
    arrivals = [(e["received_ns"] - e["ts_ns"]) / MS for e in presses_in]
    race_gaps = sorted(abs(a - b) / MS for a, b in _race_gaps(sent, decided_of))
    return {
        "presses_sent": len(to_decide),
        "presses_decided": len(to_decide) - len(missing),
        "fraction_in_order": fraction,
        "edge_to_decision_p50_ms": _round(percentile(latencies, 50)),
        "edge_to_decision_p99_ms": _round(percentile(latencies, 99)),
        "edge_to_decision_max_ms": _round(max(latencies, default=None)),
        "edge_to_engine_p50_ms": _round(percentile(arrivals, 50)),
        "edge_to_engine_max_ms": _round(max(arrivals, default=None)),
        "write_to_edge_p50_ms": _round(percentile(
            [(d["ts_ns"] - s["before_ns"]) / MS for s in to_decide for d in decided_of[id(s)]], 50)),
        "race_gaps_ms": [_round(g) for g in race_gaps],
        "races": races,
        "late_presses": len(late),
        "bounce_bursts": len(bursts),
        "bounce_bursts_too_slow": len(slow),
        "checks": checks,
        "problems": problems,
        "ok": all(checks.values()),
    }


def _groups(sent: list[dict[str, Any]], scenario: str) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for s in sent:
        if s["scenario"].startswith(scenario) and s["group"] >= 0:
            out.setdefault(s["group"], []).append(s)
    return out


def _race_gaps(sent: list[dict[str, Any]], decided_of: dict[int, list[dict[str, Any]]]) -> list[tuple[int, int]]:
    gaps = []
    for pair in _groups(sent, "race").values():
        ds = [d for s in pair for d in decided_of.get(id(s), [])]
        if len(ds) == 2:
            gaps.append((ds[0]["ts_ns"], ds[1]["ts_ns"]))
    return gaps


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


# ------------------------------------------------------------------ the run


def modprobe() -> None:
    subprocess.run(["modprobe", "configfs"], check=True, capture_output=True, text=True)
    subprocess.run(["modprobe", "gpio-sim"], check=True, capture_output=True, text=True)
    if not SimChip().configfs.exists():
        subprocess.run(["mount", "-t", "configfs", "configfs", "/sys/kernel/config"], check=True)


def from_gpio_sim(chip: SimChip) -> bool:
    """The chip's platform device is bound to the gpio-sim driver."""
    driver = chip.platform / chip.dev_name / "driver"
    return driver.is_symlink() and driver.resolve().name == "gpio-sim"


def run(out: Path) -> dict[str, Any]:
    result: dict[str, Any] = {"kernel": platform.release(), "gpio_sim": False}
    t0 = time.monotonic()
    modprobe()
    chip = SimChip().create()
    result["gpio_sim"] = from_gpio_sim(chip)
    result["chip"] = {"label": chip.label, "name": chip.chip_name, "device": chip.dev_name, "lines": chip.lines}
    result["setup_s"] = round(time.monotonic() - t0, 2)

    work = Path(tempfile.mkdtemp(prefix="hil-gpio-"))  # the guest's /tmp: lgpio's FIFO cannot live on 9p
    config = work / "table.toml"
    config.write_text(hil_config(chip.label))
    env = {**os.environ, "RUNTIME_DIRECTORY": str(work / "run"), "STATE_DIRECTORY": str(work / "state"),
           "CONFIGURATION_DIRECTORY": str(work), "PYTHONUNBUFFERED": "1"}
    for d in ("run", "state"):
        (work / d).mkdir()
    sock = work / "run" / "control.sock"
    table_host = Path(sys.executable).with_name("table-host")
    with open(out / "daemon.log", "w") as log:
        daemon = subprocess.Popen([str(table_host), "run", "--ui", "none", "--config", str(config)],
                                  env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for("the daemon's control socket", lambda: daemon.poll() is None and sock.exists()
                     and ask({"cmd": "status"}, sock), 120)
            t1 = time.monotonic()
            result["daemon_start_s"] = round(t1 - t0 - result["setup_s"], 2)
            bench = Bench(chip)
            scenarios(bench, sock)
            result["scenarios_s"] = round(time.monotonic() - t1, 2)
            trace = ask({"cmd": "inputs"}, sock)
        except Exception:
            if daemon.poll() is not None:
                raise RuntimeError(f"the daemon exited with {daemon.returncode}: "
                                   f"{_tail(out / 'daemon.log')}") from None
            raise
        finally:
            if daemon.poll() is None:
                daemon.send_signal(signal.SIGTERM)
                try:
                    daemon.wait(30)
                except subprocess.TimeoutExpired:
                    daemon.kill()
                    daemon.wait()
    result["daemon_exit"] = daemon.returncode
    sent = [asdict(s) for s in bench.sent]
    (out / "gpio-trace.json").write_text(json.dumps({"sent": sent, "trace": trace}))
    result |= analyse(sent, trace)
    if daemon.returncode != 0:
        result["ok"] = False
        result["problems"].append(f"the daemon exited with {daemon.returncode} on SIGTERM")
    with contextlib.suppress(OSError):
        chip.remove()
    return result


def _tail(path: Path, lines: int = 5) -> str:
    try:
        return " | ".join(path.read_text().strip().splitlines()[-lines:])
    except OSError:
        return "(no log)"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hil.gpio", description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, type=Path)
    args = p.parse_args(argv)
    try:
        result = run(args.out)
    except Exception as exc:
        result = {"kernel": platform.release(), "ok": False, "error": f"{type(exc).__name__}: {exc}",
                  "traceback": traceback.format_exc()}
        if isinstance(exc, subprocess.CalledProcessError):
            result["error"] += f" ({(exc.stderr or '').strip()})"
    (args.out / "gpio.json").write_text(json.dumps(result, indent=1))
    return 0 if result.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
