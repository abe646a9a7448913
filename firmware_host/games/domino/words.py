"""Domino for a terminal: the board with tokens and your candidate placement, your top card, the keys."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from ...engine.game import Controls
from ...table.machine import Table
from ...views.readable import STYLE, chip, controller_of
from .rules import JOKER, DominoRound, PlaceDomino

KEYS = ("←/→ next placement · space lays the card · enter discards it · "
        "↑ joker: ←/→ choose a square, space plays it · ↓ back")


def keys(rnd: Any, direct: bool = False) -> str:
    return KEYS


LEGEND = "[X yours · ## covered · ** joker · 1-4 tokens"
"""One line of the 48 columns the table panel has at 80x24."""


def _ruler(cols: int) -> str:
    """Column numbers over the board (1, 5, 10, ...), two columns a square, as the joker's
    "to row,column" counts them."""
    marks = "".join(f"{c + 1:<2}" if c == 0 or (c + 1) % 5 == 0 else "  " for c in range(cols))
    return "   " + marks.rstrip()


def centre(rnd: DominoRound, table: Table) -> Text:
    """The board a square per two columns, each in its colour with its colour's letter (colour is
    never the only sign); covered squares `##` (`**` a joker) on grey; a token its number white
    on black (`!` held); your candidate placement in capitals on white, `[X`; rows and columns
    numbered."""
    squares = rnd.board.colours
    rows = max(r for r, _ in squares) + 1
    cols = max(c for _, c in squares) + 1
    tokens = {tok.square: i for i, tok in enumerate(rnd.tokens)}
    mine: set[tuple[int, int]] = set()
    controller = controller_of(table, 0)
    if controller is not None and not controller.joker_mode:
        choice = controller.selected()
        if isinstance(choice, PlaceDomino):
            mine = {choice.near, choice.far}
    elif controller is not None:
        choice = controller.selected()
        if choice is not None:
            mine = {choice[1]}
    out = Text(_ruler(cols) + "\n", style="dim")
    for r in range(rows):
        if r:
            out.append("\n")
        out.append(f"{r + 1:>2} ", style="dim")
        for c in range(cols):
            colour = squares.get((r, c))
            if colour is None:
                out.append("  ")
                continue
            letter = colour.letter
            covered = rnd.covered.get((r, c))
            if (r, c) in tokens:
                tok = rnd.tokens[tokens[(r, c)]]
                out.append(str(tokens[(r, c)] + 1), style="bold white on black")
                if tok.reserved_by is None:
                    out.append(letter.lower(), style=f"black on {STYLE[letter]}")
                else:
                    out.append("!", style="bold white on black")
            elif (r, c) in mine:
                out.append(f"[{letter}", style="bold black on white")
            elif covered is not None:
                out.append("**" if covered[1] == JOKER else "##", style=f"{STYLE[letter]} on grey11")
            else:
                out.append(letter.lower() + " ", style=f"black on {STYLE[letter]}")
    out.append("\n" + LEGEND, style="dim")
    return out


def _marked(rnd: DominoRound, square: tuple[int, int]) -> str:
    """A candidate square as the board shows it: `[` and its colour's capital."""
    return f"[{rnd.board.colours[square].letter}"


def seat(c: Controls, rnd: DominoRound) -> Text:
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
                       f"to row {square[0] + 1}, column {square[1] + 1} ({_marked(rnd, square)})",
                       style="bold")
        else:
            out.append(f"  placement {c.cursor % len(options) + 1}/{len(options)}: token {choice.token + 1}, "
                       f"{_marked(rnd, choice.near)} {_marked(rnd, choice.far)} on the board", style="bold")
    else:
        out.append("  no joker square" if c.joker_mode else "  fits nowhere: enter discards it", style="bold")
    out.append(f"\nhand {len(st.hand)} · pile {len(st.discard)} · jokers {st.jokers}", style="dim")
    if st.jokers and not c.joker_mode and not rnd.owed(c.seat) and (not options or rnd.joker_needed(c.seat)):
        out.append(" · up plays a joker", style="bold")
    return out
