"""Seat controls: cursors per game, slap → action with the slap's time, refusals kept."""

from __future__ import annotations

import random

import pytest
from helpers import deal

from firmware_host.config import emulated_config
from firmware_host.devices.emulated.pins import EmulatedButtons, emulated_factory
from firmware_host.devices.inputs.pins import TableInputs
from firmware_host.engine.game import sight_of
from firmware_host.engine.match import Match
from firmware_host.games.classic.rules import Card, MoveToRow, PlayCard, TurnHand
from firmware_host.games.crazy.rules import PlayCrazy
from firmware_host.games.dice.rules import PlaceDie, Reroll
from firmware_host.games.domino.rules import PlaceDomino, PlayJoker
from firmware_host.table.arbiter import Arbiter
from firmware_host.table.bot_players import Bot
from firmware_host.table.controls import SeatController
from firmware_host.table.matches import new_match
from firmware_host.table.referee import Referee

MS = 1_000_000
C = Card.parse


def classic_match(**options) -> Match:
    deals = [deal("R1 G6 B2", stack="Y9 R5 G5 B5 Y5 R6 G7 B7 Y7 R8", hand="Y1 R2 B1"),
             deal("B1 Y4 Y8", hand="G1"), deal("R3 R4 R5", hand="Y2")]
    return new_match("classic", 3, 1, options, setup={"deals": deals})


def test_ligretto_cursor_runs_over_row_stack_and_discard_and_slap_plays_it() -> None:
    match = classic_match()
    seat = SeatController(0, match)
    assert seat.choices() == [C("R1"), C("G6"), C("B2"), C("Y9"), None]
    seat.nav("left")
    assert seat.cursor == 4 and seat.action("slap", 7) is None and seat.message == "nothing there"
    seat.nav("right")
    assert seat.action("slap", 9 * MS) == PlayCard(0, C("R1"), 9 * MS)  # the slap's own time
    assert seat.action("alt", 10 * MS) == TurnHand(0, 10 * MS)
    assert seat.action("select3", 11 * MS) == PlayCard(0, C("B2"), 11 * MS)


def test_a_refusal_is_shown_and_the_selection_stays() -> None:
    match = classic_match()
    seat = SeatController(0, match)
    seat.nav("right")  # G6: no green pile
    action = seat.action("slap", 5)
    seat.result(action, match.apply(action))
    assert seat.message == "doesn't fit: needs G5 out" and seat.selected() == C("G6")


def test_pro_row_up_marks_the_destination_of_the_next_slap() -> None:
    match = classic_match(pro_row="yes")
    seat = SeatController(0, match)
    seat.nav("right")  # onto row place 2, G6
    seat.nav("up")  # it becomes the destination
    assert seat.destination == 1 and seat.message == "to row place 2"
    seat.nav("right")
    seat.nav("right")  # onto the stack top, Y9
    assert seat.action("slap", 1) == MoveToRow(0, C("Y9"), 1, 1)  # the engine will judge it
    seat.nav("down")  # changed my mind
    assert seat.destination is None
    assert seat.action("slap", 2) == PlayCard(0, C("Y9"), 2)


def test_dice_cursor_runs_over_the_dice_slap_places_alt_rerolls() -> None:
    match = new_match("dice", 2, 3)
    seat = SeatController(1, match)
    dice = match.round.dice[1]
    seat.nav("right")
    assert seat.action("slap", 4) == PlaceDie(1, dice[1].colour, dice[1].face, 4)
    assert seat.action("alt", 5) == Reroll(1, 5)


def test_domino_cursor_cycles_legal_placements_and_up_switches_to_jokers() -> None:
    match = new_match("domino", 2, 5)
    seat = SeatController(0, match)
    placements = seat.choices()
    assert placements and all(isinstance(p, PlaceDomino) for p in placements)
    assert seat.action("slap", 77) == placements[0]._replace(ts=77)
    seat.nav("up")
    assert seat.joker_mode and isinstance(seat.action("slap", 78), PlayJoker)
    seat.nav("down")
    assert not seat.joker_mode


def test_crazy_left_right_pick_a_card_and_up_down_its_target() -> None:
    match = new_match("crazy", 2, 8)
    seat = SeatController(0, match)
    hand = match.round.seats[0].hand
    for i in range(len(hand)):
        seat.cursor = i
        if seat.targets():
            break
    else:
        pytest.skip("no opening play in this deal")  # pragma: no cover
    action = seat.action("slap", 3)
    assert isinstance(action, PlayCrazy) and action.card == hand[seat.cursor]


PRO = {"pro_row": True, "stack_face_down": True}


@pytest.mark.parametrize(("game", "players", "options"), [
    ("classic", 4, {}), ("classic", 12, {}), ("classic", 3, PRO), ("dice", 3, {}), ("domino", 4, {}),
    ("crazy", 2, {})])
def test_bots_play_whole_rounds_by_pressing_pins(game: str, players: int, options: dict) -> None:
    """Nothing skips the path: bot → buttons → mock pins → filters → arbiter → seat → engine.
    With pro_row the stuck vote is a button too (down, nothing marked), or the round never ends."""
    match = new_match(game, players, 11, {"rounds": 1, **options})
    cfg = emulated_config(players)
    factory = emulated_factory()
    buttons = EmulatedButtons(cfg.inputs, factory)
    referee = Referee(match, Arbiter(seed=3))
    inputs = TableInputs(cfg.inputs, factory, buttons.buses, referee.on_input)
    inputs.gate.go(0)
    bots = [Bot("instant", random.Random(s)) for s in range(players)]
    rng = random.Random(2)
    now = 0
    outcomes = []
    while match.round.result is None and now < 40_000_000 * MS:
        seat = rng.randrange(players)
        controller = referee.seats[seat]
        action = bots[seat].choose(sight_of(match.round, seat), now)
        presses = controller.presses_for(action) if action is not None else None
        assert action is None or presses is not None, action
        for control in presses or []:  # a brisk player: a press every 80 ms, held 35 ms
            now += 80 * MS
            buttons.tap(seat, control, now, hold_ns=35 * MS)
        now += 80 * MS
        outcomes += referee.decide(now)
    assert match.round.result is not None
    # Bots act one after another here, so every press they make is taken.
    assert all(o.action is not None and o.refusal is None for o in outcomes)
    taken = [o.action for o in outcomes if o.action is not None and o.refusal is None]
    assert taken == match.round.journal  # every accepted press, in arbiter order
    again = Match.replay(game, players, 11, match.options, match.journal, match.resources)
    assert again.results == match.results
    if options:
        assert match.round.result.ending == "stuck_vote"
