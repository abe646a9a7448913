"""Real-time priority for the two threads a press's timing depends on: the game thread and the edge thread.

A press is decided exactly the arbiter's window W after its edge, if the game thread is woken on
time; on a busy Pi a thread at normal priority waits its turn for milliseconds (docs/fairness.md).
So the game thread, and the thread that delivers edges to it, run SCHED_FIFO (sched(7)) at
priority 15: above every normal thread, below the kernel's interrupt threads (priority 50), so a
runaway table can slow other programs but never starve interrupts. Linux sets the policy per
thread, by the thread's id (`threading.get_native_id()`), and a new thread starts with its
creator's policy unless the creator has SCHED_RESET_ON_FORK (sched_setscheduler(2)).

On the Pi the edges come through lgpio: its C library starts an alert thread when the chip is
opened (lgGpiochipOpen, lgPthAlerts.c) that reads the kernel's line events and writes them to a
FIFO, and the `lgpio` Python module starts a thread at import (`lgpio._notify_thread`) that
reads that FIFO and calls gpiozero's callbacks, ours among them. The daemon makes its own thread
real-time before the board is opened, so both lgpio threads inherit it, then sets reset-on-fork so
that the threads it starts afterwards (displays, LED link, store, control socket, web view) do not
take its priority; and it raises `lgpio._notify_thread` by its id in case the module was imported
earlier. When it is ready, those other threads run at SCHED_RR 1 (`BESIDE`): below the game
thread, so none can keep it from a CPU, and above every normal program, so none that holds
Python's lock is preempted by one while the game thread waits for that lock.

The right to do so comes from the unit (`LimitRTPRIO=15`, systemd/table-host.service) or from root
or CAP_SYS_NICE. Without it the kernel says EPERM: one log line says so and what grants it, and
the table runs at normal priority. Timer slack (prctl(2) PR_SET_TIMERSLACK) is set to 1 µs in the
game thread, so its timed waits end when asked rather than up to 50 µs later.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from .logs import logger

PRIORITY = 15
"""SCHED_FIFO priority: above normal threads, below the kernel's IRQ threads (50)."""
TIMER_SLACK_NS = 1_000
SWITCH_INTERVAL_S = 0.0005
"""How long a thread waiting for Python's GIL waits before asking the holder to let go (5 ms by
default): the game thread woken on time must not then wait 5 ms for a display thread's render."""
BESIDE = 1
"""SCHED_RR priority of the daemon's other threads (web view, control socket, journal, screens),
from when it is ready: above every normal program, below the game thread. They run Python
beside it and share its interpreter lock (the GIL): at normal priority, one that another
program preempted while it held the lock kept the game thread waiting until it was scheduled
again and let go, a time slice or more (under `table-host bench attack`, decisions 11-27 ms
late at p99 at SCHED_OTHER, 0.9-2.8 ms at SCHED_RR 1, the same runs: docs/fairness.md)."""
PR_SET_TIMERSLACK, PR_GET_TIMERSLACK = 29, 30  # linux/prctl.h
GRANT = ("the unit grants it with LimitRTPRIO=15 (systemd/table-host.service); by hand: root, "
         "CAP_SYS_NICE or `ulimit -r 15`")


def policy_of(tid: int) -> tuple[str, int]:
    """The scheduling policy in force for a thread (or process) id, as sched(7) names it."""
    try:
        policy = os.sched_getscheduler(tid) & ~getattr(os, "SCHED_RESET_ON_FORK", 0)
        priority = os.sched_getparam(tid).sched_priority
    except OSError as exc:
        return f"unknown ({exc.strerror})", 0
    names = {os.SCHED_OTHER: "SCHED_OTHER", os.SCHED_FIFO: "SCHED_FIFO", os.SCHED_RR: "SCHED_RR",
             getattr(os, "SCHED_BATCH", -1): "SCHED_BATCH", getattr(os, "SCHED_IDLE", -2): "SCHED_IDLE"}
    return names.get(policy, f"policy {policy}"), priority


def is_realtime(tid: int) -> bool:
    return policy_of(tid)[0] in ("SCHED_FIFO", "SCHED_RR")


def make_realtime(tid: int, priority: int = PRIORITY, reset_on_fork: bool = False) -> str | None:
    """SCHED_FIFO at `priority` for thread `tid` (0: the calling thread). None when in force,
    else why not (the kernel's refusal)."""
    flags = os.SCHED_FIFO | (os.SCHED_RESET_ON_FORK if reset_on_fork else 0)
    try:
        os.sched_setscheduler(tid, flags, os.sched_param(priority))
    except OSError as exc:
        return f"{exc.strerror or exc} (errno {exc.errno})"
    return None


def make_beside(tid: int) -> str | None:
    """SCHED_RR at BESIDE for thread `tid` (0: the calling thread), with reset-on-fork: nothing
    it starts inherits it (a process: the history's; a thread joins by `join_the_rest`). None
    when in force, else the kernel's refusal."""
    try:
        os.sched_setscheduler(tid, os.SCHED_RR | os.SCHED_RESET_ON_FORK, os.sched_param(BESIDE))
    except OSError as exc:
        return f"{exc.strerror or exc} (errno {exc.errno})"
    return None


_lifted = False  # the daemon's threads run beside the game (Realtime.lift_the_rest)


def lifted() -> bool:
    """Whether the daemon's other threads run beside the game (SCHED_RR BESIDE): what a process
    serving for it (the web view's: web/child.py) asks for itself too."""
    return _lifted


def join_the_rest() -> None:
    """For a thread started after the daemon is ready (reset-on-fork: it starts at normal
    priority) that runs Python: beside the game, as the daemon's other threads are."""
    if _lifted:
        make_beside(0)


def lift_stragglers(tids: list[int] | None = None) -> int:
    """Threads started since the daemon was ready that run Python and cannot be asked to join
    (a process pool's manager and queue feeder, started inside the standard library): those of
    `tids` (else all) still at normal priority, beside the game. How many."""
    if not _lifted:
        return 0
    lifted = 0
    for tid in own_threads() if tids is None else tids:
        if policy_of(tid)[0] == "SCHED_OTHER" and make_beside(tid) is None:
            lifted += 1
    return lifted


def own_threads() -> list[int]:
    """This process's threads' ids (/proc/self/task)."""
    return [int(name) for name in os.listdir("/proc/self/task")]


def make_normal(tid: int) -> None:
    """Back to SCHED_OTHER (always allowed: giving priority up needs no privilege)."""
    with contextlib.suppress(OSError):
        os.sched_setscheduler(tid, os.SCHED_OTHER, os.sched_param(0))


def _prctl(option: int, value: int = 0) -> int:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    return int(libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0))


def set_timer_slack(ns: int = TIMER_SLACK_NS) -> bool:
    """Timer slack of the calling thread (prctl applies to the caller only; new threads copy it)."""
    try:
        return _prctl(PR_SET_TIMERSLACK, ns) == 0
    except (OSError, AttributeError):
        return False


def timer_slack() -> int:
    """The calling thread's timer slack in ns (-1: unknown)."""
    try:
        return _prctl(PR_GET_TIMERSLACK)
    except (OSError, AttributeError):
        return -1


def lgpio_edge_thread() -> int | None:
    """The id of lgpio's notification thread (it calls gpiozero's callbacks), if lgpio is loaded."""
    thread = getattr(sys.modules.get("lgpio"), "_notify_thread", None)
    return getattr(thread, "native_id", None)


@dataclass
class Realtime:
    """What the daemon (or the benchmark) asked for and what it got, thread by thread."""

    log: Callable[[str], None] = logger("realtime").warning
    priority: int = PRIORITY
    threads: dict[str, int] = field(default_factory=dict)  # role -> thread id
    refused: dict[str, str] = field(default_factory=dict)  # role -> the kernel's answer
    others: list[int] = field(default_factory=list)  # the threads lifted beside the game
    _said: bool = False

    def claim(self, role: str, tid: int, reset_on_fork: bool = False) -> bool:
        """Make thread `tid` real-time for `role` ("game", "edges"); False when refused."""
        self.threads[role] = tid
        why = make_realtime(tid, self.priority, reset_on_fork)
        if why is None:
            self.refused.pop(role, None)
            return True
        self.refused[role] = why
        if not self._said:  # one line, however many threads are refused
            self._said = True
            self.log(f"real-time priority refused ({why}) for the {role} thread: the table runs at normal "
                     f"priority, so a busy system can delay decisions past the window; {GRANT}")
        return False

    def claim_game_thread(self) -> bool:
        """The calling thread is the game thread: real-time, 1 µs timer slack, short GIL waits."""
        set_timer_slack()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        return self.claim("game", threading.get_native_id())

    def stop_inheriting(self) -> None:
        """Threads the game thread starts from now on run at normal priority (reset-on-fork)."""
        tid = self.threads.get("game")
        if tid is not None and "game" not in self.refused:
            make_realtime(tid, self.priority, reset_on_fork=True)

    def lift_the_rest(self, tids: list[int] | None = None) -> int:
        """When the daemon is ready: every thread of it still at normal priority (`tids`, else
        all of them) runs at SCHED_RR BESIDE; how many. A thread started later joins them with
        `join_the_rest`. Only when the game thread is real-time: else nothing keeps them below."""
        global _lifted
        if "game" not in self.threads or "game" in self.refused:
            return 0
        for tid in own_threads() if tids is None else tids:
            if policy_of(tid)[0] != "SCHED_OTHER":
                continue  # the game and edge threads; a history reader at SCHED_IDLE
            why = make_beside(tid)
            if why is not None:
                self.refused["others"] = why
                self.log(f"SCHED_RR {BESIDE} refused ({why}) for the daemon's other threads: one of them "
                         f"preempted while it holds Python's lock holds up the game thread; {GRANT}")
                break
            self.others.append(tid)
        _lifted = "others" not in self.refused
        return len(self.others)

    def claim_edge_thread(self) -> bool | None:
        """lgpio's notification thread, when there is one (None: edges come in the caller's thread)."""
        tid = lgpio_edge_thread()
        if tid is None:
            return None
        return self.claim("edges", tid)

    def status(self) -> dict[str, str]:
        """The policy actually in force per thread, read back from the kernel."""
        out = {}
        for role, tid in self.threads.items():
            policy, priority = policy_of(tid)
            text = f"{policy} {priority}" if policy in ("SCHED_FIFO", "SCHED_RR") else policy
            if role in self.refused:
                text += f" (real-time refused: {self.refused[role]})"
            out[role] = text
        if "edges" not in out:
            out["edges"] = "in the thread that delivers each edge (emulated pins)"
        if self.others or "others" in self.refused:
            beside = sum(policy_of(tid) == ("SCHED_RR", BESIDE) for tid in self.others)
            out["others"] = f"SCHED_RR {BESIDE} ({beside} threads)" if "others" not in self.refused \
                else f"SCHED_OTHER (SCHED_RR {BESIDE} refused: {self.refused['others']})"
        return out
