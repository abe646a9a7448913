"""What the table needs from systemd: readiness and status (sd_notify), and knowing how it runs.

Standard library only: the daemon says READY=1 through it, and `bench startup` listens for that.
"""

from __future__ import annotations

import contextlib
import os
import socket


class Notifier:
    """sd_notify: a datagram to $NOTIFY_SOCKET (nothing happens outside systemd)."""

    def __init__(self) -> None:
        path = os.environ.get("NOTIFY_SOCKET", "")
        self._address = ("\0" + path[1:]) if path.startswith("@") else path
        usec = os.environ.get("WATCHDOG_USEC", "")
        self.watchdog_ns = int(usec) * 1000 // 2 if usec.isdigit() else None

    def send(self, *fields: str) -> None:
        """Never blocks: a supervisor slow to read must not stop the game."""
        if not self._address:
            return
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.setblocking(False)
            s.sendto("\n".join(fields).encode(), self._address)


def has_terminal() -> bool:
    """A controlling terminal, whose hangup should stop us (detached by setsid, there is none)."""
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
    except OSError:
        return False
    return True


def under_systemd() -> bool:
    """Started by systemd as a service: it sets INVOCATION_ID for every unit it runs."""
    return bool(os.environ.get("INVOCATION_ID") or os.environ.get("NOTIFY_SOCKET"))
