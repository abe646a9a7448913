"""Inside the VM: the table on a real kernel's GPIO chip (gpio-sim), pressed through sysfs.

Run by `python -m hil` as the VM's one command (`python -m hil.gpio --out DIR`); DIR is shared
with the host (virtme-ng `--rwdir`) and gets `gpio.json` (the checks and figures) and the
daemon's log. What is real here: the kernel (its GPIO character device, edge interrupts and
CLOCK_MONOTONIC stamps from gpio-sim's irq, its I2C core, i2c-dev and i2c-mux), lgpio,
gpiozero's LGPIOFactory, smbus2 and luma, the daemon as `table-host run` starts it with the
`pi` backend, the control socket. What is simulated: the buttons (a line's pull written through
sysfs), the board's identity (a Pi 5's revision code in /proc/cpuinfo, a chip labelled as the
RP1's and numbered after eleven others), the I2C chips (hil/i2c.py; docs/virtual-pi.md).

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

from . import i2c
from .i2c import StubBus
from .simchip import RP1_LINES, SimChip, make_spares

MS = 1_000_000
S = 1_000_000_000
SLAPS = (5, 6, 13, 19)  # the 4-seat build's slap buttons (hardware/wiring/4-seat.toml), BCM numbers
PI5_REVISION = "c04170"
"""A Pi 5 Model B 4 GB: new-style code, type 0x17 (5B) and processor 4 (BCM2712) as gpiozero's
PiBoardInfo.from_revision decodes it; its numbering puts BCM n on line n of the RP1's chip."""
HEADER_LABEL = "pinctrl-rp1"  # the RP1's chip on a Pi 5 (firmware_host/devices/board.py, HEADER_LABELS)
SPARE_CHIPS = 11  # made first, so the header's chip is gpiochip11 as on recent Pi 5 kernels
TAP_HOLD = 0.08
TAP_GAP = 0.15
SPIKE_S = 50e-6  # an ESD spike's width: the 50 µs (as narrow as the sysfs writes allow)
AFTER_SPIKE_S = 0.005  # then a real slap on the same line, inside the 30 ms debounce time
SPIKE_TRIES = 6
"""Spikes tried a seat until one is narrower than the minimum press: under load, TCG stretched all
four first tries to 1.7-5.3 ms (a press, rightly decided), and the check had no spike to judge."""
SPIKE_PAUSE_S = 0.1
STALL_TRIES = 3
"""Spike-and-slap pairs tried a seat while the VM stalls through them (`stalled_over`): CI's run at
load 1.8 lost seat 3's slap to one such stall in 4 pairs."""
BUILD = Path(__file__).resolve().parents[2] / "hardware" / "wiring" / "4-seat.toml"


def hil_config(stub_bus: int, seats: tuple[int, ...] = SLAPS) -> str:
    """The table's configuration for the VM: the 4-seat build as wired (hardware/wiring/), with
    the `pi` backend and no chip named, so the daemon finds the header's chip as on a Pi; its
    expanders and mux on the i2c-stub's bus, seat 2's screen on that bus itself (the mux here has
    one channel, hil/i2c.py); no buzzer (PWM on a simulated line costs the VM's CPU for nothing)."""
    import tomlkit

    doc = tomlkit.parse(BUILD.read_text())
    doc["hardware"] = {"backend": "pi"}
    assert [s["slap"] for s in doc["inputs"]["seats"]] == list(seats), "the build's slaps moved"
    for expander in doc["inputs"]["expanders"]:
        expander["bus"] = stub_bus
        assert expander["address"] == i2c.EXPANDERS[expander["name"]], "the build's expanders moved"
    for mux in doc["i2c_muxes"]:
        mux["bus"] = stub_bus
    seat2 = doc["screens"][1]
    del seat2["mux"], seat2["channel"]
    seat2["bus"], seat2["address"] = stub_bus, i2c.SCREEN_ON_BUS
    del doc["buzzer"]
    return tomlkit.dumps(doc)


@dataclass
class Sent:
    """One press the bench made: which seat, the write's window, what should come of it."""

    scenario: str
    seat: int  # from 1
    before_ns: int
    after_ns: int
    expect: str  # "decided", "false_start", "join", "bounce", "stuck", "spike"
    group: int = -1  # presses of one race or one bounce burst share a group
    up_before_ns: int = 0  # a spike: its release write's window
    up_after_ns: int = 0


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

    def spike(self, seat: int, scenario: str, seconds: float = SPIKE_S) -> Sent:
        """A contact far shorter than a press (ESD on the cable): no slap may come of it."""
        (before, after), (up_before, up_after) = self.chip.spike(self.seats[seat - 1], seconds)
        s = Sent(scenario, seat, before, after, "spike", up_before_ns=up_before, up_after_ns=up_after)
        self.sent.append(s)
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

    from firmware_host.config import load_config

    min_press_ns = round(load_config(config).inputs.min_press_us * 1000)
    for seat in (1, 2, 3, 4):  # a 50 µs spike is no slap; a real slap 5 ms later keeps its own stamp
        for _ in range(STALL_TRIES):
            for _ in range(SPIKE_TRIES):  # a loaded VM can stretch the two writes past the minimum press
                spike = bench.spike(seat, "spike")
                if spike.up_after_ns - spike.before_ns < min_press_ns:
                    break
                time.sleep(SPIKE_PAUSE_S)  # that one was a press: the next try well past its debounce
            spin(AFTER_SPIKE_S)
            slap = bench.tap(seat, "after spike")
            if not stalled_over(spike, slap, ask({"cmd": "inputs"}, sock)["events"]):
                break
            spike.expect, slap.expect = "spike, VM stalled", "stalled"
            slap.scenario = "after spike, VM stalled"
            time.sleep(SPIKE_PAUSE_S)

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


def stalled_over(spike: Sent, slap: Sent, events: list[dict[str, Any]]) -> bool:
    """Did the daemon take the spike as a press only after the slap's write began? Then the VM
    stalled past the 5 ms between them: the line it read to judge the spike was the slap's, and the
    spike's opening edge was still on its way or lost (docs/virtual-pi.md, "Delivery"). Such a try
    judges the VM, not the table: it is marked and tried again. A press the daemon took before the
    slap began is the table's own fault and stays to be judged."""
    return any(e.get("input") == "press" and e.get("control", "slap") == "slap" and e["seat"] == spike.seat
               and spike.before_ns <= e["ts_ns"] <= spike.up_after_ns and e["received_ns"] >= slap.before_ns
               for e in events)


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


def why_undecided(s: dict[str, Any], seen: list[dict[str, Any]], decided: list[dict[str, Any]]) -> str:
    """What the daemon saw of one press the bench wrote, so that a failure under load names its
    cause: no edge at all (the simulator drops an edge raised while its interrupt is masked, and a
    stalled VM can deliver it late or not: docs/virtual-pi.md), edges but no decision, or two."""
    write_ms = (s["after_ns"] - s["before_ns"]) / MS
    if decided:
        stamps = ", ".join(f"+{(d['ts_ns'] - s['before_ns']) / MS:.3f} ms" for d in decided)
        return f"decided at {stamps} after its write began (the write took {write_ms:.1f} ms)"
    if not seen:
        return (f"no edge reached the daemon from its write (which took {write_ms:.1f} ms; an edge the "
                f"simulator raises while the line's interrupt is masked is lost)")
    edges = ", ".join(f"{e['input']} +{(e['ts_ns'] - s['before_ns']) / MS:.3f} ms "
                      f"(read {(e['received_ns'] - e['ts_ns']) / MS:.1f} ms later)" for e in seen[:4])
    return f"the daemon saw {edges}, and decided none of them (the write took {write_ms:.1f} ms)"


def analyse(sent: list[dict[str, Any]], trace: dict[str, Any], arbiter: list[dict[str, Any]],
            phases: list[dict[str, Any]], debounce_ms: float = 30.0,
            min_press_us: float = 1000.0) -> dict[str, Any]:
    """Match what reached the engine to the presses the bench made; the checks and figures.

    `sent`: Sent records as dicts; `trace`: the daemon's `tablectl inputs` answer; `arbiter`: the
    ties and late presses of every match; `phases`: from when (ns) which window and epsilon held.
    An event belongs to the last press written on its seat's line before its stamp: gpio-sim
    raises the interrupt from irq_work, which nearly always runs inside the write, and a stamp
    cannot come before the write that made it.
    """
    events = trace["events"]
    inputs = [e for e in events if "input" in e and e.get("control", "slap") == "slap"]
    decisions = [e for e in events if e.get("decided") == "slap"]
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
                        f"{len(decided_by.get(id(s), []))} times: "
                        f"{why_undecided(s, press_events.get(id(s), []), decided_by.get(id(s), []))}")

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

    # Spikes (inputs.min_press_us): a contact whose two writes lie within the minimum press (its
    # stamps lie between them) must give no press and no decision; the slap on the same line 5 ms
    # later is decided once, with a stamp inside its own write, not the spike's nor the moment it
    # was confirmed. The daemon traces a spike it dropped ("spike"); gpio-sim may also name a
    # spike's falling edge by the level its thread reads after the spike is over ("rising",
    # docs/virtual-pi.md), and then the daemon never saw a contact: both are no slap.
    spikes = [s for s in sent if s["expect"] == "spike"]
    narrow = [s for s in spikes if s["up_after_ns"] - s["before_ns"] < min_press_us * 1000]
    leaked = [s for s in narrow if decided_by.get(id(s))
              or any(e["input"] == "press" for e in press_events.get(id(s), []))]
    seen = [s for s in spikes if any(e["input"] == "spike" and s["before_ns"] <= e["ts_ns"] <= s["after_ns"]
                                     for e in inputs if e["seat"] == s["seat"])]
    after = [s for s in sent if s["scenario"] == "after spike"]
    kept = [s for s in after if len(ds := decided_by.get(id(s), [])) == 1 and ds[0]["ts_ns"] <= s["after_ns"]]
    checks["spike_no_slap"] = bool(narrow) and not leaked and len(kept) == len(after) > 0
    if not checks["spike_no_slap"]:
        problems.append(f"spikes: {len(narrow)} of {len(spikes)} narrower than {min_press_us:g} µs, "
                        f"{len(leaked)} of them pressed or decided; {len(kept)} of {len(after)} slaps after "
                        "a spike decided once with their own stamp")

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

    # Races: the two stamps' gap says which rule applies; a tie must be in the arbiter's log,
    # unless a press reached the engine more than the window after its edge: the arbiter's promise
    # holds for delivery within the window (arbiter.py, fairness.md), and a press that comes later
    # is decided as it comes. Such a race is counted as overloaded, not as a tie missed.
    ties = [{p["ts_ns"] for p in a["presses"]} for a in arbiter if a["kind"] == "tie"]
    arrived = {(e["seat"], e["ts_ns"]): e["received_ns"] for e in presses_in}
    races = {"within_epsilon": 0, "tie_drawn": 0, "overloaded": 0, "beyond_epsilon": 0, "in_stamp_order": 0,
             "late": 0}
    gaps: list[float] = []
    for pair in _groups(sent, "race").values():
        ds = [d for s in pair for d in decided_by.get(id(s), [])]
        if len(ds) != 2:
            continue
        gap = abs(ds[0]["ts_ns"] - ds[1]["ts_ns"])
        gaps.append(gap / MS)
        held = phase(min(d["ts_ns"] for d in ds))
        if gap < held["epsilon_ns"]:
            races["within_epsilon"] += 1
            if any({d["ts_ns"] for d in ds} <= t for t in ties):
                races["tie_drawn"] += 1
            else:
                lags = [arrived.get((d["seat"], d["ts_ns"]), d["ts_ns"]) - d["ts_ns"] for d in ds]
                races["overloaded"] += max(lags) > held["window_ns"]
        else:
            races["beyond_epsilon"] += 1
            first = min(ds, key=decisions.index)
            earliest = min(d["ts_ns"] for d in ds)
            races["in_stamp_order"] += first["ts_ns"] == earliest
            races["late"] += first["ts_ns"] != earliest and earliest in late
    checks["races"] = (races["tie_drawn"] + races["overloaded"] == races["within_epsilon"]
                       and races["beyond_epsilon"] > 0
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
        "spike_widths_us": [_round((s["up_after_ns"] - s["before_ns"]) / 1000) for s in spikes],
        "spikes_seen_by_daemon": f"{len(seen)}/{len(spikes)}",
        "spike_tries_void_by_stall": sum(s["expect"] == "spike, VM stalled" for s in sent),
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


def pose_as_pi(revision: str, work: Path) -> int:
    """Give the guest a Pi's revision code where gpiozero reads it, and return what it reads.

    gpiozero (pins/local.py, get_pi_revision) reads /proc/device-tree/system/linux,revision,
    and only when that file does not exist, the `Revision` line of /proc/cpuinfo. An x86 guest
    has no device tree and no such line: a copy of its cpuinfo with the line added is bound
    over /proc/cpuinfo, and the daemon, unchanged, takes the guest for that Pi."""
    if Path("/proc/device-tree/system/linux,revision").exists():
        raise RuntimeError("this guest has a device tree revision, which gpiozero would read first")
    fake = work / "cpuinfo"
    fake.write_text(Path("/proc/cpuinfo").read_text().rstrip("\n") + f"\n\nRevision\t: {revision}\n")
    subprocess.run(["mount", "--bind", str(fake), "/proc/cpuinfo"], check=True, capture_output=True,
                   text=True)
    from gpiozero.pins.local import get_pi_revision

    return int(get_pi_revision())


def run(out: Path) -> dict[str, Any]:
    result: dict[str, Any] = {"kernel": platform.release(), "gpio_sim": False, "backend": "pi"}
    t0 = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="hil-gpio-"))  # the guest's /tmp: lgpio's FIFO cannot live on 9p
    modprobe()
    spares = make_spares(SPARE_CHIPS)
    chip = SimChip(lines=RP1_LINES, label=HEADER_LABEL).create()
    result["gpio_sim"] = from_gpio_sim(chip)
    result["chip"] = {"label": chip.label, "name": chip.chip_name, "device": chip.dev_name,
                      "lines": chip.lines, "spares": [s.chip_name for s in spares]}
    result["revision"] = f"{pose_as_pi(PI5_REVISION, work):x}"
    stub = StubBus.load()
    stub.seed()
    mux_bus = stub.add_mux()
    stub.add_unbound_device("pca9548", i2c.MUX + 1)  # a mux no driver takes, beside it
    stub.block(i2c.SCREEN_ON_BUS)  # seat 2's screen does not answer when the daemon starts
    result["i2c_setup"] = {"bus": stub.number, "mux_channel_0": mux_bus}
    result["setup_s"] = round(time.monotonic() - t0, 2)

    config = work / "table.toml"
    config.write_text(hil_config(stub.number))
    env = {**os.environ, "RUNTIME_DIRECTORY": str(work / "run"), "STATE_DIRECTORY": str(work / "state"),
           "CONFIGURATION_DIRECTORY": str(work), "PYTHONUNBUFFERED": "1"}
    for d in ("run", "state"):
        (work / d).mkdir()
    sock = work / "run" / "control.sock"
    table_host = Path(sys.executable).with_name("table-host")
    more_checks: dict[str, bool] = {}
    i2c_found: dict[str, Any] = {}
    with open(out / "daemon.log", "w") as log:
        daemon = subprocess.Popen([str(table_host), "run", "--ui", "none", "--config", str(config)],
                                  env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for("the daemon's control socket", lambda: daemon.poll() is None and sock.exists()
                     and ask({"cmd": "status"}, sock), 120)
            t1 = time.monotonic()
            result["daemon_start_s"] = round(t1 - t0 - result["setup_s"], 2)
            status = ask({"cmd": "status"}, sock)
            result["chip_label"] = status["hardware"].get("chip_label")
            result["hardware"] = status["hardware"]
            more_checks["header_chip_by_label"] = (
                status["hardware"].get("chip") == f"/dev/{chip.chip_name}"
                and result["chip_label"] == HEADER_LABEL and chip.chip_name not in ("gpiochip0", "gpiochip4")
                and Path("/dev/gpiochip4").exists())  # gpiozero's own guess would have opened a spare
            attempt("i2c_at_start", more_checks, i2c_found, lambda: i2c_at_start(
                stub, mux_bus, sock, out / "daemon.log", more_checks, i2c_found))
            result["i2c_start_s"] = round(time.monotonic() - t1, 2)
            t2 = time.monotonic()
            bench = Bench(chip)
            matches = scenarios(bench, sock, config)
            result["scenarios_s"] = round(time.monotonic() - t2, 2)
            trace = ask({"cmd": "inputs"}, sock)
            sent = [asdict(s) for s in bench.sent]  # the GPIO part's presses, before the I2C part's taps
            t3 = time.monotonic()
            attempt("i2c_faults", more_checks, i2c_found, lambda: i2c_faults(
                stub, bench, sock, out / "daemon.log", more_checks, i2c_found))
            result["i2c_faults_s"] = round(time.monotonic() - t3, 2)
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
    (out / "gpio-trace.json").write_text(json.dumps({"sent": sent, "trace": trace, **matches}))
    from firmware_host.config import load_config

    inputs = load_config(config).inputs
    result |= analyse(sent, trace, matches["arbiter"], matches["phases"], inputs.debounce_ms,
                      inputs.min_press_us)
    result["checks"] |= more_checks
    result["i2c"] = {k: i2c_found[k] for k in ("bus", "adapter", "answered", "how") if k in i2c_found}
    result["i2c_faults"] = {k: v for k, v in i2c_found.items() if k not in result["i2c"]}
    result["problems"] += [f"{name} failed" for name, ok in more_checks.items() if not ok]
    result["problems"] += i2c_found.get("problems", [])
    result["ok"] = all(result["checks"].values())
    if daemon.returncode != 0:
        result["ok"] = False
        result["problems"].append(f"the daemon exited with {daemon.returncode} on SIGTERM")
    with contextlib.suppress(OSError):
        stub.close()
        chip.remove()
    return result


# ------------------------------------------------------------------ I2C (hil/i2c.py)


def attempt(name: str, checks: dict[str, bool], found: dict[str, Any], step: Any) -> None:
    """Run one I2C step; if it breaks (a wait that times out), its check fails and says why, and
    the GPIO part's own checks still count."""
    try:
        step()
    except Exception as exc:
        checks[name] = False
        found.setdefault("problems", []).append(f"{name}: {type(exc).__name__}: {exc}")

LEFT = 0x01  # A0 / B0: each seat's left (hardware/wiring/4-seat.toml)
NAV = {"nav1": (i2c.EXPANDERS["nav1"], 17, (1, 2)), "nav2": (i2c.EXPANDERS["nav2"], 27, (3, 4))}
"""expander -> its address, its INT's GPIO and the seats on ports A and B (the 4-seat build)."""


def missing(sock: Path) -> list[str]:
    return list(ask({"cmd": "status"}, sock)["hardware"]["missing"])


def i2c_at_start(stub: StubBus, mux_bus: int, sock: Path, log: Path, checks: dict[str, bool],
                 figures: dict[str, Any]) -> None:
    """What the daemon did on the bus as it started: the expanders set up register by register,
    seat 1's screen drawn through the mux's channel, seat 2's (blocked) and seats 3 and 4's (no
    such channel) reported as not answering, each saying why."""
    from firmware_host.devices.i2cmux import I2CBusMissing, channel_bus

    problems: list[str] = figures.setdefault("problems", [])
    behind = ("seat 1 screen", i2c.SCREEN_BEHIND_MUX)
    wait_for("seat 1's first frame in the stub", lambda: not i2c.screen_problems(
        stub.registers(behind[1], 0, 0x60)), 60)
    wanted = [f"seat 2 screen (i2c-{stub.number})", "seat 3 screen (mux 0x70 channel 2)",
              "seat 4 screen (mux 0x70 channel 3)"]
    down = wait_for("seats 2-4's screens reported", lambda: set(wanted) <= set(m := missing(sock)) and m, 60)
    checks["i2c_screens_degraded_named"] = set(wanted) <= set(down) and not any("seat 1" in m for m in down)
    text = log.read_text()
    checks["i2c_reasons_logged"] = ("has channels 0 but no channel-2" in text
                                    and f"i2c-{stub.number} at 0x3d: i2c-{stub.number}, address 0x3d: "
                                        "[Errno 16] Device or resource busy" in text)
    answered = {}
    found: list[str] = []
    for name, (address, _, _) in NAV.items():
        wrong = i2c.expander_problems(stub.registers(address, 0, 0x16), wired=0x1F1F)
        answered[f"0x{address:02x}"] = f"MCP23017 {name}: its registers as the set-up writes them"
        found += [f"expander {name}: {p}" for p in wrong]
    wrong = i2c.screen_problems(stub.registers(behind[1], 0, 0x60))
    answered["0x3c"] = f"SSD1306 seat 1 through the mux's channel-0 (i2c-{mux_bus}): window, set-up, data"
    found += [f"seat 1 screen: {p}" for p in wrong]
    checks["i2c_registers"] = not found
    problems += found
    checks["i2c_mux_channel_found"] = channel_bus(stub.number, i2c.MUX, 0) == mux_bus
    try:
        channel_bus(stub.number, i2c.MUX + 1, 0)
        checks["i2c_mux_without_driver_named"] = False
    except I2CBusMissing as exc:
        checks["i2c_mux_without_driver_named"] = "no driver has taken it" in str(exc)
    figures |= {"bus": f"/dev/i2c-{stub.number}", "adapter": i2c.STUB_NAME, "answered": answered,
                "how": f"i2c-stub at {', '.join(f'0x{a:02x}' for a in i2c.ADDRESSES)} through i2c-dev; "
                       f"0x70: the MPU-3050 driver's I2C gate as the mux (channel-0 = i2c-{mux_bus})",
                "degraded_at_start": down}


def latched_press(stub: StubBus, bench: Bench, sock: Path, name: str, port: int) -> dict[str, Any]:
    """A seat's `left` pressed and released on an expander: the bench latches what the chip would
    and pulls its INT low on the gpio-sim chip; the daemon reads the stub after the edge. The press
    must carry the INT edge's stamp (taken inside the bench's write)."""
    address, int_gpio, seats = NAV[name]
    seat = seats[port]
    timing: dict[str, Any] = {"expander": name, "seat": seat}
    for kind, levels in (("press", i2c.RELEASED & ~LEFT), ("release", i2c.RELEASED)):
        i2c.latch(stub, address, port, levels)
        before, after = bench.chip.press(int_gpio)
        time.sleep(0.05)
        bench.chip.release(int_gpio)
        got = wait_for(f"seat {seat}'s left {kind} from {name}", lambda k=kind, b=before: i2c.events_of(
            ask({"cmd": "inputs"}, sock), k, "left", b, seat), 30)
        i2c.unlatch(stub, address, port)
        timing[kind] = {"int_write_ns": [before, after], "ts_ns": got[0]["ts_ns"],
                        "inside_write": before <= got[0]["ts_ns"] <= after}
    return timing


def i2c_faults(stub: StubBus, bench: Bench, sock: Path, log: Path, checks: dict[str, bool],
               figures: dict[str, Any]) -> None:
    """Parts that stop and start answering while the table plays: seat 2's screen, refused at
    start, is let through and must come back; expander nav1 is refused mid-match, must be reported
    degraded while the slaps go on being decided, and must come back when let through again."""
    problems: list[str] = figures.setdefault("problems", [])
    ask({"cmd": "abort"}, sock)
    ask({"cmd": "start"}, sock)
    wait_for("play", lambda: ask({"cmd": "status"}, sock)["phase"] == "playing", 20)
    stub.unblock(i2c.SCREEN_ON_BUS)  # seat 2's screen plugged in: found at its next retry
    presses = [latched_press(stub, bench, sock, "nav2", 0)]  # the daemon's bus now selects 0x21
    stub.block(i2c.EXPANDERS["nav1"])
    before, _ = bench.chip.press(NAV["nav1"][1])  # INT: the daemon reads 0x20 and is refused
    time.sleep(0.05)
    bench.chip.release(NAV["nav1"][1])
    fault = wait_for("nav1 reported", lambda: i2c.events_of(ask({"cmd": "inputs"}, sock), "fault", "nav1",
                                                             before), 30)
    down = wait_for("nav1 in status", lambda: "expander nav1" in (m := missing(sock)) and m, 10)
    taps = [bench.tap(seat, "while nav1 is down") for seat in (2, 3)]
    decided = wait_for("slaps decided while nav1 is down", lambda: [
        e for e in ask({"cmd": "inputs"}, sock)["events"] if e.get("decided") == "slap"
        and any(e["ts_ns"] >= t.before_ns and e["seat"] == t.seat for t in taps)], 20)
    checks["i2c_degraded_and_playing"] = "expander nav1: [Errno 16] Device or resource busy" in \
        log.read_text() and len({e["seat"] for e in decided}) == 2
    stub.unblock(i2c.EXPANDERS["nav1"])
    since = time.monotonic_ns()
    back = wait_for("nav1 back", lambda: i2c.events_of(ask({"cmd": "inputs"}, sock), "recovered", "nav1",
                                                        since), 30)
    recovered_s = (back[0]["ts_ns"] - since) / S
    presses.append(latched_press(stub, bench, sock, "nav1", 0))  # nav1's buttons work again
    checks["i2c_nav_presses"] = all(p[k]["ts_ns"] >= p[k]["int_write_ns"][0] for p in presses
                                    for k in ("press", "release"))
    screen_back = wait_for("seat 2's screen back", lambda: f"seat 2 screen (i2c-{stub.number})"
                           not in missing(sock) and not i2c.screen_problems(
                               stub.registers(i2c.SCREEN_ON_BUS, 0, 0x60)), 60)
    final = missing(sock)
    checks["i2c_back"] = bool(screen_back) and "expander nav1" not in final
    if not checks["i2c_back"]:
        problems.append(f"still missing after the parts came back: {final}")
    figures["answered"]["0x3d"] = "SSD1306 seat 2 on the stub's bus: refused at start, drawn once let through"
    figures |= {"nav_presses": presses, "inside_write": sum(p[k]["inside_write"] for p in presses
                                                            for k in ("press", "release")),
                "nav1_down": down, "nav1_fault": fault[0], "nav1_back_after_s": round(recovered_s, 3),
                "missing_at_end": final}


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
