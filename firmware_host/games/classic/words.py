"""Ligretto for a terminal: the piles' tops by colour, a seat's cards as cards, the keys."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from ...engine.game import Controls
from ...views.readable import STYLE, chip, colour_word
from .rules import Card, ClassicRound

KEYS = "←/→ choose a card · space plays it · enter turns 3 from your hand"
PRO_ROW = "↑ marks the row place for the next card · ↓ unmarks, or votes stuck"


def keys(rnd: Any, direct: bool = False) -> str:
    """The direct keys only where the seat has select buttons (a laptop's keyboard seat), as many
    as the row has places (a 4-player row has 3: key 4 would play the stack top)."""
    places = len(rnd.seats[0].row) if rnd is not None else 5
    return KEYS + (f" · 1-{places} plays that row place" if direct else "") + (
        " · " + PRO_ROW if rnd is not None and rnd.options.pro_row else "")


def centre(rnd: ClassicRound, table: Any) -> Text:
    tops = rnd.pile_tops()
    down = " (counting down)" if rnd.options.descending else ""
    out = Text(f"{len(tops)} pile{'' if len(tops) == 1 else 's'} open, tops by colour{down}\n", style="dim")
    for letter in "RGBY":
        values = sorted((c.value for c in tops if c.colour.letter == letter),
                        reverse=rnd.options.descending)
        out.append_text(colour_word(letter))
        out.append(" ".join(f"{v:>2}" for v in values) if values else " -", style=f"bold {STYLE[letter]}")
        out.append("\n")
    out.rstrip()
    return out


def seat(c: Controls, rnd: ClassicRound) -> Text:
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
