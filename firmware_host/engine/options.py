"""Per-match options: how each is read and checked; each game's rules list its own.

Options arrive as text (`--option pro_row=yes`, `tablectl`, a scenario file)
or as already-typed values; both go through `parse_options`, which names the
option and the problem when something is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import game as registry
from .round import RulesError


class _Games(Sequence[str]):
    """Every registered game's name, as it is now (a game registered later shows too)."""

    def __getitem__(self, i: Any) -> Any:
        return registry.names()[i]

    def __len__(self) -> int:
        return len(registry.names())

    def __repr__(self) -> str:
        return repr(registry.names())


class _PerGame(Mapping[str, Any]):
    """One thing per registered game (its players, its option specs), read from the registry."""

    def __init__(self, what: Callable[[registry.Game], Any]) -> None:
        self._what = what

    def __getitem__(self, game: str) -> Any:
        entry = registry.get(game)
        if entry is None:
            raise KeyError(game)
        return self._what(entry)

    def __iter__(self) -> Iterator[str]:
        return iter(registry.names())

    def __len__(self) -> int:
        return len(registry.names())


GAMES: Sequence[str] = _Games()
PLAYERS: Mapping[str, tuple[int, int]] = _PerGame(lambda entry: entry.players)


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def yes_no(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("expected yes or no")


def whole(lo: int, hi: int) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError("expected a whole number")
        try:
            n = int(value)
        except (TypeError, ValueError):
            raise ValueError("expected a whole number") from None
        if not lo <= n <= hi:
            raise ValueError(f"must be {lo} to {hi}")
        return n

    return parse


def number(lo: float, hi: float) -> Callable[[Any], float]:
    def parse(value: Any) -> float:
        if isinstance(value, bool):
            raise ValueError("expected a number")
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise ValueError("expected a number") from None
        if not lo <= x <= hi:
            raise ValueError(f"must be {lo:g} to {hi:g}")
        return x

    return parse


def one_of(*choices: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        text = str(value).strip().lower()
        if text not in choices:
            raise ValueError(f"choose one of {', '.join(choices)}")
        return text

    return parse


def text_name(value: Any) -> str:
    text = str(value).strip()
    if not text:
        raise ValueError("expected a name")
    return text


@dataclass(frozen=True, slots=True)
class OptionSpec:
    parse: Callable[[Any], Any]
    default: Any
    help: str


SPECS: Mapping[str, Mapping[str, OptionSpec]] = _PerGame(lambda entry: entry.options)
"""Each game's options by name."""


def check_game(game: str, players: int) -> None:
    """A game that is registered, for a player count it takes; or a RulesError saying which."""
    if registry.get(game) is None:
        raise RulesError(f"unknown game {game!r} (choose {', '.join(registry.names())})")
    lo, hi = registry.find(game).players
    if not lo <= players <= hi:
        raise RulesError(f"{game} takes {lo} to {hi} players, not {players}")


def check_options(game: str, raw: Mapping[str, Any] | None, players: int | None) -> None:
    """What a match's start would refuse in these options, refused now in the same words;
    `players`: the count when known (one the game takes), else None: only the checks that need
    no count run."""
    if registry.get(game) is None:
        raise RulesError(f"unknown game {game!r} (choose {', '.join(registry.names())})")
    lo, hi = registry.find(game).players
    known = players if players is not None and lo <= players <= hi else None
    options = _parsed(game, raw)
    if known is not None:
        registry.find(game).settle_options(options, known)
    registry.find(game).check_options(options, known)


def parse_options(game: str, players: int, raw: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every option of `game` with its value: the given ones checked, the rest defaulted."""
    check_game(game, players)
    out = _parsed(game, raw)
    registry.find(game).settle_options(out, players)
    return out


def _parsed(game: str, raw: Mapping[str, Any] | None) -> dict[str, Any]:
    entry = registry.find(game)
    specs = entry.options
    out = {name: spec.default for name, spec in specs.items()}
    for name, value in (raw or {}).items():
        spec = specs.get(name)
        if spec is None:
            known = ", ".join(sorted(specs))
            raise RulesError(f"unknown option {name!r} for {game} (known: {known})")
        if value is None:  # stored or passed through as "not set": the default
            continue
        try:
            out[name] = spec.parse(value)
        except ValueError as exc:
            raise RulesError(f"option {name}={value!r}: {exc}") from None
    return out


def parse_assignments(items: list[str]) -> dict[str, str]:
    """`key=value` strings from a command line into a mapping."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise RulesError(f"option {item!r} is not key=value")
        out[key.strip()] = value.strip()
    return out
