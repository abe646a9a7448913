"""Tiny above the rules: its seat controls, bot, screens, words, key help and scenario set-up."""

from __future__ import annotations

from types import MethodType
from typing import Any, ClassVar

from PIL import ImageDraw
from rich.text import Text

from firmware_host.play.scenario import fail, parsed, seat_tables
from firmware_host.table.controls import steps
from firmware_host.table.kinds import GameKind
from firmware_host.views.font import LARGE, draw_centred, draw_digit, draw_text

from .rules import Lay, Redraw, TinyRound, TinySight


def _play(bot: Any, s: TinySight, now: int) -> Any:
    """Lay the first card that fits, else draw a new hand."""
    card = next((c for c in s.hand() if abs(c - s.centre()) == 1 and bot.sees()), None)
    return Lay(s.seat, card, now) if card is not None else Redraw(s.seat, now)


class TinyKind(GameKind):
    name = "tiny"
    routine: ClassVar[frozenset[type]] = frozenset({Redraw})
    scenario_keys: ClassVar[frozenset[str]] = frozenset({"seat", "board"})

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

    def keys(self, rnd: Any) -> str:
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
