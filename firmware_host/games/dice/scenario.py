"""Dice in scenario files: the board's placed faces per colour, and each seat's dice."""

from __future__ import annotations

import random
from typing import Any

from ...engine.round import is_whole
from ...engine.setups import fail, parsed, seat_tables
from .rules import DICE_PER_COLOUR, FACES, DiceOptions, Die, DieColour, dice_counts


def setup(rnd: dict[str, Any], players: int, where: str, rng: random.Random,
                options: dict[str, Any]) -> dict[str, Any]:
    setup: dict[str, Any] = {}
    board = rnd.get("board")
    if board is not None:
        if not isinstance(board, dict):
            raise fail(f"{where}.board", "give placed faces per colour, e.g. {yellow = 2}")
        faces = [0] * len(DieColour)
        for name, n in board.items():
            try:
                colour = DieColour[name.upper()]
            except KeyError:
                raise fail(f"{where}.board", f"unknown colour {name!r}") from None
            if not is_whole(n) or not 0 <= n <= 6:
                raise fail(f"{where}.board.{name}", "placed faces must be 0 to 6")
            faces[colour] = n
        setup["board"] = faces
    seats = seat_tables(rnd, players, where, {"dice"})
    if seats is not None:
        dice: list[list[Die] | None] = []
        counts = dice_counts(players, DiceOptions(options.get("handicap", ())))
        for s, seat in enumerate(seats):
            given = seat.get("dice")
            w = f"{where}.seat[{s + 1}].dice"
            hand = None if given is None else parsed(given, w, Die.parse)
            if hand is not None and not 1 <= len(hand) <= counts[s]:
                raise fail(w, f"seat {s + 1} holds 1 to {counts[s]} dice during a round, not {len(hand)}"
                           + (" (a seat with none has ended it)" if not hand else ""))
            dice.append(hand)
        # Left out: drawn from what the bag still holds, as many as the seat starts with.
        placed = setup.get("board", [0] * len(DieColour))
        bag = [c for c in DieColour for _ in range(DICE_PER_COLOUR - placed[c]
                                                   - sum(d.colour == c for h in dice if h for d in h))]
        rng.shuffle(bag)
        for s, hand in enumerate(dice):
            if hand is None:
                drawn, bag = bag[:counts[s]], bag[counts[s]:]
                dice[s] = [Die(c, rng.randint(1, FACES)) for c in drawn]
        setup["dice"] = dice
    return setup
