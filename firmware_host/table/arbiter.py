"""Who was first: presses released strictly in the order of their edge timestamps.

Pure: it reads no clock. Callers push presses as they arrive (in whatever order
the kernel, the I2C expander and the threads deliver them) and ask for the
presses that are due at `now`, on the same clock as the timestamps
(CLOCK_MONOTONIC on the Pi).

The model (docs/fairness.md):
- the earliest press waiting is decided at exactly `now >= ts + window`, not a
  nanosecond later: any press stamped earlier has arrived by then, provided
  delivery lags its edge by at most the window;
- a tie is every press that has arrived by then less than `epsilon` after that
  earliest press (not chained: under load, a chain of close presses must never
  swallow two presses `epsilon` or more apart); a tie is ordered by a draw
  from the arbiter's own seeded generator, never by seat or pin number, and
  every draw is logged. So two presses `epsilon` or more apart always come out
  in timestamp order;
- a press that arrives after a later-stamped one was already released is
  "late": released at once and logged, because the order already given cannot
  change. (A press less than `epsilon` after a tie already drawn can be late
  although it arrived within the window: it was not in the draw, and comes
  out after the presses it ties with.)
"""

from __future__ import annotations

import random
from bisect import insort
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

DEFAULT_WINDOW_NS = 5_000_000
DEFAULT_EPSILON_NS = 200_000


class Press(NamedTuple):
    """One button edge that may change the game: which seat, which control, when."""

    ts: int  # nanoseconds, the edge's kernel timestamp
    seq: int  # arrival number, unique: breaks nothing but keeps sorting total
    seat: int
    control: str


@dataclass(frozen=True, slots=True)
class Decision:
    """A logged arbitration: a tie broken by a draw, or a press that came too late."""

    kind: str  # "tie" or "late"
    presses: tuple[Press, ...]  # in the order released
    draw: tuple[int, ...] = ()  # the permutation drawn, as indices into arrival order
    delta_ns: int = 0  # the spread of the tie, or how late the press was
    number: int = 0  # a tie: which draw of this arbiter's generator it was, from 1 (replays check it)

    def describe(self, seat_of: list[int] | None = None) -> str:
        """`seat_of`: each player's physical seat; the presses name players otherwise."""
        seats = ", ".join(f"seat {(seat_of[p.seat] if seat_of else p.seat) + 1} {p.control} "
                          f"@{p.ts / 1e6:.3f} ms" for p in self.presses)
        if self.kind == "tie":
            return f"tie within {self.delta_ns / 1e6:.3f} ms broken by draw {list(self.draw)}: {seats}"
        return f"late by {self.delta_ns / 1e6:.3f} ms, released at once: {seats}"


@dataclass(slots=True)
class Arbiter:
    window_ns: int = DEFAULT_WINDOW_NS
    epsilon_ns: int = DEFAULT_EPSILON_NS
    seed: int | str = 0
    on_decision: Callable[[Decision], None] | None = None
    decisions: deque[Decision] = field(default_factory=lambda: deque(maxlen=1000))
    _held: list[Press] = field(default_factory=list)
    _seq: int = 0
    _released_upto: int = -(1 << 62)  # the newest timestamp released: a press stamped up to it is late
    _draws: int = 0
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        if self.window_ns <= 0 or self.epsilon_ns < 0 or self.epsilon_ns >= self.window_ns:
            raise ValueError("arbiter: need window > epsilon >= 0")
        self._rng = random.Random(f"arbiter/{self.seed}")

    def push(self, seat: int, control: str, ts: int) -> Press:
        """Take a press as it arrives; nothing is released here."""
        press = Press(ts, self._seq, seat, control)
        self._seq += 1
        insort(self._held, press)
        return press

    @property
    def held(self) -> int:
        return len(self._held)

    def due(self) -> int | None:
        """When `release` will next have something to give (None: nothing held)."""
        if not self._held:
            return None
        first = self._held[0].ts
        if first <= self._released_upto:
            return first  # a late press: due at once
        return first + self.window_ns

    def release(self, now: int) -> list[Press]:
        """Every press that is due at `now`, in timestamp order, ties drawn."""
        out: list[Press] = []
        held = self._held
        while held:
            first = held[0].ts
            if first <= self._released_upto:
                late = held.pop(0)
                self._log(Decision("late", (late,), delta_ns=self._released_upto - late.ts))
                out.append(late)
                continue
            # Exactly the window after the earliest press: every press stamped before it is here.
            if now < first + self.window_ns:
                break
            end = self._tie_end()
            tie = held[:end]
            del held[:end]
            out.extend(self._draw(tie) if len(tie) > 1 else tie)
            self._released_upto = tie[-1].ts  # held is sorted: the newest of the tie
        return out

    def flush(self) -> list[Press]:
        """Everything held, as if time had run on (shutting down, end of a round)."""
        return self.release(1 << 62)

    def _tie_end(self) -> int:
        """How many held presses tie with the first: stamped less than epsilon after it."""
        held = self._held
        first = held[0].ts
        i = 1
        while i < len(held) and (held[i].ts - first < self.epsilon_ns or held[i].ts == first):
            i += 1
        return i

    def _draw(self, cluster: list[Press]) -> list[Press]:
        arrival = sorted(cluster, key=lambda p: p.seq)  # the draw must not see seat or pin
        order = list(range(len(arrival)))
        self._rng.shuffle(order)
        drawn = [arrival[i] for i in order]
        self._draws += 1
        self._log(Decision("tie", tuple(drawn), tuple(order), cluster[-1].ts - cluster[0].ts, self._draws))
        return drawn

    def _log(self, decision: Decision) -> None:
        self.decisions.append(decision)
        if self.on_decision is not None:
            self.on_decision(decision)
