"""Bots worth playing against: they beat a player who only mashes one button (a small sample of
`table-host bench bots`), and Crazy bots play to win piles."""

from __future__ import annotations

import random
from typing import Any

import pytest

from firmware_host.bench.bots import Greedy, Masher, bench_bots, play_match, standing
from firmware_host.engine.game import sight_of
from firmware_host.games.crazy.rules import TOP, DiscardCrazy, PlayCrazy
from firmware_host.play.simulate import make_bots, play_round
from firmware_host.table.bot_players import Bot, Level
from firmware_host.table.controls import SeatController
from firmware_host.table.matches import new_match


@pytest.mark.parametrize("game", ["classic", "dice", "domino", "crazy"])  # each its own test: in parallel
def test_the_hard_bot_beats_every_masher_in_most_matches(game: str) -> None:
    figures = bench_bots(5, games=(game,), levels=(Level.HARD,))
    opponents = {(game, m) for m in ("slap", "alt", "greedy")}
    assert {(row["game"], row["mash"]) for row in figures["rows"]} == opponents
    for row in figures["rows"]:
        assert row["hard"]["won"] >= 3, row


def test_a_masher_presses_through_the_seat_controls_on_its_beat() -> None:
    match = new_match("crazy", 2, 3)
    masher = Masher("alt", SeatController(1, match), random.Random(1))
    first = match.round.seats[1].hand[0]
    masher.press(match, 10**6)
    assert match.round.seats[1].discard == [first]  # alt discards the card under the cursor
    gaps = [masher.interval_ns() for _ in range(200)]
    assert 120e6 < sum(gaps) / len(gaps) < 165e6  # about 7 presses a second


def lay(rnd: Any, piles: dict[int, Any]) -> None:
    """These piles on the table in place of the round's, as a test sets them up (no play would):
    the piles, and what the players see of them (`CrazyRound.board`, which the round keeps)."""
    rnd.piles.clear()
    rnd.piles.update(piles)
    rnd.board = {pid: (pile.top, len(pile.cards)) for pid, pile in piles.items()}


def test_the_greedy_player_plays_the_first_card_that_fits_and_else_discards() -> None:
    from firmware_host.games.crazy.rules import Pile

    match = new_match("crazy", 2, 3)
    rnd = match.round
    greedy = Greedy(1, match, random.Random(1))
    hand = rnd.seats[1].hand
    lay(rnd, {0: Pile(0, [(0, rnd.seats[0].hand[0], hand[1].value - 1 if hand[1].value > 1 else 2)])})
    fits = [a for a in rnd.legal_actions(1) if isinstance(a, PlayCrazy)]
    gap = greedy.interval_ns()
    assert greedy.pending == fits[0] and gap >= 120e6
    greedy.press(match, gap)
    assert fits[0].card not in rnd.seats[1].hand and rnd.piles[0].cards[-1][1] == fits[0].card
    lay(rnd, {p: Pile(p, [(0, rnd.seats[0].hand[0], 3)]) for p in (0, 1)})
    rnd.seats[1].hand[:] = [c for c in rnd.seats[1].draw if c.value == TOP][:3]
    greedy.interval_ns()
    assert greedy.pending == DiscardCrazy(1, rnd.seats[1].hand[0])  # nothing fits: the first card goes


def test_hard_beats_the_greedy_player_at_crazy() -> None:
    """Medium does not yet (docs/rules-engine.md, "Against a greedy player")."""
    figures = bench_bots(6, games=("crazy",), mashes=("greedy",), levels=(Level.HARD,))
    (row,) = figures["rows"]
    assert row["hard"]["won"] == 6, row
    lo, hi = row["hard"]["interval_95"]
    assert round(lo, 3) == 0.61 and hi == 1.0  # Wilson's interval of 6 of 6


def test_a_round_called_is_scored_as_it_stands() -> None:
    match = new_match("classic", 2, 1)
    assert standing(match.round) == match.round.scores()
    out = play_match("classic", Level.HARD, "alt", "called", 1)
    assert out.bot > out.masher


def test_crazy_bots_win_piles_and_take_a_four_with_a_five() -> None:
    match = new_match("crazy", 2, 5)
    bots = make_bots(2, "hard", 5)
    won = 0
    for _ in range(3):
        play_round(match, bots, random.Random(5))
        won += sum(len(st.score) for st in match.round.seats)
        match.next_round()
    assert won > 10
    rnd = match.round
    bot = Bot(Level.HARD, random.Random(1))
    seat = rnd.seats[0]
    five = next(c for c in seat.draw + seat.hand if c.value == TOP)
    four = next(c for c in seat.draw + seat.hand if c.value == TOP - 1 and c != five)
    from firmware_host.games.crazy.rules import Pile

    lay(rnd, {7: Pile(7, [(1, four, TOP - 1)])})
    seat.hand = [five, *[c for c in seat.hand if c not in (five, four)]][:3]
    action = bot.choose(sight_of(rnd, 0), 0)
    assert isinstance(action, PlayCrazy) and action.card == five and action.pile == 7
    assert not isinstance(action, DiscardCrazy)


def test_crazy_bot_makes_a_four_when_a_crazy_card_is_its_five() -> None:
    """The 4 then the Crazy card as a 5 wins the pile: the bot lays the 4 rather than wait."""
    from firmware_host.games.crazy.rules import Pile

    rnd = new_match("crazy", 2, 5).round
    seat = rnd.seats[0]
    cards = seat.draw + seat.hand
    four = next(c for c in cards if c.value == TOP - 1)
    crazy = next(c for c in cards if c.crazy)
    one = next(c for c in cards if c.value == 1)
    three = next(c for c in rnd.seats[1].draw + rnd.seats[1].hand if c.value == 3)
    low = next(c for c in rnd.seats[1].draw + rnd.seats[1].hand if c.value == 1)
    lay(rnd, {7: Pile(7, [(1, three, 3)]), 8: Pile(8, [(1, low, 1)])})
    seat.hand = [four, crazy, one]
    for level in (Level.INSTANT, Level.HARD):
        action = Bot(level, random.Random(3)).choose(sight_of(rnd, 0), 0)
        assert action == PlayCrazy(0, four, 7, None, 0), level
    assert rnd.apply(PlayCrazy(0, four, 7, None, 1)) is None
    again = Bot(Level.INSTANT, random.Random(3)).choose(sight_of(rnd, 0), 2)
    assert isinstance(again, PlayCrazy) and again.card == crazy and again.pile == 7 and again.value == TOP
