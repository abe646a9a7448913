"""Ligretto in scenario files: each seat's row, stack, hand and discard, and the centre piles."""

from __future__ import annotations

import random
from itertools import pairwise
from typing import Any

from ...engine.round import RulesError, is_digits
from ...engine.setups import fail, listed, parsed, seat_no, seat_tables
from .rules import DECK, STACK_SIZE, Card, Deal, row_size


def _pileparsed(rnd: dict[str, Any], players: int) -> list[set[Card]]:
    """Cards the file lays on centre piles, per seat (leniently: errors are reported later)."""
    out: list[set[Card]] = [set() for _ in range(players)]
    piles = rnd.get("pile")
    for pile in piles if isinstance(piles, list) else []:
        for token in pile.split() if isinstance(pile, str) else pile if isinstance(pile, list) else []:
            seat_text, _, card_text = str(token).partition(":")
            try:
                if is_digits(seat_text) and 1 <= int(seat_text) <= players:
                    out[int(seat_text) - 1].add(Card.parse(card_text))
            except RulesError:
                pass
    return out


def _row_place(cards: list[Card], pro_row: bool, where: str) -> None:
    """A row place a table could show: one card, or with pro_row a run laid on it as the round
    takes it (bottom first: each card exactly one lower than the one below, in another colour)."""
    if len(cards) > 1 and not pro_row:
        raise fail(where, f"a row place holds one card without pro_row, not {len(cards)} "
                   f"({' '.join(map(str, cards))})")
    for below, card in pairwise(cards):
        if card.value != below.value - 1 or card.colour == below.colour:
            raise fail(where, f"{card} cannot lie on {below}: a pro_row place runs down by exactly one "
                       f"in another colour each card, bottom first (e.g. R5 G4 B3), not "
                       f"{' '.join(map(str, cards))}")


def setup(rnd: dict[str, Any], players: int, where: str, rng: random.Random,
          pro_row: bool = False) -> dict[str, Any]:
    setup: dict[str, Any] = {}
    seats = seat_tables(rnd, players, where, {"row", "stack", "hand", "discard"})
    if seats is not None:
        deals = []
        on_piles = _pileparsed(rnd, players)
        for s, seat in enumerate(seats):
            w = f"{where}.seat[{s + 1}]"
            row = []
            for i, place in enumerate(listed(seat.get("row", []), f"{w}.row")):
                cards = parsed(place if isinstance(place, list) else [place], f"{w}.row[{i + 1}]", Card.parse)
                _row_place(cards, pro_row, f"{w}.row[{i + 1}]")
                row.append(cards)
            if len(row) > row_size(players):
                raise fail(f"{w}.row", f"{players} players have {row_size(players)} row places, "
                           f"not {len(row)}")
            stack = parsed(seat.get("stack", []), f"{w}.stack", Card.parse)
            if len(stack) > STACK_SIZE:
                raise fail(f"{w}.stack", f"a Ligretto stack holds {STACK_SIZE} cards at most, "
                           f"not {len(stack)}")
            hand = parsed(seat.get("hand", []), f"{w}.hand", Card.parse)
            discard = parsed(seat.get("discard", []), f"{w}.discard", Card.parse)
            # Left out: dealt from the seed, from what the file has not placed, as at the table.
            given = {c for place in row for c in place} | set(stack) | set(hand) | set(discard) | on_piles[s]
            rest = [c for c in DECK if c not in given]
            rng.shuffle(rest)
            if "row" not in seat:
                row, rest = [[c] for c in rest[:row_size(players)]], rest[row_size(players):]
            if "stack" not in seat:
                stack, rest = rest[:STACK_SIZE], rest[STACK_SIZE:]
            if "hand" not in seat:
                hand = rest
            deals.append(Deal(row=row, stack=stack[::-1], hand=hand[::-1], discard=discard[::-1]))
        setup["deals"] = deals
    piles = rnd.get("pile")
    if piles is not None:
        used: list[set[tuple[int, Card]]] = [set() for _ in range(players)]
        for s, deal in enumerate(setup.get("deals", [])):
            used[s] = {(s, c) for c in deal.cards()}
        out = []
        for p, pile in enumerate(listed(piles, f"{where}.pile")):
            w = f"{where}.pile[{p + 1}]"
            cards = []
            for i, token in enumerate(listed(pile, w)):
                seat_text, sep, card_text = str(token).partition(":")
                if not sep or not is_digits(seat_text):
                    raise fail(f"{w}[{i + 1}]", f"write seat:card, e.g. 1:R5, not {token!r}")
                seat = seat_no(int(seat_text), players, f"{w}[{i + 1}]")
                try:
                    card = Card.parse(card_text)
                except RulesError as exc:
                    raise fail(f"{w}[{i + 1}]", str(exc)) from None
                if (seat, card) in used[seat]:
                    raise fail(f"{w}[{i + 1}]", f"seat {seat + 1} has only one {card}")
                used[seat].add((seat, card))
                cards.append((seat, card))
            out.append(cards)
        setup["piles"] = out
    for s, deal in enumerate(setup.get("deals", [])):
        cards = deal.cards()
        dupes = {str(c) for c in cards if cards.count(c) > 1}
        if dupes:
            raise fail(f"{where}.seat[{s + 1}]", f"a deck holds each card once: {', '.join(sorted(dupes))}")
    return setup
