"""One game, one entry: everything the table, the tools and the frontends ask of a game, behind
one class and one registry (python-chess keeps its variants the same way: a variant overrides
hooks, callers look it up by name).

A game is a package in `firmware_host/games/` whose `__init__` defines a `Game` subclass.
Importing `firmware_host.games` registers the built-in games in menu order; the composition
roots (the command lines, the benches' harness, the tests' conftest) do that once. A game from
elsewhere registers itself with `register`. Nothing here imports a game: callers look one up by
its name (`find`) or by one of its actions' types (`of_action`), and never branch on a game.

`Game` is generic over what varies per game: its round, action, sight and choice, and the
bot, image and table of the rooms above, which this module may not import (docs/architecture.md).
A game's entry states them, so mypy checks every hook's arguments and results against them; a
`SeatController` reaches the hooks as the `Controls` protocol. docs/games.md lists every hook
with its types: required or optional, its default, who calls it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeAlias, TypeVar, cast

from .round import Ending, Refusal, RoundBase, RulesError, Seat, Wake

if TYPE_CHECKING:
    from .match import Match
    from .options import OptionSpec


JsonValue: TypeAlias = "str | int | float | bool | Sequence[JsonValue] | Mapping[str, JsonValue] | None"
"""A value as JSON (and TOML) spell it (read-only containers, so a `list[int]` is one)."""
JsonDict: TypeAlias = "dict[str, JsonValue]"
"""What the table writes as a JSON object (an action's own fields, a board for the web page)."""
RawDict: TypeAlias = dict[str, Any]
"""A table read from outside (a journal line, a scenario file's `[[round]]` or action) before a
game's readers (`field_int`, `engine/setups.py`) have checked it: its values are really dynamic,
so `Any` until checked."""
Options: TypeAlias = dict[str, Any]
"""A match's options by name. Each value's type is its `OptionSpec`'s (a whole number, a yes/no, a
word, a tuple of dice counts), known only by the name, so the values are `Any` to this mapping."""
Setup: TypeAlias = dict[str, Any]
"""A round's set-up from a scenario file: keyword arguments of the game's own round class, which
the engine hands over unopened (`scenario_setup` makes them, `new_round` spends them)."""

C = TypeVar("C")
"""What a game's cursor runs over (a card, a die, a placement): its `choices` (None where a place
is empty) and `slap`'s choice (never None)."""
C_co = TypeVar("C_co", covariant=True)


class Controls(Protocol[C_co]):
    """A seat's controls as a game's hooks read and set them: table/controls.py's
    `SeatController`, which the engine may not import (its choices are the game's `C`)."""

    seat: int
    match: Match
    cursor: int
    target: int
    joker_mode: bool
    destination: int | None
    message: str

    def selected(self) -> C_co | None: ...

    def choices(self) -> Sequence[C_co | None]: ...

    def targets(self) -> list[tuple[int | None, int | None]]: ...


class Sight(Protocol):
    """What every game's sight says besides its own fields (`Bot.choose` reads them)."""

    @property
    def game(self) -> str: ...

    @property
    def over(self) -> bool: ...


R = TypeVar("R", bound=RoundBase)
"""A game's own round type: its hooks are given its rounds."""
A = TypeVar("A")
"""A game's action: its action types' union (`ClassicAction`), which its hooks make and take."""
S = TypeVar("S", bound=Sight)
"""A game's sight, what a seat sees of the round: all a bot may decide from."""
B = TypeVar("B")
"""The bot its policy serves (table/bot_players.py's `Bot`, which the engine may not import)."""
I = TypeVar("I")  # noqa: E741 (the image)
"""What its screens draw on (a PIL `Image.Image`, which the engine may not import)."""
T = TypeVar("T")
"""The table its words describe (table/machine.py's `Table`, which the engine may not import)."""

Policy: TypeAlias = Callable[[S, int], "A | None"]
"""A bot's decision function for one game: (sight, now in ns) -> its action, or None."""


class Game(Generic[R, A, S, C, B, I, T]):
    """One game. A subclass states its own types (`class DiceGame(Game[DiceRound, DiceAction,
    DiceSight, Die, Bot, Image.Image, Table])`: round, action, sight, choice, then the bot, image
    and table of the rooms above), so mypy checks every hook's arguments and results against
    them; it sets the class attributes and overrides the hooks its game needs:
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

    def round_of(self, c: Controls[C]) -> R:
        """The round `c`'s seat plays, as this game's own round: the table hands a game's hooks
        only the controls of its own matches."""
        return cast(R, c.match.round)

    # ------------------------------------------------------------ the match (engine/match.py)

    def settle_options(self, options: Options, players: int) -> None:
        """Fill in options whose default depends on the player count."""

    def check_options(self, options: Options, players: int | None) -> None:
        """Refuse now, in the words the match's start would use, what its start would refuse
        (`tablectl new` asks before anyone starts); `players`: None while the count is not
        known, when only the checks that need no count can run."""

    def resources(self, players: int, options: Options) -> object:
        """What a match needs beyond its options, loaded from the game's own data files (a
        board layout, a deck split); the match carries it unopened (`Match.resources`), so its
        game checks it (`check_resources`) before reading it."""
        return None

    def check_resources(self, resources: object) -> None:
        """Refuse a match whose resources (`resources`) were not given."""

    def new_round(self, match: Match, rng: random.Random, setup: Setup) -> R:
        """The round numbered `match.round_no`; `setup` fixes its cards (scenarios)."""
        raise self.lacking("new_round")

    def round_over(self, match: Match, rnd: R) -> None:
        """What a finished round leaves for the next ones (its result is already recorded)."""

    def is_over(self, match: Match) -> bool:
        """Asked once the round in progress has ended."""
        return bool(match.rounds_played >= match.options["rounds"])

    def carried_over(self, match: Match) -> list[list[object]] | None:
        """What the next match starts from, once this one is over; None: nothing."""
        return None

    def carried_card(self, text: str) -> object:
        """One card of a stored player board (`Match.boards`, written with `str`), read back."""
        raise RulesError(f"{self.name} carries no cards from match to match, yet one was stored: {text!r}")

    # ------------------------------------------------------------ seeing and spelling (engine/codec.py)

    def sight(self, rnd: R, seat: Seat) -> S:
        """What `seat` sees of the round: all a bot may decide from."""
        raise self.lacking("sight")

    def playable(self, rnd: R, seat: Seat) -> bool | None:
        """Whether one of the cards (or dice) `seat` sees as its own fits now: the players'
        reaction time runs from the journal entry that makes this true (docs/players.md). None:
        the game does not say, and its players have no reaction times (never a guess)."""
        return None

    def journal_context(self, players: int, resources: object) -> object:
        """What `decode` needs besides the dict (a deck's cards by name), built once a replay."""
        return None

    def encode(self, action: A) -> JsonDict:
        """An action's own fields, besides do, seat and time."""
        return {}

    def decode(self, kind: type, d: RawDict, seat: Seat, ts: int, context: object) -> A:
        """The action of type `kind` that `d` spells (its field names already checked, their
        values not); `context` is this game's `journal_context`."""
        raise self.lacking("decode")

    # ------------------------------------------------------------ a seat's controls (table/controls.py)

    def choices(self, c: Controls[C]) -> Sequence[C | None]:
        """What the cursor of `SeatController` `c` runs over; None: an empty place (a row place
        with no card), where a slap says "nothing there"."""
        return []

    def targets(self, c: Controls[C]) -> list[tuple[int | None, int | None]]:
        """Where the selected choice may go, chosen with up/down; [] when there is no such choice."""
        return []

    def nav(self, c: Controls[C], control: str) -> None:
        """up/down (left/right move the cursor for every game)."""

    def arbitrates(self, c: Controls[C], control: str) -> bool:
        """A navigation button that changes the game, so goes through the arbiter."""
        return False

    def action(self, c: Controls[C], control: str, ts: int) -> A | None:
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

    def alt(self, c: Controls[C], ts: int) -> A | None:
        """The alt button's action, or None."""
        return None

    def slap(self, c: Controls[C], choice: C, ts: int) -> A | None:
        """Slap with the cursor on `choice` (never None): the action, or None."""
        return None

    def after(self, c: Controls[C], action: A) -> None:
        """An action was taken: reset what the controls held for it."""

    def presses_for(self, c: Controls[C], action: A) -> list[str] | None:
        """The buttons that make `action` from the controller's state (bots press them)."""
        return None

    def explain(self, refusal: Refusal, action: A, rnd: R) -> str | None:
        """A "doesn't fit" in words a player can act on; None: the generic wording."""
        return None

    def said(self, action: A) -> str:
        """What a seat did, in the players' words, for a replay's step line ("played Y2 to the
        centre"); the default names the action and its fields' values, never `field=value`."""
        from .codec import to_dict

        d = to_dict(action)
        values = [str(v) for k, v in d.items() if k not in ("do", "seat", "ts") and v is not None]
        return " ".join([str(d["do"]), *values])

    # ------------------------------------------------------------ bots (table/bot_players.py)

    def policy(self, bot: B, sight: S) -> Policy[S, A]:
        """The bot's decision function for this game: (sight, now ns) -> action or None."""
        raise self.lacking("policy")

    # ------------------------------------------------------------ screens (views/seat.py, views/centre.py)

    def mark(self, c: Controls[C]) -> object:
        """What seat `c` has selected that the centre shows in its seat colour, or None."""
        return None

    def draw_seat(self, img: I, c: Controls[C], rnd: R) -> str:
        """Draw the middle of a 128x64 seat screen (a PIL image); returns its status line."""
        raise self.lacking("draw_seat")

    def draw_centre(self, img: I, rnd: R, blink: bool, marks: dict[int, object]) -> None:
        """Draw the round on the centre matrix (a PIL RGB image); `marks` the seats' `mark`s."""
        raise self.lacking("draw_centre")

    # ------------------------------------------------------------ words for a terminal (views/readable.py)

    def centre_words(self, rnd: R, table: T) -> object:
        """The middle of the table as rich Text for a terminal (views/readable.py holds it to
        Text, which the engine may not name)."""
        raise self.lacking("centre_words")

    def seat_words(self, c: Controls[C], rnd: R) -> object:
        """One seat's own cards as rich Text for a terminal."""
        raise self.lacking("seat_words")

    def keys(self, rnd: R | None, direct: bool = False) -> str:
        """What the keys do in this game (`rnd` the round in progress, or None); `direct`: the
        seat has the direct buttons 1-5 (select1..5), so their keys are offered too."""
        raise self.lacking("keys")

    # ------------------------------------------------------------ the web page (views/live.py)

    def board(self, rnd: R, seats: list[int]) -> JsonDict:
        """The round for the web page, in its small vocabulary of elements (views/boards.py);
        `seats[p]` is the seat (from 0) player p sits at."""
        raise self.lacking("board")

    # ------------------------------------------------------------ scenario files and tools (play/)

    def scenario_options(self, options: Options, rounds: int) -> Options:
        """A file's options, given it has `rounds` [[round]] tables."""
        return options

    def scenario_setup(self, rnd: RawDict, players: int, where: str, rng: random.Random,
                       options: Options, match: Match | None) -> Setup:
        """A [[round]] table into the round's set-up (`match` is None for the first round)."""
        return {}

    def scenario_action(self, match: Match, raw: RawDict, where: str) -> A | Wake:
        """A file's action (seats already from 0) into an engine action (do = "wake": a `Wake`)."""
        from .codec import from_dict

        return cast("A | Wake", from_dict(self.name, raw))  # from_dict spells this game's actions

    def sweep_options(self, players: int) -> list[Options]:
        """The option sets `simulate --sweep` tries for this many players."""
        return [{}]

    def long_options(self) -> Options:
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

AnyGame: TypeAlias = "Game[Any, Any, Any, Any, Any, Any, Any]"
"""A game looked up by name or action (the registry's): which game, so which types, is known only
when the table runs, so its types are `Any` to its callers (each game's own hooks are checked
against its own types where it states them)."""

_games: dict[str, AnyGame] = {}
_actions: dict[type, tuple[AnyGame, str]] = {}
_routine: set[type] = set()


def register(game: AnyGame) -> AnyGame:
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


def get(name: str) -> AnyGame | None:
    return _games.get(name)


def find(name: str) -> AnyGame:
    """The game registered as `name`, or a RulesError naming the games that are."""
    game = _games.get(name)
    if game is None:
        raise RulesError(f"no game {name!r} (registered: {', '.join(_games) or 'none'})")
    return game


def of_action(kind: type) -> tuple[AnyGame, str] | None:
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


def sight_of(rnd: RoundBase, seat: Seat) -> Sight:
    """What `seat` sees of any game's round (its game makes the sight)."""
    sight: Sight = find(rnd.game).sight(rnd, seat)  # every game's sight is a Sight (`S`'s bound)
    return sight
