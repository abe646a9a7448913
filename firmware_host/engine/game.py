"""Each game's rules behind one lookup, so the match, the codec, options and sights never
ask which game they hold (python-chess keeps its variants the same way: a variant overrides
hooks, callers look it up by name).

A game's rules module defines a `GameRules` subclass and registers it when imported. The
built-in games are this package's modules named in `BUILTIN`, imported on the first lookup,
so `find` works whoever asks first; a game outside the package registers itself the same way.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from .round import RulesError, Seat

if TYPE_CHECKING:
    from .match import Match, Resources
    from .options import OptionSpec

BUILTIN = ("classic", "dice", "domino", "crazy")
"""The games this package brings, as its module names, in the order menus list them."""


class GameRules:
    """One game as the rules engine sees it. Subclasses set the class attributes and
    override the hooks their game needs; the defaults fit a game of whole rounds."""

    name: str = ""
    players: tuple[int, int] = (2, 4)
    """Fewest and most players."""
    options: ClassVar[Mapping[str, OptionSpec]] = {}
    actions: ClassVar[Mapping[str, type]] = {}
    """Each action's `do` word in files and the journal, and its type."""
    fields: ClassVar[Mapping[type, frozenset[str]]] = {}
    """Per action type, the fields it takes besides do, seat and time."""

    # ------------------------------------------------------------ options and set-up

    def settle_options(self, options: dict[str, Any], players: int) -> None:
        """Fill in options whose default depends on the player count."""

    def check_resources(self, resources: Resources) -> None:
        """Refuse a match whose data files (a board, a deck) were not given."""

    def new_round(self, match: Match, rng: random.Random, setup: dict[str, Any]) -> Any:
        """The round numbered `match.round_no`; `setup` fixes its cards (scenarios)."""
        raise NotImplementedError

    # ------------------------------------------------------------ the match

    def round_over(self, match: Match, rnd: Any) -> None:
        """What a finished round leaves for the next ones (its result is already recorded)."""

    def is_over(self, match: Match) -> bool:
        """Asked once the round in progress has ended."""
        return match.rounds_played >= match.options["rounds"]

    def carried_over(self, match: Match) -> list[list[Any]] | None:
        """What the next match starts from, once this one is over; None: nothing."""
        return None

    # ------------------------------------------------------------ seeing and spelling

    def sight(self, rnd: Any, seat: Seat) -> Any:
        """What `seat` sees of the round: all a bot may decide from."""
        raise NotImplementedError

    def journal_context(self, players: int, resources: Resources) -> Any:
        """What `decode` needs besides the dict (Crazy: its cards by name), built once a replay."""
        return None

    def encode(self, action: Any) -> dict[str, Any]:
        """An action's own fields, besides do, seat and time."""
        return {}

    def decode(self, kind: type, d: dict[str, Any], seat: Seat, ts: int, context: Any) -> Any:
        """The action of type `kind` that `d` spells (its fields already checked)."""
        raise NotImplementedError


_games: dict[str, GameRules] = {}
_actions: dict[type, tuple[GameRules, str]] = {}
_loaded = False
_listeners: list[Callable[[], None]] = []


def register(rules: GameRules) -> GameRules:
    """Add a game (a game registered again under its name replaces the old entry)."""
    if not rules.name:
        raise RulesError(f"{type(rules).__name__} has no name")
    unregister(rules.name)
    _games[rules.name] = rules
    for do, kind in rules.actions.items():
        _actions[kind] = (rules, do)
    for listener in _listeners:
        listener()
    return rules


def unregister(name: str) -> None:
    old = _games.pop(name, None)
    if old is not None:
        for kind in old.actions.values():
            _actions.pop(kind, None)
        for listener in _listeners:
            listener()


def on_change(listener: Callable[[], None]) -> None:
    """Call `listener` whenever a game is added or removed (for caches built over all games)."""
    _listeners.append(listener)


def _load_builtin() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in BUILTIN:
            importlib.import_module(f"{__package__}.{module}")


def names() -> tuple[str, ...]:
    """Every game: the built-in ones in their order, then the others as registered."""
    _load_builtin()
    order = {name: i for i, name in enumerate(BUILTIN)}
    return tuple(sorted(_games, key=lambda n: order.get(n, len(order))))


def get(name: str) -> GameRules | None:
    if name not in _games:
        _load_builtin()
    return _games.get(name)


def find(name: str) -> GameRules:
    """The rules of `name`, or a RulesError naming the games there are."""
    rules = get(name)
    if rules is None:
        raise RulesError(f"unknown game {name!r} (choose {', '.join(names())})")
    return rules


def of_action(kind: type) -> tuple[GameRules, str] | None:
    """The game an action type belongs to, and its `do` word."""
    if kind not in _actions:
        _load_builtin()
    return _actions.get(kind)
