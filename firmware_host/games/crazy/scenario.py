"""Crazy in scenario files: cards named by kind (R3, R3p, R*), each seat's hand, draw and discard."""

from __future__ import annotations

import random
from typing import Any

from ...engine.match import Match
from ...engine.round import RulesError, is_digits, is_whole
from ...engine.setups import fail, listed, parsed, seat_no, seat_tables
from .rules import (
    BOTTOM,
    HAND_SIZE,
    TOP,
    CrazyCard,
    CrazyColour,
    CrazyRound,
    CrazySetup,
    DiscardCrazy,
    PlayCrazy,
)


def _crazy_spec(text: str) -> tuple[CrazyColour | None, int, str | None]:
    """`R3`, `R3p` (style initial), `R*` (Crazy), or just `3` / `*` for the seat's own colour."""
    t = text.strip().upper()
    colour = None
    for c in CrazyColour:
        if t.startswith(c.letter) and len(t) > 1:
            colour, t = c, t[1:]
            break
    if t == "*":
        return colour, 0, None
    if is_digits(t[:1]) and 1 <= int(t[0]) <= 5 and len(t) <= 2:
        style = t[1].lower() if len(t) == 2 else None
        if style is not None and style not in "ptdwf":
            raise RulesError(f"unknown style letter in {text!r} (p t d w f)")
        return colour, int(t[0]), style
    raise RulesError(f"not a Crazy card: {text!r} (write e.g. R3, R3p, R*)")


def _piles(value: Any, players: int, where: str, take: Any) -> list[list[tuple[int, CrazyCard, int]]]:
    """Piles already started, each as the round would have built it: `seat:card`, bottom first,
    a Crazy card with the value it counts as (`2:Y*=3`; a pile's first card counts as 1)."""
    piles = []
    for p, pile in enumerate(listed(value, where)):
        w = f"{where}[{p + 1}]"
        cards: list[tuple[int, CrazyCard, int]] = []
        for i, token in enumerate(listed(pile, w)):
            wi = f"{w}[{i + 1}]"
            seat_text, sep, rest = str(token).partition(":")
            card_text, eq, value_text = rest.partition("=")
            if not sep or not is_digits(seat_text):
                raise fail(wi, f"write seat:card, e.g. 1:R1 or 2:Y*=3, not {token!r}")
            seat = seat_no(int(seat_text), players, wi)
            try:
                card = take(card_text, seat)
            except RulesError as exc:
                raise fail(wi, str(exc)) from None
            if eq and not card.crazy:
                raise fail(wi, f"only a Crazy card counts as a value it chooses, not {card_text}")
            if card.crazy and not cards:
                counts = BOTTOM if not eq or value_text == str(BOTTOM) else -1
            elif card.crazy:
                counts = int(value_text) if eq and is_digits(value_text) else -1
            else:
                counts = card.value
            top = cards[-1][2] if cards else None
            if top is None and counts != BOTTOM:
                raise fail(wi, f"a pile starts with a 1 or a Crazy card counting 1, not {token}")
            if top is not None and (abs(counts - top) != 1 or not BOTTOM <= counts <= TOP):
                raise fail(wi, f"{token} cannot lie on a {top}: one higher or lower"
                           + (" (a Crazy card says what it counts as: =value)" if card.crazy else ""))
            if counts == TOP and top == TOP - 1:
                raise fail(wi, f"a {TOP} on a {TOP - 1} wins the pile: it would not be on the table")
            cards.append((seat, card, counts))
        if not cards:
            raise fail(w, "a pile has at least one card")
        piles.append(cards)
    if len(piles) > players:
        raise fail(where, f"{players} players have {players} piles at most, not {len(piles)}")
    return piles


def setup(rnd: dict[str, Any], players: int, where: str, match_deck: Any,
                 rng: random.Random | None = None) -> dict[str, Any]:
    rng = rng or random.Random(f"{where}/crazy")
    seats = seat_tables(rnd, players, where, {"hand", "draw", "discard"})
    pools = [match_deck.cards(CrazyColour(s)) for s in range(players)]
    out: dict[str, Any] = {}
    if "pile" in rnd:
        out["piles"] = _piles(rnd["pile"], players, f"{where}.pile",
                              lambda text, s: _take(text, pools[s], s))
        if seats is None:  # the cards on piles are no longer in the seats' decks
            seats = [{} for _ in range(players)]
    if seats is None:
        return out
    setups = []
    for s, seat in enumerate(seats):
        w = f"{where}.seat[{s + 1}]"
        pool = pools[s]

        def take(text: str, pool: list[CrazyCard] = pool, seat_no: int = s) -> CrazyCard:
            return _take(text, pool, seat_no)

        hand = parsed(seat.get("hand", []), f"{w}.hand", take)
        if len(hand) > HAND_SIZE:
            raise fail(f"{w}.hand", f"a hand holds {HAND_SIZE} cards at most, not {len(hand)}")
        draw = parsed(seat.get("draw", []), f"{w}.draw", take)
        discard = parsed(seat.get("discard", []), f"{w}.discard", take)
        if "draw" not in seat:  # left out: the rest of the seat's cards, shuffled from the seed
            draw = list(pool)
            rng.shuffle(draw)
        setups.append(CrazySetup(hand=hand, draw=draw[::-1], discard=discard[::-1]))
    return {**out, "setups": setups}


def _take(text: str, pool: list[CrazyCard], seat_no: int) -> CrazyCard:
    """The seat's first card of that kind still in its 36, taken out of them."""
    colour, value, style = _crazy_spec(text)
    if colour is not None and colour != seat_no:
        raise RulesError(f"seat {seat_no + 1} plays {CrazyColour(seat_no).name.lower()}")
    for card in pool:
        if card.value == value and (style is None or card.style[0] == style):
            pool.remove(card)
            return card
    raise RulesError(f"no {text} left in seat {seat_no + 1}'s 36 cards")


def action(match: Match, raw: dict[str, Any]) -> PlayCrazy | DiscardCrazy:
    """Crazy cards are named by kind (R3, R*); the seat's first such hand card is meant."""
    rnd = match.round
    assert isinstance(rnd, CrazyRound)
    text = raw.get("card")
    if not isinstance(text, str):
        raise RulesError("missing 'card'")
    colour, value, style = _crazy_spec(text)
    seat = raw["seat"]
    card = next((c for c in rnd.seats[seat].hand
                 if c.value == value and (style is None or c.style[0] == style)
                 and (colour is None or c.colour == colour)), None)
    if card is None:
        card = CrazyCard(CrazyColour(colour if colour is not None else seat), value, "?", -1)
    do = raw.get("do")
    allowed = {"do", "seat", "ts", "card"} | ({"pile", "value"} if do == "play" else set())
    unknown = sorted(set(raw) - allowed)
    if unknown and do in ("play", "discard"):
        raise RulesError(f"unknown field {unknown[0]!r} in a {do} action (known: "
                         f"{', '.join(sorted(allowed - {'do', 'ts'}))})")
    if do == "discard":
        return DiscardCrazy(seat, card, raw["ts"])
    if do != "play":
        raise RulesError(f"unknown action do={do!r} for crazy (known: play, discard)")
    pile = raw.get("pile")
    if pile is not None and (not isinstance(pile, int) or isinstance(pile, bool)):
        raise RulesError("'pile' is a pile number (from 1), or leave it out to start a pile")
    value_as = raw.get("value")
    if value_as is not None and not is_whole(value_as):
        raise RulesError("'value' is what a Crazy card counts as")
    if value_as is not None and value != 0:
        raise RulesError(f"'value' is only for a Crazy card ({text} counts as {value}); "
                         "leave it out or play a Crazy card, e.g. R*")
    return PlayCrazy(seat, card, None if pile is None else pile - 1, value_as, raw["ts"])
