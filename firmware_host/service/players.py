"""The players' records: who the table knows, and who sat at each stored match.

What is stored (docs/players.md, "Records"): `players` (one row a person, `merged_into` and
`removed` keeping what a merge or a remove leaves behind) and `match_players` (one row a player
of every stored match: the engine's player number, the seat, guest, bot or player, and the name
as it was shown). Every function here takes a SQLite connection, so that a reader (statistics,
ratings, the web) can use its own read-only one; the writes run in the transaction
`Store.players_write` holds on the writer's connection, never on the game thread.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from ..table.names import NameRefused, clean, key
from .database import player_named, seated_rows

__all__ = ["NameRefused", "action_player", "add", "known_names", "listed", "merge", "remove",
           "rename", "seat_player", "seated"]


def listed(db: sqlite3.Connection, removed: bool = False) -> list[dict[str, Any]]:
    """The known players by name (whatever the case), each with how many stored matches they
    played (a merged player's count with them); with `removed`, the removed ones too (`removed`:
    when, Unix time). Merged players are never listed: they are the player they were merged into."""
    rows = db.execute(
        "SELECT p.id, p.name, p.added, p.removed, "
        "(SELECT COUNT(*) FROM match_players m WHERE m.player_id = p.id) FROM players p "
        "WHERE p.merged_into IS NULL" + ("" if removed else " AND p.removed IS NULL")
        + " ORDER BY p.key, p.id").fetchall()
    return [{"id": i, "name": n, "added": a, "removed": r, "matches": c} for i, n, a, r, c in rows]


def known_names(db: sqlite3.Connection) -> tuple[str, ...]:
    """The names a seat's picker offers: the known players, by name."""
    return tuple(p["name"] for p in listed(db))


def _one(db: sqlite3.Connection, name: object) -> tuple[int, str]:
    text = clean(name)
    found = player_named(db, text, add=False)
    if found is None:
        raise NameRefused(f"no player is called {text!r} (tablectl players lists them)")
    return found


def add(db: sqlite3.Connection, name: object) -> dict[str, Any]:
    """A new player; refused when one of that name (whatever the case) is known."""
    text = clean(name)
    if player_named(db, text, add=False) is not None:
        raise NameRefused(f"{text!r} is already a player")
    player_id, _ = player_named(db, text) or (0, text)
    return {"id": player_id, "name": text}


def rename(db: sqlite3.Connection, name: object, new: object) -> dict[str, Any]:
    """The player called `name` is called `new` from now on; the matches they played show the
    name they had then (`match_players.name`), their records follow them (by id)."""
    player_id, old = _one(db, name)
    text = clean(new)
    other = player_named(db, text, add=False)
    if other is not None and other[0] != player_id:
        raise NameRefused(f"{text!r} is already a player (to make them one: tablectl players merge)")
    db.execute("UPDATE players SET name=?, key=? WHERE id=?", (text, key(text), player_id))
    return {"id": player_id, "name": text, "was": old}


def merge(db: sqlite3.Connection, gone: object, kept: object) -> dict[str, Any]:
    """`gone` and `kept` are one person: every match `gone` played is `kept`'s from now on
    (`match_players.player_id`; `seated_as` still says who sat down), and `gone` is no longer
    listed (`merged_into`). Nothing of either's history is lost."""
    gone_id, gone_name = _one(db, gone)
    kept_id, kept_name = _one(db, kept)
    if gone_id == kept_id:
        raise NameRefused(f"{gone_name!r} and {kept_name!r} are the same player already")
    moved = db.execute("UPDATE match_players SET player_id=? WHERE player_id=?", (kept_id, gone_id)).rowcount
    db.execute("UPDATE players SET merged_into=? WHERE id=? OR merged_into=?", (kept_id, gone_id, gone_id))
    return {"id": kept_id, "name": kept_name, "merged": gone_name, "matches_moved": moved}


def remove(db: sqlite3.Connection, name: object) -> dict[str, Any]:
    """The player is no longer offered nor listed; the matches they played keep them (their id
    and the name they had, as shown then), and a new player may take the name."""
    player_id, text = _one(db, name)
    db.execute("UPDATE players SET removed=? WHERE id=?", (time.time(), player_id))
    return {"id": player_id, "name": text}


def seated(db: sqlite3.Connection, match_id: int) -> list[dict[str, Any]]:
    """Who played a stored match, by the engine's player number (actions' `seat`, scores,
    winners): each with `player` (from 0), `seat` (from 1), `kind` ("player", "guest" or
    "bot"), `id` (the player after merges; None for a guest or a bot) and `name` as shown at that
    match. [] when no such match is stored. A match stored without these rows (written by an
    older table and not migrated: held in a `.held` file) is read as its guests and bots."""
    rows = db.execute("SELECT player, seat, kind, player_id, name FROM match_players WHERE match_id=? "
                      "ORDER BY player", (match_id,)).fetchall()
    if not rows:
        found = db.execute("SELECT players, seats, bots FROM matches WHERE id=?", (match_id,)).fetchone()
        if found is None:
            return []
        rows = [(p, s, k, i, n) for _m, p, s, k, i, _a, n in seated_rows(match_id, *found)]
    return [{"player": p, "seat": s, "kind": k, "id": i, "name": n} for p, s, k, i, n in rows]


def seat_player(db: sqlite3.Connection, match_id: int, seat: int) -> dict[str, Any] | None:
    """Who sat at `seat` (from 1, as the table shows it) in a stored match; None if no one did."""
    return next((p for p in seated(db, match_id) if p["seat"] == seat), None)


def action_player(db: sqlite3.Connection, match_id: int, n: int) -> dict[str, Any] | None:
    """Who took the match's `n`th journal row (from 0); None for a wake (time, not a player) or
    when there is no such row. A round's players are its match's: `seated`."""
    found = db.execute("SELECT action FROM journal WHERE match_id=? AND n=?", (match_id, n)).fetchone()
    if found is None:
        return None
    action = json.loads(found[0])
    player = action.get("seat") if isinstance(action, dict) else None
    if not isinstance(player, int) or action.get("do") == "wake":
        return None
    return next((p for p in seated(db, match_id) if p["player"] == player), None)
