"""Scenario files that cannot be true are refused before they run: exit 2 and one line naming
the place (counted from 1) and the problem, for each kind of lie."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from firmware_host.cli.host import main
from firmware_host.engine.round import Ending
from firmware_host.play.scenario import run_file

CLASSIC = "game = 'classic'\nplayers = 2\n"
DICE = "game = 'dice'\nplayers = 2\n"
DOMINO = "game = 'domino'\nplayers = 2\noptions = { layout = 'two-players' }\n"
CRAZY = "game = 'crazy'\nplayers = 2\n"
PRO_ROW = CLASSIC + "options = {pro_row = true}\n"
RUN_DOWN = ("a pro_row place runs down by exactly one in another colour each card, "
            "bottom first (e.g. R5 G4 B3), ")
# Round 1 of Domino ends at once: seat 1 places its only card, seat 2 must put RR and BB aside.
DOMINO_ASIDE = DOMINO + """
[[round]]
tokens = [[1, 1], [1, 3], [6, 1], [6, 10]]
[[round.seat]]
hand = ["GP"]
[[round.seat]]
hand = ["PP", "BB", "RR"]
[[round.actions]]
at_ms = 1000.0
seat = 1
do = "place"
card = "GP"
token = 1
near = [1, 2]
far = [0, 2]
"""


def refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> str:
    """The one line `table-host scenario` prints for the file, having exited with status 2."""
    path = tmp_path / "lie.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        main(["scenario", str(path)])
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


LIES = [
    pytest.param(CLASSIC + "[[round]]\n[[round.seat]]\nrow = ['R1', 'R2', 'R3', 'R4', 'R5', 'R6', 'R7']\n"
                 "[[round.seat]]\n",
                 "lie.toml.round[1].seat[1].row: 2 players have 5 row places, not 7"
                 " (line 4)", id="classic-row"),
    pytest.param(CLASSIC + "[[round]]\n[[round.seat]]\n[[round.seat]]\n"
                 "stack = ['R1', 'R2', 'R3', 'R4', 'R5', 'R6', 'R7', 'R8', 'R9', 'R10', 'B1', 'B2']\n",
                 "lie.toml.round[1].seat[2].stack: a Ligretto stack holds 10 cards at most, not 12 (line 5)",
                 id="classic-stack"),
    pytest.param(CRAZY + "[[round]]\n[[round.seat]]\nhand = ['R1', 'R2', 'R3', 'R4', 'R5']\n[[round.seat]]\n",
                 "lie.toml.round[1].seat[1].hand: a hand holds 3 cards at most, not 5"
                 " (line 4)", id="crazy-hand"),
    pytest.param(DICE + "[[round]]\n[[round.seat]]\ndice = ['Y1', 'Y2', 'Y3', 'Y4', 'Y5', 'Y6', 'R1', 'R2', "
                 "'R3', 'R4', 'R5', 'R6', 'G1']\n[[round.seat]]\n",
                 "lie.toml.round[1].seat[1].dice: seat 1 holds 1 to 12 dice during a round, not 13 (line 4)",
                 id="dice-too-many"),
    pytest.param(DICE + "[[round]]\n[[round.seat]]\n[[round.seat]]\ndice = []\n",
                 "lie.toml.round[1].seat[2].dice: seat 2 holds 1 to 12 dice during a round, not 0 "
                 "(a seat with none has ended it) (line 5)", id="dice-none"),
    pytest.param(DOMINO_ASIDE + "\n[[round]]\n[[round.seat]]\n[[round.seat]]\nhand = ['PP', 'RR', 'GP']\n",
                 "lie.toml.round[2].seat[2].hand: RR lie on seat 2's player board, not in its hand (line 22)",
                 id="domino-board-card"),
    pytest.param(CRAZY + "[[round]]\ntokens = [[1, 1]]\n",
                 "lie.toml.round[1]: 'tokens' belongs to a domino round, not crazy "
                 "(known: actions, expect_ending, expect_finishers, expect_scores, pile, seat)"
                 " (line 3)", id="crazy-tokens"),
    pytest.param(CLASSIC + "[[round]]\nboard = {yellow = 2}\n",
                 "lie.toml.round[1]: 'board' belongs to a dice round, not classic "
                 "(known: actions, expect_ending, expect_finishers, expect_scores, pile, seat) (line 3)",
                 id="classic-board"),
    pytest.param(CLASSIC + "[[round]]\ntokens = [[1, 1]]\n",
                 "lie.toml.round[1]: 'tokens' belongs to a domino round, not classic "
                 "(known: actions, expect_ending, expect_finishers, expect_scores, pile, seat) (line 3)",
                 id="classic-tokens"),
    pytest.param(CLASSIC + "[[round]]\nexpect_scores = '2, 1'\n",
                 "lie.toml.round[1].expect_scores: a list of 2 whole numbers, one per seat, not '2, 1'"
                 " (line 3)",
                 id="expect-scores-text"),
    pytest.param(CLASSIC + "[[round]]\nexpect_scores = [2, 1, 0]\n",
                 "lie.toml.round[1].expect_scores: a list of 2 whole numbers, one per seat, not [2, 1, 0]"
                 " (line 3)",
                 id="expect-scores-count"),
    pytest.param(CLASSIC + "[[round]]\nexpect_finishers = [5]\n",
                 "lie.toml.round[1].expect_finishers: seats are 1 to 2, not 5"
                 " (line 3)", id="expect-finishers"),
    pytest.param(CLASSIC + "expect_winners = [0]\n[[round]]\n",
                 "lie.toml.expect_winners: seats are 1 to 2, not 0", id="expect-winners-zero"),
    pytest.param(CLASSIC + "expect_winners = []\n[[round]]\n",
                 "lie.toml.expect_winners: a list of seats (1 to 2), not []: someone always wins",
                 id="expect-winners-empty"),
    pytest.param(CLASSIC + "expect_totals = [1.5, 2]\n[[round]]\n",
                 "lie.toml.expect_totals: a list of 2 whole numbers, one per seat, not [1.5, 2]",
                 id="expect-totals"),
    pytest.param(CLASSIC + "[[round]]\nexpect_ending = 'won'\n",
                 "lie.toml.round[1].expect_ending: one of ligretto, deadlock, stuck_vote, last_die, "
                 "ligretto_stop, no_placement, not 'won' (line 3)", id="expect-ending"),
    pytest.param(CLASSIC + "[[round]]\nactions = [{at_ms = 1, seat = 1, do = 'turn', expect = 'too late'}]\n",
                 "lie.toml.round[1].actions[1].expect: \"ok\" or a refusal reason such as \"too_late\", "
                 "not 'too late'", id="expect-outcome"),
    pytest.param(CLASSIC + "[[round]]\nactions = [{at_ms = 1, seat = 1, do = 'turn'}, "
                 "{at_ms = 2, seat = 1, do = 'turn'}, {at_ms = 3, seat = 3, do = 'turn'}]\n",
                 "lie.toml.round[1].actions[3].seat: seat must be 1 to 2, not 3", id="paths-from-one"),
    pytest.param(CLASSIC + "[[round]]\n[[round.seat]]\nrow = [['R5', 'G4'], 'B2']\n[[round.seat]]\n",
                 "lie.toml.round[1].seat[1].row[1]: a row place holds one card without pro_row, "
                 "not 2 (R5 G4) (line 4)",
                 id="classic-two-cards-on-a-place"),
    pytest.param(PRO_ROW + "[[round]]\n[[round.seat]]\nrow = ['B2', ['R4', 'G5']]\n"
                 "[[round.seat]]\n",
                 "lie.toml.round[1].seat[1].row[2]: G5 cannot lie on R4: " + RUN_DOWN + "not R4 G5 (line 5)",
                 id="pro-row-ascending"),
    pytest.param(PRO_ROW + "[[round]]\n[[round.seat]]\nrow = [['R5', 'R4']]\n"
                 "[[round.seat]]\n",
                 "lie.toml.round[1].seat[1].row[1]: R4 cannot lie on R5: " + RUN_DOWN + "not R5 R4 (line 5)",
                 id="pro-row-one-colour"),
    pytest.param(PRO_ROW + "[[round]]\n[[round.seat]]\nrow = [['R5', 'G3']]\n"
                 "[[round.seat]]\n",
                 "lie.toml.round[1].seat[1].row[1]: G3 cannot lie on R5: " + RUN_DOWN + "not R5 G3 (line 5)",
                 id="pro-row-two-lower"),
    pytest.param(CRAZY + "[[round]]\n[[round.seat]]\nhand = ['R1', 'R2', 'R3']\n[[round.seat]]\n"
                 "[[round.actions]]\nat_ms = 1.0\nseat = 1\ndo = 'play'\ncard = 'R1'\nvalue = 2\n",
                 "lie.toml.round[1].actions[1]: 'value' is only for a Crazy card (R1 counts as 1); leave it "
                 "out or play a Crazy card, e.g. R* (line 7)", id="crazy-value-on-a-plain-card"),
    pytest.param(DICE + "[[round]]\nactions = [{at_ms = 1, seat = 1, do = 'reroll', faces = [0, 3]}]\n",
                 "lie.toml.round[1].actions[1]: 'faces' must be a list of die faces 1 to 6, not [0, 3]",
                 id="dice-reroll-face-0"),
    pytest.param(CLASSIC + "[[round]]\nexpect_ending = 'last_die'\n",
                 "lie.toml.round[1].expect_ending: 'last_die' ends a dice round, not a classic one "
                 "(classic rounds end: ligretto, deadlock, stuck_vote) (line 3)", id="another-games-ending"),
    pytest.param(CRAZY + "[[round]]\nexpect_ending = 'no_placement'\n",
                 "lie.toml.round[1].expect_ending: 'no_placement' ends a domino round, not a crazy one "
                 "(crazy rounds end: ligretto_stop) (line 3)", id="another-games-ending-crazy"),
]


@pytest.mark.parametrize(("text", "message"), LIES)
def test_a_scenario_that_lies_is_refused_with_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str) -> None:
    assert refusal(tmp_path, capsys, text) == f"table-host: error: {message}"


def test_scenario_json_prints_the_error_object_on_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "lie.toml"
    path.write_text(CLASSIC + "[[round]]\nexpect_ending = 'last_die'\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        main(["scenario", str(path), "--json"])
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    message = ("lie.toml.round[1].expect_ending: 'last_die' ends a dice round, not a classic one "
               "(classic rounds end: ligretto, deadlock, stuck_vote) (line 3)")
    assert json.loads(out) == {"ok": False, "error": f"table-host: error: {message}", "file": str(path),
                               "place": "round[1].expect_ending", "line": 3}
    assert err == f"table-host: error: {message}\n"


def test_each_game_declares_the_endings_its_rules_reach() -> None:
    import firmware_host.games
    from firmware_host.engine.game import find
    from firmware_host.engine.options import GAMES

    for game in GAMES:
        source = (Path(firmware_host.games.__file__).parent / game / "rules.py").read_text()
        reached = {Ending[name] for name in re.findall(r"Ending\.(\w+)", source)}
        assert find(game).endings == reached, game


def test_a_pro_row_run_laid_as_the_round_takes_it_is_true(tmp_path: Path) -> None:
    path = tmp_path / "true.toml"
    path.write_text(CLASSIC + "options = {pro_row = true}\n[[round]]\n[[round.seat]]\n"
                    "row = [['R5', 'G4', 'B3'], 'Y9']\n[[round.seat]]\n", encoding="utf-8")
    state = run_file(path).to_dict()["final_state"]
    assert state["seats"][0]["row"][:2] == [["R5", "G4", "B3"], ["Y9"]]


def test_the_domino_aside_round_is_itself_true(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The board lie above differs from a true file only by the card on the board."""
    path = tmp_path / "true.toml"
    path.write_text(DOMINO_ASIDE + "\n[[round]]\n[[round.seat]]\n[[round.seat]]\nhand = ['PP', 'GP']\n",
                    encoding="utf-8")
    assert main(["scenario", str(path)]) == 0
    assert "round 1 ended" in capsys.readouterr().out
