"""The table in words: each pile's colour and top value, the boards, your cards, the keys."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from firmware_host.engine.game import title_of
from firmware_host.games.classic.rules import ClassicRound
from firmware_host.games.crazy.rules import CrazyRound
from firmware_host.games.dice.rules import DiceRound
from firmware_host.games.domino.rules import DominoRound
from firmware_host.play.simulate import make_bots, play_round
from firmware_host.table.machine import Phase, Table, Timing
from firmware_host.table.presses import Event, InputEvent
from firmware_host.views.readable import NAME, SHAPE, STYLE, centre_words, key_help, seat_words

S = 1_000_000_000


def playing(game: str, moves: int = 12) -> Table:
    """A 3-player table in play, a few legal moves made by each seat."""
    table = Table(4, Timing(countdown_ns=3 * S))
    table.new(game)
    table._join(0)
    table.set_bots(2)
    table.start(0)
    table.tick(3 * S)
    assert table.phase is Phase.PLAYING
    rng = random.Random(1)
    for _ in range(moves):
        for seat in range(3):
            legal = [a for a in table.match.round.legal_actions(seat) if type(a).__name__ != "VoteStuck"]
            if legal and table.match.round.result is None:
                table.match.apply(rng.choice(legal))
    assert table.match.round.result is None
    return table


def lines_for(text: str, word: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(word)]


def test_classic_shows_every_open_pile_by_colour_and_top_value() -> None:
    table = playing("classic", 20)
    rnd = table.match.round
    assert isinstance(rnd, ClassicRound) and rnd.pile_tops()
    words = centre_words(table).plain
    for card in rnd.pile_tops():
        (line,) = lines_for(words, NAME[card.colour.letter])
        assert str(card.value) in line.split()[1:]
    assert f"{len(rnd.pile_tops())} piles open" in words or "1 pile open" in words
    mine = seat_words(table, 0).plain
    first = rnd.seats[0].row[0][-1]
    # the cursor's card, in brackets, as its colour, its shape and letter, and its value
    assert f"[{SHAPE[first.colour.letter]}{first}" in mine.replace(" ", "")


def test_dice_shows_each_colours_row_and_the_face_it_takes_next() -> None:
    table = playing("dice", 6)
    rnd = table.match.round
    assert isinstance(rnd, DiceRound)
    words = centre_words(table).plain
    for colour in type(rnd.dice[0][0].colour):
        (line,) = lines_for(words, colour.name.lower())
        assert line.endswith(f"next {rnd.board[colour] + 1}" if rnd.board[colour] < 6 else "full")
    assert all(str(d) in seat_words(table, 0).plain.replace(" ", "") for d in rnd.dice[0])


def test_domino_shows_the_board_its_tokens_and_your_candidate_placement() -> None:
    """It was a grid of letters; each square is its colour with its colour's letter, tokens are
    numbers white on black, your candidate capitals on white, rows and columns numbered, and it
    fits the table panel at 80x24 (48 columns)."""
    table = playing("domino", 2)
    rnd = table.match.round
    assert isinstance(rnd, DominoRound)
    text = centre_words(table)
    ruler, *board, legend = text.plain.splitlines()
    cols = max(c for _, c in rnd.board.colours) + 1
    assert all(len(line) <= 48 for line in text.plain.splitlines())
    assert ruler.split() == ["1", "5", "10", "15", "20"][: 1 + cols // 5]
    assert [line[:3] for line in board] == [f"{r + 1:>2} " for r in range(len(board))]
    assert legend == "[X yours · ## covered · ** joker · 1-4 tokens"

    def cell(r: int, c: int) -> tuple[str, list[str]]:
        """The square's two characters and the styles drawn on them."""
        at = len(ruler) + 1 + sum(len(line) + 1 for line in board[:r]) + 3 + 2 * c
        styles = [str(span.style) for span in text.spans if span.start <= at < span.end]
        return text.plain[at: at + 2], styles

    for i, tok in enumerate(rnd.tokens):
        face, styles = cell(*tok.square)
        assert face[0] == str(i + 1) and "bold white on black" in styles
    choice = table.referee.seats[0].selected()
    assert choice is not None
    for square in (choice.near, choice.far):
        face, styles = cell(*square)
        assert face == f"[{rnd.board.colours[square].letter}" and "bold black on white" in styles
    taken = {choice.near, choice.far, *rnd.covered, *(t.square for t in rnd.tokens)}
    free = next(sq for sq in rnd.board.colours if sq not in taken)
    letter = rnd.board.colours[free].letter
    face, styles = cell(*free)
    assert face == f"{letter.lower()} " and f"black on {STYLE[letter]}" in styles  # colour and letter
    mine = seat_words(table, 0).plain
    assert "top card" in mine and f"jokers {rnd.seats[0].jokers}" in mine
    near, far = (rnd.board.colours[sq].letter for sq in (choice.near, choice.far))
    assert f"[{near} [{far} on the board" in mine


def test_crazy_shows_each_pile_with_its_colour_and_top_value() -> None:
    table = playing("crazy", 30)
    rnd = table.match.round
    assert isinstance(rnd, CrazyRound)
    words = " ".join(centre_words(table).plain.split())
    assert rnd.piles and f"{len(rnd.piles)} of {rnd.pile_limit} piles" in words
    for n, pile in enumerate(rnd.piles.values()):
        card = pile.cards[-1][1]
        letter = card.colour.letter
        assert f"pile {n + 1} {SHAPE[letter]}{letter}{pile.top} {NAME[letter]}" in words


@pytest.mark.parametrize(("game", "alt"), [("classic", "enter turns 3"), ("dice", "enter rerolls"),
                                           ("domino", "enter discards"), ("crazy", "enter discards")])
def test_key_help_names_each_games_alt_action_and_dominos_joker(game: str, alt: str) -> None:
    table = playing(game, 0)
    keys = key_help(table)
    assert keys.startswith(f"{title_of(game)}:") and alt in keys and "space" in keys
    assert "abort" not in keys and "quit" not in keys  # a frontend adds its own keys
    assert ("joker" in keys) == (game == "domino")


def test_results_and_the_lobby_in_words() -> None:
    table = playing("dice", 0)
    table.match.options = {**table.match.options, "rounds": 1}
    play_round(table.match, make_bots(3, "instant", 0), random.Random(0))
    table.tick(4 * S)
    assert table.phase is Phase.MATCH_RESULT
    said = centre_words(table).plain
    assert "Match over: seat" in said  # and how long it stays, that it goes (it left without a word)
    assert said.endswith("This stays 30 s, then the table waits for players again (space after 10 s: "
                         "another match).")
    assert key_help(table) == ("space: another match (after 10 s); by itself the table waits for players "
                               "after 30 s")
    table.on_input(InputEvent(Event.PRESS, 0, "slap", ts=14 * S), now=14 * S)  # after the podium's 10 s
    assert table.phase is Phase.LOBBY
    words = centre_words(table).plain
    assert "last match: seat" in words and "seat 1 (you)" in words


def test_a_round_result_stays_in_the_table_view_into_the_next_countdown() -> None:
    """The round's result was in the log only once its ten seconds were up; the log at 80x24
    is four lines. The next round's countdown shows it too."""
    table = playing("dice", 0)
    play_round(table.match, make_bots(3, "instant", 0), random.Random(0))
    table.tick(4 * S)
    assert table.phase is Phase.ROUND_RESULT
    scores, totals = list(table.match.results[-1].scores), list(table.match.totals)
    assert f"seat 1 {scores[0]:+d}" in centre_words(table).plain
    table.tick(15 * S)
    assert table.phase is Phase.COUNTDOWN
    lines = centre_words(table).plain.splitlines()
    assert lines[0] == "Ligretto Dice, round 2: get ready…"
    assert lines[1].startswith("round 1: ") and f"seat 1 {scores[0]:+d}" in lines[1]
    assert lines[2].startswith("totals: ") and f"seat 2 {totals[1]:+d}" in lines[2]


def test_the_status_line_names_seats_and_the_lobby_shows_no_old_totals(dirs: Path) -> None:
    """It was: "playing, classic, round 1, totals [0, 3]", and in the lobby the last match's totals."""
    from firmware_host.config import emulated_config
    from firmware_host.service.daemon import Daemon
    from firmware_host.service.frontend import score_lines

    daemon = Daemon(emulated_config(4))
    try:
        table = daemon.table
        table.new("dice", {"rounds": 1})
        table._join(0)
        table.set_bots(1)
        table.start(0)
        table.tick(3 * S)
        play_round(table.match, make_bots(2, "instant", 0), random.Random(0))
        table.tick(4 * S)
        totals = table.match.totals
        assert daemon.status.text() == (f"match over, Ligretto Dice, round 1/1 · seat 1 you {totals[0]:+d} · "
                                    f"seat 2 bot {totals[1]:+d}")
        assert score_lines(daemon.table)[0].split()[-1] == f"{totals[0]:+d}"
        table.on_input(InputEvent(Event.PRESS, 0, "slap", ts=15 * S), now=15 * S)  # after the podium
        assert table.phase is Phase.LOBBY
        assert daemon.status.text() == "lobby, Ligretto Dice; players: 2 (seats joined: 1; bots: 1)"
        assert score_lines(daemon.table) == ["seat  1 you", "seat  2 bot (medium)"]
    finally:
        daemon.close()


def test_the_lobby_names_the_chosen_game_as_players_call_it_on_one_line() -> None:
    """It was: "classic" among the code's names; then all four titles, which wrapped at 80x24."""
    for n, game in enumerate(["classic", "dice", "domino", "crazy"]):
        table = Table(4)
        table.new(game)
        table._join(0)
        (line,) = lines_for(centre_words(table).plain, "game:")
        assert line == f"game:  {title_of(game)}   ←/→ {n + 1} of 4" and len(line) <= 46


def _round_over(game: str, players: int, seed: int = 0) -> Table:
    table = Table(12, Timing(countdown_ns=3 * S))
    table.new(game)
    table._join(0)
    table.set_bots(players - 1)
    table.start(0)
    table.tick(3 * S)
    play_round(table.match, make_bots(players, "instant", seed), random.Random(seed))
    table.tick(4 * S)
    assert table.phase is Phase.ROUND_RESULT
    return table


def test_the_round_end_shows_each_scores_parts_a_line_a_seat() -> None:
    """Issue 31: the terminal's round end says how each score came about, best first."""
    table = _round_over("dice", 3)
    table.names[0] = "Ann"
    rnd, result = table.match.round, table.match.results[-1]
    held = [len(hand) for hand in rnd.dice]
    (first,) = result.finishers
    lines = centre_words(table).plain.splitlines()
    assert lines[0].startswith("Round 1 over (")
    who = ["Ann (seat 1)", "seat 2", "seat 3"]
    want = {p: f"{who[p]} {result.scores[p]:+d}: " + (f"out first: the others' {sum(held) - held[p]} dice"
                                                    if p == first else f"{held[p]} dice left")
            for p in range(3)}
    order = sorted(range(3), key=lambda p: (-result.scores[p], p))
    assert lines[1:4] == [f"{1 + sum(s > result.scores[p] for s in result.scores)}. {want[p]}" for p in order]
    assert lines[4].startswith("totals:     ") and len(lines) == 5
    assert sum(held) - held[first] == result.scores[first]  # the parts add up to the score


def test_the_round_end_with_more_than_4_players_keeps_one_line_of_scores() -> None:
    table = _round_over("classic", 5)
    said = centre_words(table).plain
    assert "in the centre" not in said and said.splitlines()[1].startswith("this round: ")


def test_the_round_ends_parts_fit_the_words_pane_of_an_80x24_terminal() -> None:
    """The words pane at 80x24 is 48 columns inside its border, and at 13 rows leaves the log 5
    (measured in the Textual app): 4 players with the longest names and Ligretto's two parts
    still fit, wrapped."""
    from rich.console import Console

    table = _round_over("classic", 4, seed=3)
    for seat in range(4):  # as a named seat's would be: the longest a name can be
        table.names[seat] = "W" * 15 + str(seat + 1)
    console = Console(width=48, record=True, color_system=None)
    console.print(centre_words(table))
    rows = console.export_text().splitlines()
    assert sum("on the stack ×2" in row for row in rows) == 4 and len(rows) <= 13, rows
