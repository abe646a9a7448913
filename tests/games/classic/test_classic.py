"""Ligretto, the card game: docs/rules.md, "Ligretto", rule by rule."""

from __future__ import annotations

import random

import pytest
from helpers import OTHER_STACK, cards, classic, deal

from firmware_host.engine.round import Ending, Reason, RulesError
from firmware_host.games.classic.rules import (
    DECK,
    Card,
    ClassicOptions,
    ClassicRound,
    MoveToRow,
    PlayCard,
    TurnHand,
    VoteStuck,
    row_size,
)

C = Card.parse


# ---------------------------------------------------------------- set-up


@pytest.mark.parametrize(("players", "row"), [(2, 5), (3, 4), (4, 3), (8, 3), (12, 3)])
def test_row_has_5_cards_with_2_players_4_with_3_and_3_from_4(players: int, row: int) -> None:
    rnd = ClassicRound(players, ClassicOptions(), random.Random(players))
    for st in rnd.seats:
        assert [len(p) for p in st.row] == [1] * row
        assert len(st.stack) == 10
        assert len(st.hand) == 40 - 10 - row
        assert sorted([*[p[0] for p in st.row], *st.stack, *st.hand]) == sorted(DECK)
    assert row_size(players) == row


@pytest.mark.parametrize("players", [1, 13, 0])
def test_player_count_outside_2_to_12_is_refused(players: int) -> None:
    with pytest.raises(RulesError, match="2 to 12 players"):
        ClassicRound(players, ClassicOptions(), random.Random(0))


def test_cards_are_spelled_like_the_table_shows_them() -> None:
    assert str(C("r7")) == "R7" and C("Blue 10").value == 10 and C("Y1").colour.name == "YELLOW"
    with pytest.raises(RulesError):
        C("Q7")
    with pytest.raises(RulesError):
        C("R11")


# ---------------------------------------------------------------- centre piles


def test_a_1_always_starts_a_new_pile() -> None:
    rnd = classic(deal("R1 G5 B9"), deal("R1 Y4 Y8"))
    assert rnd.apply(PlayCard(0, C("R1"))) is None
    assert rnd.apply(PlayCard(1, C("R1"))) is None
    assert len(rnd.piles) == 2


def test_a_card_goes_on_a_pile_of_its_colour_exactly_one_higher() -> None:
    rnd = classic(deal("R2 G2 R3"), deal("Y4 Y5 Y8"), piles=["1:R1"])
    assert rnd.apply(PlayCard(0, C("G2"))).reason is Reason.NO_FIT  # wrong colour
    assert rnd.apply(PlayCard(0, C("R3"))).reason is Reason.NO_FIT  # one too high
    assert rnd.apply(PlayCard(0, C("R2"))) is None
    assert rnd.apply(PlayCard(0, C("R3"))) is None
    assert [str(c) for _, c in rnd.piles[0]] == ["R1", "R2", "R3"]


def test_anyone_may_play_on_any_pile_and_piles_of_one_colour_are_equivalent() -> None:
    rnd = classic(deal("B2 G6 G7"), deal("B2 Y5 Y8"), piles=["0:B1", "1:B1"])
    assert rnd.apply(PlayCard(1, C("B2"))) is None
    assert rnd.apply(PlayCard(0, C("B2"))) is None
    assert sorted(len(p) for p in rnd.piles) == [2, 2]


def test_a_pile_that_reaches_10_is_complete() -> None:
    rnd = classic(deal("R10 G6 G7"), deal("Y4 Y5 Y8"),
                  piles=["0:R1 0:R2 0:R3 0:R4 0:R5 0:R6 0:R7 0:R8 0:R9"])
    assert rnd.apply(PlayCard(0, C("R10"))) is None
    assert rnd.pile_tops() == []  # complete piles are not open
    assert rnd.snapshot()["piles"][0]["complete"] is True


# ---------------------------------------------------------------- what may be played


def test_row_cards_stack_top_and_discard_top_are_playable_nothing_else() -> None:
    rnd = classic(deal("G5 G6 G7", stack="R1 " + OTHER_STACK, hand="B3 B1 Y1 Y2", discard=""),
                  deal("Y4 Y5 Y8"))
    assert rnd.apply(PlayCard(0, C("R1"))) is None  # stack top
    assert rnd.apply(PlayCard(0, C("B1"))).reason is Reason.NOT_PLAYABLE  # still in the hand
    assert rnd.apply(TurnHand(0)) is None  # turns B3, B1, Y1: Y1 on top
    assert rnd.visible(0)[-1] == C("Y1")
    assert rnd.apply(PlayCard(0, C("B1"))).reason is Reason.NOT_PLAYABLE  # under Y1
    assert rnd.apply(PlayCard(0, C("Y1"))) is None
    assert rnd.apply(PlayCard(0, C("B1"))) is None  # now on top


def test_a_row_gap_is_filled_at_once_from_the_stack() -> None:
    rnd = classic(deal("R1 G6 G7", stack="B4 B5 " + OTHER_STACK), deal("Y4 Y5 Y8"))
    assert rnd.apply(PlayCard(0, C("R1"))) is None
    assert [p[-1] for p in rnd.seats[0].row] == [C("B4"), C("G6"), C("G7")]
    assert rnd.seats[0].stack[-1] == C("B5")


def test_refusal_leaves_the_table_unchanged() -> None:
    rnd = classic(deal("R2 G6 G7", hand="R5 R6 R7"), deal("Y4 Y5 Y8", hand="B1"), piles=["1:G1"])
    assert rnd.result is None
    before = rnd.snapshot()
    assert rnd.apply(PlayCard(0, C("R2"))) is not None
    assert rnd.apply(PlayCard(0, C("Y9"))) is not None
    assert rnd.apply(MoveToRow(0, C("R2"), 0)) is not None  # not with the standard row
    assert rnd.apply(VoteStuck(0)) is not None  # the table finds deadlocks itself
    assert rnd.apply(PlayCard(5, C("R2"))).reason is Reason.NO_SUCH_SEAT
    assert rnd.snapshot() == before and rnd.journal == []


# ---------------------------------------------------------------- the hand


def test_turning_shows_3_cards_and_fewer_when_fewer_remain() -> None:
    rnd = classic(deal("G5 G6 G7", hand="B1 B2 B3 B4 B5"), deal("Y4 Y5 Y8"))
    rnd.apply(TurnHand(0))
    assert rnd.seats[0].discard == cards("B1 B2 B3")  # bottom first: B3 on top
    rnd.apply(TurnHand(0))
    assert rnd.seats[0].discard == cards("B1 B2 B3 B4 B5") and rnd.seats[0].hand == []


def test_a_used_up_hand_is_the_discard_pile_turned_over_with_turn_over() -> None:
    rnd = classic(deal("G5 G6 G7", hand="B1 B2 B3 B4"), deal("Y1 Y5 Y8"), recycle="turn_over")
    rnd.apply(TurnHand(0))
    rnd.apply(TurnHand(0))
    assert rnd.seats[0].hand == []
    rnd.apply(TurnHand(0))  # picks the discard pile up, order kept, turns 3 again
    assert rnd.seats[0].discard == cards("B1 B2 B3")
    assert rnd.seats[0].hand == cards("B4")


def test_a_used_up_hand_is_shuffled_by_default_and_reproducibly() -> None:
    hand = "B1 B2 B3 B4 B5 B6 B7 B8 B9 R2 R3 R4"

    def after(seed: int) -> list[Card]:
        rnd = classic(deal("G5 G6 G7", hand=hand), deal("Y4 Y5 Y8"), seed=seed)
        for _ in range(5):
            rnd.apply(TurnHand(0))
        return list(rnd.seats[0].discard)

    assert after(1) == after(1)  # the round's own generator: replayable
    shown = {tuple(after(seed)) for seed in range(8)}
    assert len(shown) > 1  # ...but shuffled: different seeds show different cards
    assert all(len(s) == 3 and set(s) <= set(cards(hand)) for s in shown)


def test_turning_with_no_hand_and_no_discard_is_refused() -> None:
    rnd = classic(deal("G5 G6 G7", hand=""), deal("Y1 Y5 Y8"))
    assert rnd.apply(TurnHand(0)).reason is Reason.NO_CARDS


# ---------------------------------------------------------------- end of round


def test_the_round_ends_when_a_stack_empties_into_the_centre() -> None:
    rnd = classic(deal("G5 G6 G7", stack="R1"), deal("Y4 Y5 Y8"))
    assert rnd.apply(PlayCard(0, C("R1"))) is None
    assert rnd.result.ending is Ending.LIGRETTO and rnd.result.finishers == (0,)
    assert rnd.apply(PlayCard(1, C("Y4"))).reason is Reason.ROUND_OVER


def test_the_round_ends_when_the_last_stack_card_goes_into_the_row() -> None:
    rnd = classic(deal("R1 G6 G7", stack="B9"), deal("Y4 Y5 Y8"))
    assert rnd.apply(PlayCard(0, C("R1"))) is None
    assert rnd.result.ending is Ending.LIGRETTO
    assert rnd.seats[0].row[0] == [C("B9")]


def test_scores_are_plus_1_per_centre_card_and_minus_2_per_stack_card() -> None:
    rnd = classic(deal("R2 G6 G7", stack="R1 G9 G8"), deal("Y4 Y5 Y8", stack="B1"),
                  piles=["1:Y1 1:Y2 1:Y3"])
    rnd.apply(PlayCard(0, C("R1")))
    rnd.apply(PlayCard(0, C("R2")))  # the row takes G9 from the stack: G8 is left
    rnd.apply(PlayCard(1, C("Y4")))  # the row takes B1, seat 2's last stack card
    assert rnd.result.finishers == (1,)
    assert rnd.result.scores == (2 - 2 * 1, 4 - 0)


def test_deadlock_ends_the_round_when_nobody_can_ever_play() -> None:
    # Every fitting card (the 2s) is buried in a stack; no 1 is anywhere reachable.
    rnd = classic(deal("G5 G6 G7", stack="Y9 R2 G2", hand="B5 B6", discard="B7"),
                  deal("Y4 Y5 Y8", stack="R9 B2 Y2", hand="G9"),
                  piles=["0:R1", "1:G1", "0:B1", "1:Y1"])
    assert rnd.result is not None and rnd.result.ending is Ending.DEADLOCK
    assert rnd.result.finishers == ()


def test_deadlock_is_found_after_the_play_that_causes_it() -> None:
    rnd = classic(deal("G5 G6 B2", stack="Y9 Y6 R3 G2", hand="B5 B6"),
                  deal("Y4 Y5 Y8", stack="R9 B3 Y2", hand="G9"),
                  piles=["0:R1 0:R2", "1:G1", "0:B1", "1:Y1"])
    assert rnd.result is None
    assert rnd.apply(PlayCard(0, C("B2"))) is None  # B3 is in a stack: nothing fits now
    # B2 left the row and the stack refilled it with Y9, which does not fit either.
    assert rnd.result.ending is Ending.DEADLOCK


def test_turn_over_can_freeze_a_hand_and_that_is_a_deadlock_too() -> None:
    # With the order kept, B1 never reaches the top of a 3-card turn (B9 and B8 do).
    rnd = classic(deal("G5 G6 G7", stack="Y9 R9 G9", hand="B1 B2 B9 B3 B4 B8"),
                  deal("Y4 Y5 Y8", stack="R8 B7 Y7"),
                  piles=["0:R1", "1:G1", "1:Y1"], recycle="turn_over")
    assert rnd.result is not None and rnd.result.ending is Ending.DEADLOCK
    assert rnd.reachable_hand_cards(0) == cards("B9 B8 B9 B8")


def test_a_hand_that_freezes_after_turning_is_found_at_the_end_of_the_pass() -> None:
    # B1 shows once (top of the first turn) and is played; later B2 is needed,
    # but B2 never shows on top: the next full pass proves seat 1 frozen.
    rnd = classic(deal("G5 G6 G7", stack="Y9 R9 G9", hand="B9 B8 B1 B4 B2 B3"),
                  deal("Y4 Y5 Y8", stack="R8 B7 Y7"),
                  piles=["0:R1", "1:G1", "1:Y1"], recycle="turn_over")
    assert rnd.result is None
    assert rnd.apply(TurnHand(0)) is None and rnd.apply(PlayCard(0, C("B1"))) is None
    assert rnd.result is not None and rnd.result.ending is Ending.DEADLOCK


def test_shuffle_never_freezes_a_hand() -> None:
    rnd = classic(deal("G5 G6 G7", stack="Y9 R9 G9", hand="B1 B2 B9 B3 B4 B8"),
                  deal("Y4 Y5 Y8", stack="R8 B7 Y7"),
                  piles=["0:R1", "1:G1", "1:Y1"])
    for _ in range(10):
        rnd.apply(TurnHand(0))
    assert rnd.result is None


# ---------------------------------------------------------------- races


def test_the_later_of_two_claims_on_one_spot_is_too_late_with_the_gap() -> None:
    rnd = classic(deal("B2 G6 G7", hand="Y1"), deal("B2 Y5 Y8"), piles=["0:B1"])
    assert rnd.apply(PlayCard(1, C("B2"), ts=5_000_000)) is None
    refusal = rnd.apply(PlayCard(0, C("B2"), ts=5_400_000))
    assert refusal.reason is Reason.TOO_LATE
    assert refusal.by_seat == 1 and refusal.delta_ns == 400_000
    assert str(refusal) == "too late (seat 2 was 0.4 ms earlier)"


def test_a_card_that_never_fitted_is_not_called_too_late() -> None:
    rnd = classic(deal("B3 G6 G7", hand="Y1"), deal("B2 Y5 Y8"), piles=["0:B1"])
    rnd.apply(PlayCard(1, C("B2"), ts=1_000))
    rnd.apply(PlayCard(0, C("B3"), ts=2_000))
    assert rnd.apply(PlayCard(1, C("Y8"), ts=3_000)).reason is Reason.NO_FIT


# ---------------------------------------------------------------- variants


def test_descending_piles_start_at_10_and_run_down() -> None:
    rnd = classic(deal("R10 R9 R1"), deal("Y4 Y5 Y8"), descending=True)
    assert rnd.apply(PlayCard(0, C("R1"))).reason is Reason.NO_FIT
    assert rnd.apply(PlayCard(0, C("R10"))) is None
    assert rnd.apply(PlayCard(0, C("R9"))) is None


def test_alternate_colours_needs_a_different_colour_from_the_card_below() -> None:
    rnd = classic(deal("R2 G2 B3"), deal("Y4 Y5 Y8"), piles=["1:R1"], alternate_colours=True)
    assert rnd.apply(PlayCard(0, C("R2"))).reason is Reason.NO_FIT
    assert rnd.apply(PlayCard(0, C("G2"))) is None
    assert rnd.apply(PlayCard(0, C("B3"))) is None


def test_stack_face_down_keeps_the_stack_top_out_of_play() -> None:
    rnd = classic(deal("R1 G6 G7", stack="R2 " + OTHER_STACK), deal("Y4 Y5 Y8"),
                  stack_face_down=True)
    assert rnd.apply(PlayCard(0, C("R1"))) is None  # the row refills with R2
    assert rnd.seats[0].row[0] == [C("R2")]
    rnd2 = classic(deal("G5 G6 G7", stack="R1 " + OTHER_STACK), deal("Y1 Y5 Y8"),
                   stack_face_down=True)
    assert rnd2.apply(PlayCard(0, C("R1"))).reason is Reason.NOT_PLAYABLE


class TestProRow:
    def test_stack_or_discard_top_goes_onto_a_row_card_one_lower_other_colour(self) -> None:
        rnd = classic(deal("R9 G5 B7", stack="G8 B8 " + OTHER_STACK, hand="Y4 R6 Y6"),
                      deal("Y4 Y5 Y8"), pro_row=True)
        assert rnd.apply(MoveToRow(0, C("G8"), 0)) is None  # green 8 on red 9
        assert rnd.apply(MoveToRow(0, C("B8"), 0)).reason is Reason.ROW_FULL  # onto G8? no
        rnd.apply(TurnHand(0))  # Y6 on top of the discard pile
        assert rnd.apply(MoveToRow(0, C("Y6"), 2)) is None  # yellow 6 on blue 7
        assert rnd.apply(MoveToRow(0, C("Y4"), 1)).reason is Reason.NOT_PLAYABLE  # under R6
        assert rnd.apply(MoveToRow(0, C("R6"), 1)).reason is Reason.ROW_FULL  # G5 takes a 4
        assert [p[-1] for p in rnd.seats[0].row] == cards("G8 G5 Y6")

    @pytest.mark.parametrize("descending_piles", [False, True])
    def test_a_card_goes_on_a_row_card_exactly_one_higher_never_two_nor_lower(
            self, descending_piles: bool) -> None:
        """The decision docs/rules.md writes down: "descending order" means exactly one lower
        (the rulebook's only example), whichever way the centre piles run."""
        for card, taken in (("G8", True), ("G7", False), ("G10", False), ("G9", False), ("G6", False)):
            rnd = classic(deal("R9 B5 B7", stack=f"{card} " + OTHER_STACK.replace(f"{card} ", "")),
                          deal("Y1 Y5 Y8"), pro_row=True, descending=descending_piles)
            refusal = rnd.apply(MoveToRow(0, C(card), 0))
            assert (refusal is None) is taken, card
            if not taken:
                assert refusal.reason is Reason.ROW_FULL

    def test_same_colour_or_wrong_value_is_refused(self) -> None:
        rnd = classic(deal("R9 G5 B7", stack="R8 " + OTHER_STACK), deal("Y1 Y5 Y8"), pro_row=True)
        assert rnd.apply(MoveToRow(0, C("R8"), 0)).reason is Reason.ROW_FULL
        assert rnd.apply(MoveToRow(0, C("R8"), 1)).reason is Reason.ROW_FULL

    def test_only_the_top_of_a_row_place_is_playable_and_refills_wait(self) -> None:
        rnd = classic(deal(rows=["R9 G8", "G5", "B7"], stack="R1 " + OTHER_STACK),
                      deal("Y4 Y5 Y8"), piles=["1:G1 1:G2 1:G3 1:G4 1:G5 1:G6 1:G7"],
                      pro_row=True)
        assert rnd.apply(PlayCard(0, C("G8"))) is None
        assert rnd.seats[0].row[0] == [C("R9")]  # not empty: no refill from the stack
        assert rnd.seats[0].stack[-1] == C("R1")

    def test_all_seats_voting_stuck_ends_the_round_and_a_play_clears_votes(self) -> None:
        rnd = classic(deal("R9 G5 B7", hand="Y6"), deal("Y4 Y5 Y8", hand="B3"), pro_row=True)
        assert rnd.apply(VoteStuck(0)) is None
        assert rnd.apply(VoteStuck(0)).reason is Reason.ALREADY_VOTED
        rnd.apply(PlayCard(1, C("Y4")))  # a 4 does not fit... so nothing is cleared
        assert rnd.stuck_votes == {0}
        assert rnd.apply(VoteStuck(1)) is None
        assert rnd.result.ending is Ending.STUCK_VOTE

    def test_deadlock_under_pro_row_needs_no_possible_row_move(self) -> None:
        base = dict(piles=["0:R1", "1:G1", "0:B1", "1:Y1"], pro_row=True)
        stuck = classic(deal("G5 G6 G7", stack="Y9 R2 G2", hand="B9 R9"),
                        deal("Y4 Y5 Y8", stack="R9 B2 Y2", hand="G9"), **base)
        assert stuck.result is not None and stuck.result.ending is Ending.DEADLOCK
        movable = classic(deal("G5 G6 G7", stack="R6 R2 G2", hand="B9 R9"),
                          deal("Y4 Y5 Y8", stack="R9 B2 Y2", hand="G9"), **base)
        assert movable.result is None  # red 6 could still go onto green 7
        assert movable.buffer_move_possible()


def test_preset_piles_must_be_legal() -> None:
    with pytest.raises(RulesError, match="cannot start"):
        classic(deal("G5 G6 G7"), deal("Y4 Y5 Y8"), piles=["0:R2"])
    with pytest.raises(RulesError, match="cannot lie on"):
        classic(deal("G5 G6 G7"), deal("Y4 Y5 Y8"), piles=["0:R1 0:R3"])


def test_legal_actions_are_exactly_the_ones_apply_accepts() -> None:
    rnd = ClassicRound(3, ClassicOptions(pro_row=True), random.Random(4))
    for seat in range(3):
        for action in rnd.legal_actions(seat):
            probe = ClassicRound(3, ClassicOptions(pro_row=True), random.Random(4))
            assert probe.apply(action) is None, action
