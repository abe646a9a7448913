"""Histories that a long-running table keeps without growing: the first few entries and the newest.

The emulated devices record what passes through them (the bytes a display driver sends, a pin's
edges, the PWM lgpio is handed) so tests can check them; the daemon runs on the same emulated
devices for weeks on a laptop or in a soak, where a history of every event is a leak.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")


class Recent(list[T]):
    """A list that keeps its first `head` entries (a display's start-up commands, a pin's
    first state) and the newest `keep`: never longer than head + keep. It stays a list, so
    tests index, slice and compare it as before."""

    def __init__(self, items: Iterable[T] = (), *, keep: int, head: int = 0) -> None:
        super().__init__()
        if keep < 1 or head < 0:
            raise ValueError("Recent keeps at least one newest entry")
        self.keep, self.head = keep, head
        self.extend(items)

    def append(self, item: T) -> None:
        super().append(item)
        if len(self) > self.head + self.keep:
            del self[self.head : len(self) - self.keep]

    def extend(self, items: Iterable[T]) -> None:
        for item in items:
            self.append(item)
