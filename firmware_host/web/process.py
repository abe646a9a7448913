"""The web view as a frontend whose server runs in a process of its own (web/child.py), so that
no browser, no history page and no reader of the journal holds the game thread's interpreter
lock (docs/web.md, "Its own process").

In the table's process, what is left is small: the listening socket, taken at once (the address
goes on the attract screen) and passed to the child; the live frame, made on the table's thread
when the table changed (views/live.py) and only left in a slot there, encoded and sent down the
`frames` socket by a thread of its own (a child that reads nothing blocks that thread, never the
game's; a frame replaced before it was sent is dropped and counted); and `tablectl history`,
whose connection's descriptor is handed to the child (SCM_RIGHTS), which answers on it.

The child is started with posix_spawn (never a fork of this threaded process) at normal
priority, whatever the spawning thread's; it ends with the table (a parent-death signal, and
the end of its frames). If it dies or stops answering, the table plays on, its status says
why (`DEGRADED: web view: ...`), and it is started again after a pause that doubles each time,
from RESTART_S to RESTART_MOST_S.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import itertools
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from ..control.server import REPLY_TIMEOUT_S, SEND_S, Handed
from ..engine.game import JsonDict, RawDict
from ..service.events import FrontendReady, FrontendTrouble, SeatClaimed
from ..service.frontend import Put, TableView, ViewMaker
from ..system.logs import escape, logger
from ..system.realtime import lifted
from .child import FRAMES_FD, LENGTH, LINK_FD, LISTEN_FD, MESSAGE_MAX
from .frontend import NAME, live
from .gate import Limits, TooFewDescriptors
from .listen import take_socket, url_of

if TYPE_CHECKING:
    from ..table.cues import Cue

log = logger("web")

RESTART_S, RESTART_MOST_S = 1.0, 60.0  # the pause before starting it again, doubled each time
STEADY_S = 120.0  # a child that served this long starts the pauses over
SILENT_S = 15.0  # no word from the child this long (it reports every second): stuck, ended
STOP_S = 2.0  # SIGTERM to an end, at most; then SIGKILL
FRAMES_BUFFER = 32 * 1024  # the frames socket's send buffer (the kernel doubles it): a few frames
ASK_S = REPLY_TIMEOUT_S + SEND_S + 1.0  # a handed request: read, answered, written
HANDED = frozenset({"history"})
"""The journal's reads the web view's process answers (web/child.py `answer`); every other read
beside the game (`players`, say) is answered in the table's process, as before."""


@dataclass
class _Ask:
    """A read handed to the child, until it says what became of the answer."""

    done: threading.Event = field(default_factory=threading.Event)
    outcome: str = ""


class WebProcess:
    """Serves the live table to browsers from a process of its own; attach with
    `daemon.attach(WebProcess(...))`, and hand the journal's reads to it with
    `control.handoff = view.ask`."""

    NAME = NAME  # its report's key in `tablectl status`: web_view
    VIEWS: ClassVar[dict[str, ViewMaker]] = {"live": live}

    def __init__(self, bind: str = "127.0.0.1", port: int = 0, max_clients: int = 32,
                 database: Path | None = None, names: Sequence[str] = (), url: str = "",
                 held: Callable[[], bool] = lambda: False, level: str = "info",
                 port_file: Path | None = None) -> None:
        """`held`: whether the table's store holds rows the disk refused (a full disk): while it
        does, `tablectl history` is answered in the table's process, the only one that sees them
        (rows on their way to the disk, committed within 20 ms, are not that); `port_file`: where
        port 0 remembers the port it had, to have it again (listen.py)."""
        self.bind, self.port, self.max_clients = bind, port, max_clients
        self.port_file = port_file
        self.said = ""  # what listening had to say (a remembered port taken), for the log
        self.database, self.names, self.url_set, self.held, self.level = database, names, url, held, level
        self.url = ""
        self.problem = ""
        self.pid = 0
        self.starts = 0
        self.serving = False
        self.frames = {"offered": 0, "sent": 0, "dropped": 0}
        self.handed = {"handed": 0, "here": 0, "closed": 0}
        self._child_report: RawDict | None = None  # as the child said it
        self._rss_kib = 0
        self._put: Put = lambda _event: None
        self._sock: socket.socket | None = None
        self._slot: JsonDict | None = None
        self._ready = threading.Condition()
        self._frames_sock: socket.socket | None = None
        self._link: socket.socket | None = None
        self._link_lock = threading.Lock()
        self._asks: dict[int, _Ask] = {}
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._shown = threading.Event()  # the table's loop turns: the table is ready
        self._threads: list[threading.Thread] = []

    # ------------------------------------------------------------ Frontend

    def listen(self) -> str:
        """Take the socket (systemd's, else our own) on the caller's thread, so the address is known
        before the table greets anyone; "" and `problem` set when it cannot be had."""
        if self._sock is not None:
            return self.url
        try:
            sock, self.said = take_socket(self.bind, self.port, self.port_file)
        except OSError as exc:
            self._fail(exc.strerror or str(exc))
            return ""
        try:
            Limits.of(self.max_clients)  # the child's limit is this process's: said here, at once
        except TooFewDescriptors as exc:
            sock.close()
            self._fail(str(exc))
            return ""
        self._sock = sock
        self.url = url_of(sock)
        return self.url

    def start(self, put: Put) -> None:
        self._put = put
        if not self.listen():
            return
        for target, name in ((self._feed, "web-feed"), (self._supervise, "web-process")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def show(self, view: TableView) -> None:
        """On the table's thread: the newest frame into the slot, the feed woken; never a wait
        for the child (a lock held by the feed only to swap the slot)."""
        state = view.made.get("live")
        if not isinstance(state, dict):  # `live`'s, when asked for
            return
        self._shown.set()
        with self._ready:
            self.frames["offered"] += 1
            if self._slot is not None:
                self.frames["dropped"] += 1  # never sent: a newer one is the table
            self._slot = state
            self._ready.notify()

    def ring(self, cue: Cue) -> None:
        """Browsers make no sound."""

    def report(self) -> JsonDict | None:
        """The child's last report (its connections and browsers) and this side's counts."""
        said = dict(self._child_report or {})
        answers = said.pop("answers", {})  # the child's: made, and reused while the journal stood
        process: JsonDict = {"pid": self.pid, "serving": self.serving, "starts": self.starts,
                   "rss_kib": self._rss_kib, "frames": dict(self.frames),
                   "history": {**self.handed, **answers}}
        return {**said, "process": process}

    def stop(self) -> None:
        """The child asked to end (SIGTERM), then made to (SIGKILL); the threads with it."""
        self._stopping.set()
        self._shown.set()
        with self._ready:
            self._ready.notify_all()
        pid, link = self.pid, self._link
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        if link is not None:  # the supervisor stops hearing it, and waits for its end
            with contextlib.suppress(OSError):
                link.shutdown(socket.SHUT_RD)
        deadline = time.monotonic() + STOP_S + 1.0
        for thread in self._threads:
            thread.join(max(0.1, deadline - time.monotonic()))
        if self._sock is not None:
            self._sock.close()

    # ------------------------------------------------------------ the journal's readers

    def ask(self, fd: int, body: RawDict) -> Handed | None:
        """A reader's request on a control connection (`fd`, the handler's own copy): handed to
        the child, which answers on the connection; None when it is answered here instead (not
        a read of the journal; the child not serving; rows held in memory only this process
        sees)."""
        if body.get("cmd") not in HANDED:
            return None
        link = self._link
        if link is None or not self.serving or self.held():
            self.handed["here"] += 1
            return None
        ask = next(self._ids)
        self._asks[ask] = asked = _Ask()
        message = json.dumps({"ask": ask, "body": body}, separators=(",", ":")).encode()
        try:
            with self._link_lock:
                link.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))],
                             socket.MSG_DONTWAIT)
        except OSError:  # the child gone or not reading: answered here, and counted
            self._asks.pop(ask, None)
            self.handed["here"] += 1
            return None
        self.handed["handed"] += 1
        if not asked.done.wait(ASK_S):
            outcome = f"the web view's process did not answer it within {ASK_S:g} s"
        else:
            outcome = asked.outcome
        self._asks.pop(ask, None)
        if outcome != "sent":
            self.handed["closed"] += 1
        return Handed(outcome)

    # ------------------------------------------------------------ the feed's thread

    def _feed(self) -> None:
        """The slot's frame, encoded here (not on the table's thread) and sent whole; blocked
        only by a child that does not read, while the slot keeps only the newest."""
        while True:
            with self._ready:
                while self._slot is None and not self._stopping.is_set():
                    self._ready.wait()
                if self._stopping.is_set():
                    return
                state, self._slot = self._slot, None
            if state is None:
                continue
            sock = self._frames_sock if self.serving else None
            if sock is None:
                with self._ready:
                    self.frames["dropped"] += 1
                continue
            state["sent_ns"] = time.monotonic_ns()  # the moment it left the table (bench web)
            frame = json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode()
            try:
                sock.sendall(LENGTH.pack(len(frame)) + frame)
            except OSError:  # the child has gone: the next one is shown the table when ready
                with self._ready:
                    self.frames["dropped"] += 1
                continue
            self.frames["sent"] += 1

    # ------------------------------------------------------------ the child, kept running

    def _supervise(self) -> None:
        # Started once the table's loop turns, after READY=1: the spawn and its copies of
        # descriptors are no part of the table's start-up (bench startup counts its CPU).
        self._shown.wait()
        pause = RESTART_S
        while not self._stopping.is_set():
            began = time.monotonic()
            why = self._run_child()
            if self._stopping.is_set():
                return
            if time.monotonic() - began >= STEADY_S:
                pause = RESTART_S
            self._fail(f"its process {why}; starting it again in {pause:g} s")
            if self._stopping.wait(pause):
                return
            pause = min(pause * 2, RESTART_MOST_S)

    def _spawn(self, frames: socket.socket, link: socket.socket) -> int:
        """posix_spawn: the child gets the three descriptors at LISTEN_FD, FRAMES_FD, LINK_FD,
        /dev/null for input, this process's log for its own, no blocked signal, and SCHED_OTHER
        (the spawning thread may be real-time: docs/daemon.md, "Priorities")."""
        assert self._sock is not None
        spec = {"bind": self.bind, "port": self.port, "max_clients": self.max_clients,
                "database": str(self.database), "names": list(self.names), "url": self.url_set,
                "parent": os.getpid(), "level": self.level, "beside": lifted()}
        # Copies above any number the child is given, so that no dup2 below overwrites a source.
        high = [fcntl.fcntl(s.fileno(), fcntl.F_DUPFD_CLOEXEC, 64) for s in (self._sock, frames, link)]
        try:
            actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                       *((os.POSIX_SPAWN_DUP2, fd, target)
                         for fd, target in zip(high, (LISTEN_FD, FRAMES_FD, LINK_FD), strict=True))]
            return os.posix_spawn(sys.executable, [sys.executable, "-m", "firmware_host.web.child",
                                                   json.dumps(spec)], child_environment(),
                                  file_actions=actions, setsigmask=(),
                                  setsigdef=(signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGPIPE),
                                  scheduler=(os.SCHED_OTHER, os.sched_param(0)))
        finally:
            for fd in high:
                os.close(fd)

    def _run_child(self) -> str:
        """Start the child, hear it until it ends; why it ended."""
        frames, frames_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        link, link_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        frames.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, FRAMES_BUFFER)
        try:
            pid = self._spawn(frames_child, link_child)
        except OSError as exc:
            for sock in (frames, frames_child, link, link_child):
                sock.close()
            return f"could not be started: {exc.strerror or exc}"
        frames_child.close()
        link_child.close()
        self.pid, self.starts = pid, self.starts + 1
        if self._stopping.is_set():  # the table stopped while it was started: it ends too
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        self._frames_sock, self._link = frames, link
        why = ""
        try:
            why = self._hear(link)
        finally:
            self.serving = False
            self._link = None
            for waiting in list(self._asks.values()):  # handed and never done: closed
                waiting.outcome = "the web view's process ended before it answered"
                waiting.done.set()
            if why:  # stuck: made to end
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            status = self._reap(pid, STOP_S if self._stopping.is_set() else None)
            self.pid = 0
            frames.close()
            link.close()
        return why or ended(status)

    @staticmethod
    def _reap(pid: int, within_s: float | None) -> int:
        """Its wait status; `within_s`: SIGKILL if it has not ended by then (the table stops)."""
        if within_s is not None:
            deadline = time.monotonic() + within_s
            while time.monotonic() < deadline:
                found, status = os.waitpid(pid, os.WNOHANG)
                if found == pid:
                    return status
                time.sleep(0.02)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return os.waitpid(pid, 0)[1]

    def _hear(self, link: socket.socket) -> str:
        """The child's messages until it ends ("") or falls silent for SILENT_S (why)."""
        link.settimeout(SILENT_S)  # idle, this thread wakes only when the child reports
        while True:
            try:
                data = link.recv(MESSAGE_MAX)
            except TimeoutError:
                if self._stopping.is_set():
                    return ""
                return f"said nothing for {SILENT_S:g} s (stopped?): killed"
            except OSError:
                return ""
            if not data:
                return ""
            message = json.loads(data)
            if "done" in message:
                waiting = self._asks.get(message["done"])
                if waiting is not None:
                    waiting.outcome = str(message.get("outcome", ""))
                    waiting.done.set()
            elif "report" in message:
                self._child_report = message["report"] or self._child_report
                self._rss_kib = int(message.get("rss_kib", 0))
            elif "ready" in message:
                self.serving, self.problem = True, ""
                log.info("web view: %s (its own process, pid %d)", self.url, self.pid)
                self._put(FrontendReady(NAME))  # the table's loop shows it the table now
            elif "claim" in message:
                self._claimed(link, message)
            elif "trouble" in message:
                self._fail(str(message["trouble"]).removeprefix(f"{NAME}: "))

    def _claimed(self, link: socket.socket, message: RawDict) -> None:
        """A phone's claim of a seat, from the web view's process: the table's loop decides it
        (service/table_feed.py) and the answer goes back down the link, never blocking the
        table's thread (a child not reading loses its answer; the phone is told to try again)."""
        claim, seat, token, name = (message.get(k) for k in ("claim", "seat", "token", "name"))
        if not (isinstance(claim, int) and isinstance(seat, int) and isinstance(token, str)
                and isinstance(name, str)):
            log.warning("web view: its process sent a claim that is not one: %s", escape(str(message)[:200]))
            return

        def answer(result: JsonDict) -> None:  # on the table's thread
            data = json.dumps({"claimed": claim, "answer": result}, separators=(",", ":")).encode()
            with self._link_lock, contextlib.suppress(OSError):
                link.send(data, socket.MSG_DONTWAIT)

        self._put(SeatClaimed(seat, token, name, answer))

    def _fail(self, why: str) -> None:
        self.problem = f"{NAME}: {why}"
        log.error("%s (the table plays on without it)", self.problem)
        self._put(FrontendTrouble(NAME, self.problem))


def child_environment() -> dict[str, str]:
    """This process's environment less what systemd meant for it alone (its notify socket, the
    watchdog, the sockets it passed: the child is handed the web's socket by number)."""
    return {k: v for k, v in os.environ.items()
            if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID",
                         "LISTEN_FDNAMES")}


def ended(status: int) -> str:
    """A wait status in words."""
    if os.WIFSIGNALED(status):
        return f"was killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"ended with exit status {os.waitstatus_to_exitcode(status)}"
