"""How the engine tells a lost race from a plain refusal (docs/fairness.md, "Lost races"), seen
from outside: what it answers, and what it costs. The property that every game's answers are the
full trial's is in test_properties.py."""

from __future__ import annotations

import random
from typing import Any, ClassVar

import pytest

from firmware_host.engine.round import Reason
from firmware_host.games.dice.rules import DiceOptions, DiceRound, Die, DieColour, PlaceDie, Reroll

RED, YELLOW, BLUE = DieColour.RED, DieColour.YELLOW, DieColour.BLUE
MS = 1_000_000


def dice_round(*hands: list[Die]) -> DiceRound:
    return DiceRound(len(hands), DiceOptions(), random.Random(1), dice=[list(h) for h in hands])


def counting(monkeypatch: pytest.MonkeyPatch, *names: str) -> list[str]:
    """Every call of these undo functions of DiceRound, by name."""
    calls: list[str] = []
    for name in names:
        undo = getattr(DiceRound, name)
        monkeypatch.setattr(DiceRound, name,
                            lambda rnd, *a, _u=undo, _n=name: (calls.append(_n), _u(rnd, *a)))
    return calls


def test_a_handler_that_takes_an_action_without_its_undo_is_a_bug_said_at_once() -> None:
    class Forgetful(DiceRound):
        def _reroll(self, action: Any) -> Any:
            self.dice[action.seat] = list(self.dice[action.seat])
            return None

        _handlers: ClassVar[dict[type, Any]] = {**DiceRound._handlers, Reroll: _reroll}

    rnd = Forgetful(2, DiceOptions(), random.Random(1))
    with pytest.raises(AssertionError, match=r"Forgetful took Reroll.*without pushing its undo"):
        rnd.apply(Reroll(0, 5))


@pytest.mark.parametrize("before", [10, 3000])
def test_a_lost_race_costs_the_plays_within_the_horizon_not_the_rounds_length(
        before: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seat 3 rerolls `before` times, long ago; then seat 2 places the red 1 and seat 1, 0.1 ms
    later, is refused: a lost race, found by taking back seat 2's one play, however long the round."""
    taken_back = counting(monkeypatch, "_unplace", "_unroll")
    dealt: list[int] = []
    init = DiceRound.__init__
    monkeypatch.setattr(DiceRound, "__init__", lambda rnd, *a, **k: (dealt.append(1), init(rnd, *a, **k))[1])
    rnd = dice_round([Die(RED, 1), Die(YELLOW, 4)], [Die(RED, 1), Die(YELLOW, 3)], [Die(YELLOW, 5)])
    for i in range(before):
        assert rnd.apply(Reroll(2, i * 2_000_000_000, (5,))) is None
    t = before * 2_000_000_000
    assert rnd.apply(PlaceDie(1, RED, 1, t)) is None
    refusal = rnd.apply(PlaceDie(0, RED, 1, t + 100_000))
    assert refusal is not None and refusal.reason is Reason.TOO_LATE
    assert (refusal.by_seat, refusal.delta_ns) == (1, 100_000)
    assert taken_back == ["_unplace"]  # one play taken back, however many came before
    assert dealt == [1]  # and the round never dealt again


def test_a_seat_pressing_something_else_after_a_refusal_is_tried_against_every_play_again() -> None:
    """Seat 1 holds the red 2 and the yellow 1. Seat 2 lays the yellow 1; seat 1 presses the red
    2 (no red 1 yet: a plain refusal, no race), then its yellow 1: lost to seat 2, whose play
    came before the first refusal."""
    rnd = dice_round([Die(RED, 2), Die(YELLOW, 1)], [Die(YELLOW, 1), Die(BLUE, 6)])
    assert rnd.apply(PlaceDie(1, YELLOW, 1, 1 * MS)) is None
    plain = rnd.apply(PlaceDie(0, RED, 2, 2 * MS))
    assert plain is not None and plain.reason is Reason.NO_FIT
    late = rnd.apply(PlaceDie(0, YELLOW, 1, 3 * MS))
    assert late is not None and late.reason is Reason.TOO_LATE
    assert (late.by_seat, late.delta_ns) == (1, 2 * MS)


def test_the_same_refused_press_again_is_tried_only_against_what_was_played_since(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Reds 1 to 3 are laid; seat 1's red 5 is refused, and tried against each of them (a red 5
    fits after none). Pressed again after a reroll, it is tried against the reroll alone."""
    taken_back = counting(monkeypatch, "_unplace", "_unroll")
    rnd = dice_round([Die(RED, 5), Die(YELLOW, 6)], [Die(RED, 1), Die(RED, 3), Die(BLUE, 6)],
                     [Die(RED, 2), Die(YELLOW, 5)])
    for seat, face in ((1, 1), (2, 2), (1, 3)):
        assert rnd.apply(PlaceDie(seat, RED, face, face * MS)) is None
    first = rnd.apply(PlaceDie(0, RED, 5, 4 * MS))
    assert first is not None and first.reason is Reason.NO_FIT
    assert taken_back == ["_unplace"] * 3
    taken_back.clear()
    assert rnd.apply(Reroll(2, 5 * MS, (5,))) is None
    again = rnd.apply(PlaceDie(0, RED, 5, 6 * MS))
    assert again is not None and again.reason is Reason.NO_FIT
    assert taken_back == []


def test_a_game_that_says_it_is_timeless_yet_wakes_is_a_bug_said_at_once() -> None:
    class Hasty(DiceRound):
        def deadline(self) -> int | None:
            return 0

    with pytest.raises(AssertionError, match=r"Hasty says it is timeless, yet it woke at 5"):
        Hasty(2, DiceOptions(), random.Random(1)).wake(5)
