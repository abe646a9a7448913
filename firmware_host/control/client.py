"""Asking the running table over its control socket: what `tablectl`, the benches and the
virtual Pi's checks share. It imports only the socket paths and the errors (system/), so that
`tablectl status` starts fast."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from pathlib import Path
from typing import Any

from ..system import paths
from ..system.errors import NotRunning

__all__ = ["CONNECT_WAIT_S", "NotRunning", "ask", "connect"]

CONNECT_WAIT_S = 5.0


def ask(body: dict[str, Any], path: Path | None = None, timeout: float = 10.0) -> dict[str, Any]:
    """One request, its answer; NotRunning names the socket tried and why it failed."""
    path = path or paths.find_socket()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            connect(sock, path, time.monotonic() + CONNECT_WAIT_S)
            # Refused at once (a user's share of connections used up): its reason is still to be read.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                sock.sendall(json.dumps(body).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
    except (FileNotFoundError, ConnectionRefusedError):
        tried = paths.socket_candidates() if path == paths.find_socket() else [path]
        where = " or ".join(str(p) for p in tried)
        raise NotRunning(f"the table daemon is not running (no control socket at {where})") from None
    except PermissionError:
        raise NotRunning(f"permission denied on {path} (are you in the table's admin group?)") from None
    except OSError as exc:
        raise NotRunning(f"cannot reach the daemon at {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        raise NotRunning(f"the daemon at {path} gave no answer") from None


def connect(sock: socket.socket, path: Path, deadline: float) -> None:
    """A full backlog answers EAGAIN at once (a Unix socket with a timeout does not wait for
    room): wait briefly and try again, until the deadline."""
    pause = 0.01
    while True:
        try:
            sock.connect(str(path))
            return
        except BlockingIOError:
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)
