"""Ligretto Domino: its entry. The cursor cycles the legal placements of your top card; slap
lays it; alt discards it; up switches to joker squares, down back. The rules and the sight are
beside it, pure; the bot, screens, words and scenario set-up are loaded when first asked for."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, ClassVar, cast

from ...engine.game import Controls, Game, JsonDict, Options, Policy, RawDict, Setup
from ...engine.match import Match
from ...engine.options import OptionSpec, number, one_of, text_name, whole, yes_no
from ...engine.round import Ending, RulesError, Seat, Wake, field_int, field_square, field_str
from ...table.controls import steps
from .layouts import board_for, check_layout_name, layouts
from .rules import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    Board,
    DiscardDomino,
    DominoAction,
    DominoCard,
    DominoOptions,
    DominoRound,
    PlaceDomino,
    PlayJoker,
    Square,
    next_boards,
    score_round,
)
from .sight import DominoSight

if TYPE_CHECKING:
    from PIL import Image
    from rich.text import Text

    from ...table.bot_players import Bot
    from ...table.machine import Table

Choice = PlaceDomino | tuple[int, Square]
"""A placement of the top card, or in joker mode a token and the free square it may go to."""


class DominoGame(Game[DominoRound, DominoAction, DominoSight, Choice, "Bot", "Image.Image", "Table"]):
    name = "domino"
    title = "Ligretto Domino"
    players = (MIN_PLAYERS, MAX_PLAYERS)
    options: ClassVar[dict[str, OptionSpec]] = {
        "rounds": OptionSpec(whole(1, 1000), 6, "rounds in the match"),
        "layout": OptionSpec(text_name, None, "board layout (default: the recommended one)"),
        "tokens": OptionSpec(one_of("recommended", "random"), "recommended", "where tokens start"),
        "joker_hold_s": OptionSpec(number(0.0, 600.0), 5.0, "seconds a joker keeps its token reserved"),
        "joker_wait_s": OptionSpec(number(0.0, 600.0), 10.0,
                                   "seconds the round waits for a joker when no card fits anywhere"),
        "keep_boards": OptionSpec(yes_no, False, "player boards carry over to the next match"),
    }
    actions: ClassVar[dict[str, type]] = {
        "place": PlaceDomino, "joker": PlayJoker, "discard": DiscardDomino}
    fields: ClassVar[dict[type, frozenset[str]]] = {
        PlaceDomino: frozenset({"card", "token", "near", "far"}),
        PlayJoker: frozenset({"token", "square"}), DiscardDomino: frozenset()}
    routine: ClassVar[frozenset[type]] = frozenset({DiscardDomino})
    scenario_keys: ClassVar[frozenset[str]] = frozenset({"seat", "tokens", "covered", "expect_boards"})
    endings: ClassVar[frozenset[Ending]] = frozenset({Ending.LIGRETTO_STOP, Ending.NO_PLACEMENT})

    # ------------------------------------------------------------ the match and the journal

    def resources(self, players: int, options: Options) -> Board:
        """The board layout the options name, or the recommended one for this many players."""
        return board_for(players, options.get("layout"))

    def check_options(self, options: Options, players: int | None) -> None:
        if players is not None:
            board_for(players, options.get("layout"))
        elif options.get("layout") is not None:
            check_layout_name(options["layout"])

    def check_resources(self, resources: object) -> None:
        if not isinstance(resources, Board):
            raise RulesError("domino needs a board layout")

    def new_round(self, match: Match, rng: random.Random, setup: Setup) -> DominoRound:
        o = match.options
        if "aside" in setup:  # a scenario's player boards: the match keeps them from here on
            match.boards = [list(b) for b in setup["aside"]]
        setup.setdefault("aside", match.boards)
        return DominoRound(match.players, DominoOptions(o["tokens"], o["joker_hold_s"], o["joker_wait_s"]),
                           rng, match.resources, **setup)

    def round_over(self, match: Match, rnd: DominoRound) -> None:
        assert rnd.result is not None  # asked once the round has ended (engine/match.py)
        aside = rnd.result.detail["put_aside"]  # the round's own list of bools (rules.py, _end)
        assert isinstance(aside, list)
        held = [st.held() for st in rnd.seats]
        match.boards = next_boards(match.boards, aside, held)

    def carried_over(self, match: Match) -> list[list[object]] | None:
        if not match.options["keep_boards"] or not match.is_over:
            return None
        return [list(b) for b in match.boards]

    def carried_card(self, text: str) -> DominoCard:
        return DominoCard.parse(text)

    def sight(self, rnd: DominoRound, seat: Seat) -> DominoSight:
        return DominoSight(rnd, seat)

    def playable(self, rnd: DominoRound, seat: Seat) -> bool:
        card = rnd.top_card(seat)
        return card is not None and next(rnd.placements(seat, card), None) is not None

    def encode(self, action: DominoAction) -> JsonDict:
        if isinstance(action, PlaceDomino):
            return {"card": str(action.card), "token": action.token,
                    "near": list(action.near), "far": list(action.far)}
        if isinstance(action, PlayJoker):
            return {"token": action.token, "square": list(action.square)}
        return {}

    def decode(self, kind: type, d: RawDict, seat: Seat, ts: int, context: object) -> DominoAction:
        if kind is PlaceDomino:
            return PlaceDomino(seat, DominoCard.parse(field_str(d, "card")), field_int(d, "token"),
                               field_square(d.get("near"), "near"), field_square(d.get("far"), "far"), ts)
        if kind is PlayJoker:
            return PlayJoker(seat, field_int(d, "token"), field_square(d.get("square"), "square"), ts)
        return DiscardDomino(seat, ts)

    # ------------------------------------------------------------ controls

    def choices(self, c: Controls[Choice]) -> list[Choice]:
        rnd = self.round_of(c)
        if c.joker_mode:
            return [(i, sq) for i in range(len(rnd.tokens)) for sq in rnd.joker_squares(i)]
        top = rnd.top_card(c.seat)
        return [] if top is None else list(rnd.placements(c.seat, top))

    def nav(self, c: Controls[Choice], control: str) -> None:
        if control in ("up", "down"):
            c.joker_mode = control == "up"
            c.cursor = 0

    def alt(self, c: Controls[Choice], ts: int) -> DominoAction | None:
        return DiscardDomino(c.seat, ts) if self.round_of(c).top_card(c.seat) is not None else None

    def slap(self, c: Controls[Choice], choice: Choice, ts: int) -> DominoAction | None:
        if isinstance(choice, PlaceDomino):  # joker mode's choices are (token, square) pairs
            return choice._replace(ts=ts)
        token, square = choice
        return PlayJoker(c.seat, token, square, ts)

    def after(self, c: Controls[Choice], action: DominoAction) -> None:
        if isinstance(action, PlayJoker | PlaceDomino):
            c.joker_mode = False
            c.cursor = 0

    def said(self, action: DominoAction) -> str:
        if isinstance(action, PlaceDomino):
            return f"laid {action.card} with token {action.token + 1}"
        if isinstance(action, PlayJoker):
            row, column = action.square
            return f"played a joker: token {action.token + 1} to row {row + 1}, column {column + 1}"
        return "put the top card on the discard pile"

    def presses_for(self, c: Controls[Choice], action: DominoAction) -> list[str] | None:
        if isinstance(action, DiscardDomino):
            return ["alt"]
        presses: list[str] = []
        want_joker = isinstance(action, PlayJoker)
        if want_joker != c.joker_mode:
            presses.append("up" if want_joker else "down")
        options = self._options_in_mode(c, want_joker)
        key = (action.token, action.square) if isinstance(action, PlayJoker) else action._replace(ts=0)
        start = 0 if want_joker != c.joker_mode else c.cursor
        if key not in options:
            return None
        presses += steps(start, options.index(key), len(options))
        return [*presses, "slap"]

    def _options_in_mode(self, c: Controls[Choice], joker: bool) -> list[Choice]:
        saved = c.joker_mode
        c.joker_mode = joker
        try:
            options = self.choices(c)
        finally:
            c.joker_mode = saved
        return [o._replace(ts=0) if isinstance(o, PlaceDomino) else o for o in options]

    # ------------------------------------------------------------ the bot, screens and words, beside

    def policy(self, bot: Bot, sight: DominoSight) -> Policy[DominoSight, DominoAction]:
        from .bot import policy

        return policy(bot, sight)

    def mark(self, c: Controls[Choice]) -> object:
        choice = c.selected()
        return choice if isinstance(choice, PlaceDomino) else None

    def draw_seat(self, img: Image.Image, c: Controls[Choice], rnd: DominoRound) -> str:
        from .screens import seat

        return seat(img, c, rnd)

    def draw_centre(self, img: Image.Image, rnd: DominoRound, blink: bool, marks: dict[int, object]) -> None:
        from .screens import centre

        centre(img, rnd, blink, cast("dict[int, PlaceDomino]", marks))  # what `mark` gave: placements

    def centre_words(self, rnd: DominoRound, table: Table) -> Text:
        from .words import centre

        return centre(rnd, table)

    def seat_words(self, c: Controls[Choice], rnd: DominoRound) -> Text:
        from .words import seat

        return seat(c, rnd)

    def keys(self, rnd: DominoRound | None, direct: bool = False) -> str:
        from .words import keys

        return keys(rnd, direct)

    def board(self, rnd: DominoRound, seats: list[int]) -> JsonDict:
        from .web_board import board

        return board(rnd, seats)

    def score_parts(self, rnd: DominoRound) -> list[list[tuple[str, int]]]:
        held = rnd.held_counts()
        if rnd.result is not None:
            scores, finishers = rnd.result.scores, rnd.result.finishers
        else:  # as `standing` calls it
            placed = [st.placed for st in rnd.seats]
            finishers = tuple(s for s, n in enumerate(placed) if n == max(placed))
            scores = score_round(rnd.players, finishers, held)[0]
        return [[("out first" if s in finishers else "fewest cards left" if scores[s] else
                  f"{held[s]} cards left: 2 put aside", scores[s])] for s in range(rnd.players)]

    # ------------------------------------------------------------ scenario files and tools

    def scenario_options(self, options: Options, rounds: int) -> Options:
        return {"rounds": rounds, **options}

    def scenario_setup(self, rnd: RawDict, players: int, where: str, rng: random.Random,
                       options: Options, match: Match | None) -> Setup:
        from .scenario import setup

        aside = match.boards if match is not None else [[] for _ in range(players)]
        board = match.resources if match is not None else board_for(players, options.get("layout"))
        return setup(rnd, players, where, rng, aside, board)

    def scenario_action(self, match: Match, raw: RawDict, where: str) -> DominoAction | Wake:
        from .scenario import action

        return action(match, raw, where)

    def sweep_options(self, players: int) -> list[Options]:
        """The usual option sets, and every other layout for this many players."""
        usual = board_for(players).name
        return [{}, {"tokens": "random"}, {"joker_hold_s": 0.0}, {"joker_hold_s": 60.0, "joker_wait_s": 0.0},
                {"tokens": "random", "joker_wait_s": 60.0},
                *({"layout": name} for name, (_, counts, _) in layouts().items()
                  if players in counts and name != usual)]

    def standing(self, rnd: DominoRound) -> tuple[int, ...]:
        """Scored as if nobody could place any more: those who placed most finished."""
        placed = [st.placed for st in rnd.seats]
        finishers = tuple(s for s, n in enumerate(placed) if n == max(placed))
        return score_round(rnd.players, finishers, rnd.held_counts())[0]
