"""Bots at the table press its emulated pins, as a person would, on their own timers: a bot's
choice is turned into the presses its seat's controls take, a brisk person's taps apart.

A bot looks at the table, decides, and its first press comes its reaction time later, the time
drawn for the action it chose (`Bot.delay_ns`): a play it saw coming at its last look (its
planning) comes at the routine pace, as in `table-host simulate` and `bench engine`. It looks
again once the turn is pressed, or a second later when it had nothing to do."""

from __future__ import annotations

from collections import deque
from typing import Any

from ..engine.codec import Action
from ..engine.game import sight_of
from ..table.machine import Phase, Table
from .loop import Loop
from .table_feed import Step

BOT_TAP_NS = 80_000_000  # bots press like a brisk person: a button every 80 ms
BOT_HOLD_NS = 35_000_000  # each held this long (let go by the daemon: EmulatedButtons.let_go)
BOT_POLL_NS = 1_000_000_000
"""A bot with nothing to do looks again this much later (as `simulate`'s timed bots do)."""


class BotHands:
    def __init__(self, loop: Loop, table: Table, buttons: Any) -> None:
        """`buttons`: the board's emulated presser (None on real hardware: no bots press)."""
        self.loop, self.table, self.buttons = loop, table, buttons
        self.due: dict[int, int] = {}  # player -> when it looks next
        self.chosen: dict[int, tuple[object, Action, int]] = {}
        """player -> (the round it looked at, the action it chose, when its first press comes)."""
        self.pending: dict[int, deque[tuple[int, int, str]]] = {}  # player -> (when, seat, control)
        self.sights: dict[int, tuple[object, Any]] = {}  # player -> (round, its sight): one a round
        self._timer = loop.register_timer(lambda _now: None)  # wakes the loop; after_step presses

    def after_step(self, step: Step) -> None:
        self.drive(step.now)
        heads = [presses[0][0] for presses in self.pending.values() if presses]
        firsts = [at for _, _, at in self.chosen.values()]
        self.loop.update_timer(self._timer, min([*self.due.values(), *heads, *firsts], default=None))

    def _clear(self) -> None:
        self.due.clear()
        self.chosen.clear()
        self.pending.clear()
        self.sights.clear()

    def drive(self, now: int) -> None:
        """Each press of a bot's turn is tapped when its time comes, never ahead: presses stamped
        in the future would still count after the match ended (an abort), in the lobby, where a
        bot's slap joined its seat as a person."""
        table = self.table
        if table.phase is not Phase.PLAYING or self.buttons is None or table.referee is None:
            self._clear()
            return
        match = table.match
        assert match is not None
        rnd = match.round
        for player, bot in table.bots.items():
            presses = self.pending.setdefault(player, deque())
            while presses and presses[0][0] <= now:
                at, seat, control = presses.popleft()
                self.buttons.press(seat, control, at, BOT_HOLD_NS)
            if presses:
                continue  # the rest of this turn is still to be pressed
            chosen = self.chosen.get(player)
            if chosen is not None and chosen[0] is not rnd:
                chosen = None  # chosen in a round that is over
                del self.chosen[player]
            if chosen is not None:
                if now < chosen[2]:
                    continue  # still reacting
                del self.chosen[player]
                self._press(player, chosen[1], now)
                continue
            due = self.due.get(player)
            if due is not None and now < due:
                continue
            seen = self.sights.get(player)
            if seen is None or seen[0] is not rnd:
                seen = self.sights[player] = (rnd, sight_of(rnd, player))
            action = bot.choose(seen[1], now)
            if action is None:
                self.due[player] = now + BOT_POLL_NS
                continue
            self.chosen[player] = (rnd, action, now + bot.delay_ns(action))
            self.due.pop(player, None)

    def _press(self, player: int, action: Action, now: int) -> None:
        """The presses that make `action` from the seat's controls as they are now, the first at
        once; the bot looks again a tap after the last."""
        table = self.table
        assert table.referee is not None
        turn = table.referee.seats[player].presses_for(action)
        seat = table.seat_of_player[player]
        presses = self.pending[player]
        at = now
        for control in turn or []:
            presses.append((at, seat, control))
            at += BOT_TAP_NS
        if presses:  # the first press is now
            at0, seat0, control0 = presses.popleft()
            self.buttons.press(seat0, control0, at0, BOT_HOLD_NS)
        self.due[player] = max(at, now + BOT_TAP_NS)
