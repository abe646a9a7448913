"""What the built-in games' entries share: their parts live beside them, loaded when first used."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from ..table.kinds import GameKind


class FolderKind(GameKind):
    """A game in a folder of its own: `bot.policy`, `screens.seat` and `screens.centre` (PIL),
    `words.centre`, `words.seat` and `words.keys` (rich) beside its entry. They are imported
    when first used, so a table that never draws in words never loads rich."""

    def __init__(self) -> None:
        self._parts: dict[str, ModuleType] = {}

    def part(self, name: str) -> ModuleType:
        module = self._parts.get(name)
        if module is None:
            module = self._parts[name] = importlib.import_module(f"{type(self).__module__}.{name}")
        return module

    def policy(self, bot: Any, sight: Any) -> Any:
        return self.part("bot").policy(bot, sight)

    def draw_seat(self, img: Any, c: Any, rnd: Any) -> str:
        return self.part("screens").seat(img, c, rnd)

    def draw_centre(self, img: Any, rnd: Any, blink: bool, marks: dict[int, Any]) -> None:
        self.part("screens").centre(img, rnd, blink, marks)

    def centre_words(self, rnd: Any, table: Any) -> Any:
        return self.part("words").centre(rnd, table)

    def seat_words(self, c: Any, rnd: Any) -> Any:
        return self.part("words").seat(c, rnd)

    def keys(self, rnd: Any, direct: bool = False) -> str:
        return self.part("words").keys(rnd, direct)
