"""What the screens show between matches that the table's players and their statistics give:
the leaderboard, the last match's highlights, the rating changes of a match, and a match's and
a round's fastest reaction.

Each is one small function of `standings`, what the statistics last said (service/statistics.py,
`Figurer.standings`: made on the statistics' own thread, read here on the game thread and never
waited for). None (the statistics have not looked yet, or keep nothing) or a match not figured
yet: each answers that there is nothing to show, and the screens leave its place out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Standings = Mapping[str, Any] | None
SHOWN = 5
"""The players a leaderboard lists: the attract screen has room for five."""


def leaderboard(standings: Standings, period: str, game: str) -> list[dict[str, Any]]:
    """The best players of `period`, best first: "tonight" (the last 12 hours' matches, every
    game) by wins, "all time" by their shown rating in `game` (the table's). Each `{"player":
    int, "name": str, "rating": float | None, "wins": int | None, "matches": int}`."""
    board = (standings or {}).get("leaderboard") or {}
    rated = {e["player"]: e for e in board.get("all_time", {}).get(game, [])}
    if period == "tonight":
        return [{"player": e["player"], "name": e["name"],
                 "rating": rated[e["player"]]["shown"] if e["player"] in rated else None,
                 "wins": e["wins"], "matches": e["matches"]} for e in board.get("tonight", [])[:SHOWN]]
    return [{"player": e["player"], "name": e["name"], "rating": e["shown"], "wins": None,
             "matches": e["matches"]} for e in list(rated.values())[:SHOWN]]


def highlights(standings: Standings) -> list[str]:
    """The last match's moments worth telling, in words ("Ana won a race by 0.4 ms")."""
    found = (standings or {}).get("highlights")
    if not found:
        return []
    out = []
    race, quick = found.get("closest_race"), found.get("fastest_reaction")
    if race:
        out.append(f"{_who(race)} won a race by {_ms(race['margin_ms'])}")
    if quick:
        out.append(f"{_who(quick)} reacted fastest: {quick['ms']:.0f} ms")
    return out


def rating_changes(standings: Standings, match_id: int | None) -> dict[int, float]:
    """The match `match_id` (just ended): each rated seat's (from 1) change of its shown rating;
    nothing until its figures are made (a second or two after its end)."""
    changes = (standings or {}).get("changes")
    if match_id is None or not changes or changes.get("match") != match_id:
        return {}
    return {int(seat): float(change) for seat, change in changes["seats"].items()}


def round_reaction(standings: Standings, match_id: int | None, round_no: int) -> dict[str, Any] | None:
    """Round `round_no` (from 1) of the match `match_id`: its fastest reaction, once the
    statistics have replayed it (a second or two after the round's end, in their own process):
    `{"seat": int, "name": str, "ms": float}`, named as the round's table names a seat ("Ana",
    "bot", "seat 3"); None until then, or when no seat reacted."""
    found = (standings or {}).get("round")
    if match_id is None or not found or found.get("match") != match_id or found.get("round") != round_no \
            or not found.get("fastest_reaction"):
        return None
    quick = found["fastest_reaction"]
    name = "bot" if str(quick.get("name") or "").startswith("bot") else _who(quick)  # as the round's table
    return {"seat": quick["seat"], "name": name, "ms": quick["ms"]}


def _who(moment: Mapping[str, Any]) -> str:
    """A named player or a bot by what the journal calls them ("bot (hard)"), a guest by seat."""
    name = moment.get("name")
    return str(name) if name and name != "guest" else f"seat {moment['seat']}"


def _ms(ms: float) -> str:
    return f"{ms * 1000:.0f} µs" if ms < 0.1 else f"{ms:.1f} ms"
