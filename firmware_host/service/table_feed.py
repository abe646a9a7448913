"""The table fed in the loop: presses go to it, time advances it, and each step it takes is
handed to the components that follow it (the store, the screens, the sounds, the bots, the
status), in the order they asked for it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..engine.round import RulesError
from ..system.logs import escape
from ..table.machine import Table
from ..table.names import NameRefused
from ..table.presses import Event, InputEvent
from .events import AbortAsked, SeatClaimed
from .loop import Loop


@dataclass(frozen=True)
class Step:
    """What one advance of the table did: its decisions, the wakes time caused, its sounds."""

    now: int
    outcomes: list[Any]
    wakes: list[Any]
    cues: list[Any]
    acting: list[int] = field(default_factory=list)  # the seats whose action was taken
    false_starts: list[Any] = field(default_factory=list)  # presses before go (table/machine.py FalseStart)
    pressed: list[int] = field(default_factory=list)  # the physical seats the table took a press from


class TableFeed:
    """Feeds the table its presses and its time, and hands each step to the followers."""

    def __init__(self, loop: Loop, table: Table) -> None:
        self.loop, self.table = loop, table
        self.followers: list[Callable[[Step], None]] = []
        self._pressed: list[int] = []
        self._due = loop.register_timer(lambda _now: None)  # wakes the loop: the advance does the rest
        loop.on(InputEvent, self.on_input, at="table")
        loop.on(AbortAsked, self.on_abort)
        loop.on(SeatClaimed, self.on_claim)
        loop.after_each(self.advance)  # the first hook: the table decides, then the others follow it

    def follow(self, follower: Callable[[Step], None]) -> None:
        self.followers.append(follower)

    def on_input(self, event: InputEvent, now: int) -> None:
        self.table.on_input(event, now)
        if event.kind is Event.PRESS and event.seat >= 0:
            self._pressed.append(event.seat)  # its screen is drawn after the step, with the rest

    def on_abort(self, _event: AbortAsked, now: int) -> None:
        try:
            self.table.abort(now)
        except RulesError as exc:
            self.table._note(str(exc))

    def on_claim(self, event: SeatClaimed, now: int) -> None:
        """A phone's claim of a seat: the table checks the token and seats the name; the phone is
        answered either way, in its words (never a traceback: a name refused is said)."""
        try:
            name = self.table.claim(event.seat, event.token, event.name, now)
        except (RulesError, NameRefused) as exc:
            event.answer({"ok": False, "error": str(exc)})
            return
        self.table._note(f"Seat {event.seat + 1} claimed from a phone: {escape(name)}")
        event.answer({"ok": True, "seat": event.seat + 1, "name": name})

    def advance(self, now: int) -> None:
        table = self.table
        outcomes = table.tick(now)
        cues = table.take_cues()  # the one place the table's sounds leave it
        acting = [o.press.seat for o in outcomes
                  if o.action is not None and o.refusal is None and table.match is not None]
        pressed, self._pressed = self._pressed, []
        step = Step(now, outcomes, table.take_wakes(), cues, acting, table.take_false_starts(), pressed)
        for follower in self.followers:
            follower(step)
        self.loop.update_timer(self._due, table.deadline())
