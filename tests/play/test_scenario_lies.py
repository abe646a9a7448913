"""Scenario files that cannot be true are refused before they run: exit 2 and one line naming
the place (counted from 1) and the problem, for each kind of lie."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware_host.cli.host import main

CLASSIC = "game = 'classic'\nplayers = 2\n"
DICE = "game = 'dice'\nplayers = 2\n"
DOMINO = "game = 'domino'\nplayers = 2\noptions = { layout = 'two-players' }\n"
CRAZY = "game = 'crazy'\nplayers = 2\n"
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
    pytest.param(CRAZY + "[[round]]\npile = [['1:R1']]\n",
                 "lie.toml.round[1]: 'pile' belongs to a classic round, not crazy "
                 "(known: actions, expect_ending, expect_finishers, expect_scores, seat)"
                 " (line 3)", id="crazy-pile"),
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
]


@pytest.mark.parametrize(("text", "message"), LIES)
def test_a_scenario_that_lies_is_refused_with_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str) -> None:
    assert refusal(tmp_path, capsys, text) == f"table-host: error: {message}"


def test_the_domino_aside_round_is_itself_true(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The board lie above differs from a true file only by the card on the board."""
    path = tmp_path / "true.toml"
    path.write_text(DOMINO_ASIDE + "\n[[round]]\n[[round.seat]]\n[[round.seat]]\nhand = ['PP', 'GP']\n",
                    encoding="utf-8")
    assert main(["scenario", str(path)]) == 0
    assert "round 1 ended" in capsys.readouterr().out
