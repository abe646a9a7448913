"""The seam between the table and whoever watches it: a terminal, a browser.

A frontend is shown the table (`show`, a TableView: the frames the devices were
sent, the scores, the status, and the views it asked for), hears its sounds
(`ring`), and hands the keys it reads to the service through the callback
`start` gives it (as events: Key, AbortAsked, Signal). Several can be attached
at once; the service never imports one (the composition root, cli/run.py,
chooses and attaches them).

A frontend asks for what it draws: its `VIEWS` maps a name to a function of a
`Sight` (the table as the loop sees it now), and `TableView.made` holds what
each made, built on the table's thread, only while a frontend that asks for it
is attached (the terminal's words, the web's live state). A frontend that needs
new data adds a view of its own; the service does not change.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ..engine.game import JsonDict
from ..table.machine import Phase, Table
from ..views.standings import Standings
from .events import FrontendReady, FrontendTrouble, StandingsMade

if TYPE_CHECKING:
    from PIL import Image

    from ..system.logs import PaneHandler
    from ..table.cues import Cue
    from .keys import Keys
    from .loop import Loop
    from .screen_feed import Screens
    from .status import Status


@dataclass(frozen=True)
class Sight:
    """What a frontend's view may look at, on the table's thread (never keep it)."""

    table: Table
    now: int
    status: str
    address: str = ""  # where the web view is watched ("" when it is not served)
    direct: bool = False  # seat 1 has direct buttons for keys 1-5 (a terminal's keyboard)
    level: str = "medium"  # the level of the next bot a key adds
    standings: Standings = None  # what the statistics last said (`Figurer.standings`)
    match_id: int | None = None  # the journal's number of the match on the table (or just ended)


ViewMaker = Callable[[Sight], object]
"""A view of the table, made on the table's thread for the frontends that ask for it by name
(`Frontend.VIEWS`): the web view's snapshot (a JsonDict), a terminal's words."""
Put = Callable[[object], None]
"""Where a frontend hands the table an event, from any thread (the loop's `put`: a key's
InputEvent, a Request, events.py's), which the loop tells apart by type."""


@dataclass(frozen=True)
class TableView:
    """What a frontend shows of the table at one moment: the frames the devices were sent."""

    status: str
    centre: Image.Image | None
    seats: dict[int, Image.Image]  # physical seat -> its latest frame
    scores: list[str]  # one line a player
    notices: list[str] = field(default_factory=list)  # the log's latest INFO lines, oldest first
    problem: str = ""  # the configuration warning, if any
    logged: int = 0  # lines the log ever gave (more than `notices` keeps): which ones are new
    phase: str = ""  # the table's phase (table/machine.py's Phase): whether a match is running
    made: Mapping[str, object] = field(default_factory=dict)  # each asked-for view by its name (VIEWS):
    # each name's own type, which its reader checks (`words_of`)

    @property
    def in_match(self) -> bool:
        """A match is under way: quitting leaves it to resume at the next start, so ask first."""
        return self.phase in ("countdown", "playing", "round_result")


class Frontend(Protocol):
    VIEWS: Mapping[str, ViewMaker]
    """The views it draws from (`TableView.made`), each made only while it is attached."""

    def start(self, put: Put) -> None:
        """Begin reading keys; each goes to `put` as an event (from any thread)."""

    def show(self, view: TableView) -> None:
        """The table changed (called on the table's thread: hand it over, do not draw here
        if drawing is slow)."""

    def ring(self, cue: Cue) -> None:
        """The table played a sound."""

    def stop(self) -> None:
        """The table is closing: give the terminal (or the connection) back."""


def who(table: Table, player: int, seat: int) -> str:
    """The seat's player in words: a bot, the seat's name, or "you" (the keyboard's seat 1)."""
    bot = table.bots.get(player)
    if bot is not None:
        return f"bot ({bot.level})"
    return table.names.get(seat) or ("you" if seat == 0 else "player")


def score_lines(table: Table) -> list[str]:
    """One line a player: seat, who, total; in the lobby no totals (the last match's are over)."""
    match = table.match
    current = match is not None and table.phase not in (Phase.LOBBY, Phase.ATTRACT)
    lines = []
    for player, seat in enumerate(table.seat_of_player):
        total = f"{match.totals[player]:>+4d}" if current and match is not None \
            and player < len(match.totals) else ""
        lines.append(f"seat {seat + 1:>2} {who(table, player, seat):<12} {total}".rstrip())
    return lines


class TableViews:
    """Builds the TableView: what every frontend gets, and each view the attached ones ask for."""

    def __init__(self, table: Table, screens: Screens, status: Status, pane: PaneHandler | None,
                 keys: Keys | None = None, standings: Callable[[], Standings] = lambda: None,
                 match_id: Callable[[], int | None] = lambda: None) -> None:
        """`pane`: the log's lines a terminal shows (None headless: the table's notices);
        `keys`: the Keys component (its keyboard's direct buttons and next bot's level);
        `standings`: what the statistics last said, read and never waited for; `match_id`: the
        journal's number of the match on the table (whose rating changes the podium shows)."""
        self.table, self.screens, self.status, self.pane, self.keys = table, screens, status, pane, keys
        self.standings, self.match_id = standings, match_id

    def sight(self, now: int) -> Sight:
        keys = self.keys
        return Sight(self.table, now, self.status.text(), self.screens.address,
                     bool(keys is not None and keys.direct), keys.level if keys is not None else "medium",
                     self.standings(), self.match_id())

    def build(self, makers: Mapping[str, ViewMaker]) -> TableView:
        """The frames the devices were sent, or the lobby; and what `makers` make of it now."""
        table = self.table
        centre, seats = self.screens.frames()
        notices, logged = self.pane.snapshot() if self.pane is not None else (table.notices, 0)
        sight = self.sight(time.monotonic_ns())
        return TableView(sight.status, centre, seats, score_lines(table), list(notices),
                         self.status.problem(), logged or len(notices), phase=str(table.phase),
                         made={name: make(sight) for name, make in makers.items()})

    def seen(self) -> tuple[object, ...]:
        """Cheap, and changes whenever `build` would give something new."""
        trace = self.table.trace  # a decision that changes no screen (a press too late) is news
        return (self.status.text(), self.screens.seen(),
                self.pane.count if self.pane else len(self.table.notices), self.status.problem(),
                id(trace[-1]) if trace else 0, id(self.standings()))  # a new pass: a new dict


def views_of(frontends: Iterable[Frontend]) -> dict[str, ViewMaker]:
    """Every view the frontends ask for, each once (the first to name it makes it)."""
    makers: dict[str, ViewMaker] = {}
    for frontend in frontends:
        for name, make in getattr(frontend, "VIEWS", {}).items():
            makers.setdefault(name, make)
    return makers


class Frontends:
    """The attached frontends: each is shown the table when anything on it changed."""

    def __init__(self, loop: Loop) -> None:
        self.put = loop.put
        self.attached: list[Frontend] = []
        self._shown: tuple[object, ...] = ()
        loop.on(FrontendTrouble, lambda _event, _now: True)  # woken: the status line follows
        loop.on(StandingsMade, lambda _event, _now: True, at="frontends")  # woken: the page shows them
        loop.on(FrontendReady, self.on_ready)

    def on_ready(self, _event: FrontendReady, _now: int) -> bool:
        self.redraw()
        return True

    def attach(self, frontend: Frontend) -> None:
        self.attached.append(frontend)
        self._shown = ()  # the newcomer is shown the table at the next turn of the loop
        frontend.start(self.put)

    def redraw(self) -> None:
        """Show the table again at the next turn of the loop, changed or not (a frontend that
        just began serving)."""
        self._shown = ()

    def draw(self, views: TableViews) -> None:
        if not self.attached:
            return
        seen = views.seen()
        if seen == self._shown:
            return
        self._shown = seen
        view = views.build(views_of(self.attached))
        for frontend in list(self.attached):
            frontend.show(view)
    def problems(self) -> list[str]:
        """Why attached frontends are not serving (a frontend may say so in its `problem`)."""
        return [p for p in (getattr(f, "problem", "") for f in self.attached) if p]

    def reports(self) -> dict[str, JsonDict]:
        """What attached frontends say of their load and limits (a frontend may, in `report()`:
        the web view's connections and browsers), by the frontend's NAME."""
        out: dict[str, JsonDict] = {}
        for frontend in self.attached:
            report = getattr(frontend, "report", None)
            said = report() if report is not None else None
            if said is not None:
                out[str(getattr(frontend, "NAME", type(frontend).__name__))] = said
        return out

    def ring(self, cue: Cue) -> None:
        for frontend in list(self.attached):
            frontend.ring(cue)

    def stop(self) -> None:
        for frontend in self.attached:
            frontend.stop()
