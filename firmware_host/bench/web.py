"""`table-host bench web`: what the web view costs the table, measured with real WebSocket clients
(aiohttp's) against the real daemon process, emulated and headless, while bots play at every seat
of the 12-seat build (its wiring file written as the daemon's table.toml: the most decisions a
page has to show, the largest frames).

- decision -> browser: for every decision a browser sees, the moment its frame was read off the
  socket here minus `decided_ns`, when the engine decided (both CLOCK_MONOTONIC, one machine);
  p50 and p99 over every client. Target: p99 <= 100 ms.
- CPU added by the clients: the table's CPU (/proc/PID/stat: the daemon and the web view's own
  process, docs/web.md "Its own process", together) during a bot match with `clients`
  browsers connected, minus the same with none, in turns (none, all, none, ... SLICES times),
  `seconds` in all each way. Target: at most 5 % of one core for 20 browsers.
- memory per client: the same two processes' resident memory with them connected minus
  without, divided.
- decision -> a real browser's redraw: Debian's chromium (headless, driven by Playwright) shows
  the TV page (/big, 1920x1080) for `seconds`; the page notes, for each decision a frame brings,
  the start of the animation frame that paints it (`requestAnimationFrame` after the frame is
  drawn), on the wall clock (`performance.timeOrigin + performance.now()`), which this process
  maps to CLOCK_MONOTONIC (one machine, one clock). Target: p99 <= 100 ms, as above.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
from typing import Any

from ..system.memory import rss_mb
from .harness import cpu_ticks, emulated_daemon, family

TARGET_P99_MS = 100.0
SEATS = 12  # the largest table: issue 31 asks the 100 ms with 12 seats
CHROMIUM = "/usr/bin/chromium"

# Put into the page after it has loaded: each decision a frame brings, the moment the frame that
# paints it begins (the first frame's decisions are older than the page, and only noted as seen).
NOTE_REDRAWS = """() => {
  const seen = new Set(), drawn = [], key = (d) => d.seat + "/" + d.ts_ns + "/" + d.decided_ns;
  let frames = 0;
  const draw = window.received;
  window.received = (s) => {
    draw(s);
    frames += 1;
    const fresh = (s.decisions || []).filter((d) => !seen.has(key(d)));
    for (const d of fresh) seen.add(key(d));
    if (frames > 1 && fresh.length) {
      requestAnimationFrame(() => {
        const at = performance.timeOrigin + performance.now();
        for (const d of fresh) drawn.push([d.decided_ns, at]);
      });
    }
  };
  window.benchDrawn = drawn;
}"""
TARGET_CPU_PERCENT = 5.0
SLICES = 3  # turns without and with the browsers


class Watcher:
    """One browser: reads every frame, notes when each decision first reached it."""

    def __init__(self) -> None:
        self.latencies_ms: list[float] = []
        self.frames = 0
        self._seen: set[tuple[int, int, int]] = set()

    def take(self, data: str, read_ns: int) -> None:
        """The first frame is the one a newcomer is given at once: its decisions are older than
        the connection, so they are only noted as seen."""
        self.frames += 1
        for d in json.loads(data).get("decisions", ()):
            key = (d["seat"], d["ts_ns"], d["decided_ns"])
            if key not in self._seen:
                self._seen.add(key)
                if self.frames > 1:
                    self.latencies_ms.append((read_ns - d["decided_ns"]) / 1e6)


async def _watch(url: str, clients: int, seconds: float, pid: int) -> tuple[list[Watcher], float]:
    """`clients` browsers for `seconds`; the daemon's resident MB halfway, all of them connected."""
    import aiohttp

    watchers = [Watcher() for _ in range(clients)]
    async with aiohttp.ClientSession() as session:
        sockets = [await session.ws_connect(url + "live", heartbeat=None) for _ in watchers]
        end = time.monotonic() + seconds

        async def read(ws: Any, watcher: Watcher) -> None:
            while (left := end - time.monotonic()) > 0:
                try:
                    message = await ws.receive(timeout=left)
                except TimeoutError:
                    return
                if message.type != aiohttp.WSMsgType.TEXT:
                    return
                watcher.take(message.data, time.monotonic_ns())

        readers = asyncio.gather(*(read(ws, w) for ws, w in zip(sockets, watchers, strict=True)))
        await asyncio.sleep(seconds / 2)
        rss = sum(rss_mb(p) for p in family(pid))
        await readers
        for ws in sockets:
            await ws.close()
    return watchers, rss


def _in_chromium(url: str, seconds: float) -> list[float]:
    """Decision -> redraw in a real browser, in ms, each decision a frame brought while watched."""
    if not os.path.exists(CHROMIUM):
        raise RuntimeError(f"{CHROMIUM} is missing: bench web times a real browser "
                           "(apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise RuntimeError("bench web drives chromium with Playwright, which is not installed "
                           "(pip install -e '.[dev]')") from exc
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            page.goto(url + "big")
            page.wait_for_function("() => window.tableFrames > 0", timeout=30_000)
            page.evaluate(NOTE_REDRAWS)
            # `seconds`, and on until 40 decisions are drawn, for at most a round's result (10 s)
            # more: a round that ends while the page is watched brings none meanwhile.
            end = time.monotonic() + seconds
            while time.monotonic() < end + 12 and \
                    (time.monotonic() < end or page.evaluate("() => window.benchDrawn.length") < 40):
                page.wait_for_timeout(500)
            drawn = page.evaluate("() => window.benchDrawn")
            wall_minus_monotonic = time.time_ns() - time.monotonic_ns()  # the same clock, read now
        finally:
            browser.close()
    return [(at_ms * 1e6 - wall_minus_monotonic - decided_ns) / 1e6 for decided_ns, at_ms in drawn]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def bench_web(seconds: float = 15.0, clients: int = 20) -> dict[str, Any]:
    hz = os.sysconf("SC_CLK_TCK")
    from ..config.load import WIRING

    wiring = (WIRING / f"{SEATS}-seat.toml").read_text(encoding="utf-8")
    with emulated_daemon(config=wiring) as daemon:
        pid = daemon.proc.pid
        url = daemon.ask({"cmd": "status"}).get("web")
        if not url:
            raise RuntimeError("the daemon serves no web view (status names no address)")
        daemon.ask({"cmd": "new", "game": "classic", "options": {"rounds": 50}})
        for ask in ({"cmd": "bots", "count": SEATS, "level": "hard"}, {"cmd": "start"}):
            answer = daemon.ask(ask)
            if not answer.get("ok"):
                raise RuntimeError(f"the {SEATS}-seat table refused {ask['cmd']}: {answer.get('error')}")
        time.sleep(2.0)  # the countdown: bots at play
        players = len(daemon.ask({"cmd": "status"}).get("totals") or [])
        if players != SEATS:
            raise RuntimeError(f"the bench's match has {players} players, not {SEATS}")

        def cpu_percent(work: Any) -> tuple[float, Any]:
            pids = family(pid)  # the web view's process is the daemon's child
            before, started = sum(cpu_ticks(p) for p in pids), time.monotonic()
            result = work()
            after = sum(cpu_ticks(p) for p in pids)
            return (after - before) / hz / (time.monotonic() - started) * 100, result

        # Without and with the browsers in turn, SLICES times each, so that the match's own ups
        # and downs (a round's result, a burst of plays) fall on both sides alike.
        rss_before = sum(rss_mb(p) for p in family(pid))
        alone_runs, watched_runs, watchers, rss_seen = [], [], [], []
        part = seconds / SLICES
        for _ in range(SLICES):
            alone_runs.append(cpu_percent(lambda: time.sleep(part))[0])
            cpu, (ran, rss) = cpu_percent(lambda: asyncio.run(_watch(url, clients, part, pid)))
            watched_runs.append(cpu)
            watchers += ran
            rss_seen.append(rss)
        alone_runs.append(cpu_percent(lambda: time.sleep(part))[0])
        rss_with = statistics.median(rss_seen)
        redraws = _in_chromium(url, seconds) or [float("inf")]  # none seen: missed
        phase = daemon.ask({"cmd": "status"}).get("phase")
    latencies = [ms for w in watchers for ms in w.latencies_ms] or [float("inf")]  # none seen: missed
    alone, watched = statistics.mean(alone_runs), statistics.mean(watched_runs)
    added = watched - alone
    p50, p99 = _percentile(latencies, 50), _percentile(latencies, 99)
    page50, page99 = _percentile(redraws, 50), _percentile(redraws, 99)
    return {
        "seats": SEATS,
        "load_1min": round(os.getloadavg()[0], 1),
        "clients": clients,
        "seconds": seconds,
        "decisions_seen": sum(len(w.latencies_ms) for w in watchers),
        "frames_per_client": round(statistics.mean(w.frames for w in watchers) * SLICES, 1),
        "latency_p50_ms": _ms(p50),
        "latency_p99_ms": _ms(p99),
        "latency_max_ms": _ms(max(latencies)),
        "chromium_decisions_seen": len([ms for ms in redraws if ms != float("inf")]),
        "chromium_redraw_p50_ms": _ms(page50),
        "chromium_redraw_p99_ms": _ms(page99),
        "chromium_redraw_max_ms": _ms(max(redraws)),
        "cpu_percent_without_clients": round(alone, 2),
        "cpu_percent_with_clients": round(watched, 2),
        "cpu_percent_added": round(added, 2),
        "rss_mb_without_clients": round(rss_before, 1),
        "rss_mb_with_clients": round(rss_with, 1),
        "memory_kb_per_client": round(max(0.0, rss_with - rss_before) * 1024 / clients, 1),
        "phase_after": phase,
        "target_latency_p99_ms": TARGET_P99_MS,
        "target_cpu_percent_added": TARGET_CPU_PERCENT,
        "meets_target": p99 <= TARGET_P99_MS and page99 <= TARGET_P99_MS and added <= TARGET_CPU_PERCENT,
    }


def _ms(value: float) -> float | None:
    """None when no decision reached a browser (JSON has no infinity)."""
    return round(value, 2) if value != float("inf") else None


def web_text(f: dict[str, Any]) -> str:
    return (
        f"web view ({f['clients']} browsers, a {f['seats']}-bot match, {f['seconds']:g} s each way, "
        f"load {f['load_1min']}): "
        f"decision -> browser p50 {f['latency_p50_ms']} ms, p99 {f['latency_p99_ms']} ms "
        f"(max {f['latency_max_ms']} ms, {f['decisions_seen']} seen); "
        f"CPU {f['cpu_percent_without_clients']} % -> {f['cpu_percent_with_clients']} % of a core "
        f"({f['cpu_percent_added']:+g} %); "
        f"{f['memory_kb_per_client']} KB a browser\n"
        f"  in chromium (the TV page, {f['seconds']:g} s): decision -> redraw p50 "
        f"{f['chromium_redraw_p50_ms']} ms, p99 {f['chromium_redraw_p99_ms']} ms "
        f"(max {f['chromium_redraw_max_ms']} ms, {f['chromium_decisions_seen']} seen)\n"
        f"  targets: p99 <= {f['target_latency_p99_ms']:g} ms (both), CPU added <= "
        f"{f['target_cpu_percent_added']:g} %: {'meets' if f['meets_target'] else 'MISSES'}"
    )
