"""Dice Ligretto (docs/rules.md, "Dice Ligretto"): 24 dice, one board row per colour, faces 1 to 6 in order.

The table rolls every die with the round's own generator, so a journal of
accepted actions replays every roll.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

from ...engine.round import (
    Ending,
    Reason,
    Refusal,
    RoundBase,
    RoundResult,
    RulesError,
    Seat,
    TableColour,
    is_digits,
    is_whole,
)

MIN_PLAYERS, MAX_PLAYERS = 2, 4
DICE_PER_COLOUR = 6
FACES = 6
TOTAL_DICE = 24
DEFAULT_DICE = {2: 12, 3: 8, 4: 6}


class DieColour(TableColour):
    RED = 0
    YELLOW = 1
    GREEN = 2
    BLUE = 3


class Die(NamedTuple):
    """A die as it lies in front of a player: its colour and the face it shows."""

    colour: DieColour
    face: int

    def __str__(self) -> str:
        return f"{self.colour.letter}{self.face}"

    @classmethod
    def parse(cls, text: str) -> Die:
        """`Y3`, `blue 6`: colour letter or name, then the face."""
        split = DieColour.split(text)
        if split is not None and is_digits(split[1]) and 1 <= int(split[1]) <= FACES:
            return cls(split[0], int(split[1]))  # type: ignore[arg-type]
        raise RulesError(f"not a die: {text!r} (write e.g. Y3, B6, R1, G2)")


@dataclass(frozen=True, slots=True)
class DiceOptions:
    handicap: tuple[int, ...] = ()
    """Dice per seat; empty means the rulebook's 12/8/6."""


class PlaceDie(NamedTuple):
    """Put a die showing `face` into its colour's row. `row`: the row a scenario file says it
    was put in, when that is another colour's (refused); None: its own, as at the table."""

    seat: Seat
    colour: DieColour
    face: int
    ts: int = 0
    row: DieColour | None = None


class Reroll(NamedTuple):
    """Roll all remaining dice again. `faces` fixes the outcome (scenarios, tests)."""

    seat: Seat
    ts: int = 0
    faces: tuple[int, ...] | None = None


DiceAction = PlaceDie | Reroll


def dice_counts(players: int, options: DiceOptions) -> tuple[int, ...]:
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise RulesError(f"Dice Ligretto takes {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
    if not options.handicap:
        return (DEFAULT_DICE[players],) * players
    counts = options.handicap
    if len(counts) != players:
        raise RulesError(f"handicap gives {len(counts)} counts for {players} players")
    check_handicap(counts)
    return counts


def check_handicap(counts: tuple[int, ...]) -> None:
    """What no player count can make right: a seat without a die, more dice than the bag."""
    if any(c < 1 for c in counts):
        raise RulesError("handicap: every seat needs at least 1 die")
    if sum(counts) > TOTAL_DICE:
        raise RulesError(f"handicap: {sum(counts)} dice asked for, the bag holds {TOTAL_DICE}")


class DiceRound(RoundBase):
    game = "dice"

    def __init__(
        self,
        players: int,
        options: DiceOptions,
        rng: random.Random,
        dice: Sequence[Sequence[Die]] | None = None,
        board: Sequence[int] | None = None,
    ) -> None:
        counts = dice_counts(players, options)
        self.players = players
        self.options = options
        self._rng = rng
        self.board: list[int] = list(board) if board is not None else [0] * len(DieColour)
        """How many faces lie in each colour's row (the next place needs face + 1)."""
        if len(self.board) != len(DieColour) or not all(0 <= b <= FACES for b in self.board):
            raise RulesError("board: give 0 to 6 placed faces for each of the 4 colours")
        if dice is None:
            bag = [c for c in DieColour for _ in range(DICE_PER_COLOUR)]
            rng.shuffle(bag)
            dice = []
            for n in counts:
                drawn, bag = bag[:n], bag[n:]
                dice.append([Die(c, rng.randint(1, FACES)) for c in drawn])
        if len(dice) != players:
            raise RulesError(f"dice given for {len(dice)} seats, {players} are playing")
        for colour in DieColour:
            in_play = self.board[colour] + sum(d.colour == colour for hand in dice for d in hand)
            if in_play > DICE_PER_COLOUR:
                raise RulesError(f"{in_play} {colour.name.lower()} dice, the bag holds 6")
        self.dice: list[list[Die]] = [list(hand) for hand in dice]
        self.placed_by: list[list[Seat]] = [[] for _ in DieColour]
        self.result: RoundResult | None = None
        for seat, hand in enumerate(self.dice):
            if not hand:
                self._finish(seat)
                break

    def to_centre(self) -> tuple[int, int]:
        placed = sum(len(p) for p in self.placed_by)
        return placed, placed + sum(len(d) for d in self.dice)

    def fits(self, die: Die) -> bool:
        return self.board[die.colour] == die.face - 1

    def legal_actions(self, seat: Seat) -> Iterator[DiceAction]:
        if self.result is not None:
            return
        seen: set[Die] = set()
        for die in self.dice[seat]:
            if die not in seen and self.fits(die):
                seen.add(die)
                yield PlaceDie(seat, die.colour, die.face)
        yield Reroll(seat)

    def _place(self, action: PlaceDie) -> Refusal | None:
        seat, colour, face = action.seat, action.colour, action.face
        die = Die(DieColour(colour), face)
        hand = self.dice[seat]
        if die not in hand:
            return Refusal(Reason.NOT_HELD, f"no {die} in front of you")
        if action.row is not None and action.row != colour:
            name = DieColour(colour).name.lower()
            return Refusal(Reason.NO_FIT, f"a {name} die goes in the {name} row, "
                                          f"not the {DieColour(action.row).name.lower()} one")
        placed = self.board[colour]
        if placed != face - 1:
            if placed >= face:
                return Refusal(Reason.NO_FIT)
            return Refusal(Reason.NO_FIT, f"{colour.name.lower()} {placed + 1} comes first")
        i = hand.index(die)
        del hand[i]
        self.board[colour] = face
        self.placed_by[colour].append(seat)
        self._undo.append((DiceRound._unplace, seat, i, die))
        if not hand:
            self._finish(seat)
        return None

    def _reroll(self, action: Reroll) -> Refusal | None:
        hand = self.dice[action.seat]
        if action.faces is not None:
            if len(action.faces) != len(hand) or not all(is_whole(f) and 1 <= f <= FACES
                                                         for f in action.faces):
                return Refusal(Reason.NOT_HELD, f"{len(hand)} faces needed")
            faces = list(action.faces)
        else:
            faces = [self._rng.randint(1, FACES) for _ in hand]
        self.dice[action.seat] = [Die(d.colour, f) for d, f in zip(hand, faces, strict=True)]
        self._undo.append((DiceRound._unroll, action.seat, tuple(hand)))
        return None

    _handlers: ClassVar[dict[type, Callable[[Any, Any], Refusal | None]]] = {
        PlaceDie: _place, Reroll: _reroll}

    # ------------------------------------------------------------ taking back (RoundBase._lost_race)

    _timeless = True

    def _affects(self, entry: DiceAction, action: DiceAction) -> bool:
        """A die placed changes only its colour's row; a reroll only that seat's own dice."""
        return type(action) is PlaceDie and type(entry) is PlaceDie and entry.colour == action.colour

    def _unshare(self, action: Any) -> None:
        self.dice = [hand[:] for hand in self.dice]
        self.board = self.board[:]
        self.placed_by = [seats[:] for seats in self.placed_by]

    def _unplace(self, seat: Seat, i: int, die: Die) -> None:
        self.result = None
        self.dice[seat].insert(i, die)
        self.board[die.colour] = die.face - 1
        self.placed_by[die.colour].pop()

    def _unroll(self, seat: Seat, hand: tuple[Die, ...]) -> None:
        self.dice[seat] = list(hand)

    def scores(self, finisher: Seat | None = None) -> tuple[int, ...]:
        held = [len(h) for h in self.dice]
        return tuple(
            sum(held) - held[seat] if seat == finisher else -held[seat] for seat in range(self.players)
        )

    def _finish(self, seat: Seat) -> None:
        self._end(RoundResult(Ending.LAST_DIE, (seat,), self.scores(seat)))

    def snapshot(self) -> dict[str, object]:
        return {
            "board": {c.name.lower(): self.board[c] for c in DieColour},
            "seats": [{"dice": [str(d) for d in hand]} for hand in self.dice],
        }


def handicap(value: Any) -> tuple[int, ...]:
    items = value if isinstance(value, list | tuple) else str(value).replace(" ", "").split(",")
    try:
        if any(isinstance(x, bool | float) for x in items):
            raise ValueError
        counts = tuple(int(x) for x in items if str(x) != "")
    except ValueError:
        raise ValueError("expected dice counts per seat, e.g. 7,7,5,5") from None
    return counts
