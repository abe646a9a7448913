"""The daemon's memory allocator, chosen for a process that runs for a season.

`table-host bench soak` found that, with every record the daemon keeps bounded and the Python
objects it holds flat (tracemalloc snapshots minutes apart agree within the current match's
state), resident memory still crept up under CPython's own small-object allocator, pymalloc:
about 2 MB an hour over the first half hour, slowing but not stopping. pymalloc gives a 1 MiB
arena back only when its last object dies, and it never hands back the pages of empty pools
inside an arena it keeps; each long round (a Domino round's journal held thousands of
actions) set a new high-water mark that the next, longer one raised again.

With the C library's malloc instead (PYTHONMALLOC=malloc) and two arenas (MALLOC_ARENA_MAX=2;
glibc would open up to eight per core, one per thread that allocates, and memory freed in one is
no use to another), freed memory is coalesced and reused, and the same soak stayed flat after its
warm-up. The figures are in docs/daemon.md.

Both are read once, when the interpreter and the C library start, so `table-host run` starts
itself again with them set (execve: the same process ID, so systemd's notifications and watchdog
still come from its main PID); `table-host bench` does too, as it times the table's code. The
service's unit sets them itself, so on the Pi that never happens. A value the operator set, to
anything, is kept: PYTHONMALLOC=pymalloc_debug for a diagnosis must not be overridden.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
import tracemalloc
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import PathError
from .logs import logger

ALLOCATOR = {"PYTHONMALLOC": "malloc", "MALLOC_ARENA_MAX": "2"}


def missing(environ: Mapping[str, str]) -> dict[str, str]:
    """The allocator settings this environment does not choose at all (empty is unset, as Python
    and glibc read it)."""
    return {k: v for k, v in ALLOCATOR.items() if not environ.get(k)}


def restart_with_allocator(argv: Sequence[str] | None = None) -> None:
    """Become a fresh interpreter, the same command, with the allocator chosen; return only when
    it is chosen already (or set otherwise on purpose)."""
    add = missing(os.environ)
    if not add:
        return
    command = list(argv if argv is not None else sys.orig_argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, command, {**os.environ, **add})


def describe(environ: Mapping[str, str] | None = None) -> str:
    """The allocator in force, in `tablectl status`: what was read when this process started."""
    env = os.environ if environ is None else environ
    chosen = env.get("PYTHONMALLOC") or "pymalloc (Python's default)"
    arenas = env.get("MALLOC_ARENA_MAX")
    return f"{chosen}, {arenas} C arenas" if arenas else f"{chosen}, C arenas by default"


RSS_PARTS = ("VmRSS", "RssAnon", "RssFile", "RssShmem")
"""Resident memory and its three parts (proc(5); VmRSS is their sum): anonymous pages (the heap,
the stacks: what a leak grows), file-backed pages (the interpreter's and libraries' code, fonts:
shared, and the kernel's to drop and read again) and shared memory."""


def parse_status(text: str) -> dict[str, int]:
    """The numeric fields of /proc/PID/status ("VmRSS:\t  51720 kB", "Threads:\t22"): each
    field's first number, in the file's own unit (kB for memory)."""
    fields: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        first = value.split(maxsplit=1)[:1]
        if sep and first and first[0].isdigit():
            fields[key] = int(first[0])
    return fields


def status(pid: int | str = "self") -> dict[str, int]:
    """/proc/PID/status, parsed; empty once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return parse_status(f.read())
    except OSError:
        return {}


def proc_status(pid: int | str, key: str) -> int:
    """One figure of /proc/PID/status (VmRSS, VmHWM, RssAnon in kB; Threads); 0 once the process
    is gone."""
    return status(pid).get(key, 0)


def rss_parts_mb(pid: int | str = "self") -> dict[str, float]:
    """VmRSS and its parts (RSS_PARTS), MB, read at one moment; empty once the process is gone."""
    fields = status(pid)
    return {key: fields.get(key, 0) / 1024 for key in RSS_PARTS} if fields else {}


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory, MB."""
    return proc_status(pid, "VmRSS") / 1024


def threads(pid: int | str = "self") -> int:
    """The process's threads, as the kernel counts them: each holds a stack and a share of the
    allocator, so a count that creeps up is memory that creeps up."""
    return proc_status(pid, "Threads")


class Collector:
    """The cycle collector, kept out of a press's way.

    While it runs every thread waits, the game thread too. A full collection walks every object
    the process holds: in the daemon, about 75,000 of them once start-up has loaded its modules,
    its configuration and its screens, 38 ms here and several times that on a Pi 4 — a press
    decided that much late. Everything built by then lives as long as the process, so the daemon
    freezes it (`gc.freeze`) when it is ready: later collections walk only what came since. And
    it keeps count of every collection and the longest pause of each generation, for
    `tablectl status` and the benches."""

    def __init__(self) -> None:
        self.collections = [0, 0, 0]
        self.longest_ns = [0, 0, 0]
        self.frozen = 0  # objects frozen by `freeze`
        self._began = 0
        self._watching = False

    def watch(self) -> Collector:
        if not self._watching:
            self._watching = True
            gc.callbacks.append(self._seen)
        return self

    def stop(self) -> None:
        if self._watching:
            self._watching = False
            gc.callbacks.remove(self._seen)

    def _seen(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter_ns()
            return
        generation = info["generation"]
        self.collections[generation] += 1
        took = time.perf_counter_ns() - self._began
        if took > self.longest_ns[generation]:
            self.longest_ns[generation] = took

    def freeze(self) -> int:
        """What start-up built, out of the collector's way for good; how many objects that is,
        counted here once: `gc.get_freeze_count` walks the whole list of them (9.5 ms for 63,000
        here, on the thread that asks: the game thread, for every `tablectl status`)."""
        gc.freeze()
        self.frozen = gc.get_freeze_count()
        return self.frozen

    def figures(self) -> dict[str, Any]:
        return {"frozen_objects": self.frozen, "collections": list(self.collections),
                "longest_pause_ms": [round(ns / 1e6, 3) for ns in self.longest_ns]}


TRACE = "TABLE_HOST_TRACEMALLOC"
"""A diagnosis, not for the Pi: a directory, and the daemon traces its allocations (tracemalloc,
TRACE_FRAMES frames each: far slower and larger) and dumps a snapshot there every TRACE_EVERY_S,
named by its seconds since the start. `table-host bench soak` run with it set passes it to the
daemon and prints what grew between the snapshots after the warm-up (snapshot_growth)."""
TRACE_FRAMES = 6
TRACE_EVERY_S = 60.0


def trace_if_asked(environ: Mapping[str, str] | None = None) -> Path | None:
    """Start tracing allocations when TRACE names a directory; that directory. One it cannot
    make is a PathError (one line, exit 2), never a run untraced without a word."""
    directory = (os.environ if environ is None else environ).get(TRACE)
    if not directory:
        return None
    path = Path(directory)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PathError(f"{TRACE}={directory}: cannot make the directory: {exc.strerror}") from None
    tracemalloc.start(TRACE_FRAMES)
    start = time.monotonic()

    def dump_every_minute() -> None:
        while True:
            time.sleep(TRACE_EVERY_S)
            partial = path / ".partial"
            try:
                tracemalloc.take_snapshot().dump(str(partial))  # whole, or not there: never half
                partial.replace(path / f"{time.monotonic() - start:08.0f}.tracemalloc")
            except OSError as exc:
                logger("memory").error("tracemalloc: cannot write a snapshot into %s (%s): "
                                       "tracing stopped", path, exc.strerror)
                tracemalloc.stop()
                return

    threading.Thread(target=dump_every_minute, name="tracemalloc", daemon=True).start()
    return path


def snapshots(directory: Path) -> list[tuple[float, Path]]:
    """The snapshots dumped there, oldest first, with their seconds since the daemon started."""
    return sorted((float(p.stem), p) for p in directory.glob("*.tracemalloc"))


def snapshot_growth(first: Path, last: Path, top: int = 12) -> list[str]:
    """What grew from one snapshot to another, the most first: bytes, blocks and the innermost
    frames of the code that allocated them (ours first: a list appended to, a cache filled)."""
    old, new = tracemalloc.Snapshot.load(str(first)), tracemalloc.Snapshot.load(str(last))
    ignore = (tracemalloc.Filter(False, tracemalloc.__file__),)
    lines = []
    diff = sorted(new.filter_traces(ignore).compare_to(old.filter_traces(ignore), "traceback"),
                  key=lambda stat: -stat.size_diff)
    total = sum(stat.size_diff for stat in diff)
    lines.append(f"Python objects: {total / 1024:+.1f} KiB in all")
    for stat in diff[:top]:
        frames = " < ".join(f"{Path(f.filename).name}:{f.lineno}" for f in list(stat.traceback)[::-1][:4])
        lines.append(f"{stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks  {frames}")
    return lines
