"""Real-time priority for the game thread and the edge thread, and the clean fallback without it.

The kernel is the judge here (sched_setscheduler(2), sched(7)): each test sets a policy on a thread
of its own and reads it back with os.sched_getscheduler(tid), so the pytest process is left as it was.
"""

from __future__ import annotations

import errno
import os
import resource
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any

import pytest

from firmware_host.system import realtime
from firmware_host.system.realtime import PRIORITY, Realtime, policy_of

PERMITTED = os.geteuid() == 0 or resource.getrlimit(resource.RLIMIT_RTPRIO)[0] >= PRIORITY
needs_rt = pytest.mark.skipif(not PERMITTED, reason="real-time priority needs root or RLIMIT_RTPRIO >= 15")


def in_thread(work: Callable[[], Any]) -> Any:
    """Run `work` in a fresh thread, so whatever priority it takes dies with the thread."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["value"] = work()
        except BaseException as exc:  # handed back to the test
            result["error"] = exc

    switch = sys.getswitchinterval()
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    sys.setswitchinterval(switch)
    if "error" in result:
        raise result["error"]
    return result["value"]


@needs_rt
def test_the_game_thread_runs_sched_fifo_15_with_no_timer_slack() -> None:
    def work() -> tuple:
        lines: list[str] = []
        rt = Realtime(lines.append)
        assert rt.claim_game_thread()
        tid = threading.get_native_id()
        return os.sched_getscheduler(tid), os.sched_getparam(tid).sched_priority, rt.status(), lines

    policy, priority, status, lines = in_thread(work)
    assert policy == os.SCHED_FIFO and priority == PRIORITY == 15
    assert status["game"] == "SCHED_FIFO 15" and lines == []


@needs_rt
def test_threads_started_before_stop_inheriting_are_real_time_and_after_it_are_not() -> None:
    """lgpio's threads start while the game thread opens the board; the daemon's workers after."""

    def work() -> tuple:
        rt = Realtime(print)
        rt.claim_game_thread()
        before = in_thread(lambda: policy_of(threading.get_native_id()))
        rt.stop_inheriting()
        after = in_thread(lambda: policy_of(threading.get_native_id()))
        return before, after, policy_of(threading.get_native_id())

    before, after, game = in_thread(work)
    assert before == ("SCHED_FIFO", 15) and after == ("SCHED_OTHER", 0) and game == ("SCHED_FIFO", 15)


@needs_rt
def test_when_ready_the_other_threads_run_sched_rr_1_and_so_do_the_threads_they_start() -> None:
    """They share the game thread's GIL: one preempted by a normal program while it held it kept
    the game thread waiting (bench attack). Below the game thread, above every normal program."""
    lifted, seen = threading.Event(), {}

    def joined() -> tuple[str, int]:
        realtime.join_the_rest()
        return policy_of(threading.get_native_id())

    def worker() -> None:  # one of the daemon's threads, started before it is ready
        seen["tid"] = threading.get_native_id()
        lifted.wait(10)
        seen["own"] = policy_of(threading.get_native_id())
        seen["started"] = in_thread(lambda: policy_of(threading.get_native_id()))
        seen["joined"] = in_thread(joined)

    def work() -> tuple:
        rt = Realtime(print)
        rt.claim_game_thread()
        rt.stop_inheriting()
        thread = threading.Thread(target=worker)
        thread.start()
        while "tid" not in seen:
            time.sleep(0.001)
        before = policy_of(seen["tid"])
        count = rt.lift_the_rest([threading.get_native_id(), seen["tid"]])
        lifted.set()
        thread.join()
        return before, count, policy_of(threading.get_native_id()), in_thread(joined), rt.status()

    try:
        before, count, game, later, status = in_thread(work)
    finally:
        realtime._lifted = False
    assert before == ("SCHED_OTHER", 0) and count == 1 and seen["own"] == ("SCHED_RR", 1)
    assert seen["started"] == ("SCHED_OTHER", 0)  # what it starts inherits nothing (a process: the history's)
    assert seen["joined"] == ("SCHED_RR", 1)  # a thread that runs Python beside the game joins them
    assert game == ("SCHED_FIFO", 15)  # the game thread keeps its own
    assert later == ("SCHED_RR", 1)  # a thread the game thread starts later (reset-on-fork) joins them
    assert status["others"] == "SCHED_RR 1 (0 threads)"  # read back from the kernel: the worker has ended


@needs_rt
def test_stragglers_started_inside_a_library_are_lifted_when_asked() -> None:
    """A process pool starts its manager and feeder threads itself, from a lifted thread with
    reset-on-fork: they start at normal priority, and nobody can ask them to join."""
    release, seen = threading.Event(), {}

    def straggler() -> None:
        seen["tid"] = threading.get_native_id()
        release.wait(10)

    thread = threading.Thread(target=straggler)
    thread.start()
    while "tid" not in seen:
        time.sleep(0.001)
    try:
        assert realtime.lift_stragglers([seen["tid"]]) == 0  # the daemon's threads were not lifted
        realtime._lifted = True
        assert realtime.lift_stragglers([seen["tid"]]) == 1 and policy_of(seen["tid"]) == ("SCHED_RR", 1)
        assert realtime.lift_stragglers([seen["tid"]]) == 0  # once
    finally:
        realtime._lifted = False
        release.set()
        thread.join()


def test_without_a_real_time_game_thread_no_other_thread_is_lifted() -> None:
    rt = Realtime(print)
    assert rt.lift_the_rest([threading.get_native_id()]) == 0 and "others" not in rt.status()
    assert policy_of(threading.get_native_id())[0] == "SCHED_OTHER" and not realtime._lifted


@needs_rt
def test_lgpios_notification_thread_is_raised_by_its_native_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """lgpio.py keeps its callback thread as the module's `_notify_thread` (a threading.Thread)."""
    release = threading.Event()
    notify = threading.Thread(target=release.wait, daemon=True)
    notify.start()
    monkeypatch.setitem(sys.modules, "lgpio", types.SimpleNamespace(_notify_thread=notify))
    try:
        rt = Realtime(print)
        assert rt.claim_edge_thread() is True
        assert os.sched_getscheduler(notify.native_id) == os.SCHED_FIFO
        assert rt.status()["edges"] == "SCHED_FIFO 15"
    finally:
        release.set()
        notify.join()


def test_without_lgpio_the_edges_come_in_the_pressing_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "lgpio", raising=False)  # an earlier test may have loaded the real one
    rt = Realtime(print)
    assert rt.claim_edge_thread() is None
    assert "thread that delivers each edge" in rt.status()["edges"]


def test_refused_real_time_says_one_line_with_the_grant(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(realtime.os, "sched_setscheduler", refuse)

    def work() -> tuple:
        lines: list[str] = []
        rt = Realtime(lines.append)
        assert rt.claim_game_thread() is False
        assert rt.claim("edges", threading.get_native_id()) is False
        rt.stop_inheriting()
        return lines, rt.status(), policy_of(threading.get_native_id()), realtime.timer_slack()

    lines, status, policy, slack = in_thread(work)
    assert len(lines) == 1  # one line, not one per thread
    assert "real-time priority refused (Operation not permitted (errno 1))" in lines[0]
    assert "LimitRTPRIO=15" in lines[0] and "CAP_SYS_NICE" in lines[0]
    assert policy == ("SCHED_OTHER", 0)
    assert status["game"].startswith("SCHED_OTHER (real-time refused: Operation not permitted")
    assert slack == realtime.TIMER_SLACK_NS  # at normal priority the 1 us slack is what counts


@needs_rt
def test_with_the_real_lgpio_its_notification_thread_is_the_edge_thread_and_real_time(tmp_path) -> None:
    """lgpio starts its callback thread at import (lgpio.py: `_notify_thread = _callback_thread()`):
    imported after the game thread is real-time, as the daemon opens the board, it inherits."""
    pytest.importorskip("lgpio", reason="lgpio is the Pi's extra: pip install -e '.[pi]'")
    import subprocess

    script = (
        "from firmware_host.system.realtime import Realtime, policy_of\n"
        "rt = Realtime(print)\n"
        "rt.claim_game_thread()\n"
        "import lgpio\n"
        "inherited = policy_of(lgpio._notify_thread.native_id)\n"
        "rt.stop_inheriting()\n"
        "print(inherited, rt.claim_edge_thread(), rt.threads['edges'] == lgpio._notify_thread.native_id)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env={**os.environ, "LG_WD": str(tmp_path)},
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "('SCHED_FIFO', 15) True True", out.stderr
