"""The match layer: totals, each game's end, ties, the journal and replay."""

from __future__ import annotations

import gc
import random

import pytest

from firmware_host.engine.game import sight_of
from firmware_host.engine.match import Match
from firmware_host.engine.options import parse_assignments, parse_options
from firmware_host.engine.round import RulesError, winners
from firmware_host.games.classic.rules import DECK, MoveToRow, PlayCard, TurnHand, VoteStuck
from firmware_host.games.domino.rules import SET, DiscardDomino, PlaceDomino
from firmware_host.play.simulate import make_bots, play_round, simulate
from firmware_host.table.matches import new_match, resources_for


def play_out(match: Match, level: str = "instant") -> None:
    bots = make_bots(match.players, level, match.seed)
    order = random.Random(0)
    while True:
        play_round(match, bots, order)
        if match.is_over:
            return
        match.next_round()


def test_totals_add_up_over_the_agreed_number_of_rounds() -> None:
    match = new_match("classic", 3, 1, {"rounds": 4})
    play_out(match)
    assert match.rounds_played == 4 and match.is_over
    assert match.totals == tuple(sum(r.scores[s] for r in match.results) for s in range(3))
    with pytest.raises(RulesError, match="match is over"):
        match.next_round()


class _Unread(list):  # type: ignore[type-arg]
    """Past results that must not be read again to answer `totals`."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        raise AssertionError("totals re-read every past round")


def test_totals_are_kept_as_rounds_end_not_summed_again_on_every_call() -> None:
    match = new_match("classic", 3, 1, {"rounds": 4})
    play_out(match)
    expected = tuple(sum(r.scores[s] for r in match.results) for s in range(3))
    match.results = _Unread(match.results)
    assert match.totals == expected and match.is_over and match.winners == winners(expected)


def test_equal_totals_share_the_win() -> None:
    assert winners((5, 9, 9, 2)) == (1, 2)
    assert winners((0, 0)) == (0, 1)


def test_dice_lasts_3_rounds_per_player() -> None:
    assert parse_options("dice", 4)["rounds"] == 12
    match = new_match("dice", 2, 5)
    play_out(match)
    assert match.rounds_played == 6


def test_crazy_ends_after_the_round_in_which_a_total_reaches_100() -> None:
    match = new_match("crazy", 3, 2, {"rounds": 1000})
    play_out(match)
    totals = [0, 0, 0]
    for i, r in enumerate(match.results):
        totals = [t + s for t, s in zip(totals, r.scores, strict=True)]
        assert (max(totals) >= 100) == (i == len(match.results) - 1)


def test_crazy_target_is_an_option() -> None:
    match = new_match("crazy", 2, 3, {"target": 10})
    play_out(match)
    assert max(match.totals) >= 10


def test_domino_player_boards_shrink_the_next_hands() -> None:
    match = new_match("domino", 4, 6, {"rounds": 3})
    bots = make_bots(4, "instant", 6)
    for _ in range(2):
        play_round(match, bots, random.Random(0))
        boards = [list(b) for b in match.boards]
        assert any(boards) or all(not a for a in match.results[-1].detail["put_aside"])
        rnd = match.next_round()
        for seat, st in enumerate(rnd.seats):
            assert len(st.hand) == 15 - len(boards[seat])
            assert not set(st.hand) & set(boards[seat])


def test_next_round_refuses_while_a_round_is_running() -> None:
    match = new_match("classic", 2, 1)
    with pytest.raises(RulesError, match="has not ended"):
        match.next_round()


@pytest.mark.parametrize(("game", "players", "options"), [
    ("classic", 4, {}), ("classic", 3, {"pro_row": "yes", "recycle": "turn_over"}),
    ("dice", 3, {}), ("domino", 4, {}), ("domino", 2, {"tokens": "random"}), ("crazy", 4, {}),
])
def test_replaying_the_journal_rebuilds_every_state_exactly(game: str, players: int,
                                                            options: dict) -> None:
    match = new_match(game, players, "replay", {**options, "rounds": 2} if game != "crazy" else options)
    bots = make_bots(players, "hard", "r")
    play_round(match, bots, random.Random(1))
    match.next_round()
    # Stop the second round halfway, as a power cut would.
    rnd = match.round
    for _ in range(30):
        for seat in range(players):
            action = bots[seat].choose(sight_of(rnd, seat))
            if action is not None:
                match.apply(action)
    parsed = parse_options(game, players, {**options, "rounds": 2} if game != "crazy" else options)
    again = Match.replay(game, players, "replay", parsed, match.journal,
                         resources_for(game, players, parsed))
    assert again.round_no == match.round_no
    assert again.round.snapshot() == match.round.snapshot()
    assert again.results == match.results
    assert again.journal == match.journal


@pytest.mark.parametrize(("game", "players", "options"), [
    ("classic", 4, {}), ("classic", 3, {"pro_row": "yes", "recycle": "turn_over"}),
    ("dice", 3, {}), ("domino", 4, {}), ("crazy", 4, {}),
])
def test_an_ended_rounds_journal_is_kept_packed_and_read_back_as_it_was(game: str, players: int,
                                                                       options: dict) -> None:
    match = new_match(game, players, "pack", {**options, "rounds": 2} if game != "crazy" else options)
    bots = make_bots(players, "hard", "p")
    play_round(match, bots, random.Random(2))
    ended = match.round
    played = list(ended.journal)
    assert played and len(match._ended) == 1
    assert ended._undo == []  # no race reaches back into an ended round: its undo entries went
    assert str(match.apply(played[-1]).reason) == "round is over"
    match.next_round()
    play_round(match, bots, random.Random(3))
    read = match.journal
    assert [e.round for e in read[:len(played)]] == [0] * len(played)
    assert [e.round for e in read[len(played):]] == [1] * len(match.round.journal)
    for entry, action in zip(read, played + match.round.journal, strict=True):
        assert type(entry.action) is type(action) and entry.action == action
        assert [type(f) for f in entry.action] == [type(f) for f in action]
    if game == "classic":  # every action, cards included, packed as plain numbers: none walked
        gc.collect()
        assert not gc.is_tracked(match._ended[0]) and not gc.is_tracked(match._ended[1])
        assert all(a.card is DECK[DECK.index(a.card)] for a in (e.action for e in read) if
                   isinstance(a, PlayCard | MoveToRow))
        if options:
            assert {type(e.action) for e in read} == {PlayCard, TurnHand, MoveToRow, VoteStuck}
    if game == "domino":  # cards as their place in the set, squares as their row and column
        gc.collect()
        assert not gc.is_tracked(match._ended[0]) and not gc.is_tracked(match._ended[1])
        assert all(a.card is SET[SET.index(a.card)] for a in (e.action for e in read)
                   if isinstance(a, PlaceDomino))
        assert {PlaceDomino, DiscardDomino} <= {type(e.action) for e in read}


def test_a_journal_that_does_not_replay_is_reported() -> None:
    with pytest.raises(RulesError, match="does not replay"):
        Match.replay("classic", 2, 1, None, [(0, TurnHand(5))])


def test_simulation_is_deterministic_given_the_seed() -> None:
    a = simulate("classic", 4, 3, 42, {})
    b = simulate("classic", 4, 3, 42, {})
    assert a["rounds"] == b["rounds"] and a["totals"] == b["totals"]
    c = simulate("classic", 4, 3, 43, {})
    assert c["rounds"] != a["rounds"]


def test_unknown_options_and_bad_values_name_the_problem() -> None:
    with pytest.raises(RulesError, match="unknown option 'pro_rows' for classic"):
        parse_options("classic", 4, {"pro_rows": "yes"})
    with pytest.raises(RulesError, match="option recycle='sometimes': choose one of"):
        parse_options("classic", 4, {"recycle": "sometimes"})
    with pytest.raises(RulesError, match="expected yes or no"):
        parse_options("classic", 4, {"pro_row": "maybe"})
    with pytest.raises(RulesError, match="unknown game 'poker'"):
        parse_options("poker", 4)
    with pytest.raises(RulesError, match="dice takes 2 to 4 players, not 5"):
        parse_options("dice", 5)
    with pytest.raises(RulesError, match="not key=value"):
        parse_assignments(["pro_row"])
    assert parse_options("dice", 4, {"handicap": "7,7,5,5"})["handicap"] == (7, 7, 5, 5)


def test_a_crazy_match_still_running_says_so_with_a_bool() -> None:
    match = new_match("crazy", 2, 3, {"target": 10_000})
    play_round(match, make_bots(2, "instant", 3), random.Random(0))
    assert match.summary()["over"] is False
    assert match.is_over is False


def test_keep_boards_hands_the_player_boards_to_the_next_match() -> None:
    match = new_match("domino", 2, 6, {"rounds": 1, "keep_boards": "yes"})
    play_out(match)
    assert any(match.boards)
    assert match.boards_for_next_match() == match.boards
    plain = new_match("domino", 2, 6, {"rounds": 1})
    play_out(plain)
    assert plain.boards_for_next_match() is None
