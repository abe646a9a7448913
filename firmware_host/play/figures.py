"""The figures of one stored match, per player: what the players' statistics add up
(docs/players.md, "The figures"). Computed from what the journal keeps, never from the table's
state: the accepted actions (replayed through the rules, so that the game can say after each one
whether a seat had a card that fits), their kernel stamps, the races and the rounds' scores.
Pure: the engine and the standard library; the reader that stores them is service/statistics.py.
"""

from __future__ import annotations

import statistics
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine.match import Match

CONTESTED = ("first", "tie", "late")
"""The kinds of a stored race that are a race between two seats (the rest: a false start)."""


@dataclass(slots=True)
class SeatFigures:
    """One player's part of one match. Times in ns, on the kernel's clock of the inputs."""

    player: int  # the engine's player number, from 0
    rounds: int = 0  # rounds the match played
    points: int = 0  # the player's points over those rounds
    won: bool = False  # among the match's winners (a finished match)
    slaps: int = 0  # the player's accepted actions
    false_starts: int = 0
    won_margins: array = field(default_factory=lambda: array("q"))  # ns, each race won
    lost_margins: array = field(default_factory=lambda: array("q"))  # ns, each race lost
    reactions: array = field(default_factory=lambda: array("q"))  # ns, each reaction
    reactions_known: bool = True  # False: the game does not say when a card fits (`playable`)


def match_figures(replay: Mapping[str, Any], races: Iterable[Mapping[str, Any]]) -> list[SeatFigures]:
    """Each player's figures of one match: `replay` the arguments of `Match.replaying` (the
    journal's rows as actions), `races` the stored races as dicts (binding.py's `race_record`).

    Reaction: a seat's clock starts at the stamp of the journal entry after which the game says
    one of its own cards fits (`Game.playable`) when none did just before, and stops at that
    seat's next accepted action: the difference is one reaction. A clock still running when the
    seat no longer has a card that fits, or when the round ends, gives none; a card that fits
    when a round is dealt gives none (the deal has no stamp)."""
    out, _ = _replayed(replay, races)
    return out


def round_reactions(replay: Mapping[str, Any]) -> dict[int, list[tuple[int, int]]]:
    """Each round's reactions (round from 0): `(ns, player)` each, as `match_figures` counts
    them; a round with none is not in it. A match still in play gives the rounds it ended and the
    one in play so far."""
    return _replayed(replay, ())[1]


def _replayed(replay: Mapping[str, Any], races: Iterable[Mapping[str, Any]]) -> tuple[
        list[SeatFigures], dict[int, list[tuple[int, int]]]]:
    players = int(replay["players"])
    out = [SeatFigures(p) for p in range(players)]
    by_round: dict[int, list[tuple[int, int]]] = {}
    journal = list(replay["journal"])
    match: Match | None = None
    entry = None
    fits = [False] * players
    since: list[int | None] = [None] * players
    for i, match in Match.replaying(**{**replay, "journal": journal}):
        entry = match.entry
        rnd = match.round
        if i is None:  # a round dealt: what fits now fitted at no stamped moment
            fits = _fitting(entry, rnd, players)
            since = [None] * players
            continue
        action = journal[i][1]
        seat = getattr(action, "seat", None)
        if isinstance(seat, int) and 0 <= seat < players:
            out[seat].slaps += 1
            started = since[seat]
            if started is not None:
                out[seat].reactions.append(action.ts - started)
                by_round.setdefault(match.round_no, []).append((action.ts - started, seat))
                since[seat] = None
        if rnd.result is not None:  # the round ended with this entry
            fits, since = [False] * players, [None] * players
            continue
        now = _fitting(entry, rnd, players)
        for p in range(players):
            if not now[p]:
                since[p] = None
            elif not fits[p] and since[p] is None:
                since[p] = action.ts
        fits = now
    if match is None:
        return out, by_round
    if entry is not None and entry.playable(match.round, 0) is None:  # the game never says
        for figures in out:
            figures.reactions_known = False
    winners = set(match.winners) if match.is_over else set()
    for p, figures in enumerate(out):
        figures.rounds = len(match.results)
        figures.points = sum(r.scores[p] for r in match.results)
        figures.won = p in winners
    for race in races:
        kind = race.get("kind")
        loser = race.get("loser")
        if kind == "false_start" and isinstance(loser, int) and 0 <= loser < players:
            out[loser].false_starts += 1
        elif kind in CONTESTED:
            winner = race.get("winner")
            margin = abs(int(race["loser_ts"]) - int(race["winner_ts"]))
            if isinstance(winner, int) and 0 <= winner < players:
                out[winner].won_margins.append(margin)
            if isinstance(loser, int) and 0 <= loser < players:
                out[loser].lost_margins.append(margin)
    return out, by_round


def _fitting(entry: Any, rnd: Any, players: int) -> list[bool]:
    return [entry.playable(rnd, p) is True for p in range(players)]


def median(values: Iterable[int]) -> float | None:
    """The median (the mean of the middle two of an even count), None of nothing."""
    ordered = sorted(values)
    return statistics.median(ordered) if ordered else None
