"""What `tablectl` can ask, answered by the owner of the game state."""

from __future__ import annotations

from typing import Any

from ..game.bots import Level
from ..game.table import Table
from ..rules.options import GAMES
from .store import Store

LEVELS = tuple(level.value for level in Level)
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
        return scores(table)
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
        if level not in LEVELS:
            raise ValueError(f"unknown bot level {level!r} (choose {', '.join(LEVELS)})")
        table.set_bots(count, str(level))
        return table.status()
    if cmd == "inputs":
        return table.inputs()
    raise ValueError(f"unknown command {cmd!r} (known: {', '.join(COMMANDS)})")


def scores(table: Table) -> dict[str, Any]:
    """The match so far, seats numbered from 1 as on the table: `seats` is each player's seat (the
    order of `totals` and `scores`), `winners` and `finishers` are seats."""
    assert table.match is not None
    summary = table.match.summary()
    seats = table.seat_of_player
    if len(seats) != table.match.players:
        seats = list(range(table.match.players))

    def numbered(players: list[int]) -> list[int]:
        return [seats[p] + 1 for p in players]

    summary["seats"] = [s + 1 for s in seats]
    summary["winners"] = numbered(summary["winners"])
    for r in summary["rounds"]:
        r["finishers"] = numbered(r["finishers"])
    return summary
