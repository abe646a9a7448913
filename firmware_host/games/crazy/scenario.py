"""Crazy in scenario files: cards named by kind (R3, R3p, R*), each seat's hand, draw and discard."""

from __future__ import annotations

import random
from typing import Any

from ...engine.match import Match
from ...engine.round import RulesError, is_digits, is_whole
from ...engine.setups import fail, parsed, seat_tables
from .rules import HAND_SIZE, CrazyCard, CrazyColour, CrazyRound, CrazySetup, DiscardCrazy, PlayCrazy


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


def setup(rnd: dict[str, Any], players: int, where: str, match_deck: Any,
                 rng: random.Random | None = None) -> dict[str, Any]:
    rng = rng or random.Random(f"{where}/crazy")
    seats = seat_tables(rnd, players, where, {"hand", "draw", "discard"})
    if seats is None:
        return {}
    setups = []
    for s, seat in enumerate(seats):
        w = f"{where}.seat[{s + 1}]"
        pool = match_deck.cards(CrazyColour(s))

        def take(text: str, pool: list[CrazyCard] = pool, seat_no: int = s) -> CrazyCard:
            colour, value, style = _crazy_spec(text)
            if colour is not None and colour != seat_no:
                raise RulesError(f"seat {seat_no + 1} plays {CrazyColour(seat_no).name.lower()}")
            for card in pool:
                if card.value == value and (style is None or card.style[0] == style):
                    pool.remove(card)
                    return card
            raise RulesError(f"no {text} left in seat {seat_no + 1}'s 36 cards")

        hand = parsed(seat.get("hand", []), f"{w}.hand", take)
        if len(hand) > HAND_SIZE:
            raise fail(f"{w}.hand", f"a hand holds {HAND_SIZE} cards at most, not {len(hand)}")
        draw = parsed(seat.get("draw", []), f"{w}.draw", take)
        discard = parsed(seat.get("discard", []), f"{w}.discard", take)
        if "draw" not in seat:  # left out: the rest of the seat's cards, shuffled from the seed
            draw = list(pool)
            rng.shuffle(draw)
        setups.append(CrazySetup(hand=hand, draw=draw[::-1], discard=discard[::-1]))
    return {"setups": setups}


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
