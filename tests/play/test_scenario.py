"""Scenario files: bad input gets one line naming the problem and its place, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware_host.engine.round import Reason
from firmware_host.play.scenario import ScenarioError, run_file

CLASSIC = "game = 'classic'\nplayers = 2\n"
DICE = "game = 'dice'\nplayers = 2\n"
DOMINO = "game = 'domino'\nplayers = 2\n"
CRAZY = "game = 'crazy'\nplayers = 2\n"


def refused(tmp_path: Path, text: str) -> str:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        run_file(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("bad.toml")
    return message


@pytest.mark.parametrize(("text", "words"), [
    (CLASSIC + "[[round]]\nactions = [{at_ms = inf, seat = 1, do = 'turn'}]\n",
     ["round[1].actions[1].at_ms", "inf"]),
    (CLASSIC + "[[round]]\nactions = [{at_ms = nan, seat = 1, do = 'turn'}]\n",
     ["round[1].actions[1].at_ms", "nan"]),
    (CLASSIC + "[[round]]\nactions = [{seat = 1, do = 'play', card = 'R²'}]\n",
     ["round[1].actions[1]", "not a Ligretto card: 'R²'"]),
    (CLASSIC + "[[round]]\npile = ['²:R1']\n", ["round[1].pile[1][1]", "write seat:card"]),
    (DICE + "[[round]]\nactions = [{seat = 1, do = 'place', die = 'Y³'}]\n",
     ["round[1].actions[1]", "not a die: 'Y³'"]),
    (CRAZY + "[[round]]\nactions = [{seat = 1, do = 'play', card = 'R²'}]\n",
     ["round[1].actions[1]", "not a Crazy card: 'R²'"]),
    (DICE + "[[round]]\nactions = [{seat = 1, do = 'reroll', faces = [true, true]}]\n",
     ["round[1].actions[1]", "'faces'"]),
    (CRAZY + "[[round]]\nactions = [{seat = 1, do = 'play', card = 'R1', value = true}]\n",
     ["round[1].actions[1]", "'value'"]),
    (DOMINO + "[[round]]\n[[round.seat]]\njokers = true\n[[round.seat]]\n",
     ["round[1].seat[1].jokers", "0 to 2 jokers"]),
    (DOMINO + "[[round]]\ntokens = [[true, 0], [0, 4], [3, 0], [3, 4]]\n",
     ["round[1].tokens[1]", "[row, column]"]),
    (DICE + "[[round]]\nboard = {yellow = true}\n", ["round[1].board.yellow", "0 to 6"]),
    (CLASSIC + "[options]\nrounds = 2.5\n[[round]]\n", ["options.rounds", "whole number"]),
    (DICE + "[options]\nhandicap = [true, true]\n[[round]]\n", ["options.handicap"]),
    (CLASSIC + "[options]\npro_row = 'maybe'\n[[round]]\n", ["bad.toml.options.pro_row", "(line 4)"]),
    ("game = 'classic'\n\nplayers = 100000000000000000\n[[round]]\n",
     ["bad.toml.players", "2 to 12 players", "(line 3)"]),
])
def test_bad_input_is_one_line_naming_the_problem_and_its_place(tmp_path: Path, text: str,
                                                                words: list[str]) -> None:
    message = refused(tmp_path, text)
    for word in words:
        assert word in message, message


def test_a_square_off_the_board_is_called_so_not_taken(tmp_path: Path) -> None:
    path = tmp_path / "off.toml"
    path.write_text(DOMINO + "[[round]]\ntokens = [[0, 0], [0, 11], [7, 0], [7, 11]]\n"
                    "actions = [{seat = 1, do = 'place', card = 'RR', token = 1, near = [0, 1], "
                    "far = [-1, 1]}, {seat = 1, do = 'joker', token = 1, square = [-1, 0]}]\n"
                    "[[round.seat]]\nhand = ['RR']\n[[round.seat]]\nhand = ['GG']\n")
    run = run_file(path)
    assert [a.refusal.reason for a in run.actions] == [Reason.OFF_BOARD, Reason.OFF_BOARD]


ROOT = Path(__file__).resolve().parents[2]


def test_piles_and_seats_are_numbered_from_1_in_json_as_in_the_file() -> None:
    run = run_file(ROOT / "scenarios" / "crazy-piles.toml")
    out = run.to_dict()
    played = [a["action"] for a in out["actions"] if a["action"].get("pile") is not None]
    assert played and all(a["pile"] == 1 for a in played[:2])  # the file says pile = 1
    assert all(a["seat"] in (1, 2) for a in out["actions"])


def test_a_dice_file_plays_3_rounds_per_player_unless_it_says_otherwise(tmp_path: Path) -> None:
    path = tmp_path / "dice.toml"
    path.write_text(DICE + "[[round]]\n")
    assert run_file(path).match.options["rounds"] == 6
    path.write_text(DICE + "options = { rounds = 1 }\n[[round]]\n")
    assert run_file(path).match.options["rounds"] == 1


@pytest.mark.parametrize(("text", "words"), [
    (CLASSIC + "[[round]]\nactions = [{seat = 1, do = 'turn', card = 'R1'}]\n",
     ["round[1].actions[1]", "unknown field 'card'"]),
    (DOMINO + "[[round]]\nactions = [{seat = 1, do = 'discard', token = 2}]\n",
     ["round[1].actions[1]", "unknown field 'token'"]),
    (CRAZY + "[[round]]\nactions = [{seat = 1, do = 'play', card = 'R1', colour = 'red'}]\n",
     ["round[1].actions[1]", "unknown field 'colour'"]),
    (CRAZY + "[[round]]\nactions = [{seat = 1, do = 'discard', card = 'R1', pile = 1}]\n",
     ["round[1].actions[1]", "unknown field 'pile'"]),
])
def test_unknown_fields_are_refused_in_every_game(tmp_path: Path, text: str, words: list[str]) -> None:
    message = refused(tmp_path, text)
    for word in words:
        assert word in message, message


def test_scenarios_can_run_presses_through_the_real_arbiter_its_draw_fixed_by_seed(tmp_path: Path) -> None:
    text = (ROOT / "scenarios" / "classic-tie.toml").read_text()
    run = run_file(ROOT / "scenarios" / "classic-tie.toml")
    assert run.failures == []
    assert [(a.seat, a.outcome) for a in run.actions] == [(2, "ok"), (1, "too_late"), (1, "ok")]
    assert run.decisions[0].startswith("tie within 0.100 ms broken by draw [1, 0]")
    assert run.decisions[1].startswith("late by 0.200 ms")
    assert run.to_dict()["arbiter"] == run.decisions
    again = run_file(ROOT / "scenarios" / "classic-tie.toml")
    assert [a.to_dict() for a in again.actions] == [a.to_dict() for a in run.actions]
    other = tmp_path / "other.toml"
    told = 'told = "too late (seat 2 won the tie, pressed 0.1 ms after you)"'
    assert told in text  # the file states what the loser of the draw is told
    swapped = (text.replace(told, "").replace("seed = 2\n", "seed = 1\n")
               .replace('expect = "too_late"', "WAS_LATE")
               .replace('card = "B2"\nexpect = "ok"', 'card = "B2"\nexpect = "too_late"')
               .replace("WAS_LATE", 'expect = "ok"'))
    other.write_text(swapped)  # seed 1 draws the tie for the earlier press
    assert run_file(other).failures == []
    assert run_file(other).actions[1].told == "too late (seat 1 won the tie, pressed 0.1 ms before you)"


def test_a_seat_that_lost_a_draw_is_told_a_tie_and_a_late_press_is_told_late() -> None:
    tie = run_file(ROOT / "scenarios" / "classic-tie.toml")
    assert tie.actions[1].told == "too late (seat 2 won the tie, pressed 0.1 ms after you)"
    assert tie.to_dict()["actions"][1]["told"] == tie.actions[1].told
    assert tie.to_dict()["actions"][1]["refusal"]["tie"] is True
    assert tie.to_dict()["actions"][1]["refusal"]["draw"] == 1
    late = run_file(ROOT / "scenarios" / "classic-late-press.toml")
    assert late.failures == []
    assert late.actions[1].told == ("too late (seat 2 pressed 1.0 ms after you, "
                                    "but yours reached the table late)")


@pytest.mark.parametrize("gap_ms, told", [
    (0.10, "too late (seat 2 pressed 0.1 ms after you, but yours reached the table late)"),
    (0.15, "too late (seat 2 pressed 0.1 ms after you, but yours reached the table late)"),
    (0.199, "too late (seat 2 pressed 0.2 ms after you, but yours reached the table late)"),
    (0.2, "too late (seat 2 pressed 0.2 ms after you, but yours reached the table late)"),
])
def test_a_late_press_within_epsilon_of_the_winner_is_told_late_in_a_file(
        tmp_path: Path, gap_ms: float, told: str) -> None:
    text = (ROOT / "scenarios" / "classic-late-press.toml").read_text()
    path = tmp_path / "late.toml"
    path.write_text(text.replace("at_ms = 1.0\n", f"at_ms = {2.0 - gap_ms}\n")
                    .replace("pressed 1.0 ms", f"pressed {told.split('pressed ')[1].split(' ms')[0]} ms"))
    run = run_file(path)
    assert run.failures == []
    assert run.actions[1].told == told and run.decisions[0].startswith("late by")


def test_a_told_that_does_not_match_fails_the_scenario(tmp_path: Path) -> None:
    text = (ROOT / "scenarios" / "classic-tie.toml").read_text()
    path = tmp_path / "wrong.toml"
    path.write_text(text.replace("won the tie, pressed 0.1 ms after you", "was 0.1 ms earlier"))
    (failure,) = run_file(path).failures
    assert failure == ("wrong.toml.round[1].actions[1].told: "
                       "expected 'too late (seat 2 was 0.1 ms earlier)', "
                       "the seat was told 'too late (seat 2 won the tie, pressed 0.1 ms after you)'")


@pytest.mark.parametrize(("text", "words"), [
    (CLASSIC + "[arbiter]\nwindow_ms = 0.1\nepsilon_ms = 0.2\n[[round]]\n", ["arbiter", "more than epsilon"]),
    (CLASSIC + "[arbiter]\nwindow = 5\n[[round]]\n", ["bad.toml.arbiter", "unknown key 'window'"]),
    (CLASSIC + "[[round]]\nactions = [{seat = 1, do = 'turn', arrive_ms = 3.0}]\n",
     ["round[1].actions[1].arrive_ms", "only with an [arbiter]"]),
    (CLASSIC + "[[round]]\nactions = [{seat = 1, do = 'turn', told = 3}]\n",
     ["round[1].actions[1].told", "the words the seat is told"]),
])
def test_arbiter_settings_are_checked(tmp_path: Path, text: str, words: list[str]) -> None:
    message = refused(tmp_path, text)
    for word in words:
        assert word in message, message


def test_seat_fields_left_out_are_dealt_from_the_seed(tmp_path: Path) -> None:
    path = tmp_path / "dealt.toml"
    path.write_text(CLASSIC + "[[round]]\npile = ['1:R1']\n"
                    "[[round.seat]]\nrow = ['R2', 'B5', 'G7', 'Y9', 'G1']\n"
                    "[[round.seat]]\nhand = ['B3']\n")
    run = run_file(path)
    first, second = run.match.round.seats
    assert run.match.round.result is None  # not an empty table that ends at once
    assert len(first.stack) == 10 and len(first.hand) == 40 - 5 - 10 - 1  # R1 lies on a pile
    assert len(second.row) == 5 and len(second.stack) == 10 and len(second.hand) == 1
    assert run_file(path).states == run.states  # the same seed deals the same

    path.write_text(DOMINO + "[[round]]\n[[round.seat]]\njokers = 1\n[[round.seat]]\nhand = ['RR']\n")
    rnd = run_file(path).match.round
    assert len(rnd.seats[0].hand) == 15 and rnd.seats[0].jokers == 1

    path.write_text(DICE + "[[round]]\n[[round.seat]]\ndice = ['Y1']\n[[round.seat]]\n")
    rnd = run_file(path).match.round
    assert len(rnd.dice[0]) == 1 and len(rnd.dice[1]) == 12

    path.write_text(CRAZY + "[[round]]\n[[round.seat]]\nhand = ['R1', 'R2', 'R3']\n[[round.seat]]\n")
    seats = run_file(path).match.round.seats
    assert len(seats[0].hand) == 3 and len(seats[0].draw) == 33 and len(seats[1].draw) == 33


def test_domino_tokens_are_numbered_from_1_in_files_and_json(tmp_path: Path) -> None:
    run = run_file(ROOT / "scenarios" / "domino-joker.toml")
    assert run.failures == []
    assert {a.action["token"] for a in run.actions} <= {1, 2, 3, 4}
    assert run.actions[0].action["token"] == 3  # as written in the file
    message = refused(tmp_path, DOMINO + "[[round]]\nactions = [{seat = 1, do = 'joker', token = 0, "
                                         "square = [0, 1]}]\n")
    assert "round[1].actions[1].token" in message and "1 to 4" in message


def test_a_round_that_ends_only_by_time_ends_in_a_scenario_as_at_the_table() -> None:
    """Nothing fits and only a joker could help: no press ends the round, the table's wake does
    (joker_wait_s after the last placement). The runner wakes the round as the table does."""
    run = run_file(Path(__file__).parents[2] / "scenarios" / "domino-joker-wait.toml")
    assert run.failures == []
    result = run.match.results[0]
    assert str(result.ending) == "no_placement" and result.scores == (2, 0)
    assert run.wakes == [(1, 10_050.0)]
    assert run.to_dict()["wakes"] == [{"round": 1, "at_ms": 10_050.0}]


def test_a_joker_hold_lapses_between_actions_as_at_the_table() -> None:
    run = run_file(Path(__file__).parents[2] / "scenarios" / "domino-joker.toml")
    assert run.failures == []
    assert run.wakes == [(1, 5_200.0)]  # the joker laid at 200 ms holds its token 5 s


def test_a_die_put_in_another_colours_row_is_a_refusal_a_file_can_expect() -> None:
    run = run_file(ROOT / "scenarios" / "dice-wrong-row.toml")
    assert run.failures == []
    wrong, right = run.to_dict()["actions"]
    assert wrong["action"] == {"do": "place", "seat": 1, "die": "Y3", "row": "red"}
    assert wrong["outcome"] == "no_fit"
    assert wrong["told"] == "doesn't fit (a yellow die goes in the yellow row, not the red one)"
    assert right["outcome"] == "ok" and run.to_dict()["final_state"]["board"]["yellow"] == 3


def test_a_row_that_is_no_colour_is_refused(tmp_path: Path) -> None:
    text = DICE + "[[round]]\nactions = [{seat = 1, do = 'place', die = 'Y3', row = 'pink'}]\n"
    assert refused(tmp_path, text) == ("bad.toml.round[1].actions[1]: 'row' is a row's colour "
                                       "(red, yellow, green, blue), not 'pink'")


def test_player_boards_at_the_start_and_after_the_rounds_end_effects() -> None:
    run = run_file(ROOT / "scenarios" / "domino-player-boards.toml")
    assert run.failures == []
    out = run.to_dict()
    assert [s["aside"] for s in out["final_state"]["seats"]] == [["YY", "BB"], ["GG", "YB"]]  # as it ended
    assert out["after_end"] == {"round": 1, "totals": [2, 0], "boards": [[], ["RR", "PP"]]}  # then


def test_a_wrong_board_after_the_end_fails_and_malformed_boards_are_refused(tmp_path: Path) -> None:
    text = (ROOT / "scenarios" / "domino-player-boards.toml").read_text()
    path = tmp_path / "wrong.toml"
    path.write_text(text.replace('expect_boards = [[], ["RR", "PP"]]', 'expect_boards = [[], ["PP", "RR"]]'))
    assert run_file(path).failures == ["wrong.toml.round[1].expect_boards: expected [[], ['PP', 'RR']], "
                                       "got [[], ['RR', 'PP']]"]
    assert refused(tmp_path, text.replace('hand = ["PP", "RR"]', 'hand = ["PP", "GG"]')) == (
        "bad.toml.round[1].seat[2].hand: GG lie on seat 2's player board, not in its hand (line 23)")
    assert refused(tmp_path, text.replace('board = ["YY", "BB"]', 'board = ["YY", "YY"]')) == (
        "bad.toml.round[1].seat[1].board: a player has each card once: YY (line 19)")
    assert refused(tmp_path, text.replace('expect_boards = [[], ["RR", "PP"]]', "expect_boards = [[]]")) == (
        "bad.toml.round[1].expect_boards: a list of 2 player boards, one per seat, not [[]] (line 13)")
    assert "'expect_boards' belongs to a domino round, not classic" in refused(
        tmp_path, CLASSIC + "[[round]]\nexpect_boards = [[], []]\n")


def test_cards_already_on_the_board_cover_their_squares_and_block_a_token() -> None:
    run = run_file(ROOT / "scenarios" / "domino-blocked-token.toml")
    assert run.failures == []
    assert [a.outcome for a in run.actions] == ["blocked", "ok"]
    state = run.to_dict()["final_state"]
    assert [[0, 1], 2, "RR"] in state["covered"] and [[3, 1], 2, "YG"] in state["covered"]
    assert state["tokens"][0]["square"] == [5, 6]


@pytest.mark.parametrize(("old", "new", "words"), [
    ('card = "RR", near = [0, 1], far = [0, 0]', 'card = "RB", near = [0, 1], far = [0, 0]',
     "covered[1]: RB cannot lie on [0, 1] and [0, 0]: those squares are RR"),
    ('card = "RR", near = [0, 1], far = [0, 0]', 'card = "RR", near = [0, 1], far = [0, 3]',
     "covered[1]: the halves of RR must touch: [0, 1] and [0, 3] do not"),
    ('card = "BB", near = [1, 0], far = [2, 0]', 'card = "BB", near = [1, 0], far = [2, 0] }, '
     '{ seat = 1, joker = [2, 0]', "covered[3]: square [2, 0] is covered twice"),
    ('card = "RR", near = [0, 1], far = [0, 0]', 'card = "RR", near = [0, 1], far = [-1, 1]',
     "covered[1].far: square [-1, 1] is not on the two-players board"),
    ('hand = ["BY", "PP"]', 'hand = ["BY", "GP"]',
     "seat[2].hand: GP already lie on the board (bad.toml.round[1].covered), not in the hand"),
    ('{ seat = 2, card = "RR"', '{ seat = 2, cards = "RR"', "covered[1]: unknown key 'cards'"),
])
def test_covered_squares_that_no_play_could_leave_are_refused(
        tmp_path: Path, old: str, new: str, words: str) -> None:
    text = (ROOT / "scenarios" / "domino-blocked-token.toml").read_text()
    assert old in text
    message = refused(tmp_path, text.replace(old, new, 1))
    assert message.startswith("bad.toml.round[1].") and words in message, message


def test_crazy_piles_already_on_the_table_play_on_as_the_round_built_them() -> None:
    run = run_file(ROOT / "scenarios" / "crazy-piles-at-start.toml")
    assert run.failures == []
    assert [a.outcome for a in run.actions] == ["pile_limit", "ok", "ok"]
    assert run.match.round.seats[0].score and len(run.match.round.seats[0].score) == 5  # won pile 1
    assert [(p["id"], p["top"]) for p in run.to_dict()["final_state"]["piles"]] == [(2, 2), (3, 1)]


@pytest.mark.parametrize(("pile", "words"), [
    ('"1:R2"', "pile[1][1]: a pile starts with a 1 or a Crazy card counting 1, not 1:R2"),
    ('"1:R1 2:Y3"', "pile[1][2]: 2:Y3 cannot lie on a 1: one higher or lower"),
    ('"1:R1 2:Y*"', "pile[1][2]: 2:Y* cannot lie on a 1: one higher or lower (a Crazy card says what"),
    ('"1:R1 2:Y2=2"', "pile[1][2]: only a Crazy card counts as a value it chooses, not Y2"),
    ('"1:R1 2:Y2 1:R3 2:Y4 1:R5"', "pile[1][5]: a 5 on a 4 wins the pile: it would not be on the table"),
    ('"1:R1", "2:Y1", "1:R1"', "pile: 2 players have 2 piles at most, not 3"),
    ('"1:Y1"', "pile[1][1]: seat 1 plays red"),
])
def test_crazy_piles_no_round_could_build_are_refused(tmp_path: Path, pile: str, words: str) -> None:
    message = refused(tmp_path, CRAZY + f"[[round]]\npile = [{pile}]\n")
    assert message.startswith("bad.toml.round[1].") and words in message, message
