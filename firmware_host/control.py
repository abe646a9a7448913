"""The control socket: `tablectl` talks to the table here, one JSON object per line.

    → {"cmd": "status"}
    ← {"ok": true, "phase": "lobby", ...}      or      {"ok": false, "error": "..."}

The socket lives in the runtime directory (mode 0660, the admin group), and
every connection's peer (pid, uid, gid) is logged (DEBUG, `table_host.control`; whatever a
client sent is escaped first: a newline in a command must not forge a log line). The server thread never
touches the game: it hands each request to the owner of the game state through
`requests` and waits for its answer. Anything malformed — not JSON, not an
object, no command, too long, a command that fails — gets an error reply and
the connection goes on; the server never falls over.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import socket
import struct
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .logs import escape, logger

log = logger("control")
MAX_LINE = 64 * 1024
REPLY_TIMEOUT_S = 5.0
BACKLOG = 128  # connections the kernel queues while every handler is busy (a burst of tablectl)
HANDLERS = 8  # connections served at once; the rest wait in the backlog or the pool's queue
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


class ControlServer:
    def __init__(self, path: str | Path, requests: queue.SimpleQueue[Any] | queue.Queue[Any],
                 group: int | None = None) -> None:
        self.path = Path(path)
        self.requests = requests
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(self.path))
        os.chmod(self.path, 0o660)
        if group is not None:
            with contextlib.suppress(PermissionError):
                os.chown(self.path, -1, group)
        self._sock.listen(BACKLOG)
        self._stopping = False
        self._pool = ThreadPoolExecutor(HANDLERS, thread_name_prefix="control-conn")
        self._thread = threading.Thread(target=self._accept, name="control", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stopping = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def _accept(self) -> None:
        while not self._stopping:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            try:
                self._pool.submit(self._serve, conn)
            except RuntimeError:  # closing
                conn.close()
                return

    def _serve(self, conn: socket.socket) -> None:
        peer = _peer(conn)
        log.debug("connection from %s", peer)
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
                        self._send(conn, self._answer(line, peer))

    def _answer(self, line: bytes, peer: str) -> dict[str, Any]:
        try:
            body = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            log.debug("%s sent no JSON: %s", peer, exc)
            return {"ok": False, "error": f"not a JSON request: {exc}"}
        if not isinstance(body, dict) or not isinstance(body.get("cmd"), str):
            log.debug("%s sent no command: %s", peer, escape(line[:200].decode("utf-8", "replace")))
            return {"ok": False, "error": 'a request is an object with "cmd", e.g. {"cmd": "status"}'}
        if log.isEnabledFor(logging.DEBUG):
            arguments = ", ".join(f"{escape(k)}={escape(v)}" for k, v in body.items() if k != "cmd")
            log.debug("%s asks %s%s", peer, escape(body["cmd"]), f" ({arguments})" if arguments else "")
        request = Request(body, peer)
        self.requests.put(request)
        answer = request.wait()
        if not answer.get("ok"):
            log.debug("%s refused: %s", peer, escape(answer.get("error", "")))
        return answer

    @staticmethod
    def _send(conn: socket.socket, answer: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            conn.sendall(json.dumps(answer).encode() + b"\n")


def _peer(conn: socket.socket) -> str:
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid, uid, gid = struct.unpack("3i", creds)
        return f"pid {pid} uid {uid} gid {gid}"
    except OSError:
        return "unknown peer"
