"""What the screens show between matches that the table's players and their statistics give:
the leaderboard, the last match's highlights, the rating changes of a match, and a round's
fastest reaction.

Each is one small function that the screens ask, so the statistics (the players in the journal,
their ratings and reaction times: issue 31, "Players across evenings") plug in here without the
screens changing. Until they do, each answers that there is nothing to show, and the screens
leave its place out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..table.machine import Table


def leaderboard(period: str) -> list[dict[str, Any]]:
    """The best players of `period` ("tonight" or "all time"), best first: each
    `{"name": str, "rating": float, "matches": int}`."""
    return []


def highlights() -> list[str]:
    """The last match's moments worth telling, in words ("seat 3 won a race by 0.4 ms")."""
    return []


def rating_changes(table: Table) -> dict[int, float]:
    """The match just ended: each seat's (from 1) rating change."""
    return {}


def fastest_reaction(table: Table) -> dict[str, Any] | None:
    """The round's fastest reaction (from a card becoming playable to the seat's accepted press):
    `{"seat": int, "ms": float}`."""
    return None
