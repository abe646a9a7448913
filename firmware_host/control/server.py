"""The control socket: `tablectl` talks to the table here, one JSON object per line.

    → {"cmd": "status"}
    ← {"ok": true, "phase": "lobby", ...}      or      {"ok": false, "error": "..."}

The socket lives in the runtime directory (mode 0660, the admin group of the
configuration's [control]), and every connection's peer (pid, uid, gid, from
SO_PEERCRED) is logged (DEBUG, `table_host.control`; whatever a client sent is
escaped first: a newline in a command must not forge a log line) and checked:
what only reads (what control/protocol.py declares READS: status, scores, history,
seats, inputs, debug, config get, the self-test's report) is open to whoever can
connect; everything else needs root, the daemon's own user, or a member of the
admin group (`Access`, docs/daemon.md "Access"). The server thread never
touches the game: it hands each request to the owner of the game state through
`requests` and waits for its answer; what needs nothing of the game (the stored
history) is answered by `beside` on the handler's own thread. Anything malformed — not JSON, not an
object, no command, too long, a command that fails — gets an error reply and
the connection goes on; the server never falls over.

No client can keep the others, or an admin, waiting (issue 22): one thread reads and
writes every connection without blocking on any, so a client trickling bytes or not
reading its answers holds no handler; a request has REQUEST_S from its first byte to
its newline; a user that is not an admin has PER_PEER connections; one handler takes
only admin peers' requests, which go first; a peer that has gone (POLLHUP, EPIPE,
ECONNRESET) is dropped with what it asked; an answer unread for SEND_S closes its
connection; one request per connection is at the table at a time, and PIPELINE more
(MAX_LINE bytes) waiting is the limit. The journal names a misbehaving user once a minute at most.
"""

from __future__ import annotations

import contextlib
import errno
import grp
import json
import logging
import math
import os
import pwd
import queue
import select
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..system import pieces
from ..system.logs import escape, logger
from ..system.paths import ADMIN_GROUP
from .protocol import reads_only

__all__ = ["ADMIN_GROUP", "Access", "ControlServer", "Request", "reads_only", "serve_request"]

log = logger("control")
MAX_LINE = 64 * 1024
REPLY_TIMEOUT_S = 5.0
BACKLOG = 128  # connections the kernel queues until the server's thread takes them
HANDLERS = 8  # requests worked on at once (each waits for the table's answer)
ADMIN_HANDLERS = 1  # of those, kept for root, the daemon's user and the admin group
REQUEST_S = 5.0  # a request must arrive whole within this of its first byte (slowloris: closed)
IDLE_S = 10.0  # a connection that asks nothing for this long is closed
SEND_S = 5.0  # an answer its peer has not read whole within this: the connection is closed
PER_PEER = 4  # connections at once from one user that is not an admin; more are refused
PIPELINE = 8  # requests waiting on one connection; one more closes it with an error answer
MAX_CONNECTIONS = 256  # at once, in all
WARN_EVERY_S = 60.0  # a misbehaving user is named in the journal once a minute at most
PACE_PER_S = 20.0  # requests a second from one user that is not an admin, after a burst of PACE_BURST
PACE_BURST = 20  # more wait their turn, unread (docs/daemon.md, "tablectl": under a flood of them)
ACCEPT_BACKOFF_S = 1.0  # out of descriptors (EMFILE, ENFILE): nothing accepted for this long
OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


class Request:
    """One command waiting for the game's owner to answer it."""

    def __init__(self, body: dict[str, Any], peer: str) -> None:
        self.body = body
        self.peer = peer
        self._answer: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()

    def reply(self, answer: dict[str, Any]) -> None:
        self._answer.put(answer)

    def wait(self) -> dict[str, Any]:
        try:
            return self._answer.get(timeout=REPLY_TIMEOUT_S)
        except queue.Empty:
            return {"ok": False, "error": "the table did not answer in time"}


def serve_request(request: Request, handler: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """For the owner thread: answer one request; a failing command is an error reply."""
    try:
        answer = handler(request.body)
        request.reply({"ok": True, **answer})
    except Exception as exc:
        request.reply({"ok": False, "error": str(exc) or type(exc).__name__})



class Handed:
    """A request whose connection another process answered on (`ControlServer.handoff`): what
    became of its answer. "sent": the next request may go; anything else: why the connection
    is closed (the answer may be cut short)."""

    def __init__(self, outcome: str) -> None:
        self.outcome = outcome


@dataclass(frozen=True)
class Peer:
    """Who is on the other end, as the kernel says (SO_PEERCRED, SO_PEERGROUPS) at connect time."""

    pid: int
    uid: int
    gid: int
    groups: tuple[int, ...] = ()

    def __str__(self) -> str:
        return f"pid {self.pid} uid {self.uid} gid {self.gid}"


class Access:
    """Who may control the table: root, the daemon's own user (a laptop's `./dev run`), and the
    members of the admin group, by the peer's group or supplementary groups."""

    def __init__(self, admin_group: str = ADMIN_GROUP, owner_uid: int | None = None) -> None:
        self.admin_group = admin_group
        self.owner_uid = os.geteuid() if owner_uid is None else owner_uid
        try:
            self.gid: int | None = grp.getgrnam(admin_group).gr_gid
        except KeyError:
            self.gid = None

    def is_admin(self, peer: Peer) -> bool:
        if peer.uid in (0, self.owner_uid):
            return True
        return self.gid is not None and (peer.gid == self.gid or self.gid in peer.groups)

    def refusal(self, peer: Peer, body: dict[str, Any]) -> str | None:
        """None when `peer` may send `body`; else the one line that says why not."""
        if reads_only(body) or self.is_admin(peer):
            return None
        what = " ".join(str(body[k]) for k in ("cmd", "action") if isinstance(body.get(k), str))
        try:
            who = pwd.getpwuid(peer.uid).pw_name
        except KeyError:
            who = f"uid {peer.uid}"
        missing = "" if self.gid is not None else ", and there is no such group here"
        return f"{what} needs root or group '{self.admin_group}' ({who} is not in it{missing})"


class _Work:
    """Complete requests waiting for a handler: an admin peer's are taken first, and the reserved
    handler takes only theirs, so read-only peers can never hold every handler.

    A request wakes one handler that may take it, never all of them: under a flood of
    `tablectl history` every handler woke for every request, took the interpreter lock, found
    nothing and slept again (7 of 8 wake-ups wasted, each a wait for the game thread:
    docs/web.md, "Limits")."""

    def __init__(self) -> None:
        lock = threading.Lock()
        self._anyone_ready = threading.Condition(lock)  # the handlers that take any request
        self._admin_ready = threading.Condition(lock)  # the reserved ones: admins' requests only
        self._admin: deque[tuple[_Connection, bytes]] = deque()
        self._anyone: deque[tuple[_Connection, bytes]] = deque()
        self._closed = False

    def put(self, item: tuple[_Connection, bytes], admin: bool) -> None:
        with self._anyone_ready:
            (self._admin if admin else self._anyone).append(item)
            self._anyone_ready.notify()
            if admin:  # whichever is free first: the other finds it taken and sleeps again
                self._admin_ready.notify()

    def take(self, reserved: bool) -> tuple[_Connection, bytes] | None:
        ready = self._admin_ready if reserved else self._anyone_ready
        with ready:
            while not self._closed:
                if self._admin:
                    return self._admin.popleft()
                if self._anyone and not reserved:
                    return self._anyone.popleft()
                ready.wait()
            return None

    def close(self) -> None:
        with self._anyone_ready:
            self._closed = True
            self._anyone_ready.notify_all()
            self._admin_ready.notify_all()


class _Pace:
    """A token bucket per user: `burst` requests at once, then `per_s` a second."""

    def __init__(self, per_s: float, burst: int) -> None:
        self.per_s, self.burst = per_s, burst
        self._users: dict[int | None, tuple[float, float]] = {}  # user: tokens, when counted

    def take(self, user: int | None, now: float) -> float:
        """0.0: a request of `user`'s may go now (its token taken); else the seconds till one may."""
        tokens, then = self._users.get(user, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.per_s)
        if tokens >= 1.0:
            self._users[user] = (tokens - 1.0, now)
            if len(self._users) > 256:  # users whose bucket is full again need no entry
                self._users = {u: (t, w) for u, (t, w) in self._users.items()
                               if t + (now - w) * self.per_s < self.burst}
            return 0.0
        self._users[user] = (tokens, now)
        return (1.0 - tokens) / self.per_s


class _Connection:
    """One client, as the server's thread sees it: bytes of the request being read, complete
    requests waiting, the one being answered (at most one: answers go back in order), and the
    bytes of an answer its peer has not read yet."""

    def __init__(self, sock: socket.socket, peer: Peer | None, admin: bool, now: float) -> None:
        self.sock = sock
        self.peer = peer
        self.admin = admin
        self.key = None if peer is None else peer.uid  # whose share of PER_PEER it is
        self.partial = b""
        self.started = 0.0  # when the first byte of `partial` came
        self.waiting: deque[bytes | dict[str, Any]] = deque()  # a dict: a last answer, then close
        self.busy = False
        self.out = b""
        self.sending_since = 0.0
        self.quiet_since = now
        self.reading = True
        self.closing = False  # closed once everything owed is sent
        self.open = True
        self.events = 0
        self.handed_fd = -1  # the handler's own copy of the descriptor (ControlServer.handoff)
        self.paced_until = 0.0  # its user asked faster than PACE_PER_S: its next request waits till then

    def deadline(self) -> tuple[float, str] | None:
        """The earliest moment it must have done something by, and what it failed to do then."""
        due: list[tuple[float, str]] = []
        if self.out:
            due.append((self.sending_since + SEND_S, "did not read its answer"))
        if self.partial:
            due.append((self.started + REQUEST_S, f"sent no whole request in {REQUEST_S:g} s"))
        elif not (self.out or self.busy or self.waiting):
            due.append((self.quiet_since + IDLE_S, ""))
        return min(due) if due else None


class ControlServer:
    """One thread reads and writes every connection (never blocking on one); HANDLERS threads
    take complete requests to the table and wait for its answer."""

    def __init__(self, path: str | Path, requests: queue.SimpleQueue[Any] | queue.Queue[Any],
                 admin_group: str = ADMIN_GROUP) -> None:
        self.path = Path(path)
        self.requests = requests
        self.beside: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
        """Answers what the game thread need not see (the journal's reads), on the handler's thread;
        None for the rest (service/registry.py `Commands.beside`)."""
        self.handoff: Callable[[int, dict[str, Any]], Handed | None] | None = None
        """Answers a journal's read in another process, which writes the answer on the connection
        itself (its descriptor passed over, web/process.py); None: not handed, answered here."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(self.path))
        os.chmod(self.path, 0o660)
        self.access = Access(admin_group)
        self.set_admin_group(admin_group)
        self._sock.listen(BACKLOG)
        self._sock.setblocking(False)
        self._stopping = False
        self._connections: dict[int, _Connection] = {}
        self._per_peer: dict[int | None, int] = {}
        self._said: dict[tuple[int | None, str], tuple[float, int]] = {}
        self._accept_again = 0.0  # out of descriptors: the socket is not polled until then
        self.out_of_descriptors = 0  # accepts that failed for want of a descriptor
        self._pace = _Pace(PACE_PER_S, PACE_BURST)
        self.paced = 0  # requests that waited their turn (their user asked faster than PACE_PER_S)
        self._done: queue.SimpleQueue[tuple[_Connection, dict[str, Any] | Handed]] = queue.SimpleQueue()
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._wake_lock = threading.Lock()  # a handler late from its table must not write to a reused fd
        self._poller = select.poll()
        self._work = _Work()
        # Every handler from the start, never more: a pool that grows on demand (ThreadPoolExecutor)
        # adds a thread whenever a client's next call races the last handler back to idle, which
        # a loaded machine makes likely, and each thread's stack and allocator share stay. The
        # last ADMIN_HANDLERS take only admin peers' requests.
        self.handlers = [threading.Thread(target=self._handle, args=(i >= HANDLERS - ADMIN_HANDLERS,),
                                          name=f"control-conn-{i + 1}", daemon=True) for i in range(HANDLERS)]
        self._thread = threading.Thread(target=self._run, name="control", daemon=True)
        for thread in (*self.handlers, self._thread):
            thread.start()

    def configured(self, old: Any, new: Any) -> None:
        """A reloaded configuration (service/configuration.py's `applied`): another admin group."""
        if new.control != old.control:
            self.set_admin_group(new.control.admin_group)

    def set_admin_group(self, name: str) -> None:
        """The socket file to the admin group (at start and when a reload names another one); what
        cannot be done is said, since then the group's members cannot connect."""
        self.access = Access(name)
        if self.access.gid is None:
            log.warning("no group %r on this system: only root and uid %d may control the table", name,
                        self.access.owner_uid)
            return
        try:
            if os.stat(self.path).st_gid != self.access.gid:  # the unit's Group= made it so already,
                os.chown(self.path, -1, self.access.gid)      # and its filter refuses chown (@privileged)
        except OSError as exc:
            log.warning("cannot give %s to group %r: %s; its members cannot connect", self.path, name,
                        exc.strerror or exc)

    def close(self) -> None:
        """Stop: every connection is closed (their clients hear at once), the socket file goes."""
        self._stopping = True
        self._wake()
        self._work.close()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    # ------------------------------------------------------------ the server's thread

    def _wake(self) -> None:
        with self._wake_lock, contextlib.suppress(OSError):  # full: a wake is pending already
            if self._wake_w >= 0:
                os.write(self._wake_w, b"x")

    def _run(self) -> None:
        poller = self._poller
        poller.register(self._sock, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        try:
            while not self._stopping:
                listening = False
                for fd, event in poller.poll(self._poll_ms()):
                    if fd == self._sock.fileno():
                        listening = True
                    elif fd == self._wake_r:
                        with contextlib.suppress(OSError):
                            os.read(self._wake_r, 4096)
                    elif (conn := self._connections.get(fd)) is not None:
                        self._ready(conn, event)
                if listening:  # after the closes seen with it: a user's share is free again first
                    self._accept()
                if self._accept_again and time.monotonic() >= self._accept_again:
                    self._accept_again = 0.0
                    poller.modify(self._sock, select.POLLIN)
                self._answers()
                self._expire()
                self._paced_turns()
                for conn in list(self._connections.values()):
                    self._watch(conn)
        except Exception:  # never silently: without this thread nobody is answered
            log.exception("the control socket's thread failed")
        finally:
            for conn in list(self._connections.values()):
                self._drop(conn)
            with contextlib.suppress(OSError):
                self._sock.close()
            with self._wake_lock:
                os.close(self._wake_r)
                os.close(self._wake_w)
                self._wake_w = -1

    def _poll_ms(self) -> int:
        due = [d[0] for c in self._connections.values() if (d := c.deadline()) is not None]
        due += [c.paced_until for c in self._connections.values() if c.paced_until]
        if self._accept_again:
            due.append(self._accept_again)
        if not due:
            return -1
        return max(0, math.ceil((min(due) - time.monotonic()) * 1000))

    def _accept(self) -> None:
        """One connection waiting (the next poll shows the closes that came before the one after
        it, so a user's share is counted right): a peer past its share, or a server full, is told
        so and closed; the rest are read as their bytes come."""
        try:
            sock, _ = self._sock.accept()
        except OSError as exc:  # EAGAIN: taken already; anything else: tried again on the next wake
            if exc.errno in OUT_OF_DESCRIPTORS:
                self._pause_accepting(exc)
            return
        peer = peer_of(sock)
        admin = peer is not None and self.access.is_admin(peer)
        log.debug("connection from %s", peer or "unknown peer")
        key = None if peer is None else peer.uid
        refusal = None
        if len(self._connections) >= MAX_CONNECTIONS:
            refusal = f"the table has {MAX_CONNECTIONS} connections open: try again"
        elif not admin and self._per_peer.get(key, 0) >= PER_PEER:
            refusal = f"{PER_PEER} connections from one user at once at most"
        if refusal is not None:
            self._say(peer, "refused", f"connection refused: {refusal}")
            with contextlib.suppress(OSError):
                sock.send(json.dumps({"ok": False, "error": refusal}).encode() + b"\n",
                          socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL)
            sock.close()
            return
        sock.setblocking(False)
        conn = _Connection(sock, peer, admin, time.monotonic())
        self._connections[sock.fileno()] = conn
        self._per_peer[key] = self._per_peer.get(key, 0) + 1
        self._poller.register(sock, select.POLLIN)
        conn.events = select.POLLIN

    def _pause_accepting(self, exc: OSError) -> None:
        """The socket stays readable while nothing can be accepted: polling it would spin this
        thread (it did: a busy core, and admins unanswered). It rests ACCEPT_BACKOFF_S instead."""
        self.out_of_descriptors += 1
        self._accept_again = time.monotonic() + ACCEPT_BACKOFF_S
        self._poller.modify(self._sock, 0)
        self._say(None, "descriptors", f"cannot accept a connection: out of descriptors ({exc.strerror}); "
                  f"accepting nothing for {ACCEPT_BACKOFF_S:g} s")

    def _watch(self, conn: _Connection) -> None:
        """Poll for what the connection waits for: bytes to read, room to write."""
        events = (select.POLLIN if conn.reading else 0) | (select.POLLOUT if conn.out else 0)
        if conn.open and events != conn.events:
            self._poller.modify(conn.sock, events)
            conn.events = events

    def _ready(self, conn: _Connection, event: int) -> None:
        if event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
            # Both ways shut: the peer has gone (or will read nothing more). What it asked and
            # has not been answered is not worked on: nobody would read the answer.
            self._drop(conn)
            return
        if event & select.POLLIN:
            try:
                chunk = conn.sock.recv(65536)
            except BlockingIOError:
                chunk = None
            except OSError:  # ECONNRESET: gone
                self._drop(conn)
                return
            if chunk == b"":  # it has said all it will say; what it asked is still answered
                conn.reading = False
                conn.partial = b""
                conn.closing = True
            elif chunk:
                self._received(conn, chunk)
        if event & select.POLLOUT:
            self._send(conn)
        self._next(conn)

    def _received(self, conn: _Connection, chunk: bytes) -> None:
        now = time.monotonic()
        if not conn.partial:
            conn.started = now
        data = conn.partial + chunk
        *lines, conn.partial = data.split(b"\n")
        if lines and conn.partial:
            conn.started = now  # the next request began in this chunk
        for line in lines:
            if not line.strip():
                continue
            waiting = sum(len(item) for item in conn.waiting if isinstance(item, bytes))
            if len(conn.waiting) >= PIPELINE or waiting + len(line) > MAX_LINE:
                too_much = f"more than {PIPELINE} requests or {MAX_LINE} bytes waiting"
                self._say(conn.peer, "pipelined", f"{too_much} on one connection: closed (are its answers "
                          "being read?)")
                self._last_word(conn, f"{too_much} on this connection")
                return
            conn.waiting.append(line)
        if len(conn.partial) > MAX_LINE:
            self._last_word(conn, f"request longer than {MAX_LINE} bytes")

    def _last_word(self, conn: _Connection, error: str) -> None:
        """Nothing more is read from `conn`: the requests waiting are dropped, `error` is its last answer."""
        conn.waiting.clear()
        conn.waiting.append({"ok": False, "error": error})
        conn.partial = b""
        conn.reading = False
        conn.closing = True

    def _next(self, conn: _Connection) -> None:
        """The next request to a handler, once the last one's answer is sent; close when all is said."""
        if not conn.open or conn.busy or conn.out:
            return
        if conn.waiting:
            if not conn.admin and isinstance(conn.waiting[0], bytes) and not self._turn(conn):
                return
            item = conn.waiting.popleft()
            if isinstance(item, dict):
                conn.waiting.clear()
                self._queue_answer(conn, item)
                return
            conn.busy = True
            # Its own descriptor for the handler, made here: this thread may close the connection's
            # meanwhile, and a number closed can come back as another client's.
            conn.handed_fd = os.dup(conn.sock.fileno()) if self.handoff is not None else -1
            self._work.put((conn, item), conn.admin)
        elif conn.closing:
            self._drop(conn)
        else:
            conn.quiet_since = time.monotonic()

    def _turn(self, conn: _Connection) -> bool:
        """Whether a read-only user's next request may go to a handler now; if not, it waits,
        unread by any handler, till its user's pace allows (`_paced_turns`). Refused at once, a
        flood came straight back: each request, answered or refused, cost the table's process
        its accept, read and hand-over while the game thread waited for the interpreter lock."""
        now = time.monotonic()
        wait = self._pace.take(conn.key, now)
        if wait <= 0.0:
            conn.paced_until = 0.0
            return True
        if not conn.paced_until:
            self.paced += 1
            self._say(conn.peer, "paced", f"asks more than {PACE_PER_S:g} requests a second: each waits "
                      "its turn")
        conn.paced_until = now + wait
        return False

    def _paced_turns(self) -> None:
        now = time.monotonic()
        for conn in list(self._connections.values()):
            if conn.paced_until and conn.paced_until <= now:
                self._next(conn)

    def _answers(self) -> None:
        while True:
            try:
                conn, answer = self._done.get_nowait()
            except queue.Empty:
                return
            conn.busy = False
            if not conn.open:
                continue
            if isinstance(answer, Handed):  # answered on the connection by the journal's reader
                if answer.outcome == "sent":
                    self._next(conn)
                elif answer.outcome == "gone":  # its peer left: as a POLLHUP is, silently
                    self._drop(conn)
                else:
                    self._say(conn.peer, "handed", f"closed: {answer.outcome}")
                    self._drop(conn)
                continue
            self._queue_answer(conn, answer)

    def _queue_answer(self, conn: _Connection, answer: dict[str, Any]) -> None:
        conn.out = pieces.dumps(answer).encode() + b"\n"  # a history page: never one long hold of the GIL
        conn.sending_since = time.monotonic()
        self._send(conn)
        self._next(conn)

    def _send(self, conn: _Connection) -> None:
        try:
            sent = conn.sock.send(conn.out, socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL)
        except BlockingIOError:
            return
        except OSError:  # EPIPE, ECONNRESET: the peer has gone
            self._drop(conn)
            return
        conn.out = conn.out[sent:]

    def _expire(self) -> None:
        now = time.monotonic()
        for conn in list(self._connections.values()):
            due = conn.deadline()
            if due is not None and due[0] <= now:
                if due[1]:
                    self._say(conn.peer, due[1], f"closed: it {due[1]}")
                else:
                    log.debug("%s: idle for %g s: closed", conn.peer, IDLE_S)
                self._drop(conn)

    def _drop(self, conn: _Connection) -> None:
        if not conn.open:
            return
        conn.open = False
        fd = conn.sock.fileno()
        del self._connections[fd]
        self._poller.unregister(fd)  # poll keeps a closed descriptor, and its number comes back
        self._per_peer[conn.key] -= 1
        if not self._per_peer[conn.key]:
            del self._per_peer[conn.key]
        conn.sock.close()

    def _say(self, peer: Peer | None, what: str, text: str) -> None:
        """Into the journal, once a minute at most for one user and one kind of misbehaviour (an
        attacker must not fill the journal either), with how many were not said since."""
        key = (None if peer is None else peer.uid, what)
        now = time.monotonic()
        last, unsaid = self._said.get(key, (-WARN_EVERY_S, 0))
        if now - last < WARN_EVERY_S:
            self._said[key] = (last, unsaid + 1)
            return
        more = f" ({unsaid} more like it in the last {WARN_EVERY_S:g} s)" if unsaid else ""
        log.warning("%s%s%s", "" if what == "descriptors" else f"{peer or 'unknown peer'}: ", text, more)
        self._said[key] = (now, 0)

    # ------------------------------------------------------------ the handlers

    def _handle(self, reserved: bool) -> None:
        while (item := self._work.take(reserved)) is not None:
            conn, line = item
            answer: dict[str, Any] | Handed
            fd, conn.handed_fd = conn.handed_fd, -1
            try:
                answer = self._answer(line, conn.peer, fd)
            except Exception as exc:  # a request must never cost its connection its answer
                answer = {"ok": False, "error": f"the request failed: {type(exc).__name__}"}
            finally:
                if fd >= 0:
                    os.close(fd)
            self._done.put((conn, answer))
            self._wake()

    def _answer(self, line: bytes, peer: Peer | None,
                fd: int = -1) -> dict[str, Any] | Handed:
        try:
            body = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            log.debug("%s sent no JSON: %s", peer, exc)
            return {"ok": False, "error": f"not a JSON request: {exc}"}
        except RecursionError:  # json's parser recurses: [[[[... a few thousand deep
            return {"ok": False, "error": "not a request: arrays or objects nested too deeply"}
        if not isinstance(body, dict) or not isinstance(body.get("cmd"), str):
            log.debug("%s sent no command: %s", peer, escape(line[:200].decode("utf-8", "replace")))
            return {"ok": False, "error": 'a request is an object with "cmd", e.g. {"cmd": "status"}'}
        if peer is None:
            refusal = None if reads_only(body) else "the kernel gave no credentials for this connection"
        else:
            refusal = self.access.refusal(peer, body)
        if refusal is not None:
            log.info("%s refused %s: %s", peer or "unknown peer", escape(body["cmd"]), refusal)
            return {"ok": False, "error": refusal}
        if log.isEnabledFor(logging.DEBUG):
            arguments = ", ".join(f"{escape(k)}={escape(v)}" for k, v in body.items() if k != "cmd")
            log.debug("%s asks %s%s", peer, escape(body["cmd"]), f" ({arguments})" if arguments else "")
        if self.handoff is not None and fd >= 0:
            handed = self.handoff(fd, body)
            if handed is not None:
                return handed
        answer = self.beside(body) if self.beside is not None else None
        if answer is None:
            request = Request(body, str(peer))
            self.requests.put(request)
            answer = request.wait()
        if not answer.get("ok"):
            log.debug("%s refused: %s", peer, escape(answer.get("error", "")))
        return answer


SO_PEERGROUPS = getattr(socket, "SO_PEERGROUPS", 59)
"""Linux 4.13 (include/uapi/asm-generic/socket.h: 59 on arm, arm64, x86): the peer's supplementary
groups at connect time, the very ones its access to the socket file was checked with."""


def peer_of(conn: socket.socket) -> Peer | None:
    """The kernel's word on the peer; None when it has none (then only reading is allowed)."""
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    pid, uid, gid = struct.unpack("3i", creds)
    groups: tuple[int, ...] = ()
    for size in (256, 65536):  # NGROUPS_MAX is 65536; most peers have a handful
        try:
            raw = conn.getsockopt(socket.SOL_SOCKET, SO_PEERGROUPS, 4 * size)
        except OSError as exc:
            if exc.errno == errno.ERANGE:
                continue
            break  # an old kernel: the peer's primary group still counts
        groups = struct.unpack(f"{len(raw) // 4}I", raw)
        break
    return Peer(pid, uid, gid, groups)
