"""Per-match options: names, types, defaults and checks, for every game.

Options arrive as text (`--option pro_row=yes`, `tablectl`, a scenario file)
or as already-typed values; both go through `parse_options`, which names the
option and the problem when something is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .common import RulesError

GAMES = ("classic", "dice", "domino", "crazy")
PLAYERS = {"classic": (2, 12), "dice": (2, 4), "domino": (2, 4), "crazy": (2, 5)}

CRAZY_ROUNDS = 10
"""Crazy totals can fall below zero and never reach the target: a match ends after this many rounds."""

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("expected yes or no")


def _int(lo: int, hi: int) -> Callable[[Any], int]:
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


def _float(lo: float, hi: float) -> Callable[[Any], float]:
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


def _choice(*choices: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        text = str(value).strip().lower()
        if text not in choices:
            raise ValueError(f"choose one of {', '.join(choices)}")
        return text

    return parse


def _counts(value: Any) -> tuple[int, ...]:
    items = value if isinstance(value, list | tuple) else str(value).replace(" ", "").split(",")
    try:
        if any(isinstance(x, bool | float) for x in items):
            raise ValueError
        counts = tuple(int(x) for x in items if str(x) != "")
    except ValueError:
        raise ValueError("expected dice counts per seat, e.g. 7,7,5,5") from None
    return counts


def _name(value: Any) -> str:
    text = str(value).strip()
    if not text:
        raise ValueError("expected a name")
    return text


@dataclass(frozen=True, slots=True)
class OptionSpec:
    parse: Callable[[Any], Any]
    default: Any
    help: str


SPECS: dict[str, dict[str, OptionSpec]] = {
    "classic": {
        "rounds": OptionSpec(_int(1, 1000), 5, "rounds in the match"),
        "recycle": OptionSpec(_choice("shuffle", "turn_over"), "shuffle", "how a used-up hand is renewed"),
        "pro_row": OptionSpec(_bool, False, "the row is a descending, alternating buffer"),
        "descending": OptionSpec(_bool, False, "centre piles run from 10 down to 1"),
        "alternate_colours": OptionSpec(_bool, False, "each pile card differs in colour from the one below"),
        "stack_face_down": OptionSpec(_bool, False, "stack cards reach the centre only through the row"),
    },
    "dice": {
        "rounds": OptionSpec(_int(1, 1000), None, "rounds in the match (default 3 per player)"),
        "handicap": OptionSpec(_counts, (), "dice per seat, e.g. 7,7,5,5 (total at most 24)"),
    },
    "domino": {
        "rounds": OptionSpec(_int(1, 1000), 6, "rounds in the match"),
        "layout": OptionSpec(_name, None, "board layout (default: the recommended one)"),
        "tokens": OptionSpec(_choice("recommended", "random"), "recommended", "where tokens start"),
        "joker_hold_s": OptionSpec(_float(0.0, 600.0), 5.0, "seconds a joker keeps its token reserved"),
        "joker_wait_s": OptionSpec(_float(0.0, 600.0), 10.0,
                                   "seconds the round waits for a joker when no card fits anywhere"),
        "keep_boards": OptionSpec(_bool, False, "player boards carry over to the next match"),
    },
    "crazy": {
        "target": OptionSpec(_int(1, 10_000), 100, "the match ends after a round that brings a total here"),
        "rounds": OptionSpec(_int(1, 1000), CRAZY_ROUNDS, "the match also ends after this many rounds"),
    },
}


def check_game(game: str, players: int) -> None:
    if game not in SPECS:
        raise RulesError(f"unknown game {game!r} (choose {', '.join(GAMES)})")
    lo, hi = PLAYERS[game]
    if not lo <= players <= hi:
        raise RulesError(f"{game} takes {lo} to {hi} players, not {players}")


def parse_options(game: str, players: int, raw: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every option of `game` with its value: the given ones checked, the rest defaulted."""
    check_game(game, players)
    specs = SPECS[game]
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
    if game == "dice" and out["rounds"] is None:
        out["rounds"] = 3 * players
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
