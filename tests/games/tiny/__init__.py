"""Tiny: a game that lives only in the tests, a package like the built-in ones (its entry here,
its pure rules and sight, its bot, screens, words, board and scenario set-up beside), to show
that a game is one package with one entry, registered once, with nothing changed elsewhere
(docs/games.md, "Adding a game"). The conformance test (tests/games/test_conformance.py) runs
it through everything a game must support."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, ClassVar

from firmware_host.engine.game import Game, register, unregister
from firmware_host.engine.options import OptionSpec, whole
from firmware_host.engine.round import Seat, field_int
from firmware_host.table.controls import steps

from .rules import Lay, Redraw, TinyRound
from .sight import TinySight

if TYPE_CHECKING:
    from PIL import Image

    from firmware_host.table.bot_players import Bot
    from firmware_host.table.machine import Table


class TinyGame(Game[TinyRound, "Lay | Redraw", TinySight, int, "Bot", "Image.Image", "Table"]):
    name = "tiny"
    title = "Tiny"
    players = (2, 4)
    options: ClassVar[dict[str, OptionSpec]] = {
        "rounds": OptionSpec(whole(1, 100), 2, "rounds in the match"),
        "goal": OptionSpec(whole(1, 20), 5, "cards a seat lays to end the round"),
    }
    actions: ClassVar[dict[str, type]] = {"lay": Lay, "redraw": Redraw}
    fields: ClassVar[dict[type, frozenset[str]]] = {Lay: frozenset({"card"}), Redraw: frozenset()}
    routine: ClassVar[frozenset[type]] = frozenset({Redraw})
    scenario_keys: ClassVar[frozenset[str]] = frozenset({"seat", "board"})

    # ------------------------------------------------------------ the match and the journal

    def new_round(self, match: Any, rng: random.Random, setup: dict[str, Any]) -> TinyRound:
        return TinyRound(match.players, match.options["goal"], rng, **setup)

    def sight(self, rnd: Any, seat: Seat) -> TinySight:
        return TinySight(rnd, seat)

    def playable(self, rnd: Any, seat: Seat) -> bool:
        return any(rnd.fits(card) for card in rnd.hands[seat])

    def encode(self, action: Any) -> dict[str, Any]:
        return {"card": action.card} if isinstance(action, Lay) else {}

    def decode(self, kind: type, d: dict[str, Any], seat: Seat, ts: int, context: Any) -> Any:
        return Lay(seat, field_int(d, "card"), ts) if kind is Lay else Redraw(seat, ts)

    # ------------------------------------------------------------ controls

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

    # ------------------------------------------------------------ the bot, screens, words and board, beside

    def policy(self, bot: Bot, sight: TinySight) -> Any:
        from .bot import policy

        return policy(bot, sight)

    def draw_seat(self, img: Image.Image, c: Any, rnd: Any) -> str:
        from .screens import seat

        return seat(img, c, rnd)

    def draw_centre(self, img: Image.Image, rnd: Any, blink: bool, marks: dict[int, Any]) -> None:
        from .screens import centre

        centre(img, rnd, blink, marks)

    def centre_words(self, rnd: Any, table: Table) -> Any:
        from .words import centre

        return centre(rnd, table)

    def seat_words(self, c: Any, rnd: Any) -> Any:
        from .words import seat

        return seat(c, rnd)

    def keys(self, rnd: Any, direct: bool = False) -> str:
        from .words import keys

        return keys(rnd, direct)

    def board(self, rnd: Any, seats: list[int]) -> dict[str, Any]:
        from .web_board import board

        return board(rnd, seats)

    # ------------------------------------------------------------ scenario files

    def scenario_setup(self, rnd: dict[str, Any], players: int, where: str, rng: Any,
                       options: dict[str, Any], match: Any) -> dict[str, Any]:
        from .scenario import setup

        return setup(rnd, players, where)


def install() -> None:
    """Register Tiny: from now on the table offers it."""
    register(TinyGame())


def uninstall() -> None:
    unregister("tiny")
