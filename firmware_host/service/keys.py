"""The keys a frontend reads: `q` stops the table, `b`/`B` add or remove a bot, and the rest
press seat 1's emulated pins (devices/emulated/keyboard.py), so a key takes a button's path."""

from __future__ import annotations

from typing import Any

from ..game.table import Table
from ..rules.common import RulesError
from .events import Key
from .loop import Loop


class Keys:
    def __init__(self, loop: Loop, table: Table, keyboard: Any) -> None:
        """`keyboard`: KeyboardSeats over the emulated buttons, or None (real hardware)."""
        self.loop, self.table, self.keyboard = loop, table, keyboard
        loop.on(Key, self.on_key)

    def on_key(self, key: Key, now: int) -> None:
        name = key.name
        if name == "q":
            self.loop.stop()
        elif name in ("b", "B"):
            count = len(self.table.bots) + (1 if name == "b" else -1)
            try:
                self.table.set_bots(max(0, count))
            except RulesError as exc:
                self.table._note(str(exc))
        elif self.keyboard is not None:
            self.keyboard.key(name, now)
