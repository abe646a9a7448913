"""Tiny's rules: a number in the middle, three cards each; a card one above or below the number
replaces it (first press wins); the first seat to lay `goal` cards ends the round.

Pure, as every game's rules are: the standard library and the engine's shared pieces only.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar, NamedTuple

from firmware_host.engine.round import (
    Ending,
    Reason,
    Refusal,
    RoundBase,
    RoundResult,
    RulesError,
    Seat,
)

HAND, LOW, HIGH = 3, 1, 6


class Lay(NamedTuple):
    seat: Seat
    card: int
    ts: int = 0


class Redraw(NamedTuple):
    seat: Seat
    ts: int = 0


class TinyRound(RoundBase):
    game = "tiny"

    def __init__(self, players: int, goal: int, rng: random.Random,
                 hands: list[list[int]] | None = None, centre: int | None = None) -> None:
        self.players = players
        self.goal = goal
        self._rng = rng
        self.hands = [list(h) for h in hands] if hands is not None else [self._draw() for _ in range(players)]
        if len(self.hands) != players:
            raise RulesError(f"hands for {len(self.hands)} seats, {players} are playing")
        self.centre = centre if centre is not None else rng.randint(LOW, HIGH)
        self.laid = [0] * players
        self.result: RoundResult | None = None

    def _draw(self) -> list[int]:
        return [self._rng.randint(LOW, HIGH) for _ in range(HAND)]

    def fits(self, card: int) -> bool:
        return abs(card - self.centre) == 1

    def _lay(self, a: Lay) -> Refusal | None:
        hand = self.hands[a.seat]
        if a.card not in hand:
            return Refusal(Reason.NOT_HELD)
        if not self.fits(a.card):
            return Refusal(Reason.NO_FIT)  # too late, when another seat's lay took the number (RoundBase)
        self._undo.append((TinyRound._unlay, a.seat, hand.index(a.card), a.card, self.centre))
        hand.remove(a.card)
        hand.append(self._rng.randint(LOW, HIGH))
        self.centre = a.card
        self.laid[a.seat] += 1
        if self.laid[a.seat] >= self.goal:
            self._end(RoundResult(Ending.LIGRETTO_STOP, (a.seat,), self.scores()))
        return None

    def _redraw(self, a: Redraw) -> Refusal | None:
        self._undo.append((TinyRound._undraw, a.seat, tuple(self.hands[a.seat])))
        self.hands[a.seat] = self._draw()
        return None

    _handlers: ClassVar[dict[type, Any]] = {Lay: _lay, Redraw: _redraw}

    # Taking an action back, for the engine's lost races (docs/games.md): own copies of what
    # changes, and each handler's undo.

    def _unshare(self, action: Any) -> None:
        self.hands = [h[:] for h in self.hands]
        self.laid = self.laid[:]

    def _unlay(self, seat: Seat, i: int, card: int, centre: int) -> None:
        self.result = None
        hand = self.hands[seat]
        hand.pop()
        hand.insert(i, card)
        self.centre = centre
        self.laid[seat] -= 1

    def _undraw(self, seat: Seat, hand: tuple[int, ...]) -> None:
        self.hands[seat] = list(hand)

    def scores(self) -> tuple[int, ...]:
        return tuple(self.laid)

    def to_centre(self) -> tuple[int, int]:
        """(cards laid into the middle, every card dealt: those laid and those still held)."""
        laid = sum(self.laid)
        return laid, laid + sum(len(h) for h in self.hands)

    def snapshot(self) -> dict[str, Any]:
        return {"centre": self.centre, "seats": [{"hand": list(h), "laid": n}
                                                 for h, n in zip(self.hands, self.laid, strict=True)]}
