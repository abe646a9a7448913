"""A round's set-up from a scenario file (docs/scenarios.md): the readers every game's
`scenario_setup` and `scenario_action` hooks share, and the scenario runner (play/scenario.py)
too. Each names the place of a problem in the file (`round[1].seat[2].hand`)."""

from __future__ import annotations

from typing import Any

from ..system.errors import ScenarioError
from .round import RulesError


def fail(where: str, problem: str) -> ScenarioError:
    """The error for a problem at `where` (a path like round[0].seat[1].hand); raise it."""
    return ScenarioError(f"{where}: {problem}" if where else problem)


def listed(value: Any, where: str) -> list[Any]:
    """A list, or a string of words split at spaces."""
    if isinstance(value, str):
        return value.split()
    if not isinstance(value, list):
        raise fail(where, f"expected a list, not {value!r}")
    return value


def parsed(value: Any, where: str, parse: Any) -> list[Any]:
    """Each item of a list through `parse`; a RulesError names the item."""
    out = []
    for i, item in enumerate(listed(value, where)):
        try:
            out.append(parse(str(item)))
        except RulesError as exc:
            raise fail(f"{where}[{i + 1}]", str(exc)) from None
    return out


def seat_no(value: Any, players: int, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= players:
        raise fail(where, f"seat must be 1 to {players}, not {value!r}")
    return value - 1


def seat_tables(rnd: dict[str, Any], players: int, where: str, keys: set[str]) -> list[dict[str, Any]] | None:
    """The round's [[round.seat]] tables, one per player, each with only known keys."""
    seats = rnd.get("seat")
    if seats is None:
        return None
    if not isinstance(seats, list) or len(seats) != players:
        raise fail(f"{where}.seat", f"give all {players} seats")
    for s, seat in enumerate(seats):
        if not isinstance(seat, dict):
            raise fail(f"{where}.seat[{s + 1}]", "expected a table")
        check_keys(seat, keys, f"{where}.seat[{s + 1}]")
    return seats


def check_keys(d: dict[str, Any], allowed: set[str], where: str) -> None:
    """Refuse a key the format does not have, naming the known ones."""
    for key in d:
        if key not in allowed:
            raise fail(where, f"unknown key {key!r} (known: {', '.join(sorted(allowed))})")
