"""systemd's watchdog: WATCHDOG=1 at half the interval the unit gave (WATCHDOG_USEC), from the
loop's own thread, so a stalled loop is restarted."""

from __future__ import annotations

from typing import Any

from .loop import Loop


class Watchdog:
    def __init__(self, loop: Loop, notify: Any, now: int) -> None:
        self.notify = notify
        if notify.watchdog_ns:
            loop.register_timer(self.ping, now)

    def ping(self, now: int) -> int:
        self.notify.send("WATCHDOG=1")
        return now + self.notify.watchdog_ns
