"""Ligretto, the card game: its entry. The rules (round, actions) and the sight are beside it,
pure; the bot, the screens (PIL), the words (rich) and the scenario set-up are loaded when first
asked for, so a table that never draws in words never loads rich.

The cursor runs over row places, the stack top and the discard top; slap plays the
card; alt turns 3 hand cards; with pro_row, up marks the row place under the cursor as
the destination of the next slap, down unmarks it, and down with nothing marked votes
that the round is stuck (arbitrated, as it changes the game).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, ClassVar

from ...engine.game import Controls, Game, JsonDict, Options, Policy, RawDict, Setup
from ...engine.match import Match
from ...engine.options import OptionSpec, one_of, whole, yes_no
from ...engine.round import Ending, Refusal, Seat, field_int, field_str
from ...table.controls import steps
from .rules import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    Card,
    ClassicAction,
    ClassicOptions,
    ClassicRound,
    MoveToRow,
    PlayCard,
    TurnHand,
    VoteStuck,
)
from .sight import ClassicSight

if TYPE_CHECKING:
    from PIL import Image
    from rich.text import Text

    from ...table.bot_players import Bot
    from ...table.machine import Table


class ClassicGame(Game[ClassicRound, ClassicAction, ClassicSight, Card, "Bot", "Image.Image", "Table"]):
    name = "classic"
    title = "Ligretto"
    players = (MIN_PLAYERS, MAX_PLAYERS)
    options: ClassVar[dict[str, OptionSpec]] = {
        "rounds": OptionSpec(whole(1, 1000), 5, "rounds in the match"),
        "recycle": OptionSpec(one_of("shuffle", "turn_over"), "shuffle", "how a used-up hand is renewed"),
        "pro_row": OptionSpec(yes_no, False, "the row is a descending, alternating buffer"),
        "descending": OptionSpec(yes_no, False, "centre piles run from 10 down to 1"),
        "alternate_colours": OptionSpec(yes_no, False, "each pile card differs in colour from the one below"),
        "stack_face_down": OptionSpec(yes_no, False, "stack cards reach the centre only through the row"),
    }
    actions: ClassVar[dict[str, type]] = {
        "play": PlayCard, "turn": TurnHand, "row": MoveToRow, "stuck": VoteStuck}
    fields: ClassVar[dict[type, frozenset[str]]] = {
        PlayCard: frozenset({"card"}), TurnHand: frozenset(), MoveToRow: frozenset({"card", "place"}),
        VoteStuck: frozenset()}
    routine: ClassVar[frozenset[type]] = frozenset({TurnHand})
    shared_board = False
    scenario_keys: ClassVar[frozenset[str]] = frozenset({"seat", "pile"})
    endings: ClassVar[frozenset[Ending]] = frozenset({Ending.LIGRETTO, Ending.STUCK_VOTE, Ending.DEADLOCK})

    # ------------------------------------------------------------ the match and the journal

    def new_round(self, match: Match, rng: random.Random, setup: Setup) -> ClassicRound:
        o = match.options
        opts = ClassicOptions(o["recycle"], o["pro_row"], o["descending"],
                              o["alternate_colours"], o["stack_face_down"])
        return ClassicRound(match.players, opts, rng, **setup)

    def sight(self, rnd: ClassicRound, seat: Seat) -> ClassicSight:
        return ClassicSight(rnd, seat)

    def playable(self, rnd: ClassicRound, seat: Seat) -> bool:
        return ClassicSight(rnd, seat).first_fitting() is not None

    def encode(self, action: ClassicAction) -> JsonDict:
        if isinstance(action, MoveToRow):
            return {"card": str(action.card), "place": action.place}
        if isinstance(action, PlayCard):
            return {"card": str(action.card)}
        return {}

    def decode(self, kind: type, d: RawDict, seat: Seat, ts: int, context: object) -> ClassicAction:
        if kind is PlayCard:
            return PlayCard(seat, Card.parse(field_str(d, "card")), ts)
        if kind is MoveToRow:
            return MoveToRow(seat, Card.parse(field_str(d, "card")), field_int(d, "place"), ts)
        return TurnHand(seat, ts) if kind is TurnHand else VoteStuck(seat, ts)

    # ------------------------------------------------------------ controls

    def choices(self, c: Controls[Card]) -> list[Card | None]:
        rnd = self.round_of(c)
        st = rnd.seats[c.seat]
        places: list[Card | None] = [place[-1] if place else None for place in st.row]
        if not rnd.options.stack_face_down:
            places.append(st.stack[-1] if st.stack else None)
        places.append(st.discard[-1] if st.discard else None)
        return places

    def nav(self, c: Controls[Card], control: str) -> None:
        rnd = self.round_of(c)
        if not rnd.options.pro_row:
            return
        row = len(rnd.seats[c.seat].row)
        if control == "up" and c.cursor < row:
            c.destination = c.cursor
            c.message = f"to row place {c.cursor + 1}"
        elif control == "down":
            c.destination = None
            c.message = ""

    def arbitrates(self, c: Controls[Card], control: str) -> bool:
        return control == "down" and self.round_of(c).options.pro_row and c.destination is None

    def action(self, c: Controls[Card], control: str, ts: int) -> ClassicAction | None:
        if control == "down":
            return VoteStuck(c.seat, ts)
        return super().action(c, control, ts)

    def alt(self, c: Controls[Card], ts: int) -> ClassicAction:
        return TurnHand(c.seat, ts)

    def slap(self, c: Controls[Card], choice: Card, ts: int) -> ClassicAction | None:
        if c.destination is not None:
            return MoveToRow(c.seat, choice, c.destination, ts)
        return PlayCard(c.seat, choice, ts)

    def after(self, c: Controls[Card], action: ClassicAction) -> None:
        if isinstance(action, VoteStuck):
            c.message = "voted: stuck"
        if isinstance(action, MoveToRow):
            c.destination = None

    def presses_for(self, c: Controls[Card], action: ClassicAction) -> list[str] | None:
        if isinstance(action, TurnHand):
            return ["alt"]
        if isinstance(action, VoteStuck):
            return ["down"] if c.destination is None else ["down", "down"]
        options = self.choices(c)
        if isinstance(action, MoveToRow):
            presses = [*steps(c.cursor, action.place, len(options)), "up"]
            try:
                index = options.index(action.card, len(self.round_of(c).seats[c.seat].row))
            except ValueError:
                return None
            return presses + steps(action.place, index, len(options)) + ["slap"]
        if isinstance(action, PlayCard):
            if action.card not in options:
                return None
            return [*steps(c.cursor, options.index(action.card), len(options)), "slap"]
        return None

    def said(self, action: ClassicAction) -> str:
        if isinstance(action, PlayCard):
            return f"played {action.card} to the centre"
        if isinstance(action, MoveToRow):
            return f"laid {action.card} on row place {action.place + 1}"
        if isinstance(action, TurnHand):
            return "turned up the next three cards from the hand"
        return "agreed the round is stuck"

    def explain(self, refusal: Refusal, action: ClassicAction, rnd: ClassicRound) -> str | None:
        if not isinstance(action, PlayCard | MoveToRow):
            return None
        card = action.card
        need = card.value + (1 if rnd.options.descending else -1)
        if rnd.options.alternate_colours:
            return f"doesn't fit: needs a {need} of another colour"
        return f"doesn't fit: needs {card.colour.letter}{need} out"

    # ------------------------------------------------------------ the bot, screens and words, beside

    def policy(self, bot: Bot, sight: ClassicSight) -> Policy[ClassicSight, ClassicAction]:
        from .bot import policy

        return policy(bot, sight)

    def draw_seat(self, img: Image.Image, c: Controls[Card], rnd: ClassicRound) -> str:
        from .screens import seat

        return seat(img, c, rnd)

    def draw_centre(self, img: Image.Image, rnd: ClassicRound, blink: bool, marks: dict[int, object]) -> None:
        from .screens import centre

        centre(img, rnd, blink, marks)

    def centre_words(self, rnd: ClassicRound, table: Table) -> Text:
        from .words import centre

        return centre(rnd, table)

    def seat_words(self, c: Controls[Card], rnd: ClassicRound) -> Text:
        from .words import seat

        return seat(c, rnd)

    def keys(self, rnd: ClassicRound | None, direct: bool = False) -> str:
        from .words import keys

        return keys(rnd, direct)

    def board(self, rnd: ClassicRound, seats: list[int]) -> JsonDict:
        from .web_board import board

        return board(rnd, seats)

    def score_parts(self, rnd: ClassicRound) -> list[list[tuple[str, int]]]:
        from .rules import STACK_PENALTY

        return [[(f"{st.centre} in the centre", st.centre),
                 (f"{len(st.stack)} on the stack ×{STACK_PENALTY}",
                  -STACK_PENALTY * len(st.stack))] for st in rnd.seats]

    # ------------------------------------------------------------ scenario files and tools

    def scenario_options(self, options: Options, rounds: int) -> Options:
        return {"rounds": rounds, **options}

    def scenario_setup(self, rnd: RawDict, players: int, where: str, rng: random.Random,
                       options: Options, match: Match | None) -> Setup:
        from .scenario import setup

        return setup(rnd, players, where, rng, yes_no(options.get("pro_row", False)))

    def sweep_options(self, players: int) -> list[Options]:
        return [{}, {"recycle": "turn_over"}, {"pro_row": True}, {"descending": True},
                {"alternate_colours": True}, {"stack_face_down": True},
                {"pro_row": True, "stack_face_down": True, "alternate_colours": True},
                {"recycle": "turn_over", "pro_row": True, "descending": True, "alternate_colours": True,
                 "stack_face_down": True}]
