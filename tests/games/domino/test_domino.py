"""Ligretto Domino: docs/rules.md, "Ligretto Domino", on small boards drawn in the test."""

from __future__ import annotations

import random

import pytest

from firmware_host.engine.round import Ending, Reason, Refusal, RulesError
from firmware_host.games.domino.layouts import board_for, layouts
from firmware_host.games.domino.rules import (
    SET,
    Board,
    DiscardDomino,
    DominoCard,
    DominoColour,
    DominoOptions,
    DominoRound,
    PlaceDomino,
    PlayJoker,
    next_boards,
    score_round,
)

K = DominoCard.parse

# 4 x 6, tokens in the corners:    R Y G B P R
#                                  Y R B G Y P
#                                  G B R P R Y
#                                  B P Y R G B
WIDE = ["RYGBPR", "YRBGYP", "GBRPRY", "BPYRGB"]
# 2 x 5, tokens in the corners:    R Y G B P
#                                  Y R B G Y
NARROW = ["RYGBP", "YRBGY"]


def board(rows: list[str]) -> Board:
    colours = {(r, c): DominoColour.parse(ch) for r, row in enumerate(rows) for c, ch in enumerate(row)}
    h, w = len(rows) - 1, len(rows[0]) - 1
    return Board("test", colours, ((0, 0), (0, w), (h, 0), (h, w)))


def domino(rows: list[str], *hands: str, jokers: int = 2, hold: float = 5.0,
           tokens: list[tuple[int, int]] | None = None) -> DominoRound:
    return DominoRound(len(hands), DominoOptions(joker_hold_s=hold), random.Random(1), board(rows),
                       hands=[[K(t) for t in h.split()][::-1] for h in hands],
                       jokers=[jokers] * len(hands), tokens=tokens)


def test_a_player_has_every_pair_of_the_5_colours_doubles_included() -> None:
    assert len(SET) == 15 == len(set(SET))
    assert sum(c.a == c.b for c in SET) == 5
    assert K("BR") == K("RB")


def test_a_round_refuses_a_hand_holding_one_card_twice() -> None:
    """A player's 15 cards are all different; the round keeps what each seat holds as one bit a
    card, so a second copy is refused where the hands are given, not lost later."""
    with pytest.raises(RulesError, match="seat 2 holds RY twice: a player has each card once"):
        domino(WIDE, "YG RR", "RY PP YR")


def test_a_card_covers_two_free_squares_of_its_colours_touching_the_token_by_an_edge() -> None:
    rnd = domino(WIDE, "YG RR", "PP BB")
    assert rnd.apply(PlaceDomino(0, K("YG"), 0, (0, 1), (0, 2))) is None
    assert rnd.covered[(0, 1)][1] == K("YG") and rnd.covered[(0, 2)][1] == K("YG")
    # The token moves onto the farther square of the new card.
    assert rnd.tokens[0].square == (0, 2)


def test_colours_must_match_the_squares() -> None:
    rnd = domino(WIDE, "YR GG", "PP BB")
    assert rnd.apply(PlaceDomino(0, K("YR"), 0, (0, 1), (0, 2))).reason is Reason.NO_FIT
    assert rnd.apply(PlaceDomino(0, K("YR"), 0, (0, 1), (1, 1))) is None  # Y and R squares


def test_touching_the_token_only_at_a_corner_is_not_enough() -> None:
    rnd = domino(WIDE, "RB GG", "PP BB")
    assert rnd.apply(PlaceDomino(0, K("RB"), 0, (1, 1), (1, 2))).reason is Reason.NOT_ADJACENT


def test_covering_an_occupied_square_is_not_allowed() -> None:
    rnd = domino(WIDE, "YG RR", "YR BB")
    rnd.apply(PlaceDomino(0, K("YG"), 0, (0, 1), (0, 2), ts=1))
    refusal = rnd.apply(PlaceDomino(1, K("YR"), 0, (0, 1), (1, 1), ts=2))
    assert refusal.reason is Reason.TOO_LATE and refusal.by_seat == 0  # a lost race


MS = 1_000_000
# Tokens 1 and 2 both touch (0, 1): a card there can be laid through either.
SHARED = [(0, 0), (0, 2), (3, 0), (3, 5)]


def second_press(hand: str, card: str, ts: int) -> Refusal | None:
    """Seat 1 lays YR on (0, 1) + (1, 1) through token 1 at 1 s; then seat 2 reaches for the
    same squares through token 2 with `card`, stamped `ts`."""
    rnd = domino(WIDE, "YR GG", hand, tokens=SHARED)
    assert rnd.apply(PlaceDomino(0, K("YR"), 0, (0, 1), (1, 1), ts=1_000 * MS)) is None
    return rnd.apply(PlaceDomino(1, K(card), 1, (0, 1), (1, 1), ts=ts))


def test_the_early_bird_catches_the_worm_through_another_token_too() -> None:
    """The rulebook: "the card that is placed on the board first is allowed to stay"."""
    refusal = second_press("YR BB", "YR", 1_000 * MS + 500_000)
    assert (refusal.reason, refusal.by_seat, refusal.delta_ns) == (Reason.TOO_LATE, 0, 500_000)
    assert str(refusal) == "too late (seat 1 was 0.5 ms earlier)"


def test_seats_20_ms_apart_as_bots_play_are_a_lost_race_not_a_taken_square() -> None:
    assert str(second_press("YR BB", "YR", 1_020 * MS)) == "too late (seat 1 was 20.0 ms earlier)"


def test_a_square_covered_longer_ago_than_the_race_horizon_is_simply_taken() -> None:
    refusal = second_press("YR BB", "YR", 2_000 * MS + 1)
    assert refusal.reason is Reason.SQUARE_TAKEN and refusal.by_seat is None


def test_a_race_into_a_cul_de_sac_is_lost_not_a_token_blocked_by_the_winner() -> None:
    # Seat 1's YR moves token 1 off (0, 0); token 3 on (1, 0) is left with (0, 0) alone: a dead end.
    rnd = domino(NARROW, "YR GB RR", "YR PP")
    assert rnd.apply(PlaceDomino(0, K("YR"), 0, (0, 1), (1, 1), ts=3_000 * MS)) is None
    assert rnd.tokens[2].blocked_for == 0
    # Seat 2 reached for the same squares through token 3, 0.3 ms later.
    refusal = rnd.apply(PlaceDomino(1, K("YR"), 2, (1, 1), (0, 1), ts=3_000 * MS + 300_000))
    assert str(refusal) == "too late (seat 1 was 0.3 ms earlier)"
    # Seconds later the token is simply blocked for seat 2.
    refusal = rnd.apply(PlaceDomino(1, K("YR"), 2, (1, 1), (0, 1), ts=5_000 * MS))
    assert str(refusal) == "token blocked (seat 1 must free it)"


def test_a_refusal_of_your_own_making_is_never_too_late() -> None:
    # Seat 2's PP never fitted those yellow and red squares: the refusal keeps its own reason,
    # however close the presses.
    refusal = second_press("PP YR", "PP", 1_000 * MS + 100_000)
    assert refusal.reason is Reason.SQUARE_TAKEN and refusal.by_seat is None


def test_only_the_turned_up_card_may_be_placed() -> None:
    rnd = domino(WIDE, "RR YG", "PP BB")
    assert rnd.apply(PlaceDomino(0, K("YG"), 0, (0, 1), (0, 2))).reason is Reason.NOT_HELD


def test_a_card_that_fits_nowhere_goes_to_the_discard_pile_and_it_is_turned_over_later() -> None:
    rnd = domino(WIDE, "RR BB YG", "PP BB")
    assert rnd.apply(DiscardDomino(0)) is None
    assert rnd.apply(DiscardDomino(0)) is None
    assert rnd.top_card(0) == K("YG")
    assert rnd.apply(PlaceDomino(0, K("YG"), 0, (0, 1), (0, 2))) is None
    # The hand is used up: the discard pile, turned over with its order kept, is the hand.
    assert rnd.seats[0].hand[::-1] == [K("RR"), K("BB")]
    assert rnd.top_card(0) == K("RR")


def test_a_dead_end_token_is_freed_by_the_player_who_blocked_it_anywhere() -> None:
    rnd = domino(NARROW, "YR GB RR", "BG PP")
    assert rnd.apply(PlaceDomino(0, K("YR"), 0, (0, 1), (1, 1))) is None
    blocked = rnd.tokens[2]  # on (1, 0): its only free neighbour (0, 0) leads nowhere
    assert blocked.blocked_for == 0
    # Nobody else may use it...
    assert rnd.apply(PlaceDomino(1, K("BG"), 2, (1, 2), (1, 3))).reason is Reason.BLOCKED
    # ...the blocker lays the next card on any matching free pair and moves it there.
    assert rnd.apply(PlaceDomino(0, K("GB"), 2, (0, 2), (0, 3))) is None
    assert blocked.square == (0, 3) and blocked.blocked_for is None


def test_a_joker_moves_the_token_and_reserves_it_for_its_player() -> None:
    rnd = domino(WIDE, "YR GB", "BG YY", hold=5.0)
    assert rnd.apply(PlayJoker(1, 0, (0, 1), ts=1_000_000_000)) is None
    assert rnd.tokens[0].square == (0, 1) and rnd.seats[1].jokers == 1
    refusal = rnd.apply(PlaceDomino(0, K("YR"), 0, (1, 1), (1, 0), ts=2_000_000_000))
    assert refusal.reason is Reason.RESERVED
    # Held for 5 s; after that anyone may use it.
    assert rnd.apply(PlaceDomino(0, K("YR"), 0, (1, 1), (1, 0), ts=6_000_000_001)) is None


def test_the_jokers_player_places_next_to_it_and_both_jokers_may_follow_each_other() -> None:
    rnd = domino(WIDE, "PP", "BG YY")
    assert rnd.apply(PlayJoker(1, 0, (0, 1), ts=1)) is None
    assert rnd.apply(PlayJoker(1, 0, (0, 2), ts=2)) is None  # side by side
    assert rnd.apply(PlayJoker(1, 0, (0, 3), ts=3)).reason is Reason.NO_JOKERS
    assert rnd.apply(PlayJoker(0, 1, (2, 2), ts=3)).reason is Reason.NOT_ADJACENT
    assert rnd.apply(PlaceDomino(1, K("BG"), 0, (1, 2), (1, 3), ts=4)) is None
    assert rnd.tokens[0].reserved_by is None  # its next placement ends the reservation


def test_the_round_ends_when_a_player_has_placed_every_card() -> None:
    rnd = domino(WIDE, "YG", "PP BB")
    rnd.apply(PlaceDomino(0, K("YG"), 0, (0, 1), (0, 2)))
    assert rnd.result.ending is Ending.LIGRETTO_STOP and rnd.result.finishers == (0,)
    assert rnd.result.scores == (2, 0)  # two players: only the finisher scores
    assert rnd.result.detail["put_aside"] == [False, True]


def test_when_nobody_can_place_the_round_ends_and_the_most_placed_wins() -> None:
    rnd = domino(WIDE, "YG RR", "PP", jokers=0)
    assert rnd.result is None
    rnd.apply(PlaceDomino(0, K("YG"), 0, (0, 1), (0, 2)))
    assert rnd.result.ending is Ending.NO_PLACEMENT and rnd.result.finishers == (0,)


def test_a_joker_that_opens_a_place_keeps_the_round_going() -> None:
    # Nothing fits now, but a joker on (0, 1) lets RB go on (1, 1)+(1, 2).
    rnd = domino(WIDE, "RB", "RB", jokers=1)
    assert rnd.result is None
    route = rnd.joker_route(0, [K("RB")])
    assert route is not None
    assert rnd.apply(route) is None
    assert any(p.card == K("RB") for p in rnd.placements(0, K("RB")))


def test_scoring_with_3_or_4_players() -> None:
    # The rulebook: Rudi finishes, Lena and Fabian hold 2, Alex holds 4.
    assert score_round(4, (0,), [0, 2, 2, 4]) == ((2, 1, 1, 0), (False, False, False, True))
    assert score_round(3, (1,), [3, 0, 3]) == ((1, 2, 1), (False, False, False))
    assert score_round(2, (1,), [1, 0]) == ((0, 2), (True, False))


def test_player_boards_take_2_cards_and_give_2_back_once_everyone_has_some() -> None:
    boards = next_boards([[], [], []], [False, True, True], [[], [K("RR")], [K("BB"), K("GG")]])
    assert boards == [[], [K("RR"), SET[0] if SET[0] != K("RR") else SET[1]], [K("BB"), K("GG")]]
    boards = next_boards(boards, [True, False, False], [[K("YY"), K("PP")], [], []])
    assert [len(b) for b in boards] == [0, 0, 0]  # all had cards: each took 2 back


def test_layouts_are_data_with_the_recommended_one_first() -> None:
    assert board_for(2).name == "two-players" and board_for(4).name == "four-players"
    assert len(board_for(2).colours) == 6 * 16 and len(board_for(3).colours) == 10 * 16
    assert {"two-players-long", "four-players-cross"} <= set(layouts())
    with pytest.raises(RulesError, match="unknown layout"):
        board_for(2, "nope")
    with pytest.raises(RulesError, match="is for 3, 4 players"):
        board_for(2, "four-players")


def test_tokens_start_on_the_recommended_squares_or_at_random() -> None:
    b = board_for(4)
    rnd = DominoRound(4, DominoOptions(), random.Random(1), b)
    assert [t.square for t in rnd.tokens] == list(b.tokens)
    randomly = DominoRound(4, DominoOptions(tokens="random"), random.Random(1), b)
    squares = [t.square for t in randomly.tokens]
    assert len(set(squares)) == 4 and all(sq in b.colours for sq in squares)
    assert squares != list(b.tokens)


# ---------------------------------------------------------------- rulebook 002, to the letter


def test_a_jokers_reservation_ends_at_that_players_next_placement_anywhere() -> None:
    # "That card needs to be played immediately after playing the joker": once the joker's
    # player lays a card elsewhere, the joker's token is everybody's again.
    rnd = domino(WIDE, "YR GB", "GR YY", hold=5.0)
    assert rnd.apply(PlayJoker(1, 0, (0, 1), ts=1_000_000_000)) is None
    assert rnd.apply(PlaceDomino(1, K("GR"), 3, (3, 4), (3, 3), ts=1_500_000_000)) is None
    assert rnd.tokens[0].reserved_by is None
    assert rnd.apply(PlaceDomino(0, K("YR"), 0, (1, 1), (1, 0), ts=2_000_000_000)) is None


def test_a_card_that_fits_must_be_put_down_not_discarded() -> None:
    # Only a card that does not match goes face up on the discard pile.
    rnd = domino(WIDE, "YG RR", "PP BB")
    refusal = rnd.apply(DiscardDomino(0))
    assert refusal.reason is Reason.FITS
    assert str(refusal) == "it fits: put it down (token 1)"
    assert rnd.top_card(0) == K("YG") and rnd.seats[0].discard == []
    assert DiscardDomino(0) not in list(rnd.legal_actions(0))


def test_a_card_that_fits_only_at_a_reserved_token_may_be_discarded() -> None:
    rnd = domino(WIDE, "RB PP", "BG YY", hold=5.0)  # RB fits only next to the joker
    assert rnd.apply(PlayJoker(1, 0, (0, 1), ts=1_000_000_000)) is None
    assert rnd.apply(DiscardDomino(0, ts=2_000_000_000)) is None


def test_the_player_who_blocked_a_token_must_move_it_with_their_next_card() -> None:
    # "that player puts their next card on any free space ... and immediately puts the
    # blocked Ligretto token on one of the two new spaces": not optional.
    rnd = domino(NARROW, "YR GB RR", "BG PP")
    assert rnd.apply(PlaceDomino(0, K("YR"), 0, (0, 1), (1, 1))) is None
    assert rnd.tokens[2].blocked_for == 0
    # GB would fit next to token 1 now at (1, 1), but the blocked token 3 comes first.
    refusal = rnd.apply(PlaceDomino(0, K("GB"), 0, (1, 2), (1, 3)))
    assert refusal.reason is Reason.BLOCKED and str(refusal) == "token blocked (move token 3 first)"
    assert all(p.token == 2 for p in rnd.placements(0, K("GB")))
    assert rnd.apply(PlayJoker(0, 1, (0, 3))).reason is Reason.BLOCKED
    assert rnd.apply(PlaceDomino(0, K("GB"), 2, (0, 2), (0, 3))) is None
    assert rnd.tokens[2].square == (0, 3) and rnd.tokens[2].blocked_for is None
