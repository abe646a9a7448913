"""Ligretto on the web page: the open piles (a complete one dimmed), and each seat's row, stack
top (ringed) and discard top, with what is left in stack and hand."""

from __future__ import annotations

from typing import Any

from ...views.boards import board as whole
from ...views.boards import card, cards, count, empty, gap, hand, piles, seat_no
from .rules import Card, ClassicRound


def _card(c: Card | None, look: str | None = None) -> Any:
    return empty(look) if c is None else card(c.colour.letter, c.value, look)


def board(rnd: ClassicRound, seats: list[int]) -> dict[str, Any]:
    complete = {int(top) for top in rnd.complete_tops()}  # a pile that takes no more cards
    open_piles = []
    for pile in rnd.piles:
        owner, top = pile[-1]
        open_piles.append(card(top.colour.letter, top.value, "dim" if int(top) in complete else None,
                               size=len(pile), seat=seat_no(seats, owner)))
    n = len(open_piles)
    head = f"{n} pile{'' if n == 1 else 's'}" + (", counting down" if rnd.options.descending else "")
    hands = []
    for player, st in enumerate(rnd.seats):
        stack_top = st.stack[-1] if st.stack and not rnd.options.stack_face_down else None
        hands.append(hand(seats, player,
                          cards([_card(place[-1] if place else None) for place in st.row], small=True),
                          gap(),
                          cards([_card(stack_top, "ringed"), _card(st.discard[-1] if st.discard else None)],
                                small=True),
                          count(f"stack {len(st.stack)} · hand {len(st.hand)}")))
    return whole(head, [piles(open_piles, "no pile yet: a 1 starts one")], hands)
