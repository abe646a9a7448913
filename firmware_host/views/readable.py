"""The table in words and coloured cards, for a terminal: legible at a glance, at 80x24.

The LED matrix and the OLEDs (centre.py, seat.py) are what the box shows; a
newcomer at a laptop also wants to read the table: every centre pile's colour
and top value, the dice board, the domino board with its tokens and each
seat's candidate placement, the Crazy piles, and their own cards as cards.
Built from the rules state and the seat controllers, never from pixels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from ..rules.classic import Card, ClassicRound
from ..rules.crazy import CrazyCard, CrazyRound
from ..rules.dice import FACES, DiceRound, DieColour
from ..rules.domino import JOKER, DominoRound, PlaceDomino
from ..rules.options import GAMES, PLAYERS

if TYPE_CHECKING:
    from ..game.controls import SeatController
    from ..game.table import Table

STYLE = {"R": "red3", "G": "green4", "B": "dodger_blue2", "Y": "gold3", "P": "medium_purple3"}
NAME = {"R": "red", "G": "green", "B": "blue", "Y": "yellow", "P": "purple"}


def chip(letter: str, label: str, selected: bool = False) -> Text:
    """A card as a card: its colour as the background, the cursor's card in brackets."""
    face = f"{letter + label if label != letter else letter:^4}"
    text = Text("[" if selected else " ", style="bold white")
    style = f"bold black on {STYLE.get(letter, 'grey50')}"
    text.append(face, style=style + (" underline" if selected else ""))
    text.append("]" if selected else " ", style="bold white")
    return text


def _colour_word(letter: str) -> Text:
    return Text(f"{NAME[letter]:<7}", style=f"bold {STYLE[letter]}")


# ---------------------------------------------------------------- the centre


def centre_words(table: Table) -> Text:
    """What lies in the middle, or the table's phase in words outside play."""
    phase, match = str(table.phase), table.match
    if phase == "playing" and match is not None:
        rnd = match.round
        if isinstance(rnd, ClassicRound):
            return _classic_piles(rnd)
        if isinstance(rnd, DiceRound):
            return _dice_board(rnd)
        if isinstance(rnd, DominoRound):
            return _domino_board(rnd, table)
        if isinstance(rnd, CrazyRound):
            return _crazy_piles(rnd)
    return _phase_words(table)


def _classic_piles(rnd: ClassicRound) -> Text:
    tops = rnd.pile_tops()
    down = " (counting down)" if rnd.options.descending else ""
    out = Text(f"{len(tops)} pile{'' if len(tops) == 1 else 's'} open, tops by colour{down}\n", style="dim")
    for letter in "RGBY":
        values = sorted((c.value for c in tops if c.colour.letter == letter),
                        reverse=rnd.options.descending)
        out.append_text(_colour_word(letter))
        out.append(" ".join(f"{v:>2}" for v in values) if values else " -", style=f"bold {STYLE[letter]}")
        out.append("\n")
    out.rstrip()
    return out


def _dice_board(rnd: DiceRound) -> Text:
    out = Text("faces placed per colour\n", style="dim")
    for colour in DieColour:
        letter, placed = colour.letter, rnd.board[colour]
        out.append_text(_colour_word(letter))
        for face in range(1, FACES + 1):
            out.append(f" {face}", style=f"bold black on {STYLE[letter]}" if face <= placed else "grey42")
        out.append("  full" if placed >= FACES else f"  next {placed + 1}", style=f"bold {STYLE[letter]}")
        out.append("\n")
    out.rstrip()
    return out


def _domino_board(rnd: DominoRound, table: Table) -> Text:
    """The board a square per two columns: its colour letter; `##` covered, `**` a joker,
    1-4 the tokens, `<>` your candidate placement."""
    squares = rnd.board.colours
    rows = max(r for r, _ in squares) + 1
    cols = max(c for _, c in squares) + 1
    tokens = {tok.square: i for i, tok in enumerate(rnd.tokens)}
    mine: set[tuple[int, int]] = set()
    controller = _controller(table, 0)
    if controller is not None and not controller.joker_mode:
        choice = controller.selected()
        if isinstance(choice, PlaceDomino):
            mine = {choice.near, choice.far}
    elif controller is not None:
        choice = controller.selected()
        if choice is not None:
            mine = {choice[1]}
    out = Text()
    for r in range(rows):
        if r:
            out.append("\n")
        for c in range(cols):
            colour = squares.get((r, c))
            if colour is None:
                out.append("  ")
                continue
            letter = colour.letter
            covered = rnd.covered.get((r, c))
            if (r, c) in tokens:
                tok = rnd.tokens[tokens[(r, c)]]
                held = "" if tok.reserved_by is None else "!"
                out.append(f"{tokens[(r, c)] + 1}{held or ' '}", style=f"bold white on {STYLE[letter]}")
            elif (r, c) in mine:
                out.append("<>", style="bold black on white blink")
            elif covered is not None:
                out.append("**" if covered[1] == JOKER else "##", style=f"{STYLE[letter]} on grey11")
            else:
                out.append(letter.lower() + " ", style=f"black on {STYLE[letter]}")
    out.append("\n## covered · ** joker · 1-4 tokens (! held) · <> yours", style="dim")
    return out


def _crazy_piles(rnd: CrazyRound) -> Text:
    out = Text(f"{len(rnd.piles)} of {rnd.pile_limit} piles", style="dim")
    if not rnd.piles:
        out.append(": a 1 or a Crazy starts one", style="dim")
    for n, pile in enumerate(rnd.piles.values()):
        out.append("\n" if n % 2 == 0 else "   ")
        card = pile.cards[-1][1]
        out.append(f"pile {n + 1} ", style="dim")
        out.append_text(chip(card.colour.letter, str(pile.top)))
        out.append(f"{NAME[card.colour.letter]:<6}", style=STYLE[card.colour.letter])
    return out


def _phase_words(table: Table) -> Text:
    phase, match = str(table.phase), table.match
    seats = table.seat_of_player
    if phase == "attract":
        return Text("Nobody is at the table yet.\nPress space to join as seat 1.", style="bold")
    if phase == "lobby":
        lo, hi = PLAYERS[table.game]
        out = Text("The lobby\n", style="bold")
        out.append("game: ")
        for g in GAMES:
            out.append(f" {g} ", style="bold black on white" if g == table.game else "dim")
        out.append(f"\nplayers: {table.players} ({lo} to {hi}): ")
        out.append(", ".join([f"seat {s + 1}" + (" (you)" if s == 0 else "") for s in table.joined]
                             + [f"seat {seats[p] + 1} (bot)" for p in table.bots if p < len(seats)])
                   or "nobody yet")
        if table.matches_played and match is not None and match.results:
            out.append("\nlast match: " + _standings(table, list(match.totals)), style="dim")
        return out
    if match is None:
        return Text(phase)
    if phase == "countdown":
        return Text(f"{table.game}, round {match.round_no + 1}: get ready…", style="bold")
    if phase == "round_result" and match.results:
        result = match.results[-1]
        ending = str(result.ending).replace("_", " ")
        out = Text(f"Round {len(match.results)} over ({ending})\n", style="bold")
        out.append("this round: " + _standings(table, list(result.scores)) + "\n")
        out.append("totals:     " + _standings(table, list(match.totals)))
        return out
    if phase == "match_result":
        winners = ", ".join(f"seat {seats[p] + 1}" for p in match.winners if p < len(seats))
        out = Text(f"Match over: {winners} {'win' if len(match.winners) > 1 else 'wins'}!\n", style="bold")
        out.append("totals: " + _standings(table, list(match.totals)))
        return out
    return Text(phase)


def _standings(table: Table, scores: list[int]) -> str:
    seats = table.seat_of_player
    order = sorted(range(len(scores)), key=lambda p: -scores[p])
    return ", ".join(f"seat {seats[p] + 1} {scores[p]:+d}" for p in order if p < len(seats))


# ---------------------------------------------------------------- a seat


def _controller(table: Table, seat: int) -> SeatController | None:
    player = table.player_of(seat)
    if table.referee is None or player is None or player >= len(table.referee.seats):
        return None
    return table.referee.seats[player]


def seat_words(table: Table, seat: int) -> Text:
    """One physical seat's own cards as cards, its cursor, and its last refusal."""
    controller = _controller(table, seat)
    if controller is None or str(table.phase) != "playing" or table.match is None:
        return Text("")
    rnd = table.match.round
    if isinstance(rnd, ClassicRound):
        out = _classic_seat(controller, rnd)
    elif isinstance(rnd, DiceRound):
        out = _dice_seat(controller, rnd)
    elif isinstance(rnd, DominoRound):
        out = _domino_seat(controller, rnd)
    else:
        out = _crazy_seat(controller, rnd)
    if controller.message:
        out.append("\n")
        out.append(f" {controller.message} ", style="bold white on dark_red")
    return out


def _classic_seat(c: SeatController, rnd: ClassicRound) -> Text:
    st = rnd.seats[c.seat]
    places = c.choices()
    row = len(st.row)
    out = Text("row ", style="dim")
    cursor = c.cursor % len(places) if places else -1
    for i, card in enumerate(places):
        if i == row:
            out.append("  stack " if not rnd.options.stack_face_down else "  discard ", style="dim")
        elif i == row + 1:
            out.append("  discard ", style="dim")
        if c.destination == i:
            out.append("v", style="bold white")
        out.append_text(_card(card, i == cursor))
    out.append(f"\nstack {len(st.stack)} · hand {len(st.hand)} · discard {len(st.discard)}", style="dim")
    return out


def _card(card: Any, selected: bool) -> Text:
    if card is None:
        return Text("[ -- ]" if selected else "  --  ", style="grey50")
    assert isinstance(card, Card)
    return chip(card.colour.letter, str(card.value), selected)


def _dice_seat(c: SeatController, rnd: DiceRound) -> Text:
    dice = c.choices()
    out = Text("your dice ", style="dim")
    for i, die in enumerate(dice):
        out.append_text(chip(die.colour.letter, str(die.face), i == c.cursor % len(dice)))
    out.append(f"\n{len(dice)} left", style="dim")
    return out


def _domino_seat(c: SeatController, rnd: DominoRound) -> Text:
    st = rnd.seats[c.seat]
    top = rnd.top_card(c.seat)
    out = Text("top card ", style="dim")
    if top is None:
        out.append("none")
    else:
        out.append_text(chip(top.a.letter, top.a.letter))
        out.append_text(chip(top.b.letter, top.b.letter))
    options = c.choices()
    if options:
        choice = options[c.cursor % len(options)]
        if c.joker_mode:
            token, square = choice
            out.append(f"  joker {c.cursor % len(options) + 1}/{len(options)}: token {token + 1} "
                       f"to {square[0] + 1},{square[1] + 1} (<> on the board)", style="bold")
        else:
            out.append(f"  placement {c.cursor % len(options) + 1}/{len(options)}: token {choice.token + 1}, "
                       f"<> on the board", style="bold")
    else:
        out.append("  no joker square" if c.joker_mode else "  fits nowhere: enter discards it", style="bold")
    out.append(f"\nhand {len(st.hand)} · pile {len(st.discard)} · jokers {st.jokers}", style="dim")
    if st.jokers and not c.joker_mode and not rnd.owed(c.seat) and (not options or rnd.joker_needed(c.seat)):
        out.append(" · up plays a joker", style="bold")
    return out


def _crazy_seat(c: SeatController, rnd: CrazyRound) -> Text:
    hand = c.choices()
    out = Text("hand ", style="dim")
    for i, card in enumerate(hand):
        assert isinstance(card, CrazyCard)
        label = "*" if card.crazy else str(card.value)
        out.append_text(chip(card.colour.letter, label, i == c.cursor % len(hand)))
    targets = c.targets()
    if hand and targets:
        pile, value = targets[c.target % len(targets)]
        where = "a new pile" if pile is None else f"pile {list(rnd.piles).index(pile) + 1}"
        out.append(f"  -> {where}" + (f" as {value}" if value is not None else "")
                   + f" ({c.target % len(targets) + 1}/{len(targets)})", style="bold")
    elif hand:
        out.append("  fits nowhere: enter discards it", style="bold")
    st = rnd.seats[c.seat]
    out.append(f"\ndraw {len(st.draw)} · won {len(st.score)} · discarded {len(st.discard)}", style="dim")
    return out


# ---------------------------------------------------------------- keys

COMMON = "t table/frames · v watch a seat · x abort to lobby · q quit"
KEYS = {
    "classic": "←/→ choose a card · space plays it · enter turns 3 from your hand · 1-5 plays that place",
    "pro_row": "↑ marks the row place for the next card · ↓ unmarks, or votes stuck",
    "dice": "←/→ choose a die · space places it · enter rerolls all your dice",
    "domino": "←/→ next placement · space lays the card · enter discards it · "
              "↑ joker: ←/→ choose a square, space plays it · ↓ back",
    "crazy": "←/→ choose a card · ↑/↓ choose its pile and value · space plays it · enter discards it",
}


def key_help(table: Table) -> str:
    """The keys that do something now, in this game."""
    phase = str(table.phase)
    if phase in ("attract", "lobby"):
        return "space join · ←/→ choose the game · b/B add/remove a bot · enter start · " + COMMON
    if phase == "round_result":
        return "space: next round (after 3 s; by itself after 10 s) · " + COMMON
    if phase == "match_result":
        return "space: back to the lobby (after 3 s) · " + COMMON
    game = table.match.game if table.match is not None else table.game
    keys = KEYS.get(game, "")
    match = table.match
    rnd = match.round if match is not None else None
    if isinstance(rnd, ClassicRound) and rnd.options.pro_row:
        keys += " · " + KEYS["pro_row"]
    return f"{game}: {keys} · {COMMON}"
