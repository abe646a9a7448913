"""Ligretto Crazy: its entry. left/right pick a hand card, up/down its target (a pile, or a
new pile, and a Crazy card's value); slap plays it; alt discards it face down. The rules and the
sight are beside it, pure; the bot, screens, words and scenario set-up are loaded when first
asked for."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, ClassVar

from ...engine.game import Controls, Game, JsonDict, Options, Policy, RawDict, Setup
from ...engine.match import Match
from ...engine.options import OptionSpec, whole
from ...engine.round import Ending, RulesError, Seat, field_int, field_str
from ...table.controls import steps
from .deck import crazy_deck
from .rules import (
    CRAZY_ROUNDS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    CrazyAction,
    CrazyCard,
    CrazyColour,
    CrazyOptions,
    CrazyRound,
    DeckSpec,
    DiscardCrazy,
    PlayCrazy,
    crazy_card_name,
    crazy_index,
    parse_crazy_card,
)
from .sight import CrazySight

if TYPE_CHECKING:
    from PIL import Image
    from rich.text import Text

    from ...table.bot_players import Bot
    from ...table.machine import Table


class CrazyGame(Game[CrazyRound, CrazyAction, CrazySight, CrazyCard, "Bot", "Image.Image", "Table"]):
    name = "crazy"
    title = "Ligretto Crazy"
    players = (MIN_PLAYERS, MAX_PLAYERS)
    options: ClassVar[dict[str, OptionSpec]] = {
        "target": OptionSpec(whole(1, 10_000), 100, "the match ends after a round that brings a total here"),
        "rounds": OptionSpec(whole(1, 1000), CRAZY_ROUNDS,
                             "house rule, off by default: the match also ends after this many rounds"),
    }
    actions: ClassVar[dict[str, type]] = {"play": PlayCrazy, "discard": DiscardCrazy}
    fields: ClassVar[dict[type, frozenset[str]]] = {
        PlayCrazy: frozenset({"card", "pile", "value"}), DiscardCrazy: frozenset({"card"})}
    routine: ClassVar[frozenset[type]] = frozenset({DiscardCrazy})
    scenario_keys: ClassVar[frozenset[str]] = frozenset({"seat", "pile"})
    endings: ClassVar[frozenset[Ending]] = frozenset({Ending.LIGRETTO_STOP})
    centre_note = "won into score piles"

    # ------------------------------------------------------------ the match and the journal

    def resources(self, players: int, options: Options) -> DeckSpec:
        """The split of a colour's cards into values and styles."""
        return crazy_deck()

    def check_resources(self, resources: object) -> None:
        _deck(resources)

    def new_round(self, match: Match, rng: random.Random, setup: Setup) -> CrazyRound:
        return CrazyRound(match.players, CrazyOptions(match.options["target"]), rng, match.resources,
                          **setup)

    def is_over(self, match: Match) -> bool:
        cap = match.options["rounds"]  # a house rule: None unless the table opted in
        reached = max(match.totals) >= match.options["target"]
        return reached or (cap is not None and match.rounds_played >= cap)

    def sight(self, rnd: CrazyRound, seat: Seat) -> CrazySight:
        return CrazySight(rnd, seat)

    def playable(self, rnd: CrazyRound, seat: Seat) -> bool:
        return any(next(rnd.placements(card), None) is not None for card in rnd.seats[seat].hand)

    def journal_context(self, players: int, resources: object) -> dict[str, CrazyCard]:
        deck = _deck(resources)
        return crazy_index([deck.cards(CrazyColour(s)) for s in range(players)])

    def encode(self, action: CrazyAction) -> JsonDict:
        out: JsonDict = {"card": crazy_card_name(action.card)}
        if isinstance(action, PlayCrazy):
            out["pile"] = action.pile
            if action.value is not None:
                out["value"] = action.value
        return out

    def decode(self, kind: type, d: RawDict, seat: Seat, ts: int, context: object) -> CrazyAction:
        index = context if isinstance(context, dict) else {}  # `journal_context`'s, or None
        card = parse_crazy_card(field_str(d, "card"), index)
        if kind is DiscardCrazy:
            return DiscardCrazy(seat, card, ts)
        return PlayCrazy(seat, card, field_int(d, "pile", None), field_int(d, "value", None), ts)

    # ------------------------------------------------------------ controls

    def choices(self, c: Controls[CrazyCard]) -> list[CrazyCard]:
        return list(self.round_of(c).seats[c.seat].hand)

    def targets(self, c: Controls[CrazyCard]) -> list[tuple[int | None, int | None]]:
        hand = self.choices(c)
        if not hand:
            return []
        return list(self.round_of(c).placements(hand[c.cursor % len(hand)]))

    def nav(self, c: Controls[CrazyCard], control: str) -> None:
        if control in ("up", "down"):
            count = len(self.targets(c))
            if count:
                c.target = (c.target + (1 if control == "down" else -1)) % count

    def alt(self, c: Controls[CrazyCard], ts: int) -> CrazyAction | None:
        card = c.selected()
        return DiscardCrazy(c.seat, card, ts) if card is not None else None

    def slap(self, c: Controls[CrazyCard], choice: CrazyCard, ts: int) -> CrazyAction | None:
        targets = self.targets(c)
        if not targets:
            c.message = "no place for it"
            return None
        pile, value = targets[c.target % len(targets)]
        return PlayCrazy(c.seat, choice, pile, value, ts)

    def said(self, action: CrazyAction) -> str:
        if isinstance(action, PlayCrazy):
            where = "started a pile with" if action.pile is None else "played"
            return f"{where} {action.card}" + (f" as {action.value}" if action.value is not None else "")
        return f"put {action.card} on the discard pile"

    def presses_for(self, c: Controls[CrazyCard], action: CrazyAction) -> list[str] | None:
        if not isinstance(action, PlayCrazy | DiscardCrazy):
            return None
        options = self.choices(c)
        if action.card not in options:
            return None
        index = options.index(action.card)
        presses = steps(c.cursor, index, len(options))
        if isinstance(action, DiscardCrazy):
            return [*presses, "alt"]
        targets = list(self.round_of(c).placements(action.card))
        if (action.pile, action.value) not in targets:
            return None
        start = c.target if index == c.cursor % max(len(options), 1) else 0
        wanted = targets.index((action.pile, action.value))
        return presses + steps(start, wanted, len(targets), ("up", "down")) + ["slap"]

    # ------------------------------------------------------------ the bot, screens and words, beside

    def policy(self, bot: Bot, sight: CrazySight) -> Policy[CrazySight, CrazyAction]:
        from .bot import policy

        return policy(bot, sight)

    def draw_seat(self, img: Image.Image, c: Controls[CrazyCard], rnd: CrazyRound) -> str:
        from .screens import seat

        return seat(img, c, rnd)

    def draw_centre(self, img: Image.Image, rnd: CrazyRound, blink: bool, marks: dict[int, object]) -> None:
        from .screens import centre

        centre(img, rnd, blink, marks)

    def centre_words(self, rnd: CrazyRound, table: Table) -> Text:
        from .words import centre

        return centre(rnd, table)

    def seat_words(self, c: Controls[CrazyCard], rnd: CrazyRound) -> Text:
        from .words import seat

        return seat(c, rnd)

    def keys(self, rnd: CrazyRound | None, direct: bool = False) -> str:
        from .words import keys

        return keys(rnd, direct)

    def board(self, rnd: CrazyRound, seats: list[int]) -> JsonDict:
        from .web_board import board

        return board(rnd, seats)

    def score_parts(self, rnd: CrazyRound) -> list[list[tuple[str, int]]]:
        parts = []
        for st in rnd.seats:
            left = len(st.draw) + len(st.discard) + len(st.hand)
            parts.append([(f"{len(st.score)} on the score pile", len(st.score)), (f"{left} left", -left)])
        return parts

    # ------------------------------------------------------------ scenario files and tools

    def scenario_setup(self, rnd: RawDict, players: int, where: str, rng: random.Random,
                       options: Options, match: Match | None) -> Setup:
        from .scenario import setup

        return setup(rnd, players, where, crazy_deck(), rng)

    def scenario_action(self, match: Match, raw: RawDict, where: str) -> CrazyAction:
        from .scenario import action

        return action(match, raw)

    def sweep_options(self, players: int) -> list[Options]:
        return [{}, {"target": 10}]

    def long_options(self) -> Options:
        return {"rounds": 1000, "target": 10_000}


def _deck(resources: object) -> DeckSpec:
    """A match's resources as Crazy's deck split, or a RulesError when they are not one."""
    if not isinstance(resources, DeckSpec):
        raise RulesError("crazy needs its deck split")
    return resources
