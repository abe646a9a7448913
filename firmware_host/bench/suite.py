"""`table-host bench engine`: how fast the rules engine referees Ligretto.

Two figures, both on one core (the process pins itself where the OS allows),
CPU time, best of 3 runs since the machines are shared:

- engine: the rules engine alone. Instant bots play the rounds first; then the
  timed part replays exactly their accepted actions through `Match.replay`,
  dealing and shuffling included. This is the work the table does per round,
  and the path it takes to recover a round after a power cut.
- with bots: the same rounds played live, the bots' own decisions included
  (what `table-host simulate` does).

The target (>= 1,500 rounds/s) is compared with the engine figure.
"""

from __future__ import annotations

import contextlib
import os
import platform
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..game.catalog import new_match, resources_for
from ..play.simulate import make_bots, play_round
from ..rules.match import Match
from ..system.memory import proc_status, rss_mb

ENGINE_TARGET_ROUNDS_PER_S = 1500
_MATCH_ROUNDS = 500


@contextlib.contextmanager
def _one_core() -> Iterator[int | None]:
    """Run on one core (the figure is per core), then give the process its cores back."""
    try:
        before = os.sched_getaffinity(0)
        cpu = min(before)
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError):
        yield None
        return
    try:
        yield cpu
    finally:
        os.sched_setaffinity(0, before)


def _play(rounds: int, game: str, players: int) -> tuple[list[Match], int, float]:
    """Play `rounds` rounds with instant bots: the matches, their actions, CPU seconds."""
    bots = make_bots(players, "instant", "bench")
    order = random.Random("bench")
    matches: list[Match] = []
    actions = 0
    started = time.process_time()
    played = 0
    while played < rounds:
        match = new_match(game, players, f"bench/{played}", {"rounds": min(_MATCH_ROUNDS, rounds - played)})
        matches.append(match)
        while True:
            actions += play_round(match, bots, order).actions
            played += 1
            if match.is_over:
                break
            match.next_round()
    return matches, actions, time.process_time() - started


def _replay(matches: list[Match]) -> float:
    """CPU seconds to rebuild every match from its journal."""
    work = [(m, m.journal, resources_for(m.game, m.players, m.options)) for m in matches]
    started = time.process_time()
    for m, journal, res in work:
        again = Match.replay(m.game, m.players, m.seed, m.options, journal, res)
        assert again.results == m.results  # the replay is the game that was played
    return time.process_time() - started


def bench_engine(rounds: int = 3000, game: str = "classic", players: int = 4,
                 repeats: int = 3) -> dict[str, Any]:
    live, replayed = [], []
    actions = 0
    with _one_core() as cpu:
        _play(5, game, players)  # warm up: imports, caches
        for _ in range(max(1, repeats)):
            matches, actions, cpu_live = _play(rounds, game, players)
            live.append(cpu_live)
            replayed.append(_replay(matches))
    best_engine, best_live = min(replayed), min(live)
    per_s = rounds / best_engine
    return {
        "game": game,
        "players": players,
        "rounds": rounds,
        "repeats": len(live),
        "actions": actions,
        "actions_per_round": round(actions / rounds, 1),
        "rounds_per_s": round(per_s, 1),
        "actions_per_s": round(actions / best_engine, 1),
        "rounds_per_s_all_runs": [round(rounds / s, 1) for s in replayed],
        "with_bots_rounds_per_s": round(rounds / best_live, 1),
        "with_bots_actions_per_s": round(actions / best_live, 1),
        "with_bots_rounds_per_s_all_runs": [round(rounds / s, 1) for s in live],
        "target_rounds_per_s": ENGINE_TARGET_ROUNDS_PER_S,
        "meets_target": per_s >= ENGINE_TARGET_ROUNDS_PER_S,
        "pinned_cpu": cpu,
        "python": platform.python_version(),
    }


def engine_text(f: dict[str, Any]) -> str:
    verdict = "meets" if f["meets_target"] else "MISSES"

    def runs(key: str) -> str:
        return ", ".join(str(round(x)) for x in f[key])

    return (
        f"engine: {f['players']}-player {f['game']}, {f['rounds']} rounds of instant bots, "
        f"one core (cpu {f['pinned_cpu']}), Python {f['python']}, best of {f['repeats']}\n"
        f"  rules engine:   {f['rounds_per_s']:.0f} rounds/s, {f['actions_per_s']:.0f} actions/s "
        f"({f['actions_per_round']} actions a round; runs: {runs('rounds_per_s_all_runs')})\n"
        f"  with the bots:  {f['with_bots_rounds_per_s']:.0f} rounds/s, "
        f"{f['with_bots_actions_per_s']:.0f} actions/s (runs: {runs('with_bots_rounds_per_s_all_runs')})\n"
        f"  target: rules engine >= {f['target_rounds_per_s']} rounds/s: {verdict}"
    )


ARBITRATION_PAIRS = 1_000_000


def bench_arbitration_order(pairs: int = ARBITRATION_PAIRS, seed: int = 1) -> dict[str, Any]:
    """Contested press pairs (delta >= epsilon), each press delivered late by up to the
    window, pairs overlapping in flight: how many come out in timestamp order."""
    from ..game.arbiter import Arbiter

    rng = random.Random(f"order/{seed}")
    arb = Arbiter(seed=seed)
    eps, window = arb.epsilon_ns, arb.window_ns
    first_of_pair: dict[int, int] = {}
    in_order = 0
    arrivals: list[tuple[int, int, int, int]] = []  # (arrives, ts, pair, which)
    started = time.process_time()
    t = 0
    batch = 20_000
    done = 0
    while done < pairs:
        arrivals.clear()
        for pair in range(done, min(pairs, done + batch)):
            t += rng.randint(200_000, 4_000_000)  # pairs start 0.2-4 ms apart: several in flight
            delta = rng.randint(eps, 4_000_000)
            for which, ts in ((0, t), (1, t + delta)):
                arrivals.append((ts + rng.randint(0, window), ts, pair, which))
        arrivals.sort()
        for arrive, ts, pair, which in arrivals:
            for p in arb.release(arrive):
                _score(p, first_of_pair)
            arb.push(pair, str(which), ts)
        done = min(pairs, done + batch)
        # Let the held presses of this batch out before the next batch starts later in time.
        for p in arb.release(t + window + eps + 1):
            _score(p, first_of_pair)
    for p in arb.flush():
        _score(p, first_of_pair)
    elapsed = time.process_time() - started
    in_order = sum(1 for v in first_of_pair.values() if v == 1)
    late = sum(1 for d in arb.decisions if d.kind == "late")
    return {
        "pairs": pairs,
        "pairs_in_order": in_order,
        "fraction_in_order": in_order / pairs,
        "late_presses": late,
        "presses_per_s": round(2 * pairs / elapsed),
        "window_ms": window / 1e6,
        "epsilon_ms": eps / 1e6,
        "target_fraction_in_order": 1.0,
        "meets_target": in_order == pairs,
    }


def _score(press: Any, first_of_pair: dict[int, int]) -> None:
    """1 when a pair's first press came out first, 0 when its second did."""
    if press.seat not in first_of_pair:
        first_of_pair[press.seat] = 1 if press.control == "0" else 0


LATENCY_MARGIN_MS = 0.5
"""The target: 99 % of presses decided within the window plus this (docs/fairness.md)."""
_BUSY = ("import os\nparent = os.getppid()\n"  # spins until the benchmark is gone, however it ends
         "while os.getppid() == parent:\n    for _ in range(100_000):\n        pass\n")


@contextlib.contextmanager
def _busy_processes(n: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """N processes that keep a core busy each, like other programs on a loaded Pi; they stop
    with the benchmark (and by themselves should it be killed)."""
    procs = [subprocess.Popen([sys.executable, "-c", _BUSY], stdin=subprocess.DEVNULL) for _ in range(n)]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def bench_arbitration_latency(seconds: float = 10.0, seats: int = 12, rate_hz: float = 10.0,
                              seed: int = 1, load: int = 0) -> dict[str, Any]:
    """Edge to engine decision, in real time: seats press mock pins from their own thread (the
    edge thread), the table loop sleeps until the arbiter's deadline, decides, and notes the
    time; both threads real-time like the daemon's (realtime.py), `load` busy processes beside."""
    import queue
    import statistics
    import threading

    from ..config import emulated_config
    from ..devices.emulated.pins import EmulatedButtons, emulated_factory
    from ..devices.inputs.pins import TableInputs
    from ..game.arbiter import Arbiter
    from ..game.referee import Referee
    from ..system.realtime import Realtime, make_normal

    cfg = emulated_config(seats)
    factory = emulated_factory()
    buttons = EmulatedButtons(cfg.inputs, factory)
    events: queue.SimpleQueue[Any] = queue.SimpleQueue()
    match = new_match("classic", seats, f"latency/{seed}", {"rounds": 1000})
    arbiter = Arbiter(round(cfg.arbiter.window_ms * 1e6), round(cfg.arbiter.epsilon_ms * 1e6), seed)
    referee = Referee(match, arbiter)
    inputs = TableInputs(cfg.inputs, factory, buttons.buses, events.put)
    inputs.gate.go(0)
    rng = random.Random(f"latency/{seed}")
    # Each seat presses rate_hz times a second, jittered ±10 %, at a random phase: mostly
    # slap, sometimes alt or a cursor move (which is not arbitrated, so not timed).
    plan: list[tuple[float, int, str]] = []
    period = 1.0 / rate_hz
    for seat in range(seats):
        at = rng.uniform(0, period)
        while at < seconds:
            plan.append((at, seat, rng.choices(["slap", "alt", "left", "right"], [6, 2, 1, 1])[0]))
            at += rng.uniform(0.9 * period, 1.1 * period)
    plan.sort()
    stop = threading.Event()
    refusals: list[str] = []
    latencies: list[int] = []
    lateness: list[int] = []  # how long after its deadline the table thread was running again
    out_of_order = 0
    newest = -(1 << 62)
    switch_interval = sys.getswitchinterval()

    def press_buttons() -> None:
        for at, seat, control in plan:
            delay = begin + at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            now = time.monotonic_ns()
            buttons.tap(seat, control, now, hold_ns=40_000_000)
        stop.set()

    with _busy_processes(load):  # started first: they must not inherit real-time priority
        realtime = Realtime(refusals.append)
        realtime.claim_game_thread()
        begin = time.monotonic() + 0.2
        presser = threading.Thread(target=press_buttons, name="buttons", daemon=True)
        presser.start()
        realtime.claim("edges", presser.native_id or 0)
        priority = realtime.status()
        try:
            while not (stop.is_set() and arbiter.held == 0 and events.empty()):
                due = referee.next_deadline()
                timeout = 0.05 if due is None else max(0.0, (due - time.monotonic_ns()) / 1e9)
                try:
                    referee.on_input(events.get(timeout=timeout))
                    while True:
                        referee.on_input(events.get_nowait())
                except queue.Empty:
                    if due is not None:
                        lateness.append(time.monotonic_ns() - due)
                outcomes = referee.decide(time.monotonic_ns())
                if outcomes:
                    decided = time.monotonic_ns()
                    for o in outcomes:
                        latencies.append(decided - o.press.ts)
                        out_of_order += o.press.ts + arbiter.epsilon_ns <= newest
                        newest = max(newest, o.press.ts)
                    if match.round.result is not None:
                        match.next_round()
        finally:
            presser.join()
            inputs.close()
            make_normal(0)  # the benchmark's caller gets its thread back as it was
            sys.setswitchinterval(switch_interval)
    latencies.sort()
    lateness.sort()
    window_ms = arbiter.window_ns / 1e6

    def pct(values: list[int], q: float) -> float | None:
        return round(values[min(len(values) - 1, int(q * len(values)))] / 1e6, 3) if values else None

    p99 = pct(latencies, 0.99)
    target = window_ms + LATENCY_MARGIN_MS
    late = sum(1 for d in arbiter.decisions if d.kind == "late")
    return {
        "seats": seats,
        "presses_per_seat_per_s": rate_hz,
        "seconds": seconds,
        "load": load,
        "priority": priority,
        "realtime_refused": refusals[0] if refusals else "",
        "decisions": len(latencies),
        "decisions_in_order": len(latencies) - out_of_order,
        "fraction_in_order": (len(latencies) - out_of_order) / len(latencies) if latencies else None,
        "late_presses": late,
        "p50_ms": pct(latencies, 0.50),
        "p99_ms": p99,
        "max_ms": round(latencies[-1] / 1e6, 3) if latencies else None,
        "mean_ms": round(statistics.fmean(latencies) / 1e6, 3) if latencies else None,
        "wakeups": len(lateness),
        "wake_late_p50_ms": pct(lateness, 0.50),
        "wake_late_p99_ms": pct(lateness, 0.99),
        "wake_late_max_ms": round(lateness[-1] / 1e6, 3) if lateness else None,
        "window_ms": window_ms,
        "epsilon_ms": arbiter.epsilon_ns / 1e6,
        "target_p99_ms": target,
        "meets_target": bool(latencies) and p99 is not None and p99 <= target and out_of_order == 0,
    }


def arbitration_text(order: dict[str, Any], latency: dict[str, Any]) -> str:
    lat = latency
    prio = lat["priority"]
    threads = f"table thread {prio['game']}, edge thread {prio['edges']}"
    return (
        f"arbitration: window {order['window_ms']} ms, epsilon {order['epsilon_ms']} ms\n"
        f"  order: {order['pairs_in_order']:,} of {order['pairs']:,} contested pairs released in "
        f"timestamp order ({order['fraction_in_order']:.6%}), {order['late_presses']} late "
        f"(arrived after a tie within epsilon was drawn), {order['presses_per_s']:,} presses/s: "
        f"{'meets' if order['meets_target'] else 'MISSES'} 100 %\n"
        f"  real time: {lat['seats']} seats x {lat['presses_per_seat_per_s']:g} presses/s through mock pins "
        f"for {lat['seconds']:g} s, {lat['load']} busy processes beside; {threads}\n"
        + (f"    {lat['realtime_refused']}\n" if lat["realtime_refused"] else "")
        + f"    in timestamp order: {lat['decisions_in_order']} of {lat['decisions']} decisions "
        f"({(lat['fraction_in_order'] or 0):.4%}), {lat['late_presses']} late\n"
        f"    edge to engine decision: p50 {lat['p50_ms']} ms, p99 {lat['p99_ms']} ms, "
        f"max {lat['max_ms']} ms\n"
        f"    table thread woken after its deadline by: p50 {lat['wake_late_p50_ms']} ms, "
        f"p99 {lat['wake_late_p99_ms']} ms, max {lat['wake_late_max_ms']} ms ({lat['wakeups']} wake-ups)\n"
        f"    target: all in order and p99 <= W + {LATENCY_MARGIN_MS} ms = {lat['target_p99_ms']} ms: "
        f"{'meets' if lat['meets_target'] else 'MISSES'}"
    )


DISPLAY_TARGET_P99_MS = 5.0
I2C_HZ = 400_000
SPI_HZ = 8_000_000
USB_BYTES_PER_S = 1_000_000  # USB full speed CDC, a conservative effective rate


def bench_display(decisions: int = 1500, seed: int = 1) -> dict[str, Any]:
    """Engine decision to every affected display's frame queued, per game, on real workers."""
    import statistics
    import tempfile

    from ..devices.displays.ledlink import LedLink, frame_payload
    from ..devices.displays.ledproto import OVERHEAD
    from ..devices.displays.oled import DisplaySpec, SeatDisplays, open_luma
    from ..devices.emulated.oled import RecordingInterface, recording_opener
    from ..game.controls import SeatController
    from ..rules.sight import sight_of
    from ..service.screens import TableScreens
    from ..views.centre import render_centre
    from ..views.seat import render_seat

    # Bytes one seat frame puts on its bus, from the real drivers.
    wire = {}
    for kind in ("ssd1306", "sh1106"):
        interface = RecordingInterface()
        device = open_luma(DisplaySpec(0, kind), interface)
        start = len(interface.transfers)
        from PIL import Image

        device.display(Image.new("1", (128, 64), 1))
        frame = interface.transfers[start:]
        wire[kind] = {"i2c_bytes": interface.i2c_bytes(frame),
                      "spi_bytes": sum(len(p) for _, p in frame)}
    centre_bytes = OVERHEAD + len(frame_payload(Image.new("RGB", (32, 16))))
    buses = {
        "oled_ssd1306_i2c_ms": round(wire["ssd1306"]["i2c_bytes"] * 9 / I2C_HZ * 1e3, 2),
        "oled_sh1106_i2c_ms": round(wire["sh1106"]["i2c_bytes"] * 9 / I2C_HZ * 1e3, 2),
        "oled_ssd1306_spi_ms": round(wire["ssd1306"]["spi_bytes"] * 8 / SPI_HZ * 1e3, 3),
        "centre_usb_serial_ms": round(centre_bytes / USB_BYTES_PER_S * 1e3, 2),
    }
    games: dict[str, Any] = {}
    all_times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        # The controller is a chip of its own on the real table: here a process of its own.
        emulator = subprocess.Popen([sys.executable, "-m", "firmware_host.devices.emulated.led", tmp],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert emulator.stdout is not None
        path = emulator.stdout.readline().strip()
        link = LedLink(path, 32, 16)
        try:
            for game, players in (("classic", 12), ("classic", 4), ("dice", 4), ("domino", 4),
                                  ("crazy", 5)):
                long_match = {"rounds": 1000, **({"target": 10_000} if game == "crazy" else {})}
                match = new_match(game, players, f"display/{seed}", long_match)
                seats = [SeatController(s, match) for s in range(players)]
                specs = [DisplaySpec(s, bus=f"mux 0x{0x70 + s // 8:x} channel {s % 8}")
                         for s in range(players)]
                oleds = SeatDisplays(specs, recording_opener({}))
                screens = TableScreens(seats, oleds, link)
                screens.refresh(range(players))
                bots = make_bots(players, "instant", seed)
                rng = random.Random(seed)
                times: list[float] = []
                queued = 0
                seat_ms, centre_ms = [], []
                while len(times) < decisions:
                    if match.round.result is not None:
                        match.next_round()
                        screens.refresh(range(players))
                    seat = rng.randrange(players)
                    action = bots[seat].choose(sight_of(match.round, seat), len(times))
                    if action is None:
                        continue
                    match.apply(action)  # the engine's decision...
                    n, took = screens.after_decisions([seat])  # ...to every affected frame queued
                    times.append(took)
                    queued += n
                    if len(times) % 50 == 1:  # the first decision too: a short run has one
                        t0 = time.perf_counter()
                        render_seat(seats[seat])
                        t1 = time.perf_counter()
                        render_centre(match)
                        seat_ms.append((t1 - t0) * 1e3)
                        centre_ms.append((time.perf_counter() - t1) * 1e3)
                oleds.close()
                times.sort()
                all_times += times
                games[f"{game}_{players}"] = {
                    "decisions": len(times),
                    "frames_queued_per_decision": round(queued / len(times), 2),
                    "queue_p50_ms": round(times[len(times) // 2] * 1e3, 3),
                    "queue_p99_ms": round(times[int(len(times) * 0.99)] * 1e3, 3),
                    "render_seat_ms": round(statistics.fmean(seat_ms), 3),
                    "render_centre_ms": round(statistics.fmean(centre_ms), 3),
                }
        finally:
            link.close()
            assert emulator.stdin is not None
            emulator.stdin.close()
            emulator.wait(timeout=5)
    all_times.sort()
    p99 = all_times[int(len(all_times) * 0.99)] * 1e3
    return {
        "games": games,
        "bytes_per_frame": {"oled_ssd1306_i2c": wire["ssd1306"]["i2c_bytes"],
                            "oled_sh1106_i2c": wire["sh1106"]["i2c_bytes"],
                            "oled_ssd1306_spi": wire["ssd1306"]["spi_bytes"],
                            "centre_usb_serial_32x16": centre_bytes},
        "bus_time_per_frame": buses,
        "queue_p99_ms": round(p99, 3),
        "target_p99_ms": DISPLAY_TARGET_P99_MS,
        "meets_target": p99 <= DISPLAY_TARGET_P99_MS,
    }


def display_text(f: dict[str, Any]) -> str:
    lines = ["display: engine decision to every affected frame queued (real OLED workers, "
             "LED link to the emulated controller)"]
    for name, g in f["games"].items():
        lines.append(f"  {name:<11} p50 {g['queue_p50_ms']:.3f} ms, p99 {g['queue_p99_ms']:.3f} ms, "
                     f"{g['frames_queued_per_decision']} frames/decision; render seat "
                     f"{g['render_seat_ms']:.3f} ms, centre {g['render_centre_ms']:.3f} ms")
    b, t = f["bytes_per_frame"], f["bus_time_per_frame"]
    lines.append(f"  bytes per frame: OLED I2C {b['oled_ssd1306_i2c']} (SSD1306) / {b['oled_sh1106_i2c']} "
                 f"(SH1106), OLED SPI {b['oled_ssd1306_spi']}, centre {b['centre_usb_serial_32x16']}")
    lines.append(f"  modelled bus time: I2C 400 kHz {t['oled_ssd1306_i2c_ms']} ms / "
                 f"{t['oled_sh1106_i2c_ms']} ms, SPI 8 MHz {t['oled_ssd1306_spi_ms']} ms, "
                 f"USB serial {t['centre_usb_serial_ms']} ms")
    lines.append(f"  target: p99 <= {f['target_p99_ms']} ms: {'meets' if f['meets_target'] else 'MISSES'} "
                 f"({f['queue_p99_ms']} ms)")
    return "\n".join(lines)


IDLE_TARGET_PERCENT = 0.5
RSS_TARGET_MB = 80.0


def bench_daemon(idle_s: float = 10.0, play_s: float = 15.0) -> dict[str, Any]:
    """The real daemon process, emulated and headless: CPU while idle, memory while a
    4-seat bot match runs (as the Pi would run it, minus the hardware)."""
    from .soak import emulated_daemon

    def cpu_ticks(pid: int) -> int:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime

    hz = os.sysconf("SC_CLK_TCK")
    with emulated_daemon() as daemon:
        pid = daemon.proc.pid
        time.sleep(1.0)  # settle
        before = cpu_ticks(pid)
        time.sleep(idle_s)
        idle = (cpu_ticks(pid) - before) / hz / idle_s * 100
        idle_rss = rss_mb(pid)
        daemon.ask({"cmd": "new", "game": "classic", "options": {}})
        daemon.ask({"cmd": "bots", "count": 4, "level": "hard"})
        daemon.ask({"cmd": "start"})
        before = cpu_ticks(pid)
        time.sleep(play_s)
        playing = (cpu_ticks(pid) - before) / hz / play_s * 100
        status = daemon.ask({"cmd": "status"})
        peak = proc_status(pid, "VmHWM") / 1024
    return {
        "idle_seconds": idle_s,
        "idle_cpu_percent": round(idle, 3),
        "idle_rss_mb": round(idle_rss, 1),
        "playing_seconds": play_s,
        "playing_cpu_percent": round(playing, 2),
        "peak_rss_mb": round(peak, 1),
        "phase_after_play": status.get("phase"),
        "target_idle_cpu_percent": IDLE_TARGET_PERCENT,
        "target_rss_mb": RSS_TARGET_MB,
        "meets_target": idle < IDLE_TARGET_PERCENT and peak < RSS_TARGET_MB,
    }


def daemon_text(f: dict[str, Any]) -> str:
    return (
        f"daemon (emulated, headless): idle {f['idle_cpu_percent']} % of a core over "
        f"{f['idle_seconds']:g} s, {f['idle_rss_mb']} MB; a 4-seat bot match: "
        f"{f['playing_cpu_percent']} % CPU, peak {f['peak_rss_mb']} MB resident\n"
        f"  targets: idle < {f['target_idle_cpu_percent']} %, RSS < {f['target_rss_mb']:g} MB: "
        f"{'meets' if f['meets_target'] else 'MISSES'}"
    )
