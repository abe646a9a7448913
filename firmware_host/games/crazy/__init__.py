"""Ligretto Crazy: its entry. left/right pick a hand card, up/down its target (a pile, or a
new pile, and a Crazy card's value); slap plays it; alt discards it face down."""

from __future__ import annotations

from typing import Any, ClassVar

from ...engine.crazy import DiscardCrazy, PlayCrazy
from ...engine.match import Resources
from ...table.catalog import crazy_deck
from ...table.controls import steps
from ...table.kinds import register
from ..kind import FolderKind


class CrazyKind(FolderKind):
    name = "crazy"
    routine: ClassVar[frozenset[type]] = frozenset({DiscardCrazy})

    def resources(self, players: int, options: dict[str, Any]) -> Resources:
        return Resources(deck=crazy_deck())

    # ------------------------------------------------------------ controls

    def choices(self, c: Any) -> list[Any]:
        return list(c.match.round.seats[c.seat].hand)

    def targets(self, c: Any) -> list[Any]:
        hand = self.choices(c)
        if not hand:
            return []
        return list(c.match.round.placements(hand[c.cursor % len(hand)]))

    def nav(self, c: Any, control: str) -> None:
        if control in ("up", "down"):
            count = len(self.targets(c))
            if count:
                c.target = (c.target + (1 if control == "down" else -1)) % count

    def alt(self, c: Any, ts: int) -> Any:
        card = c.selected()
        return DiscardCrazy(c.seat, card, ts) if card is not None else None

    def slap(self, c: Any, choice: Any, ts: int) -> Any:
        targets = self.targets(c)
        if not targets:
            c.message = "no place for it"
            return None
        pile, value = targets[c.target % len(targets)]
        return PlayCrazy(c.seat, choice, pile, value, ts)

    def presses_for(self, c: Any, action: Any) -> list[str] | None:
        if not isinstance(action, PlayCrazy | DiscardCrazy):
            return None
        options = self.choices(c)
        if action.card not in options:
            return None
        index = options.index(action.card)
        presses = steps(c.cursor, index, len(options))
        if isinstance(action, DiscardCrazy):
            return [*presses, "alt"]
        targets = list(c.match.round.placements(action.card))
        if (action.pile, action.value) not in targets:
            return None
        start = c.target if index == c.cursor % max(len(options), 1) else 0
        wanted = targets.index((action.pile, action.value))
        return presses + steps(start, wanted, len(targets), ("up", "down")) + ["slap"]

    # ------------------------------------------------------------ the rest, beside

    def scenario_setup(self, rnd: dict[str, Any], players: int, where: str, rng: Any,
                       options: dict[str, Any], match: Any) -> dict[str, Any]:
        from .scenario import setup

        return setup(rnd, players, where, crazy_deck(), rng)

    def scenario_action(self, match: Any, raw: dict[str, Any], where: str) -> Any:
        from .scenario import action

        return action(match, raw)

    def sweep_options(self, players: int) -> list[dict[str, Any]]:
        return [{}, {"target": 10}]

    def long_options(self) -> dict[str, Any]:
        return {"rounds": 1000, "target": 10_000}


KIND = register(CrazyKind())
