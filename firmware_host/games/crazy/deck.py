"""Ligretto Crazy's deck, from a file: how a colour's cards split into values and styles
(`deck.toml` beside this module), so that the split is data, not code."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources

from ...engine.round import RulesError
from .rules import DeckSpec

DECK = resources.files(__package__) / "deck.toml"


@cache
def crazy_deck() -> DeckSpec:
    try:
        data = tomllib.loads(DECK.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{DECK}: {exc}") from None
    counts = tuple(sorted((int(v), int(n)) for v, n in data["values"].items()))
    return DeckSpec(counts=counts, crazy=int(data["crazy"]), styles=tuple(data["styles"]))
