"""Ligretto Domino on the web page: the board square by square in its colours, the tokens
(numbered; held while a joker reserves one), the covered squares with the seat that covered
them (a star for a joker); each seat's top card, hand and jokers."""

from __future__ import annotations

from typing import Any

from ...views.boards import board as whole
from ...views.boards import count, grid, hand, seat_no, square, tile
from .rules import ANY_SEAT, JOKER, DominoRound

HEAD = "the board: tokens 1–4, free squares by colour and shape, covered squares by seat, ★ a joker"


def board(rnd: DominoRound, seats: list[int]) -> dict[str, Any]:
    colours = rnd.board.colours
    cols = max(c for _, c in colours) + 1
    tokens = {tok.square: i for i, tok in enumerate(rnd.tokens)}
    squares = []
    for (r, c), colour in sorted(colours.items()):
        if (r, c) in tokens:
            i = tokens[(r, c)]
            held = rnd.tokens[i].reserved_by is not None
            squares.append(square(r, c, colour.letter, token=i + 1, held=held))
            continue
        covered = rnd.covered.get((r, c))
        if covered is None:
            squares.append(square(r, c, colour.letter))
            continue
        owner = seat_no(seats, covered[0]) if covered[0] != ANY_SEAT else None
        cover = "★" if covered[1] == JOKER else "" if owner is None else str(owner)
        squares.append(square(r, c, colour.letter, cover=cover, owner=owner))
    hands = []
    for player, st in enumerate(rnd.seats):
        top = rnd.top_card(player)
        shown = [] if top is None else [tile(top.a.letter, top.b.letter)]
        hands.append(hand(seats, player, *shown, count(f"hand {len(st.hand)} · jokers {st.jokers}")))
    return whole(HEAD, [grid(cols, squares)], hands)
