"""The keys a frontend reads: `q` stops the table, `b`/`B` add or remove a bot, `l` chooses the
level of the next bot added, and the rest press seat 1's emulated pins
(devices/emulated/keyboard.py), so a key takes a button's path."""

from __future__ import annotations

from typing import Any

from ..control.protocol import BOT_LEVELS
from ..engine.round import RulesError
from ..table.machine import Table
from .events import Key
from .loop import Loop


class Keys:
    def __init__(self, loop: Loop, table: Table, keyboard: Any) -> None:
        """`keyboard`: KeyboardSeats over the emulated buttons, or None (real hardware)."""
        self.loop, self.table, self.keyboard = loop, table, keyboard
        self.level = "medium"  # the next bot's
        loop.on(Key, self.on_key)
        self._waiting = loop.register_timer(self._press_waiting)

    @property
    def direct(self) -> bool:
        """Seat 1 has direct buttons for keys 1-5 (the footer offers only what it has)."""
        return self.keyboard is not None and self.keyboard.has(0, "select1")

    def _press_waiting(self, now: int) -> int | None:
        """Taps a burst of keys left waiting for their line (devices/emulated/keyboard.py)."""
        self.keyboard.tick(now)
        return self.keyboard.due()

    def on_key(self, key: Key, now: int) -> None:
        name = key.name
        if name == "q":
            self.loop.stop()
        elif name in ("b", "B"):
            try:
                if name == "b":
                    self.table.add_bot(self.level)
                elif self.table.bots:
                    self.table.remove_bot()
            except RulesError as exc:
                self.table._note(str(exc))
        elif name == "l":
            self.level = BOT_LEVELS[(BOT_LEVELS.index(self.level) + 1) % len(BOT_LEVELS)]
            self.table._note(f"Bots added next play {self.level}")
        elif self.keyboard is not None:
            self.keyboard.key(name, now)
            self.loop.update_timer(self._waiting, self.keyboard.due())
