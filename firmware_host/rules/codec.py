"""Actions to and from plain data, for the journal, scenario files and `--json`.

One spelling per action: `{"do": "play", "seat": 0, "card": "R7", "ts": 1200}`.
Seats are 0-based here as everywhere in the engine.
"""

from __future__ import annotations

from typing import Any

from .classic import Card, MoveToRow, PlayCard, TurnHand, VoteStuck
from .common import RulesError, Wake, is_whole
from .crazy import CrazyCard, CrazyColour, DiscardCrazy, PlayCrazy
from .dice import Die, DieColour, PlaceDie, Reroll
from .domino import DiscardDomino, DominoCard, PlaceDomino, PlayJoker

Action = (
    PlayCard | TurnHand | MoveToRow | VoteStuck | PlaceDie | Reroll
    | PlaceDomino | PlayJoker | DiscardDomino | PlayCrazy | DiscardCrazy | Wake
)

_NAMES: dict[type, tuple[str, str]] = {
    PlayCard: ("classic", "play"),
    TurnHand: ("classic", "turn"),
    MoveToRow: ("classic", "row"),
    VoteStuck: ("classic", "stuck"),
    PlaceDie: ("dice", "place"),
    Reroll: ("dice", "reroll"),
    PlaceDomino: ("domino", "place"),
    PlayJoker: ("domino", "joker"),
    DiscardDomino: ("domino", "discard"),
    PlayCrazy: ("crazy", "play"),
    DiscardCrazy: ("crazy", "discard"),
}
_TYPES: dict[tuple[str, str], type] = {v: k for k, v in _NAMES.items()}
KINDS: dict[str, list[str]] = {}
for _game, _do in _NAMES.values():
    KINDS.setdefault(_game, []).append(_do)


def crazy_card_name(card: CrazyCard) -> str:
    """`R3p#4`: colour, value (or * for Crazy), style initial, serial in its colour."""
    return f"{card}#{card.serial}"


def parse_crazy_card(text: str, spec_cards: dict[str, CrazyCard]) -> CrazyCard:
    try:
        return spec_cards[text.strip()]
    except KeyError:
        raise RulesError(f"not a Crazy card: {text!r} (write e.g. R3p#8 or Y*#34)") from None


def crazy_index(deck: list[list[CrazyCard]]) -> dict[str, CrazyCard]:
    return {crazy_card_name(c): c for cards in deck for c in cards}


def to_dict(action: Action) -> dict[str, Any]:
    if type(action) is Wake:
        return {"do": "wake", "ts": action.ts}
    _, do = _NAMES[type(action)]
    out: dict[str, Any] = {"do": do, "seat": action.seat}
    if action.ts:
        out["ts"] = action.ts
    if isinstance(action, PlayCard | MoveToRow):
        out["card"] = str(action.card)
    if isinstance(action, MoveToRow):
        out["place"] = action.place
    if isinstance(action, PlaceDie):
        out["die"] = str(Die(action.colour, action.face))
    if isinstance(action, Reroll) and action.faces is not None:
        out["faces"] = list(action.faces)
    if isinstance(action, PlaceDomino):
        out |= {"card": str(action.card), "token": action.token,
                "near": list(action.near), "far": list(action.far)}
    if isinstance(action, PlayJoker):
        out |= {"token": action.token, "square": list(action.square)}
    if isinstance(action, PlayCrazy | DiscardCrazy):
        out["card"] = crazy_card_name(action.card)
    if isinstance(action, PlayCrazy):
        out["pile"] = action.pile
        if action.value is not None:
            out["value"] = action.value
    return out


def _square(value: Any, what: str) -> tuple[int, int]:
    if (
        not isinstance(value, list | tuple) or len(value) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in value)
    ):
        raise RulesError(f"{what} must be a square [row, column], not {value!r}")
    return (value[0], value[1])


def _int(d: dict[str, Any], key: str, default: Any = ...) -> Any:
    value = d.get(key, default)
    if value is ...:
        raise RulesError(f"missing '{key}'")
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise RulesError(f"'{key}' must be a whole number, not {value!r}")
    return value


def _str(d: dict[str, Any], key: str) -> str:
    value = d.get(key)
    if not isinstance(value, str):
        raise RulesError(f"missing '{key}'" if value is None else f"'{key}' must be text")
    return value


_FIELDS: dict[type, set[str]] = {
    PlayCard: {"card"}, TurnHand: set(), MoveToRow: {"card", "place"}, VoteStuck: set(),
    PlaceDie: {"die"}, Reroll: {"faces"},
    PlaceDomino: {"card", "token", "near", "far"}, PlayJoker: {"token", "square"}, DiscardDomino: set(),
    PlayCrazy: {"card", "pile", "value"}, DiscardCrazy: {"card"},
}
"""The fields each action takes besides do, seat and time: anything else is refused."""


def from_dict(game: str, d: dict[str, Any], crazy_cards: dict[str, CrazyCard] | None = None) -> Action:
    """The action a dict spells, or a RulesError naming what is wrong with it."""
    do = d.get("do")
    if do == "wake":
        unknown = sorted(set(d) - {"do", "ts", "at_ms", "expect"})
        if unknown:
            raise RulesError(f"unknown field {unknown[0]!r} in a wake")
        return Wake(_int(d, "ts", 0))
    kind = _TYPES.get((game, do))  # type: ignore[arg-type]
    if kind is None:
        raise RulesError(f"unknown action do={do!r} for {game} (known: {', '.join(KINDS[game])})")
    known = {"do", "seat", "ts", "at_ms", "expect"} | _FIELDS[kind]
    unknown = sorted(set(d) - known)
    if unknown:
        fields = ", ".join(sorted(_FIELDS[kind])) or "none"
        raise RulesError(f"unknown field {unknown[0]!r} in a {game} {do} action (its fields: {fields})")
    seat = _int(d, "seat")
    ts = _int(d, "ts", 0)
    if kind is PlayCard:
        return PlayCard(seat, Card.parse(_str(d, "card")), ts)
    if kind is TurnHand:
        return TurnHand(seat, ts)
    if kind is MoveToRow:
        return MoveToRow(seat, Card.parse(_str(d, "card")), _int(d, "place"), ts)
    if kind is VoteStuck:
        return VoteStuck(seat, ts)
    if kind is PlaceDie:
        die = Die.parse(_str(d, "die"))
        return PlaceDie(seat, DieColour(die.colour), die.face, ts)
    if kind is Reroll:
        faces = d.get("faces")
        if faces is not None and (not isinstance(faces, list) or not all(is_whole(f) for f in faces)):
            raise RulesError(f"'faces' must be a list of die faces 1 to 6, not {faces!r}")
        return Reroll(seat, ts, tuple(faces) if faces is not None else None)
    if kind is PlaceDomino:
        return PlaceDomino(seat, DominoCard.parse(_str(d, "card")), _int(d, "token"),
                           _square(d.get("near"), "near"), _square(d.get("far"), "far"), ts)
    if kind is PlayJoker:
        return PlayJoker(seat, _int(d, "token"), _square(d.get("square"), "square"), ts)
    if kind is DiscardDomino:
        return DiscardDomino(seat, ts)
    card = parse_crazy_card(_str(d, "card"), crazy_cards or {})
    if kind is DiscardCrazy:
        return DiscardCrazy(seat, card, ts)
    return PlayCrazy(seat, card, _int(d, "pile", None), _int(d, "value", None), ts)


__all__ = ["KINDS", "Action", "CrazyColour", "from_dict", "to_dict"]
