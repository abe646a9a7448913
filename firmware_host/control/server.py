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
`requests` and waits for its answer. Anything malformed — not JSON, not an
object, no command, too long, a command that fails — gets an error reply and
the connection goes on; the server never falls over.
"""

from __future__ import annotations

import contextlib
import errno
import grp
import json
import logging
import os
import pwd
import queue
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..system.logs import escape, logger
from ..system.paths import ADMIN_GROUP
from .protocol import reads_only

__all__ = ["ADMIN_GROUP", "Access", "ControlServer", "Request", "reads_only", "serve_request"]

log = logger("control")
MAX_LINE = 64 * 1024
REPLY_TIMEOUT_S = 5.0
BACKLOG = 128  # connections the kernel queues while every handler is busy (a burst of tablectl)
HANDLERS = 8  # connections served at once; the rest wait in the backlog
IDLE_S = 10.0  # a connection that sends nothing for this long is closed: it would hold a handler


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


class ControlServer:
    def __init__(self, path: str | Path, requests: queue.SimpleQueue[Any] | queue.Queue[Any],
                 admin_group: str = ADMIN_GROUP) -> None:
        self.path = Path(path)
        self.requests = requests
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(self.path))
        os.chmod(self.path, 0o660)
        self.access = Access(admin_group)
        self.set_admin_group(admin_group)
        self._sock.listen(BACKLOG)
        self._stopping = False
        # Every handler from the start, never more: a pool that grows on demand (ThreadPoolExecutor)
        # adds a thread whenever a client's next call races the last handler back to idle, which
        # a loaded machine makes likely, and each thread's stack and allocator share stay.
        self._accepted: queue.Queue[socket.socket | None] = queue.Queue(HANDLERS)
        self.handlers = [threading.Thread(target=self._handle, name=f"control-conn-{i + 1}", daemon=True)
                         for i in range(HANDLERS)]
        self._thread = threading.Thread(target=self._accept, name="control", daemon=True)
        for thread in (*self.handlers, self._thread):
            thread.start()

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
        self._stopping = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        while True:  # accepted but not yet served: closed, so their clients hear at once
            try:
                conn = self._accepted.get_nowait()
            except queue.Empty:
                break
            if conn is not None:
                conn.close()
        for _ in self.handlers:
            with contextlib.suppress(queue.Full):
                self._accepted.put_nowait(None)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def _accept(self) -> None:
        """Hand each connection to a free handler. While all are busy and HANDLERS more wait, this
        waits too, and the kernel's backlog holds the rest (the client retries when that is full)."""
        while not self._stopping:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            if self._stopping:
                conn.close()
                return
            self._accepted.put(conn)

    def _handle(self) -> None:
        while (conn := self._accepted.get()) is not None:
            if self._stopping:  # taken after close(): in place of the None it had no room for
                conn.close()
                return
            try:
                self._serve(conn)
            except Exception:  # a handler that died would leave one fewer for good
                log.exception("serving a control connection failed")

    def _serve(self, conn: socket.socket) -> None:
        peer = peer_of(conn)
        log.debug("connection from %s", peer or "unknown peer")
        buffer = b""
        with conn:
            conn.settimeout(IDLE_S)
            while True:
                try:
                    chunk = conn.recv(4096)
                except OSError:
                    return
                if not chunk:
                    return
                buffer += chunk
                if len(buffer) > MAX_LINE and b"\n" not in buffer:
                    self._send(conn, {"ok": False, "error": f"request longer than {MAX_LINE} bytes"})
                    return
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        try:
                            answer = self._answer(line, peer)
                        except Exception as exc:  # a request must never cost its connection its answer
                            answer = {"ok": False, "error": f"the request failed: {type(exc).__name__}"}
                        self._send(conn, answer)

    def _answer(self, line: bytes, peer: Peer | None) -> dict[str, Any]:
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
        request = Request(body, str(peer))
        self.requests.put(request)
        answer = request.wait()
        if not answer.get("ok"):
            log.debug("%s refused: %s", peer, escape(answer.get("error", "")))
        return answer

    @staticmethod
    def _send(conn: socket.socket, answer: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            conn.sendall(json.dumps(answer).encode() + b"\n")


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
