"""Dice Ligretto: docs/rules.md, "Dice Ligretto"."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from firmware_host.engine.round import Ending, Reason, RulesError
from firmware_host.games.dice.rules import (
    DiceOptions,
    DiceRound,
    Die,
    DieColour,
    PlaceDie,
    Reroll,
    dice_counts,
)

D = Die.parse
Y, R, G, B = DieColour.YELLOW, DieColour.RED, DieColour.GREEN, DieColour.BLUE


def dice_round(*hands: str, board: list[int] | None = None, seed: int = 1) -> DiceRound:
    return DiceRound(len(hands), DiceOptions(), random.Random(seed),
                     dice=[[D(t) for t in h.split()] for h in hands], board=board)


@pytest.mark.parametrize(("players", "each"), [(2, 12), (3, 8), (4, 6)])
def test_each_player_draws_12_8_or_6_dice_from_the_bag_of_24(players: int, each: int) -> None:
    rnd = DiceRound(players, DiceOptions(), random.Random(players))
    assert [len(h) for h in rnd.dice] == [each] * players
    colours = Counter(d.colour for h in rnd.dice for d in h)
    assert all(n <= 6 for n in colours.values())
    assert all(1 <= d.face <= 6 for h in rnd.dice for d in h)


def test_handicap_gives_per_seat_counts_up_to_24_in_all() -> None:
    assert dice_counts(4, DiceOptions((7, 7, 5, 5))) == (7, 7, 5, 5)
    rnd = DiceRound(4, DiceOptions((8, 7, 5, 4)), random.Random(2))
    assert [len(h) for h in rnd.dice] == [8, 7, 5, 4]
    with pytest.raises(RulesError, match="bag holds 24"):
        dice_counts(4, DiceOptions((8, 8, 5, 5)))
    with pytest.raises(RulesError, match="counts for 4 players"):
        dice_counts(4, DiceOptions((8, 8)))
    with pytest.raises(RulesError, match="at least 1"):
        dice_counts(2, DiceOptions((0, 8)))


def test_a_die_goes_only_into_its_colours_row_as_the_next_value() -> None:
    rnd = dice_round("Y2 Y1 R3", "B1 G4")
    assert rnd.apply(PlaceDie(0, Y, 2)).reason is Reason.NO_FIT  # yellow 1 first
    assert rnd.apply(PlaceDie(0, Y, 1)) is None
    assert rnd.apply(PlaceDie(0, Y, 2)) is None
    assert rnd.board[Y] == 2 and rnd.dice[0] == [D("R3")]
    assert rnd.placed_by[Y] == [0, 0]


def test_a_die_you_do_not_hold_is_refused() -> None:
    rnd = dice_round("Y1 R3", "B1 G4")
    assert rnd.apply(PlaceDie(0, B, 1)).reason is Reason.NOT_HELD


def test_first_come_first_served_the_second_yellow_1_is_too_late() -> None:
    rnd = dice_round("Y1 R3", "Y1 G4")
    assert rnd.apply(PlaceDie(1, Y, 1, ts=10_000_000)) is None
    refusal = rnd.apply(PlaceDie(0, Y, 1, ts=12_500_000))
    assert refusal.reason is Reason.TOO_LATE and refusal.by_seat == 1
    assert refusal.delta_ns == 2_500_000
    assert rnd.dice[0] == [D("Y1"), D("R3")]  # it must be rolled again


def test_reroll_rolls_all_remaining_dice_never_a_subset() -> None:
    rnd = DiceRound(2, DiceOptions(), random.Random(7))
    colours = [d.colour for d in rnd.dice[0]]
    faces = [d.face for d in rnd.dice[0]]
    rolls = []
    for _ in range(5):
        assert rnd.apply(Reroll(0)) is None
        assert [d.colour for d in rnd.dice[0]] == colours  # same dice, new faces
        rolls.append([d.face for d in rnd.dice[0]])
    assert any(r != faces for r in rolls)
    fixed = dice_round("Y1 R3", "B1 G4")
    assert fixed.apply(Reroll(0, faces=(6, 2))) is None and fixed.dice[0] == [D("Y6"), D("R2")]
    assert fixed.apply(Reroll(0, faces=(6,))).reason is Reason.NOT_HELD


def test_the_table_rolls_with_the_rounds_own_generator() -> None:
    def rolled(seed: int) -> list[list[Die]]:
        rnd = DiceRound(3, DiceOptions(), random.Random(seed))
        rnd.apply(Reroll(1))
        return rnd.dice

    assert rolled(3) == rolled(3)
    assert rolled(3) != rolled(4)


def test_the_round_ends_the_instant_a_player_places_the_last_die() -> None:
    rnd = dice_round("Y6", "R5 G2 B3", "G6", "R6 B4 B6 G3", board=[4, 5, 3, 3])
    assert rnd.apply(PlaceDie(0, Y, 6)) is None
    assert rnd.result.ending is Ending.LAST_DIE and rnd.result.finishers == (0,)
    # The rulebook's example: Lukas +8, Emely -3, Steffen -1, Anke -4.
    assert rnd.result.scores == (8, -3, -1, -4)
    assert rnd.apply(PlaceDie(1, R, 5)).reason is Reason.ROUND_OVER


def test_board_and_dice_must_agree_with_a_bag_of_6_per_colour() -> None:
    with pytest.raises(RulesError, match="7 yellow dice"):
        dice_round("Y1 Y2 Y3 Y4", "Y5 Y6 Y1")
    with pytest.raises(RulesError, match="board"):
        dice_round("Y1", "B1", board=[7, 0, 0, 0])


def test_every_die_can_always_be_placed_eventually_so_no_deadlock() -> None:
    rnd = DiceRound(4, DiceOptions(), random.Random(11))
    rng = random.Random(5)
    for _ in range(20000):
        if rnd.result is not None:
            break
        seat = rng.randrange(4)
        fitting = [d for d in rnd.dice[seat] if rnd.fits(d)]
        rnd.apply(PlaceDie(seat, fitting[0].colour, fitting[0].face) if fitting else Reroll(seat))
    assert rnd.result is not None
