"""What `tablectl` can ask, answered by the owner of the game state."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from ..engine.options import GAMES
from ..system.errors import StoreError
from ..table.bot_players import Level
from ..table.machine import BadOptions, Phase, Table
from ..table.names import key
from . import players
from .journal import Store
from .registry import Call, Commands

LEVELS = tuple(level.value for level in Level)


class TableCommands:
    """The commands that play the table: choose a game, start, abort, bots, and what it says."""

    def __init__(self, table: Table, store: Store | None,
                 extra_status: Callable[[], dict[str, Any]] | None = None) -> None:
        self.table, self.store, self.extra_status = table, store, extra_status

    def register(self, commands: Commands) -> None:
        for name, handler in (("status", self.status), ("new", self.new), ("start", self.start),
                              ("abort", self.abort), ("next", self.next), ("scores", self.scores),
                              ("history", self.history), ("seats", self.seats), ("bots", self.bots),
                              ("inputs", self.inputs), ("decisions", self.decisions), ("seat", self.seat)):
            commands.register(name, handler)
        for action in ("list", "add", "rename", "merge", "remove"):
            commands.register("players", self.players, action=action)
        if self.store is not None:  # at start, off the loop: the pickers' names
            with contextlib.suppress(StoreError):
                self.table.known = self.store.players_read(players.known_names)

    def status(self, call: Call) -> dict[str, Any]:
        status = self.table_status()
        if self.extra_status is not None:
            status.update(self.extra_status())
        return status

    def table_status(self) -> dict[str, Any]:
        """The table's status and, beside the totals, each player's seat (from 1) in their order."""
        return {**self.table.status(), "seats": [s + 1 for s in self.table.seat_of_player]}

    def new(self, call: Call) -> dict[str, Any]:
        game = call.get("game")
        if not isinstance(game, str):
            raise ValueError(f"new needs a game: {', '.join(GAMES)}")
        options = call.get("options") or {}
        if not isinstance(options, dict):
            raise ValueError("options must be an object of option: value")
        try:
            self.table.new(game, options, call.now)
        except BadOptions as exc:  # a bad command, not a refusal of the moment: tablectl exits 2
            return {"ok": False, "error": str(exc), "bad_request": True}
        return self.table_status()

    def start(self, call: Call) -> dict[str, Any]:
        if self.table.phase is Phase.ATTRACT:
            raise ValueError(f"nothing to start: no game is chosen yet; run tablectl new GAME first "
                             f"({', '.join(GAMES)})")
        self.table.start(call.now)
        return self.table_status()

    def abort(self, call: Call) -> dict[str, Any]:
        self.table.abort(call.now)
        return self.table_status()

    def next(self, call: Call) -> dict[str, Any]:
        self.table.next(call.now)
        return self.table_status()

    def scores(self, call: Call) -> dict[str, Any]:
        if self.table.match is None:
            raise ValueError("no match yet")
        return scores(self.table)

    def history(self, call: Call) -> dict[str, Any]:
        """Answered beside the game (control/protocol.py `beside`): on the socket's handler thread,
        from the store's read-only connection, a page of at most HISTORY_MAX matches."""
        if self.store is None:
            raise ValueError("no state database")
        return self.store.history_page(call.get("limit", 20), call.get("before"))

    def seats(self, call: Call) -> dict[str, Any]:
        table = self.table
        return {"joined": [s + 1 for s in table.joined], "bots": len(table.bots), "seats_wired": table.seats,
                "bot_seats": [s + 1 for s in table.seat_of_player[len(table.joined):]],
                "names": [table.names.get(s) for s in table.joined]}

    def seat(self, call: Call) -> dict[str, Any]:
        """`tablectl seat N NAME`: the seat joins, named (no name: a guest). On the game thread,
        with the names the table holds in memory: nothing is looked up in the journal."""
        seat, name = call.get("seat"), call.get("name")
        if not isinstance(seat, int) or isinstance(seat, bool):
            raise ValueError("seat needs a seat number, from 1")
        if name is not None and not isinstance(name, str):
            raise ValueError("a name is text")
        self.table.name_seat(seat - 1, name, call.now)
        return self.table_status()

    def players(self, call: Call) -> dict[str, Any]:
        """`tablectl players`: answered beside the game (control/protocol.py `beside`), on the
        socket's handler thread; a change is one transaction on the journal's connection, and the
        pickers' names are replaced whole (one assignment the game thread reads)."""
        if self.store is None:
            raise ValueError("no state database: the players are kept there")
        action, name, other = call.get("action") or "list", call.get("name"), call.get("other")
        if action == "list":
            return {"players": self.store.players_read(
                lambda db: players.listed(db, removed=bool(call.get("removed"))))}
        if action in ("rename", "merge") and other is None:
            raise ValueError(f"players {action} needs two names: "
                             + ("NAME NEW" if action == "rename" else "NAME INTO"))
        if name is None:
            raise ValueError(f"players {action} needs a name")
        work = {"add": lambda db: players.add(db, name),
                "rename": lambda db: players.rename(db, name, other),
                "merge": lambda db: players.merge(db, name, other),
                "remove": lambda db: players.remove(db, name)}[action]
        done = self.store.players_write(work)
        self.table.known = self.store.players_read(players.known_names)
        was = done.get("was") or done.get("merged") or (done["name"] if action == "remove" else None)
        if was is not None:  # a seat in the lobby with that name: it follows (removed: a guest)
            now = None if action == "remove" else done["name"]
            self.table.names = {s: n for s, n in ((s, now if key(n) == key(was) else n)
                                                  for s, n in self.table.names.items()) if n is not None}
        return {"done": action, **done}

    def bots(self, call: Call) -> dict[str, Any]:
        count, level = call.get("count"), call.get("level", "medium")
        if not isinstance(count, int) or count < 0:
            raise ValueError("bots needs a count: 0 or more")
        if level not in LEVELS:
            raise ValueError(f"unknown bot level {level!r} (choose {', '.join(LEVELS)})")
        self.table.set_bots(count, str(level))
        return self.table_status()

    def inputs(self, call: Call) -> dict[str, Any]:
        return self.table.inputs()

    def decisions(self, call: Call) -> dict[str, Any]:
        return self.table.decisions_since(call.get("since", 0))


def handle(table: Table, store: Store | None, now: int, body: dict[str, Any]) -> dict[str, Any]:
    """One request answered by the table's commands alone (a test's stand-in for the daemon)."""
    commands = Commands()
    TableCommands(table, store).register(commands)
    answer = commands.answer(Call(body, now))
    assert answer is not None
    return answer


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
