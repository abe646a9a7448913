"""Ligretto Crazy: docs/rules.md, "Ligretto Crazy"."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from firmware_host.engine.round import Ending, Reason, RulesError
from firmware_host.games.crazy.deck import crazy_deck
from firmware_host.games.crazy.rules import (
    CrazyCard,
    CrazyColour,
    CrazyOptions,
    CrazyRound,
    CrazySetup,
    DiscardCrazy,
    PlayCrazy,
)

SPEC = crazy_deck()


def take(pool: list[CrazyCard], text: str) -> CrazyCard:
    value = 0 if text == "*" else int(text)
    card = next(c for c in pool if c.value == value)
    pool.remove(card)
    return card


def crazy(*seats: tuple[str, str], players: int | None = None) -> tuple[CrazyRound, list]:
    """Each seat as (hand, draw top first); values only, the seat's own colour."""
    setups, hands = [], []
    for seat, (hand, draw) in enumerate(seats):
        pool = SPEC.cards(CrazyColour(seat))
        h = [take(pool, t) for t in hand.split()]
        d = [take(pool, t) for t in draw.split()][::-1]
        setups.append(CrazySetup(draw=d, hand=h, discard=[]))
        hands.append(h)
    rnd = CrazyRound(len(seats), CrazyOptions(), random.Random(1), SPEC, setups)
    return rnd, hands


def test_each_colour_has_36_cards_6_ones_7_each_of_2_to_5_and_2_crazy() -> None:
    cards = SPEC.cards(CrazyColour.RED)
    assert len(cards) == 36 == SPEC.size()
    assert Counter(c.value for c in cards) == {1: 6, 2: 7, 3: 7, 4: 7, 5: 7, 0: 2}
    for value in range(1, 6):
        styles = Counter(c.style for c in cards if c.value == value)
        assert set(styles) == {"pips", "tally", "digit", "word", "fingers"}
        assert max(styles.values()) - min(styles.values()) <= 1  # spread evenly


def test_set_up_deals_one_colour_each_and_3_cards_into_the_hand() -> None:
    rnd = CrazyRound(4, CrazyOptions(), random.Random(2), SPEC)
    for seat, st in enumerate(rnd.seats):
        assert len(st.hand) == 3 and len(st.draw) == 33
        assert {c.colour for c in st.hand + st.draw} == {CrazyColour(seat)}
    with pytest.raises(RulesError, match="2 to 5 players"):
        CrazyRound(6, CrazyOptions(), random.Random(2), SPEC)


def test_a_1_or_a_crazy_card_starts_a_pile_but_no_more_piles_than_players() -> None:
    rnd, (a, b) = crazy(("1 * 3", "2 2 2"), ("1 1 4", "2 2 2"))
    assert rnd.apply(PlayCrazy(0, a[2], None)).reason is Reason.NO_FIT  # a 3 cannot start
    assert rnd.apply(PlayCrazy(0, a[0], None)) is None
    assert rnd.apply(PlayCrazy(0, a[1], None)) is None  # Crazy starts a pile as a 1
    assert [p.top for p in rnd.piles.values()] == [1, 1]
    # Two seconds on, past the race horizon: no race, the limit itself refuses.
    assert rnd.apply(PlayCrazy(1, b[0], None, ts=2_000_000_000)).reason is Reason.PILE_LIMIT


def test_the_last_free_pile_place_taken_0_3_ms_earlier_is_a_lost_race() -> None:
    rnd, (a, b) = crazy(("1 1 3", "2 2 2"), ("1 4 4", "2 2 2"))
    assert rnd.apply(PlayCrazy(0, a[0], None, ts=1_000_000_000)) is None
    assert rnd.apply(PlayCrazy(1, b[0], None, ts=2_000_000_000)) is None  # the last place of two
    refusal = rnd.apply(PlayCrazy(0, a[1], None, ts=2_000_300_000))
    assert (refusal.reason, refusal.by_seat, refusal.delta_ns) == (Reason.TOO_LATE, 1, 300_000)
    assert str(refusal) == "too late (seat 2 was 0.3 ms earlier)"


def test_a_pile_you_saw_started_before_your_own_last_play_is_no_race() -> None:
    # Seat 2's pile came before seat 1's own pile: seat 1 played on from the table as it was.
    rnd, (a, b) = crazy(("1 1 3", "2 2 2"), ("1 4 4", "2 2 2"))
    assert rnd.apply(PlayCrazy(1, b[0], None, ts=1_000_000_000)) is None
    assert rnd.apply(PlayCrazy(0, a[0], None, ts=1_000_100_000)) is None
    assert rnd.apply(PlayCrazy(0, a[1], None, ts=1_000_300_000)).reason is Reason.PILE_LIMIT


def test_any_colour_goes_on_a_pile_one_higher_or_one_lower() -> None:
    rnd, (a, b) = crazy(("1 3 4", "2 2 2"), ("2 3 4", "5 5 5"))
    rnd.apply(PlayCrazy(0, a[0], None))
    assert rnd.apply(PlayCrazy(1, b[1], 0)).reason is Reason.NO_FIT  # a 3 on a 1
    assert rnd.apply(PlayCrazy(1, b[0], 0)) is None  # yellow 2 on red 1
    assert rnd.apply(PlayCrazy(0, a[1], 0)) is None  # red 3 on yellow 2
    assert rnd.apply(PlayCrazy(1, b[2], 0)) is None  # yellow 4: one higher
    assert rnd.apply(PlayCrazy(1, b[1], 0)) is None  # yellow 3: one lower
    assert [v for _, _, v in rnd.piles[0].cards] == [1, 2, 3, 4, 3]


def test_a_crazy_card_takes_the_value_the_player_picks_top_plus_or_minus_1() -> None:
    rnd, (a, _) = crazy(("1 * 2", "3 3 3"), ("2 2 2", "2 2 2"))
    rnd.apply(PlayCrazy(0, a[0], None))
    assert rnd.apply(PlayCrazy(0, a[1], 0, value=3)).reason is Reason.BAD_VALUE
    assert rnd.apply(PlayCrazy(0, a[1], 0)).reason is Reason.BAD_VALUE  # a value is needed
    assert rnd.apply(PlayCrazy(0, a[1], 0, value=2)) is None
    assert rnd.piles[0].top == 2


def test_a_5_on_a_4_finishes_the_pile_into_the_players_score_pile() -> None:
    rnd, _ = crazy(("1 2 3", "4 5 5"), ("2 2 2", "2 2 2"))
    for value in range(1, 4):
        card = next(c for c in rnd.seats[0].hand if c.value == value)
        assert rnd.apply(PlayCrazy(0, card, None if value == 1 else 0)) is None
    four = next(c for c in rnd.seats[0].hand if c.value == 4)
    assert rnd.apply(PlayCrazy(0, four, 0)) is None
    five = next(c for c in rnd.seats[0].hand if c.value == 5)
    assert rnd.apply(PlayCrazy(0, five, 0, ts=9)) is None
    assert rnd.piles == {} and len(rnd.seats[0].score) == 5
    other = next(c for c in rnd.seats[1].hand)
    # Past the race horizon the pile is simply gone. (Within it, this 2 would have fitted the
    # pile's 3, 10 ns before: a lost race.)
    refusal = rnd.apply(PlayCrazy(1, other, 0, ts=2_000_000_000))
    assert refusal.reason is Reason.NO_PILE


def test_after_every_play_the_player_draws_back_up_to_3() -> None:
    rnd, (a, _) = crazy(("1 4 4", "2 3"), ("2 2 2", "2 2 2"))
    rnd.apply(PlayCrazy(0, a[0], None))
    assert len(rnd.seats[0].hand) == 3 and len(rnd.seats[0].draw) == 1


def test_a_hand_card_may_go_face_down_on_the_discard_pile_at_any_time() -> None:
    rnd, (a, _) = crazy(("4 4 4", "2"), ("2 2 2", "2 2 2"))
    assert rnd.apply(DiscardCrazy(0, a[0])) is None
    assert rnd.seats[0].discard == [a[0]] and len(rnd.seats[0].hand) == 3
    assert rnd.apply(DiscardCrazy(0, a[0])).reason is Reason.NOT_HELD


def test_round_ends_when_hand_and_draw_pile_are_empty_and_scores_count_cards() -> None:
    rnd, (a, _) = crazy(("1 2", ""), ("3 3 3", "3 3"))
    rnd.apply(PlayCrazy(0, a[0], None))
    assert rnd.result is None
    rnd.apply(PlayCrazy(0, a[1], 0))
    assert rnd.result.ending is Ending.LIGRETTO_STOP and rnd.result.finishers == (0,)
    # Red: nothing in the score pile, nothing left: 0. Yellow: 5 cards left: -5.
    assert rnd.result.scores == (0, -5)


def test_discards_are_never_recycled() -> None:
    rnd, (a, _) = crazy(("4 4", ""), ("3 3 3", "3 3"))
    rnd.apply(DiscardCrazy(0, a[0]))
    rnd.apply(DiscardCrazy(0, a[1]))
    assert rnd.result.finishers == (0,) and rnd.result.scores == (-2, -5)
