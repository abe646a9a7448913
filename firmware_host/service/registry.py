"""The service's half of the command registry: each component registers the handler of a
command declared in control/protocol.py (Moonraker's `register_endpoint`, Klipper's
`register_command`). Declaring and handling are checked against each other when the table
starts: a handler for an undeclared command, or a declared command nobody handles, is an error
then, not a surprise when someone types it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..control.protocol import BY_NAME, LOCAL, Command, declare, wire
from ..control.server import Request
from ..engine.game import JsonDict, RawDict
from ..system.errors import TableBug


@dataclass(frozen=True)
class Call:
    """One request as a handler sees it. A handler returns its answer, or None when it keeps
    `request` and answers it later (a reload reads the file on a thread of its own)."""

    body: RawDict  # as the client sent it: each handler checks what it reads
    now: int
    request: Request | None = None

    def get(self, key: str, default: object = None) -> Any:
        """A value of the body, or `default`: as sent, so `Any` until its handler checks it."""
        return self.body.get(key, default)


CommandHandler = Callable[[Call], "JsonDict | None"]
"""A command's handler: its answer (JSON), or None when it keeps the request to answer later."""


class CommandError(TableBug):
    """The commands declared and the handlers registered do not agree (a programming error)."""


class Commands:
    def __init__(self) -> None:
        self._handlers: dict[tuple[str, str | None], CommandHandler] = {}
        self._gates: list[tuple[frozenset[str], Callable[[], str | None]]] = []

    def register(self, name: str | Command, handler: CommandHandler, action: str | None = None) -> None:
        """`handler` answers the command `name` (or `action` of it). Given a `Command`, it is
        declared too (control/protocol.py `declare`), in this one call: tablectl's parser, help,
        completion and the access check follow, in this process."""
        if isinstance(name, Command):
            if BY_NAME.get(name.name) is not name:
                declare(name)
            name = name.name
        command = BY_NAME.get(name)
        if command is None or not command.wire:
            raise CommandError(f"{name!r} is not a command the daemon answers (control/protocol.py)")
        if (action not in command.actions) if command.actions else action is not None:
            raise CommandError(f"{name} has no action {action!r}")
        if command.kind_of(action) == LOCAL:
            raise CommandError(f"{name} {action} runs in tablectl, not in the daemon")
        if (name, action) in self._handlers:
            raise CommandError(f"{name} {action or ''} has a handler already")
        self._handlers[(name, action)] = handler

    def handler(self, name: str, action: str | None = None) -> CommandHandler | None:
        """The handler registered for `name` (and `action`), if any."""
        return self._handlers.get((name, action))

    def refuse_while(self, names: tuple[str, ...], reason: Callable[[], str | None]) -> None:
        """Refuse these commands while `reason()` says why (the self-test holds the table)."""
        self._gates.append((frozenset(names), reason))

    def check(self) -> None:
        """Every command the daemon answers has its handler (called once everything registered)."""
        missing = []
        for name in wire():
            command = BY_NAME[name]
            wanted: list[str | None] = [a for a, kind in command.actions.items() if kind != LOCAL]
            wanted = wanted if command.actions else [None]
            missing += [f"{name} {a}" if a else name for a in wanted if (name, a) not in self._handlers]
        if missing:
            raise CommandError(f"declared but not handled: {', '.join(missing)}")

    def answer(self, call: Call) -> JsonDict | None:
        """The handler's answer; a ValueError or the table's own error says what is wrong."""
        name = call.body.get("cmd")
        command = BY_NAME.get(name) if isinstance(name, str) else None
        if command is None or not command.wire:
            raise ValueError(f"unknown command {name!r} (known: {', '.join(wire())})")
        action = call.body.get("action")
        if command.actions:
            action = command.default_action if action is None else action
            if command.kind_of(action) == LOCAL:
                raise ValueError(f"{name} {action} runs in tablectl, with your own rights: update tablectl")
        handler = self._handlers.get((command.name, action if command.actions else None))
        if handler is None:
            *others, last = [a for a, k in command.actions.items() if k != LOCAL]
            raise ValueError(f"{name} takes {', '.join(others)} or {last}")
        for names, reason in self._gates:
            why = reason() if name in names else None
            if why:
                raise ValueError(why)
        return handler(call)

    def beside(self, body: RawDict) -> JsonDict | None:
        """The whole answer to a request for a command declared `beside` (it reads only what is
        stored), worked out here, on the caller's thread (a control socket handler's): the game
        thread never sees it. None for every other command: those go to the game thread."""
        name = body.get("cmd")
        command = BY_NAME.get(name) if isinstance(name, str) else None
        if command is None or not command.beside:
            return None
        try:
            answer = self.answer(Call(body, time.monotonic_ns()))
        except Exception as exc:  # a failing command is an error reply, as on the game thread
            return {"ok": False, "error": str(exc) or type(exc).__name__}
        return {"ok": True, **(answer or {})}

    def serve(self, request: Request, now: int) -> None:
        """Answer one request from the control socket: now, or later if its handler keeps it."""
        try:
            answer = self.answer(Call(request.body, now, request))
        except Exception as exc:  # a failing command is an error reply; the table goes on
            request.reply({"ok": False, "error": str(exc) or type(exc).__name__})
            return
        if answer is not None:
            request.reply({"ok": True, **answer})
