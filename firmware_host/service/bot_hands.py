"""Bots at the table press its emulated pins, as a person would, on their own timers: a bot's
choice is turned into the presses its seat's controls take, a brisk person's taps apart."""

from __future__ import annotations

from collections import deque
from typing import Any

from ..engine.game import sight_of
from ..table.machine import Phase, Table
from .loop import Loop
from .table_feed import Step

BOT_TAP_NS = 80_000_000  # bots press like a brisk person: a button every 80 ms
BOT_HOLD_NS = 35_000_000  # each held this long (let go by the daemon: EmulatedButtons.let_go)


class BotHands:
    def __init__(self, loop: Loop, table: Table, buttons: Any) -> None:
        """`buttons`: the board's emulated presser (None on real hardware: no bots press)."""
        self.loop, self.table, self.buttons = loop, table, buttons
        self.due: dict[int, int] = {}
        self.pending: dict[int, deque[tuple[int, int, str]]] = {}  # player -> (when, seat, control)
        self._timer = loop.register_timer(lambda _now: None)  # wakes the loop; after_step presses

    def after_step(self, step: Step) -> None:
        self.drive(step.now)
        heads = [presses[0][0] for presses in self.pending.values() if presses]
        self.loop.update_timer(self._timer, min([*self.due.values(), *heads], default=None))

    def drive(self, now: int) -> None:
        """Each press of a bot's turn is tapped when its time comes, never ahead: presses stamped
        in the future would still count after the match ended (an abort), in the lobby, where a
        bot's slap joined its seat as a person."""
        table = self.table
        if table.phase is not Phase.PLAYING or self.buttons is None or table.referee is None:
            self.due.clear()
            self.pending.clear()
            return
        match = table.match
        assert match is not None
        for player, bot in table.bots.items():
            presses = self.pending.setdefault(player, deque())
            while presses and presses[0][0] <= now:
                at, seat, control = presses.popleft()
                self.buttons.press(seat, control, at, BOT_HOLD_NS)
            if presses:
                continue  # the rest of this turn is still to be pressed
            due = self.due.get(player)
            if due is None:
                self.due[player] = now + bot.delay_ns(None)
                continue
            if now < due:
                continue
            controller = table.referee.seats[player]
            action = bot.choose(sight_of(match.round, player), now)
            turn = controller.presses_for(action) if action is not None else None
            seat = table.seat_of_player[player]
            at = now
            for control in turn or []:
                presses.append((at, seat, control))
                at += BOT_TAP_NS
            if presses:  # the first press is now
                at0, seat0, control0 = presses.popleft()
                self.buttons.press(seat0, control0, at0, BOT_HOLD_NS)
            self.due[player] = at + max(bot.delay_ns(action), BOT_TAP_NS) if action else now + 10**9
