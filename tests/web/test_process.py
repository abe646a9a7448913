"""The web view's own process (web/process.py, web/child.py; docs/web.md, "Its own process"),
on the real daemon: it serves the page and answers `tablectl history`; a child that stops
reading costs frames, never the game thread a wait; one killed is started again; none outlives
the daemon, killed or stopped."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from plumbing import DaemonProcess, alive, descendants, left_after, wait_for

from firmware_host.service.journal import Reader


def process_of(daemon: DaemonProcess) -> dict[str, Any]:
    return daemon.ctl("status").get("web_view", {}).get("process", {})


def serving(daemon: DaemonProcess, other_than: int = 0) -> dict[str, Any]:
    """The web view's process once it serves (another than `other_than`, when given)."""
    seen: dict[str, Any] = {}

    def up() -> bool:
        seen.update(process_of(daemon))
        return bool(seen.get("serving")) and seen.get("pid") not in (None, 0, other_than)

    wait_for(up, timeout=30, every=0.2, said=lambda: seen)
    return seen


def policy(pid: int) -> int:
    """The scheduling policy of a process's main thread (/proc/PID/stat, field 41)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[38])


def first_frame(url: str) -> dict[str, Any]:
    """A WebSocket's first frame, as a browser gets it (the newest, at once)."""
    import aiohttp

    async def read() -> dict[str, Any]:
        async with aiohttp.ClientSession() as session, session.ws_connect(f"{url}live") as ws:
            message = await ws.receive(timeout=10)
            return json.loads(message.data)

    return asyncio.run(read())


def traced(daemon: DaemonProcess) -> int:
    """How many entries the table's trace has had (the cursor of `decisions`, a bench's command)."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(daemon.env["TABLE_HOST_SOCKET"])
        sock.sendall(b'{"cmd": "decisions", "since": 0}\n')
        answer = b""
        while not answer.endswith(b"\n"):
            answer += sock.recv(1 << 20)
    return int(json.loads(answer)["next"])


def playing(daemon: DaemonProcess) -> None:
    assert daemon.ctl("new", "classic", "rounds=1")["ok"]
    assert daemon.ctl("bots", "3", "--level", "hard")["ok"]
    assert daemon.ctl("start")["ok"]


def test_the_web_view_is_a_process_of_its_own_and_answers_the_history(tmp_path: Path) -> None:
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.start()
        child = serving(daemon)
        assert descendants(daemon.proc.pid) == [child["pid"]]
        # As the table's other threads: SCHED_RR 1 when its game thread is real-time (root here,
        # or the unit's CAP_SYS_NICE), else normal; never the game thread's SCHED_FIFO.
        others = daemon.ctl("status")["priority"].get("others", "")
        expected = os.SCHED_RR if others.startswith("SCHED_RR") else os.SCHED_OTHER
        assert policy(child["pid"]) == expected, others
        playing(daemon)
        wait_for(lambda: daemon.ctl("history").get("matches"), timeout=20, every=0.2)
        before = process_of(daemon)["history"]
        answer = daemon.ctl("history", "--limit", "5")
        after = process_of(daemon)["history"]
        # Answered by the child, on its own read-only connection: the same page as the store's.
        assert after["handed"] == before["handed"] + 1 and after["here"] == before["here"] == 0
        expected = Reader(tmp_path / "state" / "table.db").history_page(5)
        assert answer == {"ok": True, **expected}
        assert [m["game"] for m in answer["matches"]] == ["classic"]
        frame = first_frame(daemon.ctl("status")["web"])
        assert frame["type"] == "table" and frame["game"] == "classic"
    finally:
        daemon.close()


def test_a_stopped_child_costs_frames_and_never_the_game_thread_a_wait(tmp_path: Path) -> None:
    """SIGSTOP the child while four bots play: the table goes on deciding, the frames it makes
    are dropped in the slot (the socket holds a few), none is queued; SIGCONT: sent again."""
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.start()
        child = serving(daemon)
        playing(daemon)
        wait_for(lambda: process_of(daemon)["frames"]["sent"] > 20, timeout=20, every=0.2)
        decided = traced(daemon)
        os.kill(child["pid"], signal.SIGSTOP)
        try:
            stopped = process_of(daemon)["frames"]
            for _ in range(10):  # until the frames socket is full: nothing more is sent
                time.sleep(0.5)
                sent, stopped = stopped["sent"], process_of(daemon)["frames"]
                if stopped["sent"] == sent:
                    break
            wait_for(lambda: process_of(daemon)["frames"]["offered"] > stopped["offered"] + 30, timeout=20,
                     every=0.2)
            later = process_of(daemon)["frames"]
            during = traced(daemon)
        finally:
            os.kill(child["pid"], signal.SIGCONT)
        # While it read nothing: at most one frame more left (the one the feed was sending),
        # every other one made was dropped, and the game went on deciding.
        assert later["sent"] - stopped["sent"] <= 1, (stopped, later)
        made = later["offered"] - stopped["offered"]
        assert later["dropped"] - stopped["dropped"] >= made - 2, (stopped, later)
        # Not sent nor dropped: one in the slot, one the feed's thread is sending, no more.
        assert later["offered"] - later["sent"] - later["dropped"] in (0, 1, 2)
        assert during > decided
        wait_for(lambda: process_of(daemon)["frames"]["sent"] > later["sent"] + 5, timeout=20, every=0.2)
        assert process_of(daemon)["pid"] == child["pid"]  # the same child: it was never restarted
    finally:
        daemon.close()


def test_a_killed_child_is_started_again_and_serves_the_table(tmp_path: Path) -> None:
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.start()
        child = serving(daemon)
        playing(daemon)
        os.kill(child["pid"], signal.SIGKILL)
        # Said where the operator looks (STATUS=, the journal), and the table plays on.
        daemon.wait_for("STATUS=DEGRADED: web view: its process was killed by SIGKILL; starting it again "
                        "in 1 s", timeout=10)
        again = serving(daemon, other_than=child["pid"])
        assert again["starts"] == 2
        frame = first_frame(daemon.ctl("status")["web"])
        assert frame["type"] == "table" and frame["game"] == "classic" and frame["phase"] != "attract"
    finally:
        daemon.close()
    told = (tmp_path / "daemon.log").read_text()
    assert told.count("web view: its process was killed by SIGKILL; starting it again in 1 s") == 1
    assert told.count("(its own process, pid") == 2 and "Traceback" not in told


def test_the_child_ends_with_the_daemon_killed_or_stopped(tmp_path: Path) -> None:
    for how in (signal.SIGKILL, signal.SIGTERM):
        (tmp_path / how.name).mkdir()
        daemon = DaemonProcess(tmp_path / how.name)
        try:
            daemon.start()
            pid = serving(daemon)["pid"]
            os.kill(daemon.proc.pid, how)
            assert daemon.proc.wait(10) == (0 if how == signal.SIGTERM else -signal.SIGKILL)
            assert left_after(lambda pid=pid: alive([pid]), timeout=10) == []
        finally:
            daemon.close()
        if how == signal.SIGTERM:
            told = (tmp_path / how.name / "daemon.log").read_text()
            assert "Traceback" not in told and "ERROR" not in told


def test_the_players_pages_are_served_by_the_web_views_process(tmp_path: Path) -> None:
    """The leaderboard and a player's page (web/standings.py) come from the web view's process,
    which reads the figures the table keeps (service/statistics.py) in a process of its own."""
    import urllib.error
    import urllib.request

    daemon = DaemonProcess(tmp_path)
    try:
        daemon.start()
        child = serving(daemon)
        url = daemon.ctl("status")["web"]
        with urllib.request.urlopen(url + "leaderboard", timeout=10) as page:
            assert page.status == 200 and b"<html" in page.read().lower()
        with urllib.request.urlopen(url + "api/leaderboard", timeout=60) as answer:
            board = json.loads(answer.read())
        assert board["tonight"] == [] and board["all_time"] == {}, board
        with pytest.raises(urllib.error.HTTPError) as unknown:
            urllib.request.urlopen(url + "api/players/999", timeout=60)
        assert unknown.value.code == 404
        # the figures' reader runs under the web view's process, not the table's
        assert set(descendants(child["pid"])) - {child["pid"]}, "no figures' process under the web view's"
    finally:
        daemon.close()


def test_the_childs_stop_takes_no_lock_a_signal_could_have_interrupted() -> None:
    """The child's SIGTERM handler (`Child.stop`) runs on its main thread between two bytecodes,
    perhaps inside Event.set: a second SIGTERM there waited for a lock its own thread held, and
    the process outlived the table for good. It shuts the frames' socket and takes no lock."""
    import threading
    from types import SimpleNamespace

    from firmware_host.web.child import Child

    stopping = threading.Event()
    ours, theirs = socket.socketpair()
    held = stopping._cond  # type: ignore[attr-defined]  # what Event.set holds while it runs
    held.acquire()
    try:
        stopper = threading.Thread(target=Child.stop, args=(SimpleNamespace(stopping=stopping, frames=ours),),
                                   daemon=True)
        stopper.start()
        stopper.join(2)
        assert not stopper.is_alive(), "stop waited for a lock"
        assert ours.recv(1) == b""  # the reading of frames ends
    finally:
        held.release()
        ours.close()
        theirs.close()
