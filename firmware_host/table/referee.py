"""Inputs → arbiter → seats → match: the path every press takes, on the Pi and in emulation.

The table (state machine, daemon) owns one Referee per match and feeds it from
a single thread: input events as they come off the queue, and `decide(now)`
whenever `next_deadline()` is reached. Nothing here reads a clock. What it
notes speaks of physical seats, numbered from 1; the arbiter's draws and late
presses are DEBUG lines (`table_host.arbiter`): a player hears of a tie only
when two seats wanted the same spot (a contest), and is told what the arbiter
decided: a draw is a tie, a press it took late is late.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..engine.codec import Action, to_dict
from ..engine.match import Match
from ..engine.round import Reason, Refusal
from ..system.logs import logger
from .arbiter import Arbiter, Decision, Press
from .controls import SeatController
from .presses import ARBITRATED, Event, InputEvent

arbiter_log = logger("arbiter")


@dataclass(frozen=True, slots=True)
class Outcome:
    press: Press
    action: Action | None
    refusal: Refusal | None
    decided_ns: int  # the `now` at which the engine decided
    contest: Contest | None = None  # a lost race: who won, both edge times, how the arbiter decided


@dataclass(frozen=True, slots=True)
class Contest:
    """Two seats wanted the same spot: who won, both edge times, and the gap.

    `tie`: the presses fell within the arbiter's epsilon, so a draw ordered them. `decision`: what
    the arbiter logged for the losing press (the draw of a tie, or how late it came), if anything."""

    winner: int
    loser: int
    winner_ts: int
    loser_ts: int
    tie: bool = False
    decision: Decision | None = None

    @property
    def delta_ns(self) -> int:
        return self.loser_ts - self.winner_ts

    @property
    def reason(self) -> str:
        """Why the winner had it, as the arbiter decided: "tie" (a draw ordered the presses),
        "late" (this press reached the table after its window) or "first" (pressed first)."""
        if self.tie:
            return "tie"
        return "late" if self.delta_ns < 0 else "first"

    def describe(self, seats: list[int] | None = None, stamps: bool = True) -> str:
        """`seats`: the physical seat of each player (else players are taken for seats); `stamps`:
        the two presses' kernel stamps after it, for the maintainer's log (never the players':
        a clock's raw milliseconds mean nothing to a person)."""
        winner, loser = (seats[self.winner], seats[self.loser]) if seats else (self.winner, self.loser)
        times = f" ({self.winner_ts / 1e6:.3f} ms vs {self.loser_ts / 1e6:.3f} ms)" if stamps else ""
        if self.tie:  # the arbiter drew it (the draw itself is its DEBUG line)
            return (f"seat {winner + 1} won a tie with seat {loser + 1}, pressed "
                    f"{_gap(-self.delta_ns, 'later', 'earlier')}{times}")
        if self.delta_ns < 0:  # no tie: the earlier press reached the table late
            return (f"seat {winner + 1} pressed {-self.delta_ns / 1e6:.1f} ms after seat {loser + 1}, "
                    f"whose press reached the table late{times}")
        return f"seat {winner + 1} was {self.delta_ns / 1e6:.1f} ms earlier than seat {loser + 1}{times}"


def _gap(ns: int, after: str, before: str) -> str:
    if ns == 0:
        return "at the same instant"
    return f"{abs(ns) / 1e6:.1f} ms {after if ns > 0 else before}"


class Referee:
    def __init__(self, match: Match, arbiter: Arbiter, log: Callable[..., None] | None = None,
                 seats: list[int] | None = None) -> None:
        """`log(text, level)`: where notes go besides `notices`; `seats`: each player's physical
        seat (0-based), so that notes name the seat a person sits at."""
        self.match = match
        self.seat_of = list(seats) if seats is not None else list(range(match.players))
        self.arbiter = arbiter
        self.seats = [SeatController(s, match) for s in range(match.players)]
        self.contests: deque[Contest] = deque(maxlen=1000)
        self.notices: deque[str] = deque(maxlen=200)
        self._log = log
        self._logged: dict[int, Decision] = {}  # press (arrival number): the arbiter's note, this release
        arbiter.on_decision = self._arbitrated

    def on_input(self, event: InputEvent) -> None:
        """One clean input event: arbitrated controls wait, navigation acts at once."""
        if event.kind is Event.PRESS:
            if event.control in ARBITRATED or self.seats[event.seat].arbitrates(event.control):
                self.arbiter.push(event.seat, event.control, event.ts)
            else:
                self.seats[event.seat].nav(event.control)
        elif event.kind is Event.FALSE_START:
            self.seats[event.seat].message = "false start"
            self._note(f"Seat {self._seat(event.seat)}: false start ({event.control} before go)")
        elif event.kind is Event.STUCK:
            self.seats[event.seat].message = f"{event.control} stuck"
            self._note(f"Seat {self._seat(event.seat)}: {event.control} held down, ignored until released",
                       logging.WARNING)
        elif event.kind is Event.UNSTUCK:
            self.seats[event.seat].message = ""
            self._note(f"Seat {self._seat(event.seat)}: {event.control} released, working again")
        elif event.kind in ("fault", "recovered"):
            self._note(event.detail, logging.WARNING if event.kind == "fault" else logging.INFO)

    def new_round(self) -> None:
        """A fresh round: every seat's cursor at the start, no mark, no refusal from the last round."""
        for controller in self.seats:
            controller.cursor = controller.target = 0
            controller.joker_mode, controller.destination, controller.message = False, None, ""

    def next_deadline(self) -> int | None:
        return self.arbiter.due()

    def decide(self, now: int) -> list[Outcome]:
        """Hand every due press, in arbiter order, to its seat and the engine."""
        self._logged.clear()
        return [self.settle(press, now) for press in self.arbiter.release(now)]

    def close_round(self, now: int) -> list[Outcome]:
        """The round ended while presses still waited in their window: each is decided now,
        against the round it was made in ("round is over"). Left waiting, they were released
        into the next round after its countdown, 3 s late, and played there."""
        self._logged.clear()
        return [self.settle(press, now) for press in self.arbiter.flush()]

    def settle(self, press: Press, now: int, action: Action | None = None) -> Outcome:
        """One press the arbiter released, to its seat and the engine. `action`: what the press
        means, when it is already known (a scenario file's action); else the seat's controls say."""
        controller = self.seats[press.seat]
        if action is None:
            action = controller.action(press.control, press.ts)
        refusal = contest = None
        if action is not None:
            refusal = self.match.apply(action)
            if refusal is not None and refusal.reason is Reason.TOO_LATE:
                refusal, contest = self._contest(press, action, refusal)
            controller.result(action, refusal)
        self._logged.pop(press.seq, None)
        return Outcome(press, action, refusal, now, contest)

    def _contest(self, press: Press, action: Action, refusal: Refusal) -> tuple[Refusal, Contest | None]:
        """A lost race, written down and told as the arbiter decided it: a tie only when the
        arbiter drew this press and the winner's in one draw; a press it logged as late is late,
        however close its stamp lies to the winner's."""
        decision = self._logged.get(press.seq)
        if refusal.by_seat is None or refusal.delta_ns is None:
            return refusal, None
        winner_ts = press.ts - refusal.delta_ns
        tie = (decision is not None and decision.kind == "tie"
               and any(p.seat == refusal.by_seat and p.ts == winner_ts for p in decision.presses))
        contest = Contest(refusal.by_seat, press.seat, winner_ts, press.ts, tie, decision)
        self.contests.append(contest)
        arbiter_log.debug("contest over %s: %s", to_dict(action), contest.describe(self.seat_of))
        if contest.delta_ns >= self.arbiter.window_ns:  # no race: the spot was gone before this press
            self._note(f"Seat {self._seat(contest.loser)} went for a spot that seat "
                       f"{self._seat(contest.winner)} had taken {contest.delta_ns / 1e6:.1f} ms before")
        else:
            self._note(f"Seats {self._seat(contest.winner)} and {self._seat(contest.loser)} wanted "
                       f"the same spot: {contest.describe(self.seat_of, stamps=False)}")
        return replace(refusal, tie=tie, draw=decision.number if tie and decision else None), contest

    def _arbitrated(self, decision: Decision) -> None:
        """The arbiter's internals: kept, and a DEBUG line (the players hear of contests)."""
        for press in decision.presses:  # released in this same `decide`: its contest finds it
            self._logged[press.seq] = decision
        text = f"arbiter: {decision.describe(self.seat_of)}"
        self.notices.append(text)
        arbiter_log.debug("%s", text)

    def _seat(self, player: int) -> int:
        return self.seat_of[player] + 1 if player < len(self.seat_of) else player + 1

    def _note(self, text: str, level: int = logging.INFO) -> None:
        self.notices.append(text)
        if self._log is not None:
            self._log(text, level)
        else:
            logger("table").log(level, "%s", text)
