"""One entry per game: everything above the rules that differs between games.

A game is a `GameKind` subclass that overrides the hooks it needs (python-chess keeps its
variants the same way), registered under its name; seat controls, bots, the screens, the
readable table, scenario files and benches ask `find(name)` and never branch on a game.
The built-in games live in `firmware_host.games`, one folder each; that package is
imported on the first lookup (by name, as entry points are), since it sits above this layer.
A game outside the package registers itself with `register` before a table starts.

The hooks' arguments are the callers' own objects (a `SeatController`, a PIL image, a
`Table`): this module names them only as `Any`, so it imports nothing above `game/`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, ClassVar

from ..engine import game as rules_kinds
from ..engine.round import Refusal, RulesError

GAMES_PACKAGE = "firmware_host.games"
"""Where the built-in games are; importing it registers each of them."""


class GameKind:
    """One game above the rules. The defaults fit a game whose seat picks one of a list of
    choices (`choices`) with left/right and plays it with slap (`action`)."""

    name: ClassVar[str] = ""

    @property
    def rules(self) -> rules_kinds.GameRules:
        return rules_kinds.find(self.name)

    # ------------------------------------------------------------ the match

    def resources(self, players: int, options: dict[str, Any]) -> Any:
        """The data files a match needs (`rules.match.Resources`)."""
        from ..engine.match import Resources

        return Resources()

    # ------------------------------------------------------------ a seat's controls (table/controls.py)

    def choices(self, c: Any) -> list[Any]:
        """What the cursor of controller `c` runs over."""
        return []

    def targets(self, c: Any) -> list[Any]:
        """Where the selected choice may go, chosen with up/down (Crazy); [] when there is no such choice."""
        return []

    def nav(self, c: Any, control: str) -> None:
        """up/down (left/right move the cursor for every game)."""

    def arbitrates(self, c: Any, control: str) -> bool:
        """A navigation button that changes the game, so goes through the arbiter."""
        return False

    def action(self, c: Any, control: str, ts: int) -> Any:
        """slap, alt or an arbitrated navigation button: the engine action it means, or None."""
        if control == "alt":
            return self.alt(c, ts)
        if control != "slap":
            return None
        choice = c.selected()
        if choice is None:
            c.message = "nothing there"
            return None
        return self.slap(c, choice, ts)

    def alt(self, c: Any, ts: int) -> Any:
        """The alt button's action, or None."""
        return None

    def slap(self, c: Any, choice: Any, ts: int) -> Any:
        """Slap with the cursor on `choice` (never None): the action, or None."""
        return None

    def after(self, c: Any, action: Any) -> None:
        """An action was taken: reset what the controls held for it."""

    def presses_for(self, c: Any, action: Any) -> list[str] | None:
        """The buttons that make `action` from the controller's state (bots press them)."""
        return None

    def explain(self, refusal: Refusal, action: Any, rnd: Any) -> str | None:
        """A "doesn't fit" in words a player can act on; None: the generic wording."""
        return None

    # ------------------------------------------------------------ bots (table/bot_players.py)

    routine: ClassVar[frozenset[type]] = frozenset()
    """Actions a person makes without thinking (turning cards over): bots make them quickly."""

    def policy(self, bot: Any, sight: Any) -> Callable[[Any, int], Any]:
        """The bot's decision function for this game: (sight, now ns) -> action or None."""
        raise NotImplementedError(f"{self.name} has no bot")

    # ------------------------------------------------------------ screens

    shared_board: ClassVar[bool] = True
    """A decision can change every seat's screen (a shared board); False: only the acting seats'."""

    def mark(self, c: Any) -> Any:
        """What seat `c` has selected that the centre shows in its seat colour, or None."""
        return None

    def draw_seat(self, img: Any, c: Any, rnd: Any) -> str:
        """Draw the middle of a 128x64 seat screen; returns its status line."""
        return ""

    def draw_centre(self, img: Any, rnd: Any, blink: bool, marks: dict[int, Any]) -> None:
        """Draw the round on the centre matrix; `marks` the seats' selections (`mark`)."""

    def centre_words(self, rnd: Any, table: Any) -> Any:
        """The middle of the table as rich Text for a terminal."""
        raise NotImplementedError

    def seat_words(self, c: Any, rnd: Any) -> Any:
        """One seat's own cards as rich Text for a terminal."""
        raise NotImplementedError

    def keys(self, rnd: Any, direct: bool = False) -> str:
        """What the keys do in this game (`rnd` the round in progress, or None); `direct`: the
        seat has the direct buttons 1-5 (select1..5), so their keys are offered too."""
        return ""

    # ------------------------------------------------------------ scenario files and tools (play/)

    scenario_keys: ClassVar[frozenset[str]] = frozenset({"seat"})
    """The keys a [[round]] table of this game may have besides actions and expect_*."""

    def scenario_options(self, options: dict[str, Any], rounds: int) -> dict[str, Any]:
        """A file's options, given it has `rounds` [[round]] tables."""
        return options

    def scenario_setup(self, rnd: dict[str, Any], players: int, where: str, rng: Any,
                       options: dict[str, Any], match: Any) -> dict[str, Any]:
        """A [[round]] table into the round's set-up (`match` is None for the first round)."""
        return {}

    def scenario_action(self, match: Any, raw: dict[str, Any], where: str) -> Any:
        """A file's action (seats already from 0) into an engine action."""
        from ..engine.codec import from_dict

        return from_dict(self.name, raw)

    def sweep_options(self, players: int) -> list[dict[str, Any]]:
        """The option sets `simulate --sweep` tries for this many players."""
        return [{}]

    def long_options(self) -> dict[str, Any]:
        """Options for a match that goes on for as long as a benchmark needs."""
        return {"rounds": 1000}

    def standing(self, rnd: Any) -> tuple[int, ...]:
        """What each seat would score if the round were called now."""
        return tuple(rnd.scores())


_kinds: dict[str, GameKind] = {}
_loaded = False
_routine: set[type] = set()


def register(kind: GameKind) -> GameKind:
    """Add a game's entry (its rules must be registered too, see `rules.kinds`)."""
    _kinds[kind.name] = kind
    _routine.update(kind.routine)
    return kind


def unregister(name: str) -> None:
    old = _kinds.pop(name, None)
    if old is not None:
        _routine.clear()
        for kind in _kinds.values():
            _routine.update(kind.routine)


def _load_builtin() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        importlib.import_module(GAMES_PACKAGE)


def find(name: str) -> GameKind:
    """The entry of `name`, or a RulesError naming the games there are."""
    kind = _kinds.get(name)
    if kind is None:
        _load_builtin()
        kind = _kinds.get(name)
        if kind is None:
            raise RulesError(f"unknown game {name!r} (choose {', '.join(rules_kinds.names())})")
    return kind


def routine_actions() -> set[type]:
    """Every game's routine actions (bots make them quickly)."""
    _load_builtin()
    return _routine
