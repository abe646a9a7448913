"""Values shared by every game: refusals, round results, option errors.

The rules package is pure: no clocks, no I/O, no global random state. Time
enters only as the `ts` (nanoseconds) carried by each action, which the
arbiter took from the button edge.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Any, NamedTuple, Self

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


class RulesError(ValueError):
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
    the refusal is a lost race. A negative `delta_ns`: the winner pressed
    later, yet reached the engine first; `tie` says the arbiter drew it so
    (the presses fell within its epsilon), otherwise this press came late.
    """

    reason: Reason
    detail: str = ""
    by_seat: Seat | None = None
    delta_ns: int | None = None
    tie: bool = False

    def __str__(self) -> str:
        text = str(self.reason)
        if self.by_seat is not None and self.delta_ns is not None and self.delta_ns < 0:
            after = f"pressed {-self.delta_ns / 1e6:.1f} ms after you"
            if self.tie:
                return f"{text} (seat {self.by_seat + 1} won the tie, {after})"
            return f"{text} (seat {self.by_seat + 1} {after}, but yours reached the table late)"
        if self.by_seat is not None and self.delta_ns is not None:
            return f"{text} (seat {self.by_seat + 1} was {self.delta_ns / 1e6:.1f} ms earlier)"
        if self.detail:
            text += f" ({self.detail})"
        return text

    def short(self) -> str:
        """At most about 24 characters, for a 128-pixel seat screen."""
        if self.by_seat is not None and self.delta_ns is not None and self.delta_ns < 0:
            if self.tie:
                return f"too late, seat {self.by_seat + 1} won tie"
            return f"late press, seat {self.by_seat + 1} won"
        if self.by_seat is not None and self.delta_ns is not None:
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


def _fresh(value: Any) -> Any:
    """A generator's copy at the same point, so a round built again draws the same; else as is."""
    if isinstance(value, random.Random):
        copy = random.Random()
        copy.setstate(value.getstate())
        return copy
    return value


class RoundBase:
    """What every game's round shares: one way in (`apply`), its journal, its end.

    A game fills `_handlers` (action type -> method) and calls `_end` when the
    round is over. `apply` checks what is common to every action, so handlers
    see only well-formed actions from seated players of a running round.

    A round keeps what it was built from (its set-up, its generator as it was
    before dealing), so that it can be built again and replayed from its
    journal: that is how a refusal is told apart from a lost race (`_lost_race`).
    """

    game: str
    players: int
    result: RoundResult | None
    journal: list[Any]
    _handlers: dict[type, Callable[[Any], Refusal | None]]
    _built: tuple[tuple[Any, ...], dict[str, Any]]
    on_end: Callable[[RoundBase], None] | None = None

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        rnd = super().__new__(cls)
        rnd._built = (tuple(map(_fresh, args)), {k: _fresh(v) for k, v in kwargs.items()})
        return rnd

    @property
    def is_over(self) -> bool:
        return self.result is not None

    def apply(self, action: Any) -> Refusal | None:
        """Take the action if the rules allow it; otherwise say why and change nothing."""
        refusal = self._take(action)
        if refusal is not None and refusal.reason is not Reason.ROUND_OVER and type(action) is not Wake:
            return self._lost_race(action, refusal)
        return refusal

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
        refusal = handler(action)
        if refusal is None:
            self.journal.append(action)
            if self.result is not None and self.on_end is not None:
                self.on_end(self)
        return refusal

    def _lost_race(self, action: Any, refusal: Refusal) -> Refusal:
        """The refusal, or "too late" when another seat's play took what this action wanted.

        The rule (docs/fairness.md): a refusal that would not have happened without
        plays by other seats accepted after this seat's own last play and stamped
        at most `RACE_HORIZON_NS` before this action is a lost race, against the
        latest of those plays whose removal (with the ones after it) lets the
        action through. Only refusals pay for this (a replay per such play, latest
        first, until one lets it through), and only when such plays exist.
        """
        seat, ts = action.seat, action.ts
        journal = self.journal
        rivals: list[int] = []
        for i in range(len(journal) - 1, -1, -1):
            play = journal[i]
            if type(play) is Wake:
                continue
            if play.seat == seat:
                break
            if play.ts >= ts - RACE_HORIZON_NS:
                rivals.append(i)
        for i in rivals:  # latest first
            if self._takes_without(action, i):
                return Refusal(Reason.TOO_LATE, by_seat=journal[i].seat, delta_ns=ts - journal[i].ts)
        return refusal

    def _takes_without(self, action: Any, since: int) -> bool:
        """Would this round take `action` had it seen no seat's play from journal[since] on?

        Built again from its set-up and replayed: the journal up to there, then
        the wakes after it (time runs on regardless of who played)."""
        args, kwargs = self._built
        again = type(self)(*map(_fresh, args), **{k: _fresh(v) for k, v in kwargs.items()})
        for i, done in enumerate(self.journal):
            if i < since or type(done) is Wake:
                again._take(done)
        return again._take(action) is None

    def to_centre(self) -> tuple[int, int]:
        """(cards or dice that reached the centre, the round's cards or dice): how much of
        what was dealt got played (Crazy: won into score piles). `simulate` and `bench bots`
        report it."""
        raise NotImplementedError

    def deadline(self) -> int | None:
        """When (ns, the actions' clock) the round next changes with no action, or None.

        The table and the simulator call `wake` then, so nothing waits on a press."""
        return None

    def wake(self, now: int) -> bool:
        """Do what is due by `now`; journaled as `Wake(now)` when something was."""
        due = self.deadline()
        if self.result is not None or due is None or now < due:
            return False
        self._due(now)
        self.journal.append(Wake(now))
        if self.result is not None and self.on_end is not None:
            self.on_end(self)
        return True

    def _due(self, now: int) -> None:
        """What a game does when its deadline has passed (games with a deadline override it)."""

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
