"""The web page's words for a board: a small vocabulary of elements that a game's `board` hook
(engine/game.py) builds and the page's script draws (web/static/table.js), so that neither this
room nor the page ever names a game (docs/web.md, "The boards").

A board is `{"head": text, "middle": [element...], "hands": [{"seat": n, "holding":
[element...]}...]}`: a line above the middle of the table, what lies there, and what each seat
holds. Seats are numbered from 1, as the players see them. The elements:

- `piles`: the open piles in the middle, each a card (with the `seat` whose card is on top and
  its `size`); `empty` the hint shown while there are none.
- `cards`: a row of cards or dice (`shape` "die"), `small` in a seat's holding.
- `rows`: rows of cards or dice under one another (a board's lines).
- `grid`: squares by row and column (`r`, `col`), each with its colour `c` and perhaps a `token`
  (its number; `held` while reserved), or a `cover` (the mark on a covered square: its `owner`'s
  seat, a star, or nothing).
- `tile`: a card of two coloured halves (`halves`: their letters).
- `count`: counters in words ("stack 7 · hand 3").
- `gap`: a little room between two parts of a holding.

A card is `{"c": letter, "v": value}` (R, G, B, Y, P; a number, or "*"), with a `look` when it
differs from a plain card: "dim" (out of play), "edged" (outlined), "ringed" (ringed, as a stack
top is); a place with no colour shows its value alone (look "free"); an empty place is None (or
`{"look": ...}` alone). Every colour the page shows carries its letter too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

Element = dict[str, Any]
Card = dict[str, Any] | None


def seat_no(seats: Sequence[int], player: int) -> int:
    """The seat (from 1) a player sits at; a player beyond the seats keeps its own number."""
    return seats[player] + 1 if player < len(seats) else player + 1


def card(letter: str, value: int | str, look: str | None = None, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"c": letter, "v": value}
    if look:
        out["look"] = look
    return out | more


def free(value: int | str) -> dict[str, Any]:
    """A place that shows what goes there, in no colour (a board's free face)."""
    return {"v": value, "look": "free"}


def empty(look: str | None = None) -> Card:
    """An empty place (drawn as a dash)."""
    return {"look": look} if look else None


def board(head: str, middle: Iterable[Element], hands: Iterable[dict[str, Any]]) -> dict[str, Any]:
    return {"head": head, "middle": list(middle), "hands": list(hands)}


def hand(seats: Sequence[int], player: int, *holding: Element) -> dict[str, Any]:
    return {"seat": seat_no(seats, player), "holding": list(holding)}


def piles(cards: Iterable[Card], empty_hint: str) -> Element:
    return {"type": "piles", "cards": list(cards), "empty": empty_hint}


def cards(items: Iterable[Card], small: bool = False, shape: str = "card") -> Element:
    out: Element = {"type": "cards", "cards": list(items)}
    if small:
        out["small"] = True
    if shape != "card":
        out["shape"] = shape
    return out


def rows(lines: Iterable[Iterable[Card]], shape: str = "card") -> Element:
    out: Element = {"type": "rows", "rows": [list(line) for line in lines]}
    if shape != "card":
        out["shape"] = shape
    return out


def square(r: int, col: int, letter: str, token: int | None = None, held: bool = False,
           cover: str | None = None, owner: int | None = None) -> dict[str, Any]:
    """One square of a grid: its place and colour, and a token on it, or what covers it."""
    out: dict[str, Any] = {"r": r, "col": col, "c": letter}
    if token is not None:
        out["token"] = token
        out["held"] = held
    elif cover is not None:
        out["cover"] = cover
        out["owner"] = owner
    return out


def grid(cols: int, squares: Iterable[dict[str, Any]]) -> Element:
    return {"type": "grid", "cols": cols, "squares": list(squares)}


def tile(*letters: str) -> Element:
    return {"type": "tile", "halves": list(letters)}


def count(text: str) -> Element:
    return {"type": "count", "text": text}


def gap() -> Element:
    return {"type": "gap"}


TYPES = frozenset({"piles", "cards", "rows", "grid", "tile", "count", "gap"})
"""Every element the page draws (the conformance test holds each game's board to these)."""
LOOKS = frozenset({"dim", "edged", "ringed", "free"})
