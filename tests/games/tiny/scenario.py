"""Tiny's [[round]] tables: `board` the number in the middle, `seat` each hand of 3 cards."""

from __future__ import annotations

from typing import Any

from firmware_host.engine.round import is_whole
from firmware_host.engine.setups import fail, parsed, seat_tables

from .rules import HAND, HIGH, LOW


def setup(rnd: dict[str, Any], players: int, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "board" in rnd:
        centre = rnd["board"]
        if not is_whole(centre) or not LOW <= centre <= HIGH:
            raise fail(f"{where}.board", f"the number in the middle is {LOW} to {HIGH}, not {centre!r}")
        out["centre"] = centre
    seats = seat_tables(rnd, players, where, {"hand"})
    if seats is not None:
        out["hands"] = [parsed(seat.get("hand", []), f"{where}.seat[{s + 1}].hand", int)
                        for s, seat in enumerate(seats)]
        if any(len(h) != HAND for h in out["hands"]):
            raise fail(f"{where}.seat", f"each hand holds {HAND} cards")
    return out
