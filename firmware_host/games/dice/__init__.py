"""Dice Ligretto: its entry. The cursor runs over your dice; slap places one; alt rerolls them all."""

from __future__ import annotations

from types import MethodType
from typing import Any, ClassVar

from ...game.controls import steps
from ...game.kinds import GameKind, register
from ...rules.common import Refusal
from ...rules.dice import FACES, DieColour, PlaceDie, Reroll


class DiceKind(GameKind):
    name = "dice"
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

    def policy(self, bot: Any, sight: Any) -> Any:
        from .bot import play

        return MethodType(play, bot)

    def draw_seat(self, img: Any, c: Any, rnd: Any) -> str:
        from .screens import seat

        return seat(img, c, rnd)

    def draw_centre(self, img: Any, rnd: Any, blink: bool, marks: dict[int, Any]) -> None:
        from .screens import centre

        centre(img, rnd)

    def centre_words(self, rnd: Any, table: Any) -> Any:
        from .words import board

        return board(rnd)

    def seat_words(self, c: Any, rnd: Any) -> Any:
        from .words import seat

        return seat(c, rnd)

    def keys(self, rnd: Any) -> str:
        from .words import KEYS

        return KEYS

    def scenario_setup(self, rnd: dict[str, Any], players: int, where: str, rng: Any,
                       options: dict[str, Any], match: Any) -> dict[str, Any]:
        from ...rules.options import parse_options
        from .scenario import setup

        return setup(rnd, players, where, rng, parse_options(self.name, players, options))


KIND = register(DiceKind())
