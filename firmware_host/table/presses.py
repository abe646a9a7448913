"""Clean presses from raw button edges: pure, fed with edge timestamps, no clock inside; and the
buttons' names and the events they make (`InputEvent`), which the table reads.

- Leading-edge debounce: the first contact counts, with its own timestamp;
  every edge in the next `debounce_ns` is contact bounce and is dropped. If the
  line is left at the other level when that window closes (a tap shorter than
  the window), that last edge is applied with its own timestamp: by the next
  edge (in time-stamp order, however late it is delivered), or by the clock
  `SETTLE_GRACE_NS` after the window, once any edge still on its way has
  arrived. A quick slap is a press and a release, never a button left down that
  turns stuck and swallows the next press.
- Minimum press (lines with `min_press_ns`, the GPIO lines): a contact is a press only once the
  line has been down that long in all, counting from the first edge and through bounce; an ESD
  spike (microseconds) or a glitch is dropped without a trace, and the line is free at once.
  The press keeps the first edge's stamp. It is confirmed by the edge that ends a long enough
  contact (in stamp order, however late it is delivered), or by the clock once the time has
  passed while the caller reads the line still down (`confirm`). Gaps shorter than
  `min_press_ns` are bounce within the press; a longer gap before it was confirmed ends it as
  a spike. A closing edge after the clock read the line open, with no opening edge between,
  means the opening was lost (a kernel can drop an edge): the contact is dropped as a spike
  and the new edge is a new contact with its own stamp, never merged into the old one.
- Stuck: a button still down `stuck_ns` after its press is reported stuck and
  ignored until it is released (a jammed or shorted button must not block or
  flood the table).
- False start: a press before "go" is ignored and reported; with a lockout,
  that seat's presses in the first `lockout_ns` after go are ignored too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple

DEFAULT_DEBOUNCE_NS = 30_000_000
DEFAULT_STUCK_NS = 2_000_000_000
SETTLE_GRACE_NS = 250_000_000
"""How long after a quiet window the clock may apply its last dropped edge. Edges reach us later
than they happen (a Pi: well under 10 ms; the virtual Pi under emulation: up to ~200 ms); a
decision taken before an older edge arrives would apply it out of order."""


class Event(StrEnum):
    PRESS = "press"
    RELEASE = "release"
    STUCK = "stuck"
    UNSTUCK = "unstuck"
    FALSE_START = "false_start"
    SPIKE = "spike"  # a contact too short to be a press (min_press_ns): traced, never played


NAV = ("left", "right", "up", "down", "alt")
SELECTS = tuple(f"select{i}" for i in range(1, 6))
ARBITRATED = ("slap", "alt", *SELECTS)
"""Controls whose order across seats matters: they go through the arbiter."""


class InputEvent(NamedTuple):
    """A clean button event as the table sees it, from real pins or emulated ones alike."""

    kind: Event | str  # Event, or "fault" / "recovered" for an expander
    seat: int
    control: str
    ts: int
    detail: str = ""


@dataclass(slots=True)
class LineFilter:
    """One button line."""

    debounce_ns: int = DEFAULT_DEBOUNCE_NS
    stuck_ns: int = DEFAULT_STUCK_NS
    min_press_ns: int = 0
    down: bool = False
    stuck: bool = False
    _quiet_until: int = -(1 << 62)
    _down_since: int | None = None
    _late: tuple[bool, int] | None = None  # the last edge dropped in the quiet window
    bounces: int = 0
    spikes: int = 0  # contacts too short to be a press (min_press_ns)
    # A press waiting to be confirmed (min_press_ns): its first edge's stamp, how long the line
    # was down before its last opening, since when it is down now (None: open since _open_at),
    # and whether the clock saw the line disagree with the edges (one still on its way).
    _pending: int | None = None
    _held: int = 0
    _since: int | None = None
    _open_at: int = 0
    _awaiting_edge: bool = False

    def start(self, down: bool, ts: int) -> None:
        """The line's level when watching begins: held at start-up is no press."""
        self.down = down
        self._down_since = ts if down else None
        self._pending = None

    @property
    def pending(self) -> int | None:
        """The stamp of a press waiting for its minimum time (None: none waits)."""
        return self._pending

    def edge(self, down: bool, ts: int) -> Event | None:
        """A raw edge; returns the clean event it makes, if any. Call `settle(ts, edge=True)` and
        `confirm(ts, down, edge=True)` first."""
        if self._pending is not None:  # the contact is judged by `confirm`; the window still runs
            self.bounces += 1
            self._late = (down, ts)
            return None
        if ts < self._quiet_until:
            self.bounces += 1
            self._late = (down, ts)
            return None
        if down == self.down:
            self.bounces += 1
            return None
        self._late = None
        self.down = down
        if down:
            self._down_since = ts
            self._quiet_until = ts + self.debounce_ns
            if self.stuck:
                return None
            if self.min_press_ns > 0:
                self._pending, self._held, self._since, self._open_at = ts, 0, ts, ts
                self._awaiting_edge = False
                return None
            return Event.PRESS
        self._down_since = None
        self._quiet_until = ts + self.debounce_ns
        if self.stuck:
            self.stuck = False
            return Event.UNSTUCK
        return Event.RELEASE

    def confirm(self, now: int, down: bool, edge: bool = False) -> tuple[Event, int] | None:
        """Judge the waiting press; (PRESS, its first stamp) once it has held `min_press_ns`.

        `edge`: `now` is the stamp of the line's next edge and `down` its level (call before
        `edge`). Else `now` is the clock and `down` the line's level read now: the press is
        confirmed if the line is down and has been long enough; the line open for
        `min_press_ns` ends it as a spike; a line that disagrees with the edges seen has an
        edge on its way, whose stamp decides (or, should none come within SETTLE_GRACE_NS, the
        press is dropped: nothing showed it held)."""
        start = self._pending
        if start is None:
            return None
        if edge:
            saw_open, self._awaiting_edge = self._awaiting_edge and self._since is not None, False
            if down and saw_open:  # closes, yet the clock saw it open: its opening edge was lost
                self._spike()  # nothing showed it held: this edge is a new contact, with its own stamp
                return None
            if not down and self._since is not None:  # the contact opens: was it long enough?
                self._held += now - self._since
                self._since, self._open_at = None, now
                return self._confirmed() if self._held >= self.min_press_ns else None
            if down and self._since is None:  # closes again: bounce, or a new contact after a spike
                if now - self._open_at >= self.min_press_ns or now - start >= self._limit():
                    self._spike()
                else:
                    self._since = now
            return None
        if self._since is not None and down:
            if self._held + now - self._since >= self.min_press_ns:
                return self._confirmed()
        elif self._since is None and not down:
            if now - self._open_at >= self.min_press_ns:
                self._spike()
                return None
        else:
            self._awaiting_edge = True
        if now - start >= SETTLE_GRACE_NS:
            self._spike()
        return None

    def confirm_due(self) -> int | None:
        """When the clock may confirm or drop the waiting press (for the caller's timer)."""
        start = self._pending
        if start is None:
            return None
        if self._awaiting_edge:
            return start + SETTLE_GRACE_NS
        if self._since is not None:
            return self._since + self.min_press_ns - self._held
        return self._open_at + self.min_press_ns

    def _limit(self) -> int:
        """How long a contact may chatter before it is no press: a real one settles within the
        debounce time."""
        return max(self.debounce_ns, 10 * self.min_press_ns)

    def _confirmed(self) -> tuple[Event, int]:
        start = self._pending
        assert start is not None
        self._pending = None
        return Event.PRESS, start

    def _spike(self) -> None:
        """Not a press: forgotten, and the line free at once (no quiet window left behind)."""
        self._pending = None
        self.spikes += 1
        self.down = False
        self._down_since = None
        self._late = None
        self._quiet_until = -(1 << 62)

    def settle_due(self) -> int | None:
        """When the clock may apply the window's last dropped edge (for the caller's timer)."""
        if self._pending is not None or self._late is None or self._late[0] == self.down:
            return None
        return self._quiet_until + SETTLE_GRACE_NS

    def settle(self, now: int, edge: bool = False) -> tuple[Event, int] | None:
        """Apply the edge the quiet window dropped, stamped with its own time; (event, ts).
        `edge`: `now` is the time stamp of the line's next edge, so the window is simply over;
        else `now` is the clock, which waits out the grace for edges still on their way."""
        due = self.settle_due()
        if due is None or self._late is None or now < (self._quiet_until if edge else due):
            return None
        down, ts = self._late
        self._quiet_until = -(1 << 62)
        event = self.edge(down, ts)
        return (event, ts) if event is not None else None

    def stuck_due(self) -> int | None:
        """When this line will count as stuck if it stays down (for the caller's timer)."""
        if self._down_since is None or self.stuck or self._pending is not None:
            return None
        return self._down_since + self.stuck_ns

    def check(self, now: int) -> Event | None:
        """Called at `stuck_due()` or later: has the button been down too long?"""
        due = self.stuck_due()
        if due is not None and now >= due:
            self.stuck = True
            return Event.STUCK
        return None


@dataclass(slots=True)
class StartGate:
    """False starts: presses before "go", and an optional lockout for those who jumped."""

    lockout_ns: int = 0
    go_ts: int | None = -(1 << 62)  # open: only a countdown (`arm`) closes it until `go`
    _jumped: set[int] = field(default_factory=set)

    def arm(self) -> None:
        """A countdown began: from now, presses are false starts until `go`."""
        self.go_ts = None
        self._jumped.clear()

    def go(self, ts: int) -> None:
        self.go_ts = ts

    def admit(self, seat: int, ts: int) -> Event | None:
        """None if the press counts; FALSE_START if it is ignored."""
        if self.go_ts is None or ts < self.go_ts:
            self._jumped.add(seat)
            return Event.FALSE_START
        if seat in self._jumped and ts < self.go_ts + self.lockout_ns:
            return Event.FALSE_START
        return None
