"""The web view's own process: `python -m firmware_host.web.child SPEC` (docs/web.md, "Its own
process"). The table's process (web/process.py) starts it with three descriptors:

- the listening socket (systemd's `web`, or the one the table bound), served by a WebView
  (web/frontend.py) exactly as it was in the table's process: gate, pages, history, replays;
- `frames`: the live table's frames, each the JSON the table made, after its length (4 bytes,
  big-endian); only the newest one read is offered to the browsers;
- `link`: a SOCK_SEQPACKET socket, one JSON message each way: up, `ready`, `trouble`, `report`
  (its limits and what met them, for `tablectl status`), `done` and `claim` (a phone's claim of
  a seat, web/claim.py: the table decides it); down, `ask`: a reader's `tablectl history` with
  the connection's descriptor (SCM_RIGHTS), answered here and written on that connection, and
  `done` said with what became of it; and `claimed`, the table's answer to a claim.

It has an interpreter of its own, so its work never holds the game thread's interpreter lock.
It ends with the table: a parent-death signal (SIGTERM, set at once) and the end of `frames`.
"""

from __future__ import annotations

import array
import contextlib
import itertools
import json
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ..control.server import SEND_S
from ..system import pieces
from ..system.children import die_with_parent
from ..system.logs import configure, logger, route_uncaught
from ..system.realtime import BESIDE, SWITCH_INTERVAL_S

if TYPE_CHECKING:  # imported when the process has begun reporting: they take seconds when loaded
    from ..engine.game import JsonDict, RawDict
    from ..service.journal import Reader

log = logger("web")

LISTEN_FD, FRAMES_FD, LINK_FD = 3, 4, 5  # where the table's process puts them
LENGTH = struct.Struct("!I")  # before each frame: its length
REPORT_S = 0.5  # its report, when it changed, at most this often
HEARTBEAT_S = 1.0  # a report at least this often: the table's process knows it is alive
READERS = 2  # history requests answered at once (the control socket hands 7 at most; the rest wait
# here): each holds this process's interpreter lock while it reads, against the server's loop
ANSWERS_KEPT = 64  # history answers kept (a page asked for by its limit and before)
MESSAGE_MAX = 1 << 20  # a link message's bytes at most (a request is a line of 64 KiB at most)
CLAIMS_WAITING = 64  # phones' claims sent up to the table and not answered yet, at most


def answer(reader: Reader, body: RawDict) -> JsonDict:
    """`tablectl history`'s answer, as the table's commands give it (service/commands.py)."""
    try:
        return {"ok": True, **reader.history_page(body.get("limit", 20), body.get("before"))}
    except Exception as exc:  # a failing read is an error reply, as it is in the table's process
        return {"ok": False, "error": str(exc) or type(exc).__name__}


class Answers:
    """`tablectl history`'s answers as bytes, each kept until the table's writer commits again
    (`Reader.version`): readers asking the same page again and again (8 users without pause in
    `bench attack`) cost a query of one number each, not a page read and written out."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self._kept: dict[str, tuple[int, bytes]] = {}
        self._lock = threading.Lock()
        self.made = self.reused = 0

    def of(self, body: RawDict) -> bytes:
        key = json.dumps([body.get("limit", 20), body.get("before")])
        try:
            version = self.reader.version()
        except Exception:  # the page's own read says what is wrong
            version = -1
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept[0] == version != -1:
                self.reused += 1
                return kept[1]
        data = pieces.dumps(answer(self.reader, body)).encode() + b"\n"
        with self._lock:
            if len(self._kept) >= ANSWERS_KEPT:
                self._kept.clear()  # the bound: a reader walking the pages starts them over
            self._kept[key] = (version, data)
            self.made += 1
        return data


def write_all(fd: int, data: bytes, within_s: float = SEND_S) -> str:
    """`data` onto a client's connection (non-blocking: the table's socket): "sent", "gone", or
    why not ("did not read its answer", as the control socket says it)."""
    deadline = time.monotonic() + within_s
    view = memoryview(data)
    while view:
        try:
            sent = os.write(fd, view)
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                return "did not read its answer"
            poller = select.poll()
            poller.register(fd, select.POLLOUT)
            poller.poll(max(1, int(left * 1000)))
            continue
        except OSError:  # EPIPE, ECONNRESET: the peer has gone
            return "gone"
        view = view[sent:]
    return "sent"


class Link:
    """The link to the table's process: messages each way, sent whole from any thread."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._lock = threading.Lock()

    def say(self, message: JsonDict) -> None:
        with self._lock, contextlib.suppress(OSError):  # gone: the table has ended, so do we
            self.sock.send(json.dumps(message, separators=(",", ":")).encode())


class Child:
    """What the process does: serves, reads frames, answers the history, reports."""

    def __init__(self, spec: RawDict, link: Link) -> None:
        from ..service.journal import Reader
        from ..service.statistics import Figurer
        from . import standings
        from .frontend import WebView
        from .replays import routes

        self.reader = Reader(spec["database"])
        self.answers = Answers(self.reader)
        # The players' pages read the figures the table's keeper made (service/statistics.py), in
        # a process of this one's own at the lowest priority, as the table's own asks do.
        self.figurer = Figurer(self.reader.path)
        self.link = link
        self.frames = socket.socket(fileno=FRAMES_FD)
        self.view = WebView(spec["bind"], spec["port"], spec["max_clients"], database=self.reader.path,
                            routes=[routes(self.reader), standings.routes(self.figurer)], names=spec["names"],
                            url=spec["url"], sock=socket.socket(fileno=LISTEN_FD), announce=False)
        self.answering = ThreadPoolExecutor(READERS, thread_name_prefix="reader")
        self.stopping = threading.Event()
        self.failed = ""
        self.claims: OrderedDict[int, Callable[[JsonDict], None]] = OrderedDict()  # claim: answer
        self.claim_ids = itertools.count(1)

    def run(self) -> int:
        self.view.start(self.heard)
        if self.view.problem:  # said before it could be heard: its descriptors, say
            self.link.say({"trouble": self.view.problem})
            return 3
        threading.Thread(target=self.asked, name="link", daemon=True).start()
        self.read_frames()
        self.stopping.set()
        self.view.stop()
        self.answering.shutdown(wait=False, cancel_futures=True)
        self.figurer.close()
        self.reader.close()
        return 3 if self.failed else 0

    def heard(self, event: object) -> None:
        """What the WebView says of itself (on its thread): up to the table's process."""
        from ..service.events import FrontendReady, FrontendTrouble, SeatClaimed

        if isinstance(event, SeatClaimed):  # a phone's claim: the table decides it, in its process
            claim = next(self.claim_ids)
            self.claims[claim] = event.answer
            while len(self.claims) > CLAIMS_WAITING:  # never answered (the table restarted): forgotten
                self.claims.popitem(last=False)
            self.link.say({"claim": claim, "seat": event.seat, "token": event.token, "name": event.name})
        elif isinstance(event, FrontendReady):
            self.link.say({"ready": self.view.url})
        elif isinstance(event, FrontendTrouble):
            self.failed = event.problem
            self.link.say({"trouble": event.problem})
            self.stop()

    def stop(self) -> None:
        """From a signal handler or a thread: the frames' reading ends, and with it the process.
        Takes no lock: a handler runs on the main thread between two bytecodes, perhaps inside
        a lock this would take (Event.set's, when a SIGTERM came twice: the process hung for good,
        its parent gone). `run` sets `stopping` when the reading has ended."""
        with contextlib.suppress(OSError):
            self.frames.shutdown(socket.SHUT_RDWR)

    def read_frames(self) -> None:
        """Frames until the table's process closes them (or dies); a frame that has a newer one
        behind it already is skipped: only the newest is the table."""
        buffer = b""
        newest: bytes | None = None
        while not self.stopping.is_set():
            try:
                chunk = self.frames.recv(1 << 18)
            except InterruptedError:
                continue
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while len(buffer) >= LENGTH.size:
                (size,) = LENGTH.unpack_from(buffer)
                if len(buffer) < LENGTH.size + size:
                    break
                newest = buffer[LENGTH.size:LENGTH.size + size]
                buffer = buffer[LENGTH.size + size:]
            if newest is not None and not select.select([self.frames], [], [], 0)[0]:
                self.view.offer(newest)
                newest = None

    def asked(self) -> None:
        """Requests from the table's process, each with its connection's descriptor."""
        size = socket.CMSG_SPACE(array.array("i", [0]).itemsize)
        while True:
            try:
                data, ancillary, _flags, _addr = self.link.sock.recvmsg(MESSAGE_MAX, size)
            except InterruptedError:
                continue
            except OSError:
                data, ancillary = b"", []
            if not data:
                self.stop()
                return
            fds = array.array("i")
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
            message = json.loads(data)
            if "claimed" in message:  # the table's answer to a phone's claim
                answered = self.claims.pop(message["claimed"], None)
                if answered is not None:
                    answered(message.get("answer") or {"ok": False, "error": "the table gave no answer"})
            if "ask" in message and fds:
                self.answering.submit(self.answered, message["ask"], message.get("body", {}), fds[0])
            for fd in fds[1:]:
                os.close(fd)

    def answered(self, ask: int, body: RawDict, fd: int) -> None:
        try:
            outcome = write_all(fd, self.answers.of(body))
        except Exception as exc:  # never silently: the table's process closes the connection
            outcome = f"its answer failed: {type(exc).__name__}: {exc}"
        finally:
            os.close(fd)
        self.link.say({"done": ask, "outcome": outcome})


def reporting(link: Link, child: list[Child]) -> None:
    """Its report when it changed, and every HEARTBEAT_S anyway: from the first moment (the
    imports that follow take seconds on a loaded machine), so the table knows it is alive."""
    said: JsonDict | None = None
    last = 0.0
    while True:
        time.sleep(REPORT_S)
        report = child[0].view.report() if child else None
        if report is not None:
            report["answers"] = {"made": child[0].answers.made, "reused": child[0].answers.reused}
        now = time.monotonic()
        if report != said or now - last >= HEARTBEAT_S:
            link.say({"report": report, "rss_kib": rss_kib()})
            said, last = report, now


def rss_kib() -> int:
    """This process's resident memory (docs/daemon.md: what the web view's own interpreter costs)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def beside() -> None:
    """Where the web view ran as a thread of the table's process: SCHED_RR BESIDE, above every
    normal program, below the game thread (docs/daemon.md, "Priorities"). Its own interpreter
    lock is no longer the game's, but its CPU still competes: at normal priority a flood of
    connections from programs on the same machine left the table's own screen waiting seconds
    for its page. Without reset-on-fork, so that its threads (the server's, the readers') inherit
    it; the processes it starts (the history's, the statistics') put themselves at SCHED_IDLE."""
    try:
        os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(BESIDE))
    except OSError as exc:
        log.warning("the web view's process runs at normal priority: SCHED_RR %d refused (%s)",
                    BESIDE, exc.strerror or exc)


def main(argv: list[str] | None = None) -> int:
    spec = json.loads((argv if argv is not None else sys.argv[1:])[0])
    die_with_parent(signal.SIGTERM, spec["parent"])  # first of all: it never outlives the table
    sys.setswitchinterval(SWITCH_INTERVAL_S)  # the server's loop waits for a reader 0.5 ms, not 5
    configure(spec.get("level", "info"))
    route_uncaught()
    if spec.get("beside"):  # the table's other threads run beside its game thread: so does this
        beside()
    link = Link(socket.socket(fileno=LINK_FD))
    made: list[Child] = []
    threading.Thread(target=reporting, args=(link, made), name="report", daemon=True).start()
    child = Child(spec, link)
    made.append(child)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda _signum, _frame: child.stop())
    return child.run()


if __name__ == "__main__":
    sys.exit(main())
