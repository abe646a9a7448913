"""Actions to and from plain data, for the journal, scenario files and `--json`.

One spelling per action: `{"do": "play", "seat": 0, "card": "R7", "ts": 1200}`.
Seats are 0-based here as everywhere in the engine. Each game's entry spells its
own fields (`Game.encode`, `decode`); this module does what every action shares.
"""

from __future__ import annotations

from typing import Any

from .game import find, of_action
from .round import RulesError, Wake, field_int

Action = Any
"""Any game's action: a named tuple with `seat` and `ts` whose type a registered game lists in its
`actions` (engine/game.py), or a `Wake`. The engine names no game's types."""

_COMMON = frozenset({"do", "seat", "ts", "at_ms", "expect"})


def to_dict(action: Any) -> dict[str, Any]:
    if type(action) is Wake:
        return {"do": "wake", "ts": action.ts}
    found = of_action(type(action))
    if found is None:
        raise RulesError(f"no game has the action {type(action).__name__}")
    game, do = found
    out: dict[str, Any] = {"do": do, "seat": action.seat}
    if action.ts:
        out["ts"] = action.ts
    out |= game.encode(action)
    return out


def from_dict(game: str, d: dict[str, Any], context: Any = None) -> Any:
    """The action a dict spells, or a RulesError naming what is wrong with it.

    `context` is what the game's decoder needs besides the dict (`Game.journal_context`)."""
    do = d.get("do")
    if do == "wake":
        unknown = sorted(set(d) - {"do", "ts", "at_ms", "expect"})
        if unknown:
            raise RulesError(f"unknown field {unknown[0]!r} in a wake")
        return Wake(field_int(d, "ts", 0))
    entry = find(game)
    kind = entry.actions.get(do) if isinstance(do, str) else None
    if kind is None:
        raise RulesError(f"unknown action do={do!r} for {game} (known: {', '.join(entry.actions)})")
    fields = entry.fields.get(kind, frozenset())
    unknown = sorted(set(d) - _COMMON - fields)
    if unknown:
        shown = ", ".join(sorted(fields)) or "none"
        raise RulesError(f"unknown field {unknown[0]!r} in a {game} {do} action (its fields: {shown})")
    seat = field_int(d, "seat")
    ts = field_int(d, "ts", 0)
    return entry.decode(kind, d, seat, ts, context)
