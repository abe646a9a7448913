"""Values shared by every game: refusals, round results, option errors.

The rules package is pure: no clocks, no I/O, no global random state. Time
enters only as the `ts` (nanoseconds) carried by each action, which the
arbiter took from the button edge.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from functools import cache
from typing import Any, ClassVar, NamedTuple, Self

from ..system.errors import TableError

Seat = int
"""A seat index, 0-based inside the engine (seat 1 on the table is 0 here)."""

RACE_HORIZON_NS = 1_000_000_000
"""How far back a play by another seat can still have won a race (docs/fairness.md)."""


class TableColour(IntEnum):
    """A colour as the games name it: an initial on displays and in files."""

    @property
    def letter(self) -> str:
        return self.name[0]

    @classmethod
    def split(cls, text: str) -> tuple[TableColour, str] | None:
        """`R7`, `red 7`, `Blue10` into (colour, "7"), or None when no colour leads."""
        t = text.strip().upper().replace(" ", "")
        for colour in cls:
            for prefix in (colour.name, colour.letter):
                if t.startswith(prefix) and len(t) > len(prefix):
                    return colour, t[len(prefix) :]
        return None


def is_digits(text: str) -> bool:
    """ASCII digits only: `str.isdigit` also takes "²", which `int` refuses."""
    return text.isascii() and text.isdigit()


def is_whole(value: object) -> bool:
    """An int that is not a bool (JSON and TOML `true` must never count as 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


class RulesError(TableError, ValueError):
    """Set-up or options that no round can be built from (bad player count, bad deck)."""


class Reason(StrEnum):
    """Why an action was refused; the value is what a 128×64 seat display shows."""

    TOO_LATE = "too late"
    NO_FIT = "doesn't fit"
    NOT_PLAYABLE = "card not playable"
    NOT_HELD = "you don't hold that"
    NO_CARDS = "no cards to turn"
    ROW_FULL = "row place won't take it"
    NOT_IN_VARIANT = "not in this game"
    ROUND_OVER = "round is over"
    NO_SUCH_SEAT = "no such seat"
    PILE_LIMIT = "too many piles"
    NO_PILE = "no such pile"
    BAD_VALUE = "pick value top±1"
    RESERVED = "token reserved"
    BLOCKED = "token blocked"
    NO_JOKERS = "no jokers left"
    NOT_ADJACENT = "not next to token"
    SQUARE_TAKEN = "square taken"
    NO_SUCH_TOKEN = "no such token"
    ALREADY_VOTED = "already voted"
    NOT_DUE = "nothing is due"
    FITS = "it fits: put it down"
    OFF_BOARD = "not on the board"


@dataclass(frozen=True, slots=True)
class Refusal:
    """An action the engine did not take; the state is unchanged.

    `by_seat` and `delta_ns` say who took the spot and how much earlier, when
    the refusal is a lost race (a negative `delta_ns`: the winner pressed later,
    yet reached the engine first). `tie` says the arbiter drew the two presses
    in one draw (`draw`: which draw of its generator, from 1); a lost race
    without it was decided by time, or this press reached the table late.
    """

    reason: Reason
    detail: str = ""
    by_seat: Seat | None = None
    delta_ns: int | None = None
    tie: bool = False
    draw: int | None = None

    def __str__(self) -> str:
        text = str(self.reason)
        if self.by_seat is not None and self.delta_ns is not None:
            gap = abs(self.delta_ns) / 1e6
            if self.tie:
                when = ("at the same instant as you" if self.delta_ns == 0
                        else f"pressed {gap:.1f} ms {'after' if self.delta_ns < 0 else 'before'} you")
                return f"{text} (seat {self.by_seat + 1} won the tie, {when})"
            if self.delta_ns < 0:
                return (f"{text} (seat {self.by_seat + 1} pressed {gap:.1f} ms after you, "
                        "but yours reached the table late)")
            return f"{text} (seat {self.by_seat + 1} was {gap:.1f} ms earlier)"
        if self.detail:
            text += f" ({self.detail})"
        return text

    def short(self) -> str:
        """At most about 24 characters, for a 128-pixel seat screen."""
        if self.by_seat is not None and self.delta_ns is not None:
            if self.tie:
                return f"too late, seat {self.by_seat + 1} won tie"
            if self.delta_ns < 0:
                return f"late press, seat {self.by_seat + 1} won"
            return f"too late, seat {self.by_seat + 1} +{self.delta_ns / 1e6:.1f}ms"
        return str(self.reason)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"reason": self.reason.name.lower(), "text": str(self)}
        if self.by_seat is not None:
            out["by_seat"] = self.by_seat
        if self.delta_ns is not None:
            out["delta_ms"] = round(self.delta_ns / 1e6, 3)
        if self.tie:
            out["tie"] = True
        if self.draw is not None:
            out["draw"] = self.draw
        return out


class Wake(NamedTuple):
    """Time reached `ts` with no action: what was due then happened (a joker's hold
    lapsed, a wait ran out). Journaled like an action, so a replay does the same."""

    ts: int


class Ending(StrEnum):
    """How a round ended, in the players' words."""

    LIGRETTO = "ligretto"  # a Ligretto stack ran out
    DEADLOCK = "deadlock"  # nobody can ever play again
    STUCK_VOTE = "stuck_vote"  # every seat agreed it is stuck (pro_row)
    LAST_DIE = "last_die"
    LIGRETTO_STOP = "ligretto_stop"  # Domino / Crazy: a player is out of cards
    NO_PLACEMENT = "no_placement"  # Domino: nobody can place any card


@dataclass(frozen=True, slots=True)
class RoundResult:
    ending: Ending
    finishers: tuple[Seat, ...]
    scores: tuple[int, ...]
    detail: dict[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "ending": str(self.ending),
            "finishers": list(self.finishers),
            "scores": list(self.scores),
            **({"detail": self.detail} if self.detail else {}),
        }


def winners(totals: tuple[int, ...] | list[int]) -> tuple[Seat, ...]:
    """Every seat with the highest total: equal totals share the win."""
    best = max(totals)
    return tuple(seat for seat, total in enumerate(totals) if total == best)


_NEVER_LOST = frozenset({Reason.ROUND_OVER, Reason.NO_SUCH_SEAT})
"""Refusals no other seat's play can have caused: "round is over" is the news the seat needs,
and a seat that is not playing raced nobody."""

_SCRATCH_RNG = random.Random(0)
"""What a scratch round draws from: a trial's draws are thrown away with it, and the round's own
generator must not move (a replay of the journal would deal differently)."""

_STAMP_AT: dict[type, int] = {}


def _unstamped(action: Any) -> tuple[Any, ...]:
    """An action with its stamp left out: the same press again, whenever it came."""
    kind = type(action)
    at = _STAMP_AT.get(kind)
    if at is None:
        at = _STAMP_AT[kind] = kind._fields.index("ts")
    return kind, action[:at], action[at + 1:]


@cache
def journal_kinds(cls: type[RoundBase]) -> tuple[tuple[type, ...], dict[type, int]]:
    """A game's journal entry types, numbered for `pack_journal`: a wake, then its actions."""
    kinds = (Wake, *cls._handlers)
    return kinds, {kind: number for number, kind in enumerate(kinds)}


Undo = tuple[Any, ...]
"""How to take one journal entry back: `(function, *arguments)`, called as `function(round,
*arguments)` on the round (or a scratch copy of it) as it was just after the entry."""


class RoundBase:
    """What every game's round shares: one way in (`apply`), its journal, its end.

    A game's round has `_handlers` (action type -> function taking the round and the action)
    and calls `_end` when the round is over. `apply` checks what is common to every action,
    so handlers see only well-formed actions from seated players of a running round.

    A handler that takes an action pushes onto `_undo` how to take it back (python-chess's
    `push`/`pop`): a lost race is told apart from a plain refusal by taking back the other
    seats' latest plays on a scratch copy of the round (`_lost_race`), never by playing the
    round again from its start.
    """

    game: str
    players: int
    result: RoundResult | None
    journal: list[Any]
    _undo: list[Undo]
    _latest: list[int]
    _handlers: ClassVar[dict[type, Callable[[Any, Any], Refusal | None]]]
    _timeless: ClassVar[bool] = False
    """True for a game whose answers never depend on time: no handler's yes or no reads the
    action's stamp and the round never wakes (Domino's joker holds do both). A seat pressing
    the same refused action again is then tried only against what was played since (`_asked`)."""
    _asked: dict[int, tuple[Any, int, int | None]]
    """Per seat, its last refused action (stamp left out), the journal's length then, and the
    play it lost to (None: a plain refusal)."""
    on_end: Callable[[RoundBase], None] | None = None

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        """The journal and its two companions exist before a game's `__init__` runs, so no game
        can forget them: `_undo[i]` takes `journal[i]` back, and `_latest[i]` is the latest
        stamp in `journal[:i + 1]` (how far back a race can reach, found without a scan)."""
        rnd = super().__new__(cls)
        rnd.journal, rnd._undo, rnd._latest = [], [], []
        rnd._asked = {}
        return rnd

    @property
    def is_over(self) -> bool:
        return self.result is not None

    def apply(self, action: Any) -> Refusal | None:
        """Take the action if the rules allow it; otherwise say why and change nothing."""
        refusal = self._take(action)
        if refusal is None or type(action) is Wake or refusal.reason in _NEVER_LOST:
            return refusal
        return self._lost_race(action, refusal)

    @classmethod
    def pack_journal(cls, journal: Sequence[Any]) -> tuple[Any, ...]:
        """An ended round's journal as its match keeps it: one flat tuple, each action's kind
        (its number in `journal_kinds`) followed by its fields.

        The cycle collector walks a named tuple on every full collection for as long as it lives,
        but stops walking a plain tuple of numbers after its first look; a match kept for a
        thousand rounds (`bench engine` keeps every one) made each full collection walk every
        action ever taken. One tuple a round, not one an action, is also one object to make and
        look at. A game whose actions hold objects of its own classes (which keep a tuple walked
        too) packs them as numbers itself (Ligretto's cards); `unpack_journal` gives back equal
        actions."""
        numbers = journal_kinds(cls)[1]
        packed: list[Any] = []
        for action in journal:
            packed.append(numbers[type(action)])
            packed += action
        return tuple(packed)

    @classmethod
    def unpack_journal(cls, packed: Sequence[Any]) -> list[Any]:
        """The actions `pack_journal` packed, equal to the journal it was given."""
        out: list[Any] = []
        i = 0
        while i < len(packed):
            action, i = cls._unpack_plain(packed, i)
            out.append(action)
        return out

    @classmethod
    def _pack_plain(cls, action: Any) -> tuple[Any, ...]:
        """One action as `RoundBase.pack_journal` packs it: a game that packs its own kinds hands
        the others here."""
        return (journal_kinds(cls)[1][type(action)], *action)

    @classmethod
    def _unpack_plain(cls, packed: Sequence[Any], i: int) -> tuple[Any, int]:
        """The action `_pack_plain` packed at `packed[i]`, and where the next one starts."""
        kind = journal_kinds(cls)[0][packed[i]]
        end = i + 1 + len(kind._fields)  # type: ignore[attr-defined]
        return kind._make(packed[i + 1:end]), end  # type: ignore[attr-defined]

    def _take(self, action: Any) -> Refusal | None:
        if self.result is not None:
            return Refusal(Reason.ROUND_OVER)
        if type(action) is Wake:
            return None if self.wake(action.ts) else Refusal(Reason.NOT_DUE)
        if not 0 <= action.seat < self.players:
            return Refusal(Reason.NO_SUCH_SEAT)
        handler = self._handlers.get(type(action))
        if handler is None:
            raise TypeError(f"not a {self.game} action: {action!r}")
        refusal = handler(self, action)
        if refusal is None:  # `_journaled`, spelt out: every action taken comes here
            journal = self.journal
            journal.append(action)
            if len(self._undo) != len(journal):
                raise AssertionError(f"{type(self).__name__} took {action!r} without pushing its undo")
            latest = self._latest
            ts = action.ts
            latest.append(ts if not latest or ts > latest[-1] else latest[-1])
            if self.result is not None and self.on_end is not None:
                self.on_end(self)
        return refusal

    def _journaled(self, entry: Any, ts: int) -> None:
        """An entry was taken: into the journal, beside the undo its handler pushed."""
        journal = self.journal
        journal.append(entry)
        if len(self._undo) != len(journal):
            raise AssertionError(f"{type(self).__name__} took {entry!r} without pushing its undo")
        latest = self._latest
        latest.append(ts if not latest or ts > latest[-1] else latest[-1])
        if self.result is not None and self.on_end is not None:
            self.on_end(self)

    def _lost_race(self, action: Any, refusal: Refusal) -> Refusal:
        """The refusal, or "too late" when another seat's play took what this action wanted.

        The rule (docs/fairness.md): a refusal that would not have happened without plays by
        other seats accepted after this seat's own last play and stamped at most
        `RACE_HORIZON_NS` before this action is a lost race, against the latest of those plays
        whose removal (with the ones after it) lets the action through. The wakes among the
        removed entries stay (time runs on regardless of who played).

        What it costs: a scan of the entries within the horizon, and only where a rival's play
        could have let the action through (`_affects`), a copy of the round with entries taken
        back on it and a trial. A seat pressing the same refused action again is answered from
        what it was told last time, tried only against what was played since (`_asked`). The
        cost follows the plays within the horizon, not the round's length.
        """
        seat, ts = action.seat, action.ts
        journal, latest = self.journal, self._latest
        horizon = ts - RACE_HORIZON_NS
        key = _unstamped(action) if self._timeless else None
        asked = self._asked.get(seat)
        if asked is not None and asked[0] == key is not None:
            _, done, winner = asked  # every trial before journal[done] answered as then
            if winner is not None and journal[winner].ts < horizon:
                done, winner = 0, None  # the play it lost to is past the horizon now
        else:
            done, winner = 0, None
        rivals: list[int] = []
        for i in range(len(journal) - 1, -1, -1):
            if i < done:
                break
            if latest[i] < horizon:
                break  # nothing at or before i is within the horizon
            play = journal[i]
            if type(play) is Wake:
                continue
            if play.seat == seat:
                done, winner = 0, None  # this seat played since: it was asked another table
                break
            if play.ts >= horizon:
                rivals.append(i)
        found = self._race_winner(action, rivals) if rivals else None
        if found is not None:
            winner = found
        if key is not None:
            self._asked[seat] = (key, len(journal), winner)
        if winner is None:
            return refusal
        return Refusal(Reason.TOO_LATE, by_seat=journal[winner].seat, delta_ns=ts - journal[winner].ts)

    def _race_winner(self, action: Any, rivals: list[int]) -> int | None:
        """The latest of `rivals` (journal indices, latest first) whose removal, with the entries
        after it, lets `action` through; None when none does."""
        journal = self.journal
        # Which rivals need a trial: those before which something that could let the action
        # through was taken back (a play that bears on it, or a wake). It is refused as things are.
        trials: list[int] = []
        affects = self._affects
        changed = False
        j = len(journal)
        for i in rivals:
            while j > i:
                j -= 1
                entry = journal[j]
                if not changed and (type(entry) is Wake or affects(entry, action)):
                    changed = True
            if changed:
                trials.append(i)
                changed = False
        if not trials:
            return None
        scratch = self._scratch(action)
        undo = self._undo
        wakes: list[Wake] = []  # the wakes in journal[i:], latest first
        j = len(journal)
        for i in trials:  # latest first
            while j > i:
                j -= 1
                entry = undo[j]
                entry[0](scratch, *entry[1:])
                if type(journal[j]) is Wake:
                    wakes.append(journal[j])
            if scratch._takes(action, wakes):
                return i
        return None

    def _affects(self, entry: Any, action: Any) -> bool:
        """Could taking `entry` (another seat's play) back let a refused `action` through?

        True unless the game knows better: a game may say no for plays that change nothing the
        action's handler reads (another seat's own cards, say), so that `_lost_race` skips the
        trials they would need. Saying no wrongly hides a lost race; the races property test
        (tests/engine/test_properties.py) holds every game's answer to the full trial."""
        return True

    def _scratch(self, action: Any) -> Self:
        """A copy to take entries back on and try `action` on: the same state, its own
        containers (`_unshare`), a generator of no consequence, no journal and no one told
        when it ends."""
        scratch = object.__new__(type(self))
        scratch.__dict__.update(self.__dict__)
        scratch.journal, scratch._undo, scratch._latest = [], [], []
        scratch.on_end = None
        for name, value in scratch.__dict__.items():
            if isinstance(value, random.Random):
                setattr(scratch, name, _SCRATCH_RNG)
        scratch._unshare(action)
        return scratch

    def _unshare(self, action: Any) -> None:
        """Called on a shallow copy: give it its own copy of everything `action` or an undo
        changes, so that nothing done to the copy reaches the round it was made from. (A game
        may copy some parts only when an undo first changes them, as Ligretto does its seats.)"""
        raise NotImplementedError(f"{type(self).__name__} must define _unshare (docs/games.md)")

    def _takes(self, action: Any, wakes: list[Wake]) -> bool:
        """Would this (scratch) round take `action` once time has run on through `wakes`
        (latest first)? It is left as it was when the answer is no."""
        done = len(self._undo)
        for wake in reversed(wakes):
            self._take(wake)
        taken = self._take(action) is None
        if not taken:
            while len(self._undo) > done:  # the wakes done above
                entry = self._undo.pop()
                self.journal.pop()
                self._latest.pop()
                entry[0](self, *entry[1:])
        return taken

    def to_centre(self) -> tuple[int, int]:
        """(cards or dice that reached the centre, the round's cards or dice): how much of
        what was dealt got played (Crazy: won into score piles). `simulate` and `bench bots`
        report it."""
        raise NotImplementedError(f"{self.game} lacks to_centre (docs/games.md)")

    def deadline(self) -> int | None:
        """When (ns, the actions' clock) the round next changes with no action, or None.

        The table and the simulator call `wake` then, so nothing waits on a press."""
        return None

    def wake(self, now: int) -> bool:
        """Do what is due by `now`; journaled as `Wake(now)` when something was."""
        due = self.deadline()
        if self.result is not None or due is None or now < due:
            return False
        if self._timeless:
            raise AssertionError(f"{type(self).__name__} says it is timeless, yet it woke at {now}")
        self._due(now)
        self._journaled(Wake(now), now)
        return True

    def _due(self, now: int) -> None:
        """What a game does when its deadline has passed, pushing its undo as a handler does
        (games with a deadline override it)."""

    def scores(self) -> tuple[int, ...]:
        """What each seat would score if the round were called now (every game's round says)."""
        raise NotImplementedError(f"{self.game} lacks scores (docs/games.md)")

    def snapshot(self) -> dict[str, object]:
        """The round's state as plain data, which a scenario file's expect_* tables are held to."""
        raise NotImplementedError(f"{self.game} lacks snapshot (docs/games.md)")

    def _end(self, result: RoundResult) -> None:
        self.result = result


# ---------------------------------------------------------------- fields of actions in plain data


def field_int(d: dict[str, Any], key: str, default: Any = ...) -> Any:
    """A whole-number field of an action dict (None allowed when it is the default)."""
    value = d.get(key, default)
    if value is ...:
        raise RulesError(f"missing '{key}'")
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise RulesError(f"'{key}' must be a whole number, not {value!r}")
    return value


def field_str(d: dict[str, Any], key: str) -> str:
    value = d.get(key)
    if not isinstance(value, str):
        raise RulesError(f"missing '{key}'" if value is None else f"'{key}' must be text")
    return value


def field_square(value: Any, what: str) -> tuple[int, int]:
    if (
        not isinstance(value, list | tuple) or len(value) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in value)
    ):
        raise RulesError(f"{what} must be a square [row, column], not {value!r}")
    return (value[0], value[1])
