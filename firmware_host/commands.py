"""What `tablectl` can ask, answered by the owner of the game state."""

from __future__ import annotations

from typing import Any

from .rules.options import GAMES
from .store import Store
from .table import Table

COMMANDS = ("status", "new", "start", "abort", "next", "scores", "history", "seats", "bots", "inputs")


def handle(table: Table, store: Store | None, now: int, body: dict[str, Any]) -> dict[str, Any]:
    """Carry out one control request; a RulesError or ValueError says what is wrong."""
    cmd = body["cmd"]
    if cmd == "status":
        return table.status()
    if cmd == "new":
        game = body.get("game")
        if not isinstance(game, str):
            raise ValueError(f"new needs a game: {', '.join(GAMES)}")
        options = body.get("options") or {}
        if not isinstance(options, dict):
            raise ValueError("options must be an object of option: value")
        table.new(game, options, now)
        return table.status()
    if cmd == "start":
        table.start(now)
        return table.status()
    if cmd == "abort":
        table.abort(now)
        return table.status()
    if cmd == "next":
        table.next(now)
        return table.status()
    if cmd == "scores":
        if table.match is None:
            raise ValueError("no match yet")
        return table.match.summary()
    if cmd == "history":
        if store is None:
            raise ValueError("no state database")
        limit = body.get("limit", 20)
        if not isinstance(limit, int) or limit < 1:
            raise ValueError("limit must be a positive whole number")
        return {"matches": store.history(limit)}
    if cmd == "seats":
        return {"joined": [s + 1 for s in table.joined], "bots": len(table.bots),
                "seats_wired": table.seats}
    if cmd == "bots":
        count, level = body.get("count"), body.get("level", "medium")
        if not isinstance(count, int) or count < 0:
            raise ValueError("bots needs a count: 0 or more")
        table.set_bots(count, str(level))
        return table.status()
    if cmd == "inputs":
        return table.inputs()
    raise ValueError(f"unknown command {cmd!r} (known: {', '.join(COMMANDS)})")
