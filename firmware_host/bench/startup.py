"""`table-host bench startup`: how much CPU the table's commands spend before they do anything.

Three figures, each the median of several runs, in CPU time (user + system), since wall time on
a shared machine says more about the neighbours than about us:

- `tablectl --json status` against a running emulated daemon: the whole child process, from exec
  to exit (its rusage, wait4(2)). Scripts poll it: it should import only the client. And
  `tablectl status`, as a person reads it: the same and rich's tables (cli/show.py), which cost
  about as much again as the rest; a person types it once and reads it.
- `table-host --version`: the same, for the command line's own start.
- the daemon, `table-host run --emulate --ui none`, until it says READY=1 on a NOTIFY_SOCKET this
  bench listens on, as systemd would (sd_notify(3)): its utime + stime then, from /proc/PID/stat.
  Its re-exec with the table's allocator (system/memory.py) is the same process, so it counts.

The commands are the installed entry points beside this interpreter when there are any (what a
person runs), else `python -m` the same modules. The package's bytecode is compiled first, as
`pip install` does on the Pi: a tree run with PYTHONDONTWRITEBYTECODE (or edited since it last
ran) would otherwise compile each module it loads again in every run, and a third of the figure
would be that. Targets are for this machine; a Pi 4 is 3-4 times slower.
"""

from __future__ import annotations

import compileall
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..system.children import ending_with_me
from .harness import ROOT, cpu_ticks, daemon_env, emulated_daemon, stop

TARGETS = {"tablectl_status_cpu_ms": 60.0, "tablectl_status_human_cpu_ms": 150.0, "version_cpu_ms": 60.0,
           "daemon_ready_cpu_s": 0.45}
"""At most this much CPU each (the median of the runs)."""
READY_TIMEOUT_S = 60.0


def entry_point(name: str, module: str) -> list[str]:
    """The installed script `name` beside this interpreter, else `python -m module`."""
    script = Path(sys.executable).with_name(name)
    return [str(script)] if script.exists() else [sys.executable, "-m", module]


def child_cpu_s(command: list[str], env: dict[str, str]) -> tuple[float, int]:
    """CPU seconds (user + system) a command spends from exec to exit, and its exit status."""
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=ending_with_me())
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, proc.returncode


def daemon_ready_cpu_s(directory: Path) -> tuple[float, float]:
    """The daemon's CPU seconds and wall seconds until READY=1 reaches our notify socket."""
    env = daemon_env(directory)
    address = str(directory / "notify.sock")
    env["NOTIFY_SOCKET"] = address
    command = [*entry_point("table-host", "firmware_host"), "run", "--emulate", "--ui", "none"]
    hz = os.sysconf("SC_CLK_TCK")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind(address)
        started = time.monotonic()
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                preexec_fn=ending_with_me(signal.SIGTERM))
        try:
            while True:
                left = started + READY_TIMEOUT_S - time.monotonic()
                if left <= 0 or proc.poll() is not None:
                    raise RuntimeError(f"the daemon did not say READY=1 (exit status {proc.poll()}, "
                                       f"{time.monotonic() - started:.1f} s)")
                listener.settimeout(min(left, 0.5))
                try:
                    message = listener.recv(4096).decode(errors="replace")
                except TimeoutError:
                    continue
                if "READY=1" in message.splitlines():
                    cpu = cpu_ticks(proc.pid) / hz
                    return cpu, time.monotonic() - started
        finally:
            stop(proc)


def _median(values: list[float], digits: int) -> float:
    return round(statistics.median(values), digits)


def bench_startup(runs: int = 5) -> dict[str, Any]:
    runs = max(1, runs)
    compileall.compile_dir(Path(__file__).resolve().parents[1], quiet=1)  # as an installed table has it
    ctl = [*entry_point("tablectl", "firmware_host.cli.ctl"), "--json", "status"]
    human = [*entry_point("tablectl", "firmware_host.cli.ctl"), "status"]
    version = [*entry_point("table-host", "firmware_host"), "--version"]
    failures: list[str] = []
    status_ms: list[float] = []
    human_ms: list[float] = []
    version_ms: list[float] = []
    with emulated_daemon() as daemon:
        for _ in range(runs):
            for command, times in ((ctl, status_ms), (human, human_ms)):
                cpu, code = child_cpu_s(command, daemon.env)
                times.append(cpu * 1e3)
                if code != 0:
                    failures.append(f"{' '.join(command)}: exit status {code}")
    for _ in range(runs):
        cpu, code = child_cpu_s(version, dict(os.environ))
        version_ms.append(cpu * 1e3)
        if code != 0:
            failures.append(f"{' '.join(version)}: exit status {code}")
    ready_s: list[float] = []
    ready_wall_s: list[float] = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="table-startup-") as tmp:
            cpu, wall = daemon_ready_cpu_s(Path(tmp))
        ready_s.append(cpu)
        ready_wall_s.append(wall)
    figures = {
        "runs": runs,
        "tablectl_status_cpu_ms": _median(status_ms, 1),
        "tablectl_status_human_cpu_ms": _median(human_ms, 1),
        "version_cpu_ms": _median(version_ms, 1),
        "daemon_ready_cpu_s": _median(ready_s, 3),
        "daemon_ready_wall_s": _median(ready_wall_s, 3),
        "all_runs": {"tablectl_status_cpu_ms": [round(v, 1) for v in status_ms],
                     "tablectl_status_human_cpu_ms": [round(v, 1) for v in human_ms],
                     "version_cpu_ms": [round(v, 1) for v in version_ms],
                     "daemon_ready_cpu_s": [round(v, 3) for v in ready_s]},
        "commands": {"tablectl_status": " ".join(ctl), "tablectl_status_human": " ".join(human),
                     "version": " ".join(version),
                     "daemon": "table-host run --emulate --ui none, until READY=1"},
        "targets": dict(TARGETS),
        "failures": failures,
    }
    met = {name: figures[name] <= target for name, target in TARGETS.items()}
    figures["met"] = met
    figures["meets_target"] = all(met.values()) and not failures
    return figures


def startup_text(f: dict[str, Any]) -> str:
    def verdict(name: str) -> str:
        return "meets" if f["met"][name] else "MISSES"

    t = f["targets"]
    lines = [
        f"startup: CPU time (user + system), median of {f['runs']} run{'s' if f['runs'] != 1 else ''}",
        f"  tablectl --json status (a running emulated daemon): {f['tablectl_status_cpu_ms']:g} ms "
        f"(target <= {t['tablectl_status_cpu_ms']:g} ms): {verdict('tablectl_status_cpu_ms')}",
        f"  tablectl status, its tables: {f['tablectl_status_human_cpu_ms']:g} ms "
        f"(target <= {t['tablectl_status_human_cpu_ms']:g} ms): {verdict('tablectl_status_human_cpu_ms')}",
        f"  table-host --version: {f['version_cpu_ms']:g} ms "
        f"(target <= {t['version_cpu_ms']:g} ms): {verdict('version_cpu_ms')}",
        f"  daemon --ui none until READY=1: {f['daemon_ready_cpu_s']:g} s CPU, "
        f"{f['daemon_ready_wall_s']:g} s wall (target <= {t['daemon_ready_cpu_s']:g} s CPU): "
        f"{verdict('daemon_ready_cpu_s')}",
    ]
    lines += [f"  FAILED: {failure}" for failure in f["failures"]]
    return "\n".join(lines)

