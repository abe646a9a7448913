"""The seam between the table and whoever watches it: a terminal, a browser.

A frontend is shown the table (`show`, a TableView: the frames the devices were
sent, the words, the scores), hears its sounds (`ring`), and hands the keys it
reads to the service through the callback `start` gives it (as events: Key,
AbortAsked, Signal). Several can be attached at once; the service never imports
one (the composition root, cli/run.py, chooses and attaches them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..table.machine import Phase, Table

if TYPE_CHECKING:
    from PIL import Image
    from rich.text import Text

    from ..table.cues import Cue


@dataclass(frozen=True)
class TableView:
    """What a frontend shows of the table at one moment: the frames the devices were sent."""

    status: str
    centre: Image.Image | None
    seats: dict[int, Image.Image]  # physical seat -> its latest frame
    scores: list[str]  # one line a player
    notices: list[str] = field(default_factory=list)  # the log's latest INFO lines, oldest first
    problem: str = ""  # the configuration warning, if any
    words: Text | None = None  # the centre in words and coloured cards (views/readable.py)
    hands: dict[int, Text] = field(default_factory=dict)  # physical seat -> its cards as cards
    keys: str = ""  # the keys that do something now, in this game
    logged: int = 0  # lines the log ever gave (more than `notices` keeps): which ones are new
    phase: str = ""  # the table's phase (table/machine.py's Phase): whether a match is running
    live: dict[str, Any] | None = None  # the table as data, for the web (views/live.py): built fresh

    @property
    def in_match(self) -> bool:
        """A match is under way: quitting leaves it to resume at the next start, so ask first."""
        return self.phase in ("countdown", "playing", "round_result")


class Frontend(Protocol):
    def start(self, put: Callable[[Any], None]) -> None:
        """Begin reading keys; each goes to `put` as an event (from any thread)."""

    def show(self, view: TableView) -> None:
        """The table changed (called on the table's thread: hand it over, do not draw here
        if drawing is slow)."""

    def ring(self, cue: Cue) -> None:
        """The table played a sound."""

    def stop(self) -> None:
        """The table is closing: give the terminal (or the connection) back."""


def who(table: Table, player: int, seat: int) -> str:
    bot = table.bots.get(player)
    return f"bot ({bot.level})" if bot is not None else ("you" if seat == 0 else "player")


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


class Frontends:
    """The attached frontends: each is shown the table when anything on it changed."""

    def __init__(self, put: Callable[[Any], None], view: Callable[[], TableView],
                 seen: Callable[[], tuple[Any, ...]]) -> None:
        """`view()` builds what they are shown; `seen()` is cheap and changes when it would."""
        self.put, self._view, self._seen = put, view, seen
        self.attached: list[Frontend] = []
        self._shown: tuple[Any, ...] = ()

    def attach(self, frontend: Frontend) -> None:
        self.attached.append(frontend)
        self._shown = ()  # the newcomer is shown the table at the next turn of the loop
        frontend.start(self.put)

    def redraw(self) -> None:
        """Show the table again at the next turn of the loop, changed or not (a frontend that
        just began serving)."""
        self._shown = ()

    def draw(self) -> None:
        if not self.attached:
            return
        seen = self._seen()
        if seen == self._shown:
            return
        self._shown = seen
        view = self._view()
        for frontend in list(self.attached):
            frontend.show(view)

    def problems(self) -> list[str]:
        """Why attached frontends are not serving (a frontend may say so in its `problem`)."""
        return [p for p in (getattr(f, "problem", "") for f in self.attached) if p]

    def reports(self) -> dict[str, Any]:
        """What attached frontends say of their load and limits (a frontend may, in `report()`:
        the web view's connections and browsers), by the frontend's NAME."""
        out = {}
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
