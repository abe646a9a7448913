"""Tiny: a game that lives only in the tests, to show that a game is one package with one entry,
registered once, with nothing changed elsewhere (docs/games.md, "Adding a game")."""

from __future__ import annotations

import random
from types import MethodType
from typing import Any, ClassVar

from PIL import ImageDraw
from rich.text import Text

from firmware_host.engine.game import Game, register, unregister
from firmware_host.engine.options import OptionSpec, whole
from firmware_host.engine.round import Seat, field_int
from firmware_host.engine.setups import fail, parsed, seat_tables
from firmware_host.table.controls import steps
from firmware_host.views.font import LARGE, draw_centred, draw_digit, draw_text

from .rules import Lay, Redraw, TinyRound, TinySight


def _play(bot: Any, s: TinySight, now: int) -> Any:
    """Lay the first card that fits, else draw a new hand."""
    card = next((c for c in s.hand() if abs(c - s.centre()) == 1 and bot.sees()), None)
    return Lay(s.seat, card, now) if card is not None else Redraw(s.seat, now)


class TinyGame(Game):
    name = "tiny"
    players = (2, 4)
    options: ClassVar[dict[str, OptionSpec]] = {
        "rounds": OptionSpec(whole(1, 100), 2, "rounds in the match"),
        "goal": OptionSpec(whole(1, 20), 5, "cards a seat lays to end the round"),
    }
    actions: ClassVar[dict[str, type]] = {"lay": Lay, "redraw": Redraw}
    fields: ClassVar[dict[type, frozenset[str]]] = {Lay: frozenset({"card"}), Redraw: frozenset()}
    routine: ClassVar[frozenset[type]] = frozenset({Redraw})
    scenario_keys: ClassVar[frozenset[str]] = frozenset({"seat", "board"})

    def new_round(self, match: Any, rng: random.Random, setup: dict[str, Any]) -> TinyRound:
        return TinyRound(match.players, match.options["goal"], rng, **setup)

    def sight(self, rnd: Any, seat: Seat) -> TinySight:
        return TinySight(rnd, seat)

    def encode(self, action: Any) -> dict[str, Any]:
        return {"card": action.card} if isinstance(action, Lay) else {}

    def decode(self, kind: type, d: dict[str, Any], seat: Seat, ts: int, context: Any) -> Any:
        return Lay(seat, field_int(d, "card"), ts) if kind is Lay else Redraw(seat, ts)

    def choices(self, c: Any) -> list[Any]:
        return list(c.match.round.hands[c.seat])

    def alt(self, c: Any, ts: int) -> Any:
        return Redraw(c.seat, ts)

    def slap(self, c: Any, choice: Any, ts: int) -> Any:
        return Lay(c.seat, choice, ts)

    def presses_for(self, c: Any, action: Any) -> list[str] | None:
        if isinstance(action, Redraw):
            return ["alt"]
        hand = self.choices(c)
        if action.card not in hand:
            return None
        return [*steps(c.cursor, hand.index(action.card), len(hand)), "slap"]

    def policy(self, bot: Any, sight: Any) -> Any:
        return MethodType(_play, bot)

    def draw_seat(self, img: Any, c: Any, rnd: TinyRound) -> str:
        hand = self.choices(c)
        for i, card in enumerate(hand):
            x = i * 30
            selected = i == c.cursor % len(hand)
            ImageDraw.Draw(img).rectangle((x, 12, x + 26, 40), outline=1, fill=1 if selected else 0)
            draw_centred(img, 22, str(card), LARGE, 0 if selected else 1, x, x + 27)
        draw_text(img, (96, 20), f"ON {rnd.centre}")
        return f"LAID {rnd.laid[c.seat]} OF {rnd.goal}"

    def draw_centre(self, img: Any, rnd: TinyRound, blink: bool, marks: dict[int, Any]) -> None:
        draw_digit(img, (1, 1), rnd.centre, (255, 255, 255), (2, 2))

    def centre_words(self, rnd: TinyRound, table: Any) -> Text:
        return Text(f"the number is {rnd.centre}", style="bold")

    def seat_words(self, c: Any, rnd: TinyRound) -> Text:
        return Text("hand " + " ".join(f"[{n}]" if i == c.cursor else f" {n} "
                                       for i, n in enumerate(self.choices(c))))

    def keys(self, rnd: Any, direct: bool = False) -> str:
        return "←/→ choose a card · space lays it · enter draws a new hand"

    def scenario_setup(self, rnd: dict[str, Any], players: int, where: str, rng: Any,
                       options: dict[str, Any], match: Any) -> dict[str, Any]:
        setup: dict[str, Any] = {}
        if "centre" in rnd:
            setup["centre"] = rnd["centre"]
        seats = seat_tables(rnd, players, where, {"hand"})
        if seats is not None:
            setup["hands"] = [parsed(seat.get("hand", []), f"{where}.seat[{s}].hand", int)
                              for s, seat in enumerate(seats)]
            if any(len(h) != 3 for h in setup["hands"]):
                raise fail(f"{where}.seat", "each hand holds 3 cards")
        return setup


def install() -> None:
    """Register Tiny: from now on the table offers it."""
    register(TinyGame())


def uninstall() -> None:
    unregister("tiny")
