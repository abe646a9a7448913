"""One game, one entry: everything the table, the tools and the frontends ask of a game, behind
one class and one registry (python-chess keeps its variants the same way: a variant overrides
hooks, callers look it up by name).

A game is a package in `firmware_host/games/` whose `__init__` defines a `Game` subclass.
Importing `firmware_host.games` registers the built-in games in menu order; the composition
roots (the command lines, the benches' harness, the tests' conftest) do that once. A game from
elsewhere registers itself with `register`. Nothing here imports a game: callers look one up by
its name (`find`) or by one of its actions' types (`of_action`), and never branch on a game.

The hooks' arguments that belong to higher rooms are typed by what the hooks use of them,
as Protocols (`Controls` for a `SeatController`, `Canvas` for a PIL image), so this module
imports nothing above the engine and mypy still checks every caller and every hook against
them (docs/architecture.md). A game's own values (its round, sight, action and choices) are
its own types: the base names the engine's where one exists (`RoundBase`, `Match`) and `object`
where the engine knows nothing of them. docs/games.md lists every hook: required or optional,
its default, who calls it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar, cast

from .round import Ending, Refusal, RoundBase, RulesError, Seat

if TYPE_CHECKING:
    from .codec import Action
    from .match import Match
    from .options import OptionSpec


class Controls(Protocol):
    """A seat's controls as a game's hooks read and set them: table/controls.py's
    `SeatController`, which the engine may not import."""

    seat: int
    match: Match
    cursor: int
    target: int
    joker_mode: bool
    destination: int | None
    message: str

    def selected(self) -> Any: ...

    def choices(self) -> list[Any]: ...

    def targets(self) -> list[tuple[int | None, int | None]]: ...


class Canvas(Protocol):
    """What a game draws on: a PIL image (views/), which the engine may not import."""

    @property
    def size(self) -> tuple[int, int]: ...

    @property
    def mode(self) -> str: ...


R = TypeVar("R", bound=RoundBase)
"""A game's own round type: its hooks are given its rounds (`class DiceGame(Game[DiceRound])`)."""


class Game(Generic[R]):
    """One game. A subclass sets the class attributes and overrides the hooks its game needs:
    the required ones (`REQUIRED`) raise `NotImplementedError` naming the game and the hook; the
    optional ones' defaults fit a game of whole rounds whose seat picks one of a list of choices
    with left/right and plays it with slap."""

    name: ClassVar[str] = ""
    """The game's word in menus, commands, files and the journal."""
    title: ClassVar[str] = ""
    """What a person calls it ("Ligretto Dice"), on the web page; the name when empty."""
    players: ClassVar[tuple[int, int]] = (2, 4)
    """Fewest and most players."""
    options: ClassVar[Mapping[str, OptionSpec]] = {}
    """Its options by name (`engine/options.py` reads and checks them)."""
    actions: ClassVar[Mapping[str, type]] = {}
    """Each action's `do` word in files and the journal, and its type."""
    fields: ClassVar[Mapping[type, frozenset[str]]] = {}
    """Per action type, the fields it takes besides do, seat and time."""
    routine: ClassVar[frozenset[type]] = frozenset()
    """Actions a person makes without thinking (turning cards over): bots make them quickly."""
    shared_board: ClassVar[bool] = True
    """A decision can change every seat's screen (a shared board); False: only the acting seats'."""
    scenario_keys: ClassVar[frozenset[str]] = frozenset({"seat"})
    """The keys a [[round]] table of this game may have besides actions and expect_*."""
    endings: ClassVar[frozenset[Ending]] = frozenset(Ending)
    """How its rounds can end: a scenario file expecting another game's ending is refused."""
    centre_note: ClassVar[str] = ""
    """What reaching the centre means, where it is not plain (the round's `to_centre`), said
    after `simulate`'s share of the cards dealt that reached it."""

    REQUIRED: ClassVar[tuple[str, ...]] = (
        "new_round", "sight", "decode", "policy", "draw_seat", "draw_centre", "centre_words",
        "seat_words", "keys", "board")
    """The hooks every game must override (`lacks` says which one a game does not)."""

    def lacking(self, hook: str) -> NotImplementedError:
        """The error a required hook raises when the game has not overridden it."""
        return NotImplementedError(f"{self.name or type(self).__name__} lacks {hook} (docs/games.md)")

    @classmethod
    def lacks(cls) -> list[str]:
        """The required hooks this game does not override, in `REQUIRED` order."""
        return [hook for hook in cls.REQUIRED if getattr(cls, hook) is getattr(Game, hook)]

    def round_of(self, c: Controls) -> R:
        """The round `c`'s seat plays, as this game's own round: the table hands a game's hooks
        only the controls of its own matches."""
        return cast(R, c.match.round)

    # ------------------------------------------------------------ the match (engine/match.py)

    def settle_options(self, options: dict[str, Any], players: int) -> None:
        """Fill in options whose default depends on the player count."""

    def check_options(self, options: dict[str, Any], players: int | None) -> None:
        """Refuse now, in the words the match's start would use, what its start would refuse
        (`tablectl new` asks before anyone starts); `players`: None while the count is not
        known, when only the checks that need no count can run."""

    def resources(self, players: int, options: dict[str, Any]) -> Any:
        """What a match needs beyond its options, loaded from the game's own data files (a
        board layout, a deck split); the match carries it unopened (`Match.resources`)."""
        return None

    def check_resources(self, resources: Any) -> None:
        """Refuse a match whose resources (`resources`) were not given."""

    def new_round(self, match: Match, rng: random.Random, setup: dict[str, Any]) -> R:
        """The round numbered `match.round_no`; `setup` fixes its cards (scenarios)."""
        raise self.lacking("new_round")

    def round_over(self, match: Match, rnd: R) -> None:
        """What a finished round leaves for the next ones (its result is already recorded)."""

    def is_over(self, match: Match) -> bool:
        """Asked once the round in progress has ended."""
        return bool(match.rounds_played >= match.options["rounds"])

    def carried_over(self, match: Match) -> list[list[Any]] | None:
        """What the next match starts from, once this one is over; None: nothing."""
        return None

    def carried_card(self, text: str) -> Any:
        """One card of a stored player board (`Match.boards`, written with `str`), read back."""
        raise RulesError(f"{self.name} carries no cards from match to match, yet one was stored: {text!r}")

    # ------------------------------------------------------------ seeing and spelling (engine/codec.py)

    def sight(self, rnd: R, seat: Seat) -> object:
        """What `seat` sees of the round: all a bot may decide from."""
        raise self.lacking("sight")

    def playable(self, rnd: R, seat: Seat) -> bool | None:
        """Whether one of the cards (or dice) `seat` sees as its own fits now: the players'
        reaction time runs from the journal entry that makes this true (docs/players.md). None:
        the game does not say, and its players have no reaction times (never a guess)."""
        return None

    def journal_context(self, players: int, resources: Any) -> Any:
        """What `decode` needs besides the dict (a deck's cards by name), built once a replay."""
        return None

    def encode(self, action: Action) -> dict[str, Any]:
        """An action's own fields, besides do, seat and time."""
        return {}

    def decode(self, kind: type, d: dict[str, Any], seat: Seat, ts: int, context: Any) -> Action:
        """The action of type `kind` that `d` spells (its fields already checked)."""
        raise self.lacking("decode")

    # ------------------------------------------------------------ a seat's controls (table/controls.py)

    def choices(self, c: Controls) -> list[Any]:
        """What the cursor of `SeatController` `c` runs over."""
        return []

    def targets(self, c: Controls) -> list[Any]:
        """Where the selected choice may go, chosen with up/down; [] when there is no such choice."""
        return []

    def nav(self, c: Controls, control: str) -> None:
        """up/down (left/right move the cursor for every game)."""

    def arbitrates(self, c: Controls, control: str) -> bool:
        """A navigation button that changes the game, so goes through the arbiter."""
        return False

    def action(self, c: Controls, control: str, ts: int) -> Action | None:
        """slap, alt or an arbitrated navigation button: the engine action it means, or None."""
        if control == "alt":
            return self.alt(c, ts)
        if control != "slap":
            return None
        choice = c.selected()
        if choice is None:
            c.message = "nothing there"
            return None
        return self.slap(c, choice, ts)

    def alt(self, c: Controls, ts: int) -> Action | None:
        """The alt button's action, or None."""
        return None

    def slap(self, c: Controls, choice: Any, ts: int) -> Action | None:
        """Slap with the cursor on `choice` (never None): the action, or None."""
        return None

    def after(self, c: Controls, action: Action) -> None:
        """An action was taken: reset what the controls held for it."""

    def presses_for(self, c: Controls, action: Action) -> list[str] | None:
        """The buttons that make `action` from the controller's state (bots press them)."""
        return None

    def explain(self, refusal: Refusal, action: Action, rnd: R) -> str | None:
        """A "doesn't fit" in words a player can act on; None: the generic wording."""
        return None

    def said(self, action: Action) -> str:
        """What a seat did, in the players' words, for a replay's step line ("played Y2 to the
        centre"); the default names the action and its fields' values, never `field=value`."""
        from .codec import to_dict

        d = to_dict(action)
        values = [str(v) for k, v in d.items() if k not in ("do", "seat", "ts") and v is not None]
        return " ".join([str(d["do"]), *values])

    # ------------------------------------------------------------ bots (table/bot_players.py)

    def policy(self, bot: object, sight: object) -> Callable[[Any, int], Action | None]:
        """The bot's decision function for this game: (sight, now ns) -> action or None."""
        raise self.lacking("policy")

    # ------------------------------------------------------------ screens (views/seat.py, views/centre.py)

    def mark(self, c: Controls) -> object:
        """What seat `c` has selected that the centre shows in its seat colour, or None."""
        return None

    def draw_seat(self, img: Canvas, c: Controls, rnd: R) -> str:
        """Draw the middle of a 128x64 seat screen (a PIL image); returns its status line."""
        raise self.lacking("draw_seat")

    def draw_centre(self, img: Canvas, rnd: R, blink: bool, marks: dict[int, object]) -> None:
        """Draw the round on the centre matrix (a PIL RGB image); `marks` the seats' `mark`s."""
        raise self.lacking("draw_centre")

    # ------------------------------------------------------------ words for a terminal (views/readable.py)

    def centre_words(self, rnd: R, table: object) -> object:
        """The middle of the table as rich Text for a terminal."""
        raise self.lacking("centre_words")

    def seat_words(self, c: Controls, rnd: R) -> object:
        """One seat's own cards as rich Text for a terminal."""
        raise self.lacking("seat_words")

    def keys(self, rnd: R | None, direct: bool = False) -> str:
        """What the keys do in this game (`rnd` the round in progress, or None); `direct`: the
        seat has the direct buttons 1-5 (select1..5), so their keys are offered too."""
        raise self.lacking("keys")

    # ------------------------------------------------------------ the web page (views/live.py)

    def board(self, rnd: R, seats: list[int]) -> dict[str, Any]:
        """The round for the web page, in its small vocabulary of elements (views/boards.py);
        `seats[p]` is the seat (from 0) player p sits at."""
        raise self.lacking("board")

    # ------------------------------------------------------------ scenario files and tools (play/)

    def scenario_options(self, options: dict[str, Any], rounds: int) -> dict[str, Any]:
        """A file's options, given it has `rounds` [[round]] tables."""
        return options

    def scenario_setup(self, rnd: dict[str, Any], players: int, where: str, rng: random.Random,
                       options: dict[str, Any], match: Match | None) -> dict[str, Any]:
        """A [[round]] table into the round's set-up (`match` is None for the first round)."""
        return {}

    def scenario_action(self, match: Match, raw: dict[str, Any], where: str) -> Action:
        """A file's action (seats already from 0) into an engine action."""
        from .codec import from_dict

        return from_dict(self.name, raw)

    def sweep_options(self, players: int) -> list[dict[str, Any]]:
        """The option sets `simulate --sweep` tries for this many players."""
        return [{}]

    def long_options(self) -> dict[str, Any]:
        """Options for a match that goes on for as long as a benchmark needs."""
        return {"rounds": 1000}

    def score_parts(self, rnd: R) -> list[list[tuple[str, int]]]:
        """Each seat's round score in its parts, in the players' words and adding up to the score
        (`rnd.scores()`, or the result's once the round is over): the round-end table shows how a
        score came about, so a player can check it against the cards."""
        scores = rnd.result.scores if rnd.result is not None else rnd.scores()
        return [[("points", score)] for score in scores]

    def standing(self, rnd: R) -> tuple[int, ...]:
        """What each seat would score if the round were called now."""
        return tuple(rnd.scores())


# ---------------------------------------------------------------- the registry

_games: dict[str, Game[Any]] = {}
_actions: dict[type, tuple[Game[Any], str]] = {}
_routine: set[type] = set()


def register(game: Game[Any]) -> Game[Any]:
    """Add a game (a game registered again under its name replaces the old entry); menus list
    the games in the order they were registered."""
    if not game.name:
        raise RulesError(f"{type(game).__name__} has no name")
    unregister(game.name)
    _games[game.name] = game
    for do, kind in game.actions.items():
        _actions[kind] = (game, do)
    _routine.update(game.routine)
    return game


def unregister(name: str) -> None:
    old = _games.pop(name, None)
    if old is not None:
        for kind in old.actions.values():
            _actions.pop(kind, None)
        _routine.clear()
        for game in _games.values():
            _routine.update(game.routine)


def names() -> tuple[str, ...]:
    """Every registered game, in the order registered (the built-in ones in menu order)."""
    return tuple(_games)


def get(name: str) -> Game[Any] | None:
    return _games.get(name)


def find(name: str) -> Game[Any]:
    """The game registered as `name`, or a RulesError naming the games that are."""
    game = _games.get(name)
    if game is None:
        raise RulesError(f"no game {name!r} (registered: {', '.join(_games) or 'none'})")
    return game


def of_action(kind: type) -> tuple[Game[Any], str] | None:
    """The game an action type belongs to, and its `do` word."""
    return _actions.get(kind)


def routine_actions() -> set[type]:
    """Every game's routine actions (bots make them quickly)."""
    return _routine


def title_of(name: str) -> str:
    """What a person calls the game `name` (its name, when it has no title or is not registered:
    a stored match of a game this table no longer has)."""
    game = _games.get(name)
    return (game.title or name) if game is not None else name


def sight_of(rnd: RoundBase, seat: Seat) -> object:
    """What `seat` sees of any game's round (its game makes the sight)."""
    return find(rnd.game).sight(rnd, seat)
