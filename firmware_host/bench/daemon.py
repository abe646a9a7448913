"""`table-host bench daemon`: the real daemon process, emulated and headless: CPU while idle,
memory while a bot match runs."""

from __future__ import annotations

import os
import time
from typing import Any

from ..system.memory import proc_status, rss_mb
from .harness import cpu_ticks, emulated_daemon

IDLE_TARGET_PERCENT = 0.5
RSS_TARGET_MB = 80.0


def bench_daemon(idle_s: float = 10.0, play_s: float = 15.0) -> dict[str, Any]:
    """The real daemon process, emulated and headless: CPU while idle, memory while a
    4-seat bot match runs (as the Pi would run it, minus the hardware)."""
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
