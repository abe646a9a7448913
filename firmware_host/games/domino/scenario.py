"""Domino in scenario files: where the tokens stand, each seat's hand and jokers; tokens
are numbered from 1 in files, as on the seat screens."""

from __future__ import annotations

import random
from typing import Any

from ...engine.codec import from_dict
from ...engine.match import Match
from ...engine.round import RulesError, Wake, is_whole
from ...engine.setups import check_keys, fail, listed, parsed, seat_no, seat_tables
from .rules import JOKER, SET, TOKENS, Board, DominoAction, DominoCard, Square


def _square(value: Any, where: str, board: Board) -> Square:
    if not (isinstance(value, list) and len(value) == 2 and all(is_whole(x) for x in value)):
        raise fail(where, f"a square is [row, column], not {value!r}")
    sq = (value[0], value[1])
    if sq not in board.colours:
        raise fail(where, f"square {list(sq)} is not on the {board.name} board")
    return sq


def _covered(value: Any, players: int, where: str, board: Board) -> dict[Square, tuple[int, Any]]:
    """Cards and jokers already on the board: where each lies and whose it is, checked as a
    placement would be (halves touching, colours matching, each square once)."""
    out: dict[Square, tuple[int, Any]] = {}
    for i, item in enumerate(listed(value, where)):
        w = f"{where}[{i + 1}]"
        if not isinstance(item, dict):
            raise fail(w, 'a table like {seat = 1, card = "RB", near = [1, 2], far = [1, 3]} '
                       "or {seat = 1, joker = [2, 2]}")
        check_keys(item, {"seat", "card", "near", "far"} if "card" in item else {"seat", "joker"}, w)
        seat = seat_no(item.get("seat"), players, f"{w}.seat")
        if "card" in item:
            try:
                card = DominoCard.parse(str(item["card"]))
            except RulesError as exc:
                raise fail(f"{w}.card", str(exc)) from None
            near = _square(item.get("near"), f"{w}.near", board)
            far = _square(item.get("far"), f"{w}.far", board)
            if abs(near[0] - far[0]) + abs(near[1] - far[1]) != 1:
                raise fail(w, f"the halves of {card} must touch: {list(near)} and {list(far)} do not")
            x, y = sorted((board.colours[near], board.colours[far]))
            if (x, y) != card:
                raise fail(w, f"{card} cannot lie on {list(near)} and {list(far)}: those squares are "
                           f"{DominoCard(x, y)}")
            if any(s == seat and c == card for s, c in out.values()):
                raise fail(w, f"seat {seat + 1} has only one {card}")
            squares, what = [near, far], card
        elif "joker" in item:
            squares, what = [_square(item["joker"], f"{w}.joker", board)], JOKER
        else:
            raise fail(w, "give a card (with near and far) or a joker square")
        for sq in squares:
            if sq in out:
                raise fail(w, f"square {list(sq)} is covered twice")
            out[sq] = (seat, what)
    return out


def setup(rnd: dict[str, Any], players: int, where: str, rng: random.Random,
                  aside: list[list[DominoCard]], board: Board) -> dict[str, Any]:
    setup: dict[str, Any] = {}
    covered: dict[Square, tuple[int, Any]] = {}
    if "covered" in rnd:
        covered = _covered(rnd["covered"], players, f"{where}.covered", board)
        setup["covered"] = covered
    laid = [{c for s, c in covered.values() if s == seat and c != JOKER} for seat in range(players)]
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
            else:  # left out: the seat's 15 cards less its player board and laid cards, shuffled
                hand = [c for c in SET if c not in aside[s] and c not in laid[s]]
                rng.shuffle(hand)
            on_board = [str(c) for c in hand if c in laid[s]]
            if on_board:
                raise fail(f"{w}.hand", f"{', '.join(on_board)} already lie on the board ({where}.covered), "
                           "not in the hand")
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


def action(match: Match, raw: dict[str, Any], where: str) -> DominoAction | Wake:
    if "token" in raw:
        if not is_whole(raw["token"]) or not 1 <= raw["token"] <= TOKENS:
            raise fail(f"{where}.token", f"a token is 1 to {TOKENS}, not {raw['token']!r}")
        raw["token"] -= 1
    return from_dict(match.game, raw)
