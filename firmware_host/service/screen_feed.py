"""The table's screens. After every engine decision: render the affected views and queue them
to their displays (TableScreens); outside play, the phase's screens (Screens).

Rendering and queueing run on the table's thread and return at once; the
buses are the workers' business (oled.SeatDisplays, ledlink.LedLink).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from PIL import Image

from ..engine.game import find
from ..table.controls import SeatController
from ..table.machine import Phase, Table
from ..views.centre import render_centre
from ..views.phases import countdown_left, phase_centre, phase_seat
from ..views.seat import render_seat
from ..views.standings import Standings, round_reaction
from .events import StandingsMade

if TYPE_CHECKING:
    from .loop import Loop
    from .table_feed import Step


class SeatSink(Protocol):
    def show(self, seat: int, frame: Image.Image) -> bool: ...


class CentreSink(Protocol):
    def show(self, frame: Image.Image) -> None: ...


class TableScreens:
    def __init__(self, seats: list[SeatController], seat_sink: SeatSink | None,
                 centre_sink: CentreSink | None, size: tuple[int, int] = (32, 16),
                 brightness: float = 1.0) -> None:
        self.seats = seats
        self.seat_sink = seat_sink
        self.centre_sink = centre_sink
        self.size = size
        self.brightness = brightness
        self.blink = True
        self.last_seats: dict[int, Image.Image] = {}
        self.last_centre: Image.Image | None = None
        self._centre_key: bytes | None = None
        self.names: list[str | None] = []  # each player's name (None: a guest or a bot), in the corner

    def forget_centre(self) -> None:
        """Something else was on the matrix (a countdown): send the piles again."""
        self._centre_key = None

    def affected(self, acting: Iterable[int]) -> list[int]:
        """Whose screen a decision can change: in Ligretto only the acting seats' (until the
        round ends); in the other games the shared board or piles show on every seat."""
        match = self.seats[0].match
        if not find(match.round.game).shared_board and match.round.result is None:
            return sorted(set(acting))
        return list(range(len(self.seats)))

    def refresh(self, seats: Iterable[int], centre: bool = True) -> int:
        """Render and queue; returns how many frames were queued (unchanged ones are not)."""
        queued = 0
        for seat in seats:
            frame = render_seat(self.seats[seat], self.names[seat] if seat < len(self.names) else None)
            self.last_seats[seat] = frame
            if self.seat_sink is not None and self.seat_sink.show(seat, frame):
                queued += 1
        if centre:
            frame = render_centre(self.seats[0].match, self.size, self.brightness, self.blink,
                                  self._candidates())
            self.last_centre = frame
            key = frame.tobytes()
            if key != self._centre_key:
                self._centre_key = key
                if self.centre_sink is not None:
                    self.centre_sink.show(frame)
                queued += 1
        return queued

    def after_decisions(self, acting: Iterable[int]) -> tuple[int, float]:
        """(frames queued, seconds taken) after the engine decided for these seats."""
        started = time.perf_counter()
        queued = self.refresh(self.affected(acting))
        return queued, time.perf_counter() - started

    def _candidates(self) -> dict[int, Any]:
        """What each seat has selected that the centre shows (Domino: the placement)."""
        out = {}
        for controller in self.seats:
            mark = controller.entry.mark(controller)
            if mark is not None:
                out[controller.seat] = mark
        return out


class PlayerScreens:
    """TableScreens speaks of players; the displays are per physical seat."""

    def __init__(self, oleds: Any, table: Table) -> None:
        self.oleds, self.table = oleds, table

    def show(self, player: int, frame: Any) -> bool:
        return self.oleds.show(self.table.seat_of_player[player], frame)


class Screens:
    """Every screen of the table, seats and centre: outside play each shows the table's phase
    (views/phases.py), in play the game's views (TableScreens), and while the self-test runs
    what it draws. It owns the countdown's timer: the number changes on the second."""

    def __init__(self, loop: Loop, table: Table, oleds: Any, led: Any, centre: Any,
                 problem: Callable[[], str]) -> None:
        """`centre`: the configuration's [centre] (width, height, brightness); `problem`: the
        configuration's warning ("" when none)."""
        self.loop, self.table, self.oleds, self.led, self.centre = loop, table, oleds, led, centre
        self.problem = problem
        self._holder: Any = None  # the self-test, which has the screens while it is `active`
        self.game: TableScreens | None = None  # the match's screens, once one is bound
        self.phase_seats: dict[int, Any] = {}  # what the seats show outside play
        self.phase_centre: Any = None
        self.phase_key: tuple[Any, ...] = ()
        self.test_frames = 0
        self.address = ""  # where the web view is watched: on the attract screen
        self.qr = True  # and as a QR code ([web] seat_qr)
        self._bound: Any = None
        self._count = loop.register_timer(lambda _now: None)
        self.standings: Callable[[], Standings] = lambda: None
        """What the statistics last said (`Figurer.standings`, read and never waited for) and the
        journal's number of the match on the table: a round end's fastest reaction on the seats."""
        self.match_id: Callable[[], int | None] = lambda: None
        loop.on(StandingsMade, self.standings_made, at="screens")

    def standings_made(self, _event: StandingsMade, now: int) -> bool:
        """New figures: a round end shows its fastest reaction once made; the page is woken too."""
        if self.table.phase is Phase.ROUND_RESULT:
            self.show_phase(now)
        return False

    def held_by(self, holder: Any) -> None:
        """While `holder.active` (the self-test), it draws on the screens, not the phase."""
        self._holder = holder

    def testing(self) -> bool:
        return self._holder is not None and bool(self._holder.active)

    @property
    def size(self) -> tuple[int, int]:
        return (self.centre.width, self.centre.height)

    def bind(self) -> None:
        """A match began (or came back): its screens are drawn from its seats."""
        referee = self.table.referee
        if referee is None:
            return
        self._bound = self.table.match
        self.game = TableScreens(referee.seats, PlayerScreens(self.oleds, self.table), self.led,
                                 self.size, self.centre.brightness)
        self.game.names = self.table.player_names()
        self.game.refresh(range(len(referee.seats)))

    def after_step(self, step: Step) -> None:
        match = self.table.match
        if match is not None and match is not self._bound:
            self.bind()
        if step.wakes and self.game is not None:
            self.game.refresh(range(len(self.game.seats)))

    def after_decisions(self, step: Step) -> None:
        """Each seat a decision or a press changed is drawn once (a press that moved a cursor
        changes its seat though the table decided nothing); the centre when the table decided."""
        game, table = self.game, self.table
        if game is None:
            return
        pressed = [p for s in step.pressed if (p := table.player_of(s)) is not None] \
            if table.phase is Phase.PLAYING else []
        if step.outcomes:
            decided = game.affected(step.acting or [o.press.seat for o in step.outcomes])
            game.refresh(sorted({*decided, *pressed}))
        elif pressed:
            game.refresh(sorted(set(pressed)), centre=False)

    def after_phase(self, step: Step) -> None:
        self.show_phase(step.now)

    def show_phase(self, now: int) -> None:
        """Outside play the seats and the matrix show the table's phase; back in play, the game
        screens are drawn afresh over them. The self-test has the screens while it runs; after
        it, the phase is drawn afresh."""
        self.loop.update_timer(self._count, self._next_count(now))
        if self.testing():
            self.phase_key = ("selftest", self.test_frames)  # a frontend redraws on a change
            return
        table = self.table
        match = table.match
        count = countdown_left(table, now) if table.phase is Phase.COUNTDOWN else 0
        problem = bool(self.problem())
        fastest = round_reaction(self.standings(), self.match_id(), len(match.results)) \
            if table.phase is Phase.ROUND_RESULT and match is not None else None
        key = (table.phase, table.phase_since, tuple(table.joined), table.menu, table.game,
               len(table.bots), count, problem, id(match), len(match.results) if match else 0, self.address,
               self.qr, tuple(table.names.items()), tuple((s, p.key()) for s, p in table.pickers.items()),
               tuple(table.tokens.items()), fastest)
        if key == self.phase_key:
            return
        self.phase_key = key
        if table.phase is Phase.PLAYING:
            if self.game is not None:
                self.game.forget_centre()
                self.game.refresh(range(len(self.game.seats)))
            return
        for seat in range(table.seats):
            frame = phase_seat(table, seat, now, problem, self.address, self.qr, fastest)
            if frame is not None:
                self.phase_seats[seat] = frame
                self.oleds.show(seat, frame)
        self.phase_centre = phase_centre(table, now, self.size, self.centre.brightness)
        if self.phase_centre is not None:
            self.led.show(self.phase_centre)

    def show_test_frame(self, seat: int, frame: Any) -> None:
        """The self-test draws on a seat."""
        self.test_frames += 1
        self.phase_seats[seat] = frame
        self.oleds.show(seat, frame)

    def _next_count(self, now: int) -> int | None:
        """During the countdown: when the number on the screens next changes."""
        table = self.table
        if table.phase is not Phase.COUNTDOWN:
            return None
        left = countdown_left(table, now)
        return table.phase_since + table.timing.countdown_ns - max(0, left - 1) * 1_000_000_000

    def configured(self, old: Any, new: Any) -> None:
        """A reloaded configuration: the brightness changes live."""
        self.centre = new.centre
        self.qr = new.web.seat_qr
        if self.game is not None:
            self.game.brightness = new.centre.brightness

    def frames(self) -> tuple[Any, dict[int, Any]]:
        """What the devices were last sent: the centre, and each physical seat's frame."""
        table = self.table
        if self.game is not None and table.phase is Phase.PLAYING:
            seats = {table.seat_of_player[p]: frame for p, frame in self.game.last_seats.items()}
            return self.game.last_centre, seats
        return self.phase_centre, dict(self.phase_seats)

    def seen(self) -> Any:
        """Changes when the game's frames do (cheap: their identities)."""
        if self.game is not None and self.table.phase is Phase.PLAYING:
            return (self.phase_key, id(self.game.last_centre), tuple(map(id, self.game.last_seats.values())))
        return (self.phase_key, None)
