"""Domino in scenario files: where the tokens stand, each seat's hand and jokers; tokens
are numbered from 1 in files, as on the seat screens."""

from __future__ import annotations

import random
from typing import Any

from ...engine.codec import from_dict
from ...engine.match import Match
from ...engine.round import is_whole
from ...engine.setups import fail, listed, parsed, seat_tables
from .rules import SET, TOKENS, DominoCard


def setup(rnd: dict[str, Any], players: int, where: str, rng: random.Random,
                  aside: list[list[DominoCard]]) -> dict[str, Any]:
    setup: dict[str, Any] = {}
    tokens = rnd.get("tokens")
    if tokens is not None:
        squares = []
        for i, sq in enumerate(listed(tokens, f"{where}.tokens")):
            if not (isinstance(sq, list) and len(sq) == 2 and all(is_whole(x) for x in sq)):
                raise fail(f"{where}.tokens[{i + 1}]", "a square is [row, column]")
            squares.append((sq[0], sq[1]))
        setup["tokens"] = squares
    seats = seat_tables(rnd, players, where, {"hand", "jokers", "board"})
    if seats is not None:
        hands, jokers = [], []
        if any("board" in seat for seat in seats):  # player boards as the round starts
            aside = [list(a) for a in aside]
            for s, seat in enumerate(seats):
                if "board" in seat:
                    w = f"{where}.seat[{s + 1}].board"
                    board = parsed(seat["board"], w, DominoCard.parse)
                    dupes = {str(c) for c in board if board.count(c) > 1}
                    if dupes:
                        raise fail(w, f"a player has each card once: {', '.join(sorted(dupes))}")
                    if len(board) >= len(SET):
                        raise fail(w, f"a player board holds fewer than the seat's {len(SET)} cards, "
                                   f"not {len(board)}")
                    aside[s] = board
            setup["aside"] = aside
        for s, seat in enumerate(seats):
            w = f"{where}.seat[{s + 1}]"
            if "hand" in seat:
                hand = parsed(seat["hand"], f"{w}.hand", DominoCard.parse)
            else:  # left out: the seat's 15 cards less its player board, shuffled from the seed
                hand = [c for c in SET if c not in aside[s]]
                rng.shuffle(hand)
            board = [str(c) for c in hand if c in aside[s]]
            if board:
                raise fail(f"{w}.hand", f"{', '.join(board)} lie on seat {s + 1}'s player board, "
                           "not in its hand")
            dupes = {str(c) for c in hand if hand.count(c) > 1}
            if dupes:
                raise fail(f"{w}.hand", f"a player has each card once: {', '.join(sorted(dupes))}")
            hands.append(hand[::-1])
            n = seat.get("jokers", 2)
            if not is_whole(n) or not 0 <= n <= 2:
                raise fail(f"{w}.jokers", f"0 to 2 jokers, not {n!r}")
            jokers.append(n)
        setup["hands"] = hands
        setup["jokers"] = jokers
    return setup


def action(match: Match, raw: dict[str, Any], where: str) -> Any:
    if "token" in raw:
        if not is_whole(raw["token"]) or not 1 <= raw["token"] <= TOKENS:
            raise fail(f"{where}.token", f"a token is 1 to {TOKENS}, not {raw['token']!r}")
        raw["token"] -= 1
    return from_dict(match.game, raw)
