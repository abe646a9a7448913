"""Crazy for a terminal: the piles, a seat's hand as cards and where the selected one goes, the keys."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from ...engine.game import Controls
from ...views.readable import NAME, STYLE, chip
from .rules import CrazyCard, CrazyRound

KEYS = "←/→ choose a card · ↑/↓ choose its pile and value · space plays it · enter discards it"


def keys(rnd: Any, direct: bool = False) -> str:
    return KEYS


def centre(rnd: CrazyRound, table: Any) -> Text:
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


def seat(c: Controls, rnd: CrazyRound) -> Text:
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
