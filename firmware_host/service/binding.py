"""The match and the store kept together: a match that begins is written, each action taken
and each wake journaled (a replay does the same), each round over saved, an abort marked so it
does not come back, and at start the match a crash interrupted resumed."""

from __future__ import annotations

import logging
import time
from typing import Any

from ..engine.codec import to_dict
from ..system.logs import logger
from ..table.arbiter import Arbiter
from ..table.machine import FalseStart, Phase, Table
from ..table.referee import Outcome
from .journal import Store
from .table_feed import Step

log = logger("daemon")


class StoreBinding:
    def __init__(self, table: Table, store: Store) -> None:
        self.table, self.store = table, store
        self.match_id: int | None = None
        self.bound: Any = None  # the match the store follows
        self.saved_rounds = 0

    def resume(self, seats: int) -> bool:
        """The match a crash interrupted, if it can come back on the seats wired now; else it is
        set aside (kept in history, marked, said by `tablectl status`) and the table starts clean.
        True when a match came back."""
        resumed = self.store.resume(seats)
        back = False
        if resumed is not None:
            match_id, match = resumed
            try:
                saved = len(match.results)  # a round the resume's wakes end is stored by the loop
                self.table.resume(match, time.monotonic_ns(), *self.store.seating(match_id),
                                  self.store.names_of(match_id))
                self.match_id, self.saved_rounds, self.bound = match_id, saved, match
                back = True
            except Exception as exc:
                reason = f"cannot resume: {type(exc).__name__}: {exc}"
                self.store.set_aside(match_id, reason)
                self.store.set_aside_notes.append(f"match {match_id} set aside: {reason}")
                table = self.table
                table.match = table.referee = None
                table.joined.clear()
                table.bots.clear()
                table.phase = Phase.ATTRACT
                self.match_id, self.saved_rounds, self.bound = None, 0, None
        for note in self.set_aside:
            self.table._note(note, logging.WARNING, log)
        return back

    @property
    def set_aside(self) -> list[str]:
        """What was set aside since the table started: matches that could not come back, a
        database moved aside, rows no database takes (said by `tablectl status`)."""
        return self.store.set_aside_notes

    def began(self, step: Step) -> None:
        """A match begun or aborted since the last step (before its actions are journaled)."""
        match = self.table.match
        if match is None and self.bound is not None:  # aborted: it must not come back at a restart
            if self.match_id is not None:
                self.store.abort(self.match_id)
            self.match_id, self.bound, self.saved_rounds = None, None, 0
        if match is not None and match is not self.bound:
            named = self.table.player_names()
            self.match_id = self.store.begin_match(
                match, self.table.seat_of_player,
                {p: str(bot.level) for p, bot in self.table.bots.items()},
                {p: name for p, name in enumerate(named) if name is not None})
            self.saved_rounds = 0
            self.bound = match

    def journal(self, step: Step) -> None:
        match = self.table.match
        if match is None:
            return
        arbiter = self.table.referee.arbiter if self.table.referee is not None else None
        for false_start in step.false_starts:  # before go: before anything this step decided
            self.store.record_race(self.match_id or 0, match.round_no, race_record(false_start, arbiter))
        for outcome in step.outcomes:
            if outcome.action is not None and outcome.refusal is None:
                self.store.record(self.match_id or 0, match.round_no, outcome.action)
            elif outcome.contest is not None:  # a lost race: the race view shows both presses
                self.store.record_race(self.match_id or 0, match.round_no, race_record(outcome, arbiter))
        for wake in step.wakes:  # time ended a hold or a round: journaled, so a replay does the same
            self.store.record(self.match_id or 0, match.round_no, wake)
        if len(match.results) > self.saved_rounds:
            self.store.round_over(self.match_id or 0, match)
            self.saved_rounds = len(match.results)


def race_record(what: Outcome | FalseStart, arbiter: Arbiter | None) -> dict[str, Any]:
    """A lost race or a false start as the store keeps it (players from 0, times in ns on the
    inputs' clock): both presses' kernel timestamps, the window, epsilon and seed in force, and
    what the arbiter logged (a tie's draw, how late a press came)."""
    rules: dict[str, Any] = {"window_ns": arbiter.window_ns, "epsilon_ns": arbiter.epsilon_ns,
                             "seed": arbiter.seed} if arbiter is not None else {}
    if isinstance(what, FalseStart):
        return {"kind": "false_start", "control": what.control, "loser": what.player, "loser_ts": what.ts,
                "go_ns": what.go_ns, **rules}
    contest = what.contest
    assert contest is not None
    record: dict[str, Any] = {
        "kind": contest.reason, "control": what.press.control,
        "action": to_dict(what.action) if what.action is not None else None,
        "winner": contest.winner, "winner_ts": contest.winner_ts, "loser": contest.loser,
        "loser_ts": contest.loser_ts, "decided_ns": what.decided_ns, **rules}
    decision = contest.decision
    if decision is not None and decision.kind == "tie":
        record |= {"draw": list(decision.draw), "draw_no": decision.number,
                   "tied": [[p.seat, p.ts] for p in decision.presses]}
    elif decision is not None:
        record["late_ns"] = decision.delta_ns
    return record
