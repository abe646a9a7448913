"""Dice Ligretto: its entry. The cursor runs over your dice; slap places one; alt rerolls them all.
The rules and the sight are beside it, pure; the bot, screens, words and scenario set-up are
loaded when first asked for."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, ClassVar

from ...engine.game import Controls, Game, JsonDict, Options, Policy, RawDict, Setup
from ...engine.match import Match
from ...engine.options import OptionSpec, whole
from ...engine.round import Ending, Refusal, RulesError, Seat, field_str, is_whole
from ...table.controls import steps
from .rules import (
    FACES,
    MAX_PLAYERS,
    MIN_PLAYERS,
    DiceAction,
    DiceOptions,
    DiceRound,
    Die,
    DieColour,
    PlaceDie,
    Reroll,
    check_handicap,
    dice_counts,
    handicap,
)
from .sight import DiceSight

if TYPE_CHECKING:
    from PIL import Image
    from rich.text import Text

    from ...table.bot_players import Bot
    from ...table.machine import Table


class DiceGame(Game[DiceRound, DiceAction, DiceSight, Die, "Bot", "Image.Image", "Table"]):
    name = "dice"
    title = "Ligretto Dice"
    players = (MIN_PLAYERS, MAX_PLAYERS)
    options: ClassVar[dict[str, OptionSpec]] = {
        "rounds": OptionSpec(whole(1, 1000), None, "rounds in the match (default 3 per player)"),
        "handicap": OptionSpec(handicap, (), "dice per seat, e.g. 7,7,5,5 (total at most 24)"),
    }
    actions: ClassVar[dict[str, type]] = {"place": PlaceDie, "reroll": Reroll}
    fields: ClassVar[dict[type, frozenset[str]]] = {
        PlaceDie: frozenset({"die", "row"}), Reroll: frozenset({"faces"})}
    routine: ClassVar[frozenset[type]] = frozenset({Reroll})
    scenario_keys: ClassVar[frozenset[str]] = frozenset({"seat", "board"})
    endings: ClassVar[frozenset[Ending]] = frozenset({Ending.LAST_DIE})

    # ------------------------------------------------------------ the match and the journal

    def settle_options(self, options: Options, players: int) -> None:
        if options["rounds"] is None:
            options["rounds"] = 3 * players

    def check_options(self, options: Options, players: int | None) -> None:
        if players is not None:
            dice_counts(players, DiceOptions(options["handicap"]))
        elif options["handicap"]:
            check_handicap(options["handicap"])

    def new_round(self, match: Match, rng: random.Random, setup: Setup) -> DiceRound:
        return DiceRound(match.players, DiceOptions(match.options["handicap"]), rng, **setup)

    def sight(self, rnd: DiceRound, seat: Seat) -> DiceSight:
        return DiceSight(rnd, seat)

    def playable(self, rnd: DiceRound, seat: Seat) -> bool:
        return any(rnd.fits(die) for die in rnd.dice[seat])

    def encode(self, action: DiceAction) -> JsonDict:
        if isinstance(action, PlaceDie):
            out: JsonDict = {"die": str(Die(action.colour, action.face))}
            if action.row is not None:
                out["row"] = DieColour(action.row).name.lower()
            return out
        if isinstance(action, Reroll) and action.faces is not None:
            return {"faces": list(action.faces)}
        return {}

    def decode(self, kind: type, d: RawDict, seat: Seat, ts: int, context: object) -> DiceAction:
        if kind is PlaceDie:
            die = Die.parse(field_str(d, "die"))
            row = d.get("row")
            if row is None:
                return PlaceDie(seat, DieColour(die.colour), die.face, ts)
            colours = [c.name.lower() for c in DieColour]
            if row not in colours:
                raise RulesError(f"'row' is a row's colour ({', '.join(colours)}), not {row!r}")
            return PlaceDie(seat, DieColour(die.colour), die.face, ts, DieColour[row.upper()])
        faces = d.get("faces")
        if faces is not None and (not isinstance(faces, list)
                                  or not all(is_whole(f) and 1 <= f <= FACES for f in faces)):
            raise RulesError(f"'faces' must be a list of die faces 1 to 6, not {faces!r}")
        return Reroll(seat, ts, tuple(faces) if faces is not None else None)

    # ------------------------------------------------------------ controls

    def choices(self, c: Controls[Die]) -> list[Die]:
        return list(self.round_of(c).dice[c.seat])

    def alt(self, c: Controls[Die], ts: int) -> DiceAction | None:
        return Reroll(c.seat, ts)

    def slap(self, c: Controls[Die], choice: Die, ts: int) -> DiceAction | None:
        return PlaceDie(c.seat, choice.colour, choice.face, ts)

    def said(self, action: DiceAction) -> str:
        if isinstance(action, PlaceDie):
            return f"put {Die(action.colour, action.face)} in its row"
        return "rolled the dice left again"

    def presses_for(self, c: Controls[Die], action: DiceAction) -> list[str] | None:
        if isinstance(action, Reroll):
            return ["alt"]
        if isinstance(action, PlaceDie):
            options = self.choices(c)
            wanted = next((i for i, d in enumerate(options)
                           if d.colour == action.colour and d.face == action.face), None)
            if wanted is None:
                return None
            return [*steps(c.cursor, wanted, len(options)), "slap"]
        return None

    def explain(self, refusal: Refusal, action: DiceAction, rnd: DiceRound) -> str | None:
        if not isinstance(action, PlaceDie):
            return None
        placed = rnd.board[action.colour]
        if placed >= FACES:
            return f"doesn't fit: {DieColour(action.colour).name.lower()} row is full"
        return f"doesn't fit: {DieColour(action.colour).letter}{placed + 1} goes next"

    # ------------------------------------------------------------ the bot, screens and words, beside

    def policy(self, bot: Bot, sight: DiceSight) -> Policy[DiceSight, DiceAction]:
        from .bot import policy

        return policy(bot, sight)

    def draw_seat(self, img: Image.Image, c: Controls[Die], rnd: DiceRound) -> str:
        from .screens import seat

        return seat(img, c, rnd)

    def draw_centre(self, img: Image.Image, rnd: DiceRound, blink: bool, marks: dict[int, object]) -> None:
        from .screens import centre

        centre(img, rnd, blink, marks)

    def centre_words(self, rnd: DiceRound, table: Table) -> Text:
        from .words import centre

        return centre(rnd, table)

    def seat_words(self, c: Controls[Die], rnd: DiceRound) -> Text:
        from .words import seat

        return seat(c, rnd)

    def keys(self, rnd: DiceRound | None, direct: bool = False) -> str:
        from .words import keys

        return keys(rnd, direct)

    def board(self, rnd: DiceRound, seats: list[int]) -> JsonDict:
        from .web_board import board

        return board(rnd, seats)

    def score_parts(self, rnd: DiceRound) -> list[list[tuple[str, int]]]:
        finisher = rnd.result.finishers[0] if rnd.result is not None and rnd.result.finishers else None
        held = [len(hand) for hand in rnd.dice]
        return [[(f"out first: the others' {sum(held) - held[s]} dice", sum(held) - held[s])]
                if s == finisher else [(f"{held[s]} dice left", -held[s])] for s in range(rnd.players)]

    # ------------------------------------------------------------ scenario files

    def scenario_setup(self, rnd: RawDict, players: int, where: str, rng: random.Random,
                       options: Options, match: Match | None) -> Setup:
        from ...engine.options import parse_options
        from .scenario import setup

        return setup(rnd, players, where, rng, parse_options(self.name, players, options))
