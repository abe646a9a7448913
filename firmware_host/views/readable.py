"""The table in words and coloured cards, for a terminal: legible at a glance, at 80x24.

The LED matrix and the OLEDs (centre.py, seat.py) are what the box shows; a
newcomer at a laptop also wants to read the table: what lies in the middle and
their own cards as cards, in the game's words (`Game.centre_words`,
`seat_words`, `keys`, with the pieces here). Built from the rules state and the
seat controllers, never from pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from ..engine.game import find
from ..engine.options import GAMES, PLAYERS
from ..table.words import ending_name, game_name, phase_name, seconds

if TYPE_CHECKING:
    from ..table.controls import SeatController
    from ..table.machine import Table

STYLE = {"R": "red3", "G": "green4", "B": "dodger_blue2", "Y": "gold3", "P": "medium_purple3"}
NAME = {"R": "red", "G": "green", "B": "blue", "Y": "yellow", "P": "purple"}


SHAPE = {"R": "●", "G": "▲", "B": "■", "Y": "◆", "P": "★"}
"""Colour is never the only signal: each colour's shape, as on the web page (docs/web.md)."""


def chip(letter: str, label: str, selected: bool = False) -> Text:
    """A card as a card: its colour as the background, its shape and letter, the cursor's card in
    brackets."""
    mark = SHAPE.get(letter, "") + letter
    face = f"{mark + label if label != letter else mark:^4}"
    text = Text("[" if selected else " ", style="bold white")
    style = f"bold black on {STYLE.get(letter, 'grey50')}"
    text.append(face, style=style + (" underline" if selected else ""))
    text.append("]" if selected else " ", style="bold white")
    return text


def colour_word(letter: str) -> Text:
    return Text(f"{NAME[letter]:<7}", style=f"bold {STYLE[letter]}")


# ---------------------------------------------------------------- the centre


def centre_words(table: Table, moments: Sequence[str] = ()) -> Text:
    """What lies in the middle, or the table's phase in words outside play. `moments`: the round
    just ended's closest race and fastest reaction in words (views/live.py `round_moments`)."""
    phase, match = str(table.phase), table.match
    if phase == "playing" and match is not None:
        words = find(match.game).centre_words(match.round, table)
        assert isinstance(words, Text), f"{match.game}'s centre_words gave {type(words).__name__}, not Text"
        return words
    return _phase_words(table, moments)


def _phase_words(table: Table, moments: Sequence[str] = ()) -> Text:
    phase, match = str(table.phase), table.match
    seats = table.seat_of_player
    if phase == "attract":
        return Text("Nobody is at the table yet.\nPress space to join as seat 1.", style="bold")
    if phase == "lobby":
        lo, hi = PLAYERS[table.game]
        out = Text("The lobby\n", style="bold")
        out.append("game: ")  # the one chosen, and where it is in the menu: the names fill no line
        out.append(f" {game_name(table.game)} ", style="bold black on white")
        out.append(f"  ←/→ {list(GAMES).index(table.game) + 1} of {len(GAMES)}", style="dim")
        out.append(f"\nplayers: {table.players} ({lo} to {hi}): ")
        out.append(", ".join([_named(table, s) + (" (you)" if s == 0 else "") for s in table.joined]
                             + [f"seat {seats[p] + 1} (bot, {bot.level})"
                                for p, bot in sorted(table.bots.items()) if p < len(seats)])
                   or "nobody yet")
        if table.matches_played and match is not None and match.results:
            out.append("\nlast match: " + _standings(table, list(match.totals)), style="dim")
        return out
    if match is None:
        return Text(phase_name(phase))
    if phase == "countdown":
        out = Text(f"{game_name(table.game)}, round {match.round_no + 1}: get ready…", style="bold")
        if match.results:  # the round just over stays in view, not only in the log
            out.append(f"\nround {len(match.results)}: " + _standings(table, list(match.results[-1].scores)))
            out.append("\ntotals: " + _standings(table, list(match.totals)))
        return out
    if phase == "round_result" and match.results:
        result = match.results[-1]
        out = Text(f"Round {len(match.results)} over ({ending_name(result.ending)})\n", style="bold")
        if match.players <= PARTS_UP_TO:
            out.append(_score_parts(table))
        else:
            out.append("this round: " + _standings(table, list(result.scores)) + "\n")
        out.append("totals:     " + _standings(table, list(match.totals)))
        for line in moments:
            out.append("\n" + line)
        return out
    if phase == "match_result":
        winners = ", ".join(_named(table, seats[p]) for p in match.winners if p < len(seats))
        out = Text(f"Match over: {winners} {'win' if len(match.winners) > 1 else 'wins'}!\n", style="bold")
        out.append("totals: " + _standings(table, list(match.totals)))
        out.append(f"\nThis stays {seconds(table.timing.match_result_ns)}, then the table waits for "
                   f"players again (space after {seconds(table.timing.podium_hold_ns)}: another match).",
                   style="dim")
        return out
    return Text(phase_name(phase))


PARTS_UP_TO = 4
"""The round's end shows each score's parts, a line a seat, for up to this many players: with a
wrapped line each and the longest names, 12 rows of the words pane, which at 80x24 is 48 columns
wide and leaves the log below it 5 rows at 13 (measured in the Textual app); more players get one
line of scores."""


def _score_parts(table: Table) -> Text:
    """The round's scores best first, each with how it came about ("1. Ann (seat 2) +7: 9 in the
    centre, 1 on the stack ×2"), so that a player can check it against the cards."""
    match = table.match
    assert match is not None
    result, seats = match.results[-1], table.seat_of_player
    parts = find(match.game).score_parts(match.round)
    scores = list(result.scores)
    order = sorted(range(len(scores)), key=lambda p: (-scores[p], seats[p] if p < len(seats) else p))
    out = Text()
    for p in order:
        if p >= len(seats):
            continue
        place = 1 + sum(s > scores[p] for s in scores)
        out.append(f"{place}. {_named(table, seats[p])} ")
        out.append(f"{scores[p]:+d}", style="bold")
        out.append(": " + ", ".join(words for words, _ in parts[p]) + "\n")
    return out


def _standings(table: Table, scores: list[int]) -> str:
    seats = table.seat_of_player
    order = sorted(range(len(scores)), key=lambda p: -scores[p])
    return ", ".join(f"{_named(table, seats[p])} {scores[p]:+d}" for p in order if p < len(seats))


def _named(table: Table, seat: int) -> str:
    """A seat as the players know it: "Ann (seat 2)", or "seat 2" for a guest or a bot."""
    name = table.names.get(seat)
    return f"{name} (seat {seat + 1})" if name else f"seat {seat + 1}"


# ---------------------------------------------------------------- a seat


def controller_of(table: Table, seat: int) -> SeatController | None:
    player = table.player_of(seat)
    if table.referee is None or player is None or player >= len(table.referee.seats):
        return None
    return table.referee.seats[player]


def seat_words(table: Table, seat: int) -> Text:
    """One physical seat's own cards as cards, its cursor, and its last refusal."""
    controller = controller_of(table, seat)
    if controller is None or str(table.phase) != "playing" or table.match is None:
        return Text("")
    out = controller.entry.seat_words(controller, table.match.round)
    assert isinstance(out, Text), f"{table.match.game}'s seat_words gave {type(out).__name__}, not Text"
    if controller.message:
        out.append("\n")
        out.append(f" {controller.message} ", style="bold white on dark_red")
    return out


# ---------------------------------------------------------------- keys

def key_help(table: Table, direct: bool = False, bot_level: str = "medium") -> str:
    """The table's keys that do something now, in this game (a frontend adds its own, such as
    its quit key); `direct`: seat 1 has keys 1-5; `bot_level`: the level of the next bot `b`
    adds (`l` changes it)."""
    phase = str(table.phase)
    if phase in ("attract", "lobby"):
        return (f"space join · ←/→ choose the game · b/B add/remove a bot · l next bot: {bot_level} · "
                "enter start")
    timing = table.timing
    hold = seconds(timing.result_hold_ns)
    if phase == "round_result":
        return f"space: next round (after {hold}; by itself after {seconds(timing.round_result_ns)})"
    if phase == "match_result":
        return (f"space: another match (after {seconds(timing.podium_hold_ns)}); by itself the table "
                f"waits for players after {seconds(timing.match_result_ns)}")
    game = table.match.game if table.match is not None else table.game
    keys = find(game).keys(table.match.round if table.match is not None else None, direct)
    return f"{game_name(game)}: {keys}"
