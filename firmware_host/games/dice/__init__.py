"""Dice Ligretto: its entry. The cursor runs over your dice; slap places one; alt rerolls them all."""

from __future__ import annotations

from typing import Any, ClassVar

from ...engine.dice import FACES, DieColour, PlaceDie, Reroll
from ...engine.round import Refusal
from ...table.controls import steps
from ...table.kinds import register
from ..kind import FolderKind


class DiceKind(FolderKind):
    name = "dice"
    scenario_keys: ClassVar[frozenset[str]] = frozenset({"seat", "board"})
    routine: ClassVar[frozenset[type]] = frozenset({Reroll})

    def choices(self, c: Any) -> list[Any]:
        return list(c.match.round.dice[c.seat])

    def alt(self, c: Any, ts: int) -> Any:
        return Reroll(c.seat, ts)

    def slap(self, c: Any, choice: Any, ts: int) -> Any:
        return PlaceDie(c.seat, choice.colour, choice.face, ts)

    def presses_for(self, c: Any, action: Any) -> list[str] | None:
        if isinstance(action, Reroll):
            return ["alt"]
        if isinstance(action, PlaceDie):
            options = self.choices(c)
            wanted = next((i for i, d in enumerate(options)
                           if d.colour == action.colour and d.face == action.face), None)
            if wanted is None:
                return None
            return [*steps(c.cursor, wanted, len(options)), "slap"]
        return None

    def explain(self, refusal: Refusal, action: Any, rnd: Any) -> str | None:
        if not isinstance(action, PlaceDie):
            return None
        placed = rnd.board[action.colour]
        if placed >= FACES:
            return f"doesn't fit: {DieColour(action.colour).name.lower()} row is full"
        return f"doesn't fit: {DieColour(action.colour).letter}{placed + 1} goes next"

    def scenario_setup(self, rnd: dict[str, Any], players: int, where: str, rng: Any,
                       options: dict[str, Any], match: Any) -> dict[str, Any]:
        from ...engine.options import parse_options
        from .scenario import setup

        return setup(rnd, players, where, rng, parse_options(self.name, players, options))


KIND = register(DiceKind())
