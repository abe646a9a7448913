"""Ligretto Crazy on the web page: the piles in the colour of their top card and the value it
counts as (a Crazy card edged), how many of the piles the round allows are open; each seat's
hand, draw pile and cards won."""

from __future__ import annotations

from typing import Any

from ...views.boards import board as whole
from ...views.boards import card, cards, count, hand, piles, seat_no
from .rules import CrazyRound


def board(rnd: CrazyRound, seats: list[int]) -> dict[str, Any]:
    open_piles = []
    for pile in rnd.piles.values():
        owner, top, value = pile.cards[-1]
        open_piles.append(card(top.colour.letter, value, "edged" if top.crazy else None,
                               size=len(pile.cards), seat=seat_no(seats, owner)))
    hands = [hand(seats, player, cards([card(c.colour.letter, "*" if c.crazy else c.value) for c in st.hand],
                                       small=True),
                  count(f"draw {len(st.draw)} · won {len(st.score)}"))
             for player, st in enumerate(rnd.seats)]
    return whole(f"{len(open_piles)} of {rnd.pile_limit} piles",
                 [piles(open_piles, "no pile yet: a 1 or a Crazy starts one")], hands)
