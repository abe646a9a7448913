"""What a newcomer meets at the laptop table: refusals that say why, and results that stay up."""

from __future__ import annotations

import pytest
from plumbing import table_box

from firmware_host.games.dice.rules import PlaceDie, Reroll
from firmware_host.table.machine import Phase, Table, Timing

S = 1_000_000_000
MS = 1_000_000


@pytest.fixture
def box():
    return table_box(Timing(countdown_ns=3 * S, round_result_ns=10 * S, match_result_ns=30 * S,
                            idle_ns=300 * S, result_hold_ns=3 * S))


def _dice_round_with_a_refusal(table: Table, tap) -> str:
    """Two seats play dice; seat 1 slaps a die that does not fit, through its pins."""
    table.new("dice", {"rounds": 2})
    tap(0, "slap", 1 * S)
    tap(1, "slap", 2 * S)
    tap(0, "alt", 3 * S)
    table.tick(6 * S)
    assert table.phase is Phase.PLAYING
    rnd = table.match.round
    wrong = next(i for i, d in enumerate(rnd.dice[0]) if d.face != rnd.board[d.colour] + 1)
    at = 7 * S
    for _ in range(wrong):
        tap(0, "right", at)
        at += 100 * MS
    tap(0, "slap", at)
    table.tick(at + 10 * MS)
    assert table.referee.seats[0].message.startswith("doesn't fit")
    die = rnd.dice[0][wrong]
    return f"doesn't fit: {die.colour.letter}{rnd.board[die.colour] + 1} goes next"


def _finish_round(table: Table) -> None:
    match = table.match
    while match.round.result is None:
        for seat in range(2):
            fit = next((d for d in match.round.dice[seat] if match.round.fits(d)), None)
            match.apply(PlaceDie(seat, fit.colour, fit.face) if fit else Reroll(seat))
            if match.round.result is not None:
                break


def test_a_refusal_says_what_would_fit(box) -> None:
    table, tap = box
    assert table.referee is None
    said = _dice_round_with_a_refusal(table, tap)
    assert table.referee.seats[0].message == said


def test_a_refusal_is_gone_when_the_next_round_starts(box) -> None:
    """It was: "DOESN'T FIT" on seat 1's screen all through the next round."""
    table, tap = box
    _dice_round_with_a_refusal(table, tap)
    _finish_round(table)
    table.tick(8 * S)
    assert table.phase is Phase.ROUND_RESULT
    table.tick(18 * S)
    assert table.phase is Phase.COUNTDOWN and table.match.round_no == 1
    assert [c.message for c in table.referee.seats] == ["", ""]
    assert [c.cursor for c in table.referee.seats] == [0, 0]


def test_a_round_result_stays_up_while_seats_keep_slapping(box) -> None:
    """It was: the slap meant for the round's last die skipped the result at once."""
    table, tap = box
    _dice_round_with_a_refusal(table, tap)
    _finish_round(table)
    table.tick(8 * S)
    assert table.phase is Phase.ROUND_RESULT and table.phase_since == 8 * S
    for k in range(6):  # slapping away for 2.9 s: the result stays
        tap(k % 2, "slap", 8 * S + 10 * MS + k * 500 * MS)
    assert table.phase is Phase.ROUND_RESULT
    tap(0, "slap", 11 * S)  # after the hold a slap skips the rest, as before
    assert table.phase is Phase.COUNTDOWN


def test_a_match_result_stays_up_while_seats_keep_slapping(box) -> None:
    table, tap = box
    _dice_round_with_a_refusal(table, tap)
    _finish_round(table)
    table.tick(8 * S)
    table.next(9 * S)
    table.tick(12 * S)
    _finish_round(table)
    table.tick(13 * S)
    assert table.phase is Phase.MATCH_RESULT
    tap(0, "slap", 13 * S + 200 * MS)
    tap(1, "slap", 16 * S)  # a round's result would have moved on after 3 s: the podium stays 10 s
    assert table.phase is Phase.MATCH_RESULT
    tap(1, "slap", 22 * S)
    assert table.phase is Phase.MATCH_RESULT
    tap(1, "slap", 24 * S)
    assert table.phase is Phase.LOBBY and table.joined == [0, 1]  # another match, the same seats


def test_a_seat_that_joins_after_the_bots_is_a_person_not_a_bot(box) -> None:
    """It was: bots added before seat 1 joined kept player 1, so the lobby called seat 1 a bot."""
    table, tap = box
    table.set_bots(3)  # in attract: bots for seats 1 to 3
    tap(0, "slap", 1 * S)  # seat 1 wakes the table and joins
    assert table.joined == [0] and sorted(table.bots) == [1, 2, 3]
    assert table.seat_of_player == [0, 1, 2, 3]
    table.set_bots(3)
    tap(3, "slap", 2 * S)  # a person takes a bot's place at a full table
    assert table.joined == [0, 3] and sorted(table.bots) == [2, 3] and table.seat_of_player == [0, 3, 1, 2]
