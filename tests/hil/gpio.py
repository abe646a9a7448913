"""Inside the VM: the table on a real kernel's GPIO chip (gpio-sim), pressed through sysfs.

Run by `python -m hil` as the VM's one command (`python -m hil.gpio --out DIR`); DIR is shared
with the host (virtme-ng `--rwdir`) and gets `gpio.json` (the checks and figures) and the
daemon's log. What is real here: the kernel (its GPIO character device, edge interrupts and
CLOCK_MONOTONIC stamps from gpio-sim's irq), lgpio, gpiozero's LGPIOFactory, the daemon as
`table-host run` starts it, the control socket. What is simulated: the buttons (a line's pull
written through sysfs, docs/virtual-pi.md).

Each press the bench makes is a sysfs write, timed just before and just after. gpio-sim raises
the edge interrupt from irq_work, which nearly always runs before the write returns, so the
kernel's stamp lies inside the write's window: an event the engine got is matched to the last
press written on its seat's line before its stamp, and the stamp inside that window shows the
time the table used is the kernel's edge time on the guest's CLOCK_MONOTONIC, not the moment
our code ran.
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
from bisect import bisect_right
from dataclasses import asdict, dataclass, field
from itertools import pairwise
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
    from firmware_host.control.client import ask as ctl_ask

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

WIDE_WINDOW_MS = 50.0
WIDE_EPSILON_MS = 10.0


def scenarios(bench: Bench, sock: Path, config: Path) -> dict[str, Any]:
    """The presses: join, a false start, singles, races, bounces, a stuck button (one match with
    the real window and epsilon), then races again in a second match with epsilon widened.

    Returns the two matches' arbiter settings and their arbiter logs (ties, late presses).
    """
    for seat in (1, 2, 3, 4):  # the first slap wakes the table, each seat's slap joins it
        bench.tap(seat, "join", "join")
    wait_for("four seats joined", lambda: ask({"cmd": "status"}, sock)["seats_joined"] == [1, 2, 3, 4], 20)
    ask({"cmd": "start"}, sock)  # 3 s countdown
    time.sleep(1.0)
    bench.tap(2, "false start", "false_start")
    wait_for("play", lambda: ask({"cmd": "status"}, sock)["phase"] == "playing", 20)
    time.sleep(0.2)
    first = ask({"cmd": "inputs"}, sock)
    phases = [{"from_ns": time.monotonic_ns(), "window_ns": first["window_ns"],
               "epsilon_ns": first["epsilon_ns"]}]

    for i in range(16):  # single presses, every seat in turn
        bench.tap(i % 4 + 1, "single")

    for i, gap in enumerate((0.0, 0.0, 0.001, 0.001, 0.003, 0.003, 0.010, 0.010)):  # one after the other
        a, b = (1, 3) if i % 2 else (4, 2)
        race(bench, (a, b), "race in turn", gap)
    for _ in range(6):
        race(bench, (2, 3), "race at once")

    for _ in range(5):  # contact bounce: three contacts and two openings, 0.5 ms apart, then held
        g = bench.group()
        bench.press(3, "bounce", "decided", g)
        for _ in range(2):
            spin(0.0005)
            bench.release(3)
            spin(0.0005)
            bench.press(3, "bounce", "bounce", g)
        time.sleep(0.1)
        bench.release(3)
        time.sleep(TAP_GAP)

    bench.press(4, "stuck", "stuck")  # held 2.6 s: a press, reported stuck at 2 s, ignored till released
    time.sleep(0.5)
    bench.tap(1, "single while stuck")  # another seat is not blocked by it
    time.sleep(2.1)
    bench.release(4)
    time.sleep(TAP_GAP)
    bench.tap(4, "after stuck")  # works again
    time.sleep(0.3)
    arbiter = ask({"cmd": "inputs"}, sock)["arbiter"]

    # Under TCG two sysfs writes are milliseconds apart, never within the real 0.2 ms: a second
    # match with epsilon widened to 10 ms (window 50 ms) has the arbiter draw real-edge ties.
    from firmware_host.config import set_config

    set_config(config, "arbiter.window_ms", str(WIDE_WINDOW_MS))
    set_config(config, "arbiter.epsilon_ms", str(WIDE_EPSILON_MS))
    if not ask({"cmd": "config", "action": "reload"}, sock).get("reloaded"):
        raise RuntimeError("tablectl config reload refused the widened arbiter settings")
    ask({"cmd": "abort"}, sock)
    ask({"cmd": "start"}, sock)
    wait_for("play", lambda: ask({"cmd": "status"}, sock)["phase"] == "playing", 20)
    time.sleep(0.2)
    second = ask({"cmd": "inputs"}, sock)
    phases.append({"from_ns": time.monotonic_ns(), "window_ns": second["window_ns"],
                   "epsilon_ns": second["epsilon_ns"]})
    for i in range(10):
        race(bench, (1, 4) if i % 2 else (2, 3), "race at once, wide epsilon")
    time.sleep(0.3)
    return {"phases": phases, "arbiter": arbiter + ask({"cmd": "inputs"}, sock)["arbiter"]}


def spin(seconds: float) -> None:
    """Wait without giving up the vCPU: a sleeping thread may wake tens of ms late under TCG."""
    end = time.monotonic_ns() + round(seconds * S)
    while time.monotonic_ns() < end:
        pass


def race(bench: Bench, seats: tuple[int, int], name: str, gap: float | None = None) -> None:
    """Two seats press: one after the other `gap` s apart, or (None) from two threads released
    together, one per vCPU."""
    g = bench.group()
    if gap is not None:
        bench.press(seats[0], name, "decided", g)
        if gap:
            time.sleep(gap)
        bench.press(seats[1], name, "decided", g)
    else:
        barrier = threading.Barrier(2)

        def slap(seat: int) -> None:
            barrier.wait()
            bench.press(seat, name, "decided", g)

        threads = [threading.Thread(target=slap, args=(seat,)) for seat in seats]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    time.sleep(TAP_HOLD)
    for seat in seats:
        bench.release(seat)
    time.sleep(TAP_GAP)


# ------------------------------------------------------------------ checks (pure)


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100), None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def analyse(sent: list[dict[str, Any]], trace: dict[str, Any], arbiter: list[dict[str, Any]],
            phases: list[dict[str, Any]], debounce_ms: float = 30.0) -> dict[str, Any]:
    """Match what reached the engine to the presses the bench made; the checks and figures.

    `sent`: Sent records as dicts; `trace`: the daemon's `tablectl inputs` answer; `arbiter`: the
    ties and late presses of every match; `phases`: from when (ns) which window and epsilon held.
    An event belongs to the last press written on its seat's line before its stamp: gpio-sim
    raises the interrupt from irq_work, which nearly always runs inside the write, and a stamp
    cannot come before the write that made it.
    """
    events = trace["events"]
    inputs = [e for e in events if "input" in e]
    decisions = [e for e in events if "decided" in e]
    writes: dict[int, list[dict[str, Any]]] = {}
    for s in sorted(sent, key=lambda s: s["before_ns"]):
        writes.setdefault(s["seat"], []).append(s)

    def owner(e: dict[str, Any]) -> int | None:
        mine = writes.get(e["seat"], [])
        i = bisect_right([s["before_ns"] for s in mine], e["ts_ns"]) - 1
        return id(mine[i]) if i >= 0 else None

    def phase(ts: int) -> dict[str, Any]:
        return [p for p in phases if p["from_ns"] <= ts][-1] if ts >= phases[0]["from_ns"] else phases[0]

    problems: list[str] = []
    checks: dict[str, bool] = {}
    by_id = {id(s): s for s in sent}

    presses_in = [e for e in inputs if e["input"] in ("press", "false_start")]
    orphans = [e for e in presses_in if owner(e) is None]
    checks["kernel_stamps"] = not orphans and all(e["ts_ns"] <= e["received_ns"] for e in inputs)
    if orphans:
        problems.append(f"{len(orphans)} presses carry a time before any write on their line: {orphans[0]}")
    inside = [e for e in presses_in if (o := owner(e)) is not None and e["ts_ns"] <= by_id[o]["after_ns"]]

    decided_by: dict[int, list[dict[str, Any]]] = {}
    for d in decisions:
        o = owner(d)
        if o is not None:
            decided_by.setdefault(o, []).append(d)
    press_events: dict[int, list[dict[str, Any]]] = {}
    for e in inputs:
        if (o := owner(e)) is not None:
            press_events.setdefault(o, []).append(e)

    to_decide = [s for s in sent if s["expect"] in ("decided", "stuck") and s["scenario"] != "bounce"]
    missing = [s for s in to_decide if len(decided_by.get(id(s), [])) != 1]
    for s in missing[:3]:
        problems.append(f"{s['scenario']}: seat {s['seat']}'s press decided "
                        f"{len(decided_by.get(id(s), []))} times")

    joins = [s for s in sent if s["expect"] == "join"]
    checks["joins"] = bool(joins) and all(
        any(e["input"] == "press" for e in press_events.get(id(s), [])) for s in joins)

    falses = [s for s in sent if s["expect"] == "false_start"]
    checks["false_start"] = bool(falses) and all(
        any(e["input"] == "false_start" for e in press_events.get(id(s), []))
        and not decided_by.get(id(s)) for s in falses)
    if not checks["false_start"]:
        problems.append("a press before go was not reported as a false start (or was decided)")

    # Bounce, as leading-edge debounce promises on stamps: each burst gives at least one press, no
    # two of its presses closer than the debounce time, and some contact written inside that time
    # after a decided press was dropped. Ideally the press is the first contact's (a stalled VM
    # can lose or mislabel that edge: docs/virtual-pi.md).
    debounce_ns = round(debounce_ms * MS)
    bursts = _groups(sent, "bounce")
    first_kept, bounced, wrong = 0, 0, 0
    for burst in bursts.values():
        ds = sorted(d["ts_ns"] for c in burst for d in decided_by.get(id(c), []))
        wrong += not ds or any(b - a < debounce_ns for a, b in pairwise(ds))
        bounced += any(not decided_by.get(id(c)) and any(0 <= c["before_ns"] - t < debounce_ns for t in ds)
                       for c in burst)
        first_kept += len(decided_by.get(id(burst[0]), [])) == 1
    checks["debounce"] = bounced > 0 and not wrong
    if not checks["debounce"]:
        problems.append(f"bounce: {wrong} of {len(bursts)} bursts gave no press or two within "
                        f"{debounce_ms:g} ms; {bounced} bursts had a contact dropped as bounce")

    stuck_ok = False
    for s in (s for s in sent if s["expect"] == "stuck"):
        seat = [e for e in inputs if e["seat"] == s["seat"] and e["ts_ns"] >= s["before_ns"]]
        flagged = [e for e in seat if e["input"] == "stuck"]
        freed = [e for e in seat if e["input"] == "unstuck"]
        on_time = [e for e in flagged if 2 * S <= e["ts_ns"] - s["before_ns"] <= 3 * S]
        stuck_ok = len(flagged) == len(on_time) == 1 and len(freed) == 1
    checks["stuck_button"] = stuck_ok
    if not stuck_ok:
        problems.append("the held button was not reported stuck once after 2 s and unstuck on release")
    checks["every_press_decided"] = not missing

    # Order: a decision is in order when no press decided before it carries a later stamp, except
    # by less than epsilon: such presses are a tie, and a tie is ordered by a draw (fairness.md).
    # A press that reached the engine after the window had passed is decided at once and logged
    # late (fairness.md, "a badly overloaded system"): out of order, but as the table promises.
    late = {p["ts_ns"] for a in arbiter if a["kind"] == "late" for p in a["presses"]}
    in_order, newest, unexplained = 0, None, []
    for d in decisions:
        eps = phase(d["ts_ns"])["epsilon_ns"]
        if newest is None or d["ts_ns"] > newest - eps:
            in_order += 1
        elif d["ts_ns"] not in late:
            unexplained.append(d)
        newest = d["ts_ns"] if newest is None else max(newest, d["ts_ns"])
    fraction = round(in_order / len(decisions), 4) if decisions else None
    checks["in_order"] = fraction is not None and not unexplained
    if unexplained:
        problems.append(f"{len(unexplained)} decisions came after a press stamped later and were not "
                        f"logged late, e.g. {unexplained[0]}")

    # Races: the two stamps' gap says which rule applies; a tie must be in the arbiter's log.
    ties = [{p["ts_ns"] for p in a["presses"]} for a in arbiter if a["kind"] == "tie"]
    races = {"within_epsilon": 0, "tie_drawn": 0, "beyond_epsilon": 0, "in_stamp_order": 0, "late": 0}
    gaps: list[float] = []
    for pair in _groups(sent, "race").values():
        ds = [d for s in pair for d in decided_by.get(id(s), [])]
        if len(ds) != 2:
            continue
        gap = abs(ds[0]["ts_ns"] - ds[1]["ts_ns"])
        gaps.append(gap / MS)
        if gap < phase(min(d["ts_ns"] for d in ds))["epsilon_ns"]:
            races["within_epsilon"] += 1
            races["tie_drawn"] += any({d["ts_ns"] for d in ds} <= t for t in ties)
        else:
            races["beyond_epsilon"] += 1
            first = min(ds, key=decisions.index)
            earliest = min(d["ts_ns"] for d in ds)
            races["in_stamp_order"] += first["ts_ns"] == earliest
            races["late"] += first["ts_ns"] != earliest and earliest in late
    checks["races"] = (races["tie_drawn"] == races["within_epsilon"] and races["beyond_epsilon"] > 0
                       and races["in_stamp_order"] + races["late"] == races["beyond_epsilon"])
    if not checks["races"]:
        problems.append(f"races: {races}")

    real = [d for d in decisions if phase(d["ts_ns"]) is phases[0]]
    latencies = [(d["decided_ns"] - d["ts_ns"]) / MS for d in real]
    arrivals = [(e["received_ns"] - e["ts_ns"]) / MS for e in presses_in if phase(e["ts_ns"]) is phases[0]]
    return {
        "presses_sent": len(to_decide) + len(bursts),
        "presses_decided": len(to_decide) - len(missing) + len(bursts) - wrong,
        "fraction_in_order": fraction,
        "edge_to_decision_p50_ms": _round(percentile(latencies, 50)),
        "edge_to_decision_p99_ms": _round(percentile(latencies, 99)),
        "edge_to_decision_max_ms": _round(max(latencies, default=None)),
        "edge_to_engine_p50_ms": _round(percentile(arrivals, 50)),
        "edge_to_engine_p99_ms": _round(percentile(arrivals, 99)),
        "stamps_inside_write": f"{len(inside)}/{len(presses_in)}",
        "window_ms": [p["window_ns"] / MS for p in phases],
        "epsilon_ms": [p["epsilon_ns"] / MS for p in phases],
        "race_gaps_ms": sorted(_round(g) for g in gaps),
        "races": races,
        "late_presses": len(late),
        "bounce_bursts": len(bursts),
        "bounce_first_contact": first_kept,
        "bounce_bursts_within_debounce": bounced,
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
    result["chip"] = {"label": chip.label, "name": chip.chip_name, "device": chip.dev_name,
                      "lines": chip.lines}
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
            matches = scenarios(bench, sock, config)
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
    (out / "gpio-trace.json").write_text(json.dumps({"sent": sent, "trace": trace, **matches}))
    result |= analyse(sent, trace, matches["arbiter"], matches["phases"])
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
