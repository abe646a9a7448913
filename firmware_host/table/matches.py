"""A match with what its game needs beyond its options: the usual way in for the table, the
tools and the benches. The game's entry loads that (`Game.resources`: a board layout, a deck
split), from its own files; the engine carries it unopened."""

from __future__ import annotations

from typing import Any

from ..engine.game import find
from ..engine.match import Match
from ..engine.options import parse_options


def resources_for(game: str, players: int, options: dict[str, Any]) -> Any:
    """What the game's entry loads for a match of these options (a board layout, a deck split)."""
    return find(game).resources(players, options)


def new_match(game: str, players: int, seed: int | str, options: dict[str, Any] | None = None,
              **kwargs: Any) -> Match:
    """A match with its options checked and its game's resources loaded."""
    parsed = parse_options(game, players, options)
    return Match(game, players, seed, parsed, resources_for(game, players, parsed), **kwargs)
