"""The emulated table in the terminal (Textual): you play seat 1, bots play the others.

The daemon runs exactly as on the Pi, in its own thread; this app is only a
display and a keyboard. Keys go to the daemon's queue and from there to seat
1's emulated pins (devices/emulated/keyboard.py), so a key press takes the Pi's path:
mock pin, edge filter, arbiter, engine. What is drawn are the frames the
devices were sent: the centre matrix in colour, a seat's OLED in braille
(`z` for the sharper half-block view), and beside them the table in words and
coloured cards (views/readable.py), `t` switching between the two.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Static

from ..service.events import AbortAsked, Key, Signal
from ..service.frontend import TableView
from ..service.statistics import tracker_started
from .terminal import mono_braille, mono_text, rgb_cells
from .words import VIEWS, words_of

if TYPE_CHECKING:
    from ..devices.buzzer import Cue
    from ..service.daemon import Daemon


def centre_text(view: TableView, width: int = 2) -> Text:
    """The matrix frame, brightened like a camera would: the LEDs run capped at a fraction of
    full brightness, which on a screen would look nearly black. `width`: cells an LED (2 keeps
    them square, 1 fits a narrow terminal)."""
    text = Text()
    if view.centre is None:
        return text
    frame = view.centre.convert("RGB")
    brightest = max(high for _, high in frame.getextrema())
    if 0 < brightest < 255:
        frame = frame.point(lambda v: min(255, v * 255 // brightest))
    for i, row in enumerate(rgb_cells(frame, width)):
        if i:
            text.append("\n")
        for fg, bg in row:
            text.append("\u2580", style=f"{fg} on {bg}")
    return text


def seat_text(view: TableView, seat: int, sharp: bool) -> Text:
    frame = view.seats.get(seat)
    if frame is None:
        return Text("(this seat's screen is dark)", style="dim")
    return Text(mono_text(frame) if sharp else mono_braille(frame), style="#9fd8ff on black")


def score_lines(scores: list[str], height: int) -> str:
    """A line a seat; more seats than a quarter of the terminal's height go in two columns of
    "seat who total", so 12 seats fit beside the table at 80x24."""
    if not scores:
        return "nobody yet"
    if len(scores) <= max(4, height // 4):
        return "\n".join(scores)
    short = []
    for line in scores:
        parts = line.split()
        total = parts[-1] if parts[-1][0] in "+-" and len(parts) > 3 else ""
        short.append(f"{parts[1]:>2} {parts[2]:<6}{total:>4}")
    half = -(-len(short) // 2)
    return "\n".join(" ".join(pair) for pair in zip(short[:half], [*short[half:], ""], strict=False))


class LogPane(VerticalScroll):
    """What happened, newest last, wrapped to the pane's width whenever it is drawn: a line is
    never cut or scrolled sideways, and a resize wraps the old lines again (a RichLog renders a
    line once, at the width it had then, and scrolls sideways when a scrollbar later takes two
    columns of it)."""

    KEEP = 500

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lines: deque[str] = deque(maxlen=self.KEEP)
        self._text = Static("", id="log-text")

    def compose(self) -> ComposeResult:
        yield self._text

    def write(self, line: str) -> None:
        self.lines.append(line)
        self._text.update(Text("\n".join(self.lines), overflow="fold"))
        self.call_after_refresh(self.scroll_end, animate=False)

    def on_resize(self, _: events.Resize) -> None:
        """The pane shrank (the lobby's words are longer than play's): the newest lines stay in
        view ("Match over…" was hidden below the pane back in the lobby)."""
        self.call_after_refresh(self.scroll_end, animate=False)


class ViewChanged(Message):
    """Posted from the daemon's thread (post_message is thread-safe)."""

    def __init__(self, view: TableView) -> None:
        super().__init__()
        self.view = view


class DaemonStopped(Message):
    pass


class TextualFrontend:
    """The app as the service's Frontend: what the service's thread hands over is posted to the
    app (post_message is thread-safe); the app puts its keys in the loop itself."""

    VIEWS: ClassVar[dict[str, Any]] = VIEWS

    def __init__(self, app: TableApp) -> None:
        self.app = app

    def start(self, put: Callable[[Any], None]) -> None:
        self.app.put = put

    def show(self, view: TableView) -> None:
        self.app.post_message(ViewChanged(view))

    def ring(self, cue: Cue) -> None:
        self.app.post_message(Sounded())

    def stop(self) -> None:
        """The app ends when the loop's thread does (DaemonStopped)."""


class Sounded(Message):
    """The table played a sound (its line is in the log already): ring the terminal's bell."""


SHUTDOWN_GRACE_S = 5.0  # for Textual to hand the terminal back once the table has closed


class TableApp(App[int]):
    """Two views of one table, `t` switches: the table in words and coloured cards (legible at
    80x24), and the faithful frames the LED matrix and the OLED were sent."""

    TITLE = "table-host"
    CSS = """
    Screen { background: #101014; }
    #status { height: auto; background: #1f3a5f; color: white; padding: 0 1; }
    #problem, #confirm { height: auto; background: darkred; color: white; padding: 0 1; display: none; }
    #problem.shown, #confirm.shown { display: block; }
    .panel { border: round #44506a; border-title-color: #c0c8e0; height: auto; }
    #main { height: auto; }
    #words { width: 1fr; min-width: 40; }
    #scores { width: 30; }
    #hand { width: 1fr; }
    #left, #centre { width: auto; }
    #seat { width: auto; }
    .frames #words, .frames #hand { display: none; }
    .words #left, .words #seat { display: none; }
    .narrow-frames #scores { display: none; }
    .only-seat #left { display: none; }
    .only-centre #seat { display: none; }
    #log { height: 1fr; min-height: 4; border: round #44506a; overflow-x: hidden; }
    #log-text { width: 1fr; }
    #help { height: auto; color: #a0a8b8; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("q", "quit_table", "quit"),
        Binding("ctrl+c", "quit_now", "quit", show=False, priority=True),  # never asks
        Binding("v", "watch_next", "watch another seat"),
        Binding("z", "zoom", "sharp/compact seat"),
        Binding("t", "switch_view", "table/frames"),
        Binding("x", "abort", "abort to lobby"),
    ]
    LOCAL = ("q", "v", "z", "t", "x", "ctrl+c")
    OWN_KEYS = "t table/frames · z sharp seat · v watch a seat · x abort to lobby · q quit"
    VIEWS = ("words", "frames")  # wide enough for the matrix and the OLED side by side
    NARROW_VIEWS = ("words", "seat", "centre")  # narrower: one frame at a time

    def __init__(self, daemon: Daemon) -> None:
        super().__init__()
        self.daemon = daemon
        self.put: Callable[[Any], None] = daemon.loop.put
        self.view: TableView | None = None
        self.watching = 0  # the physical seat whose screen is shown
        self.sharp = False
        self.mode = "words"
        self.confirming: Callable[[], None] | None = None  # what a `y` does now
        self._notices_shown = 0
        self._thread: threading.Thread | None = None
        self.end_process_if_stuck = False  # run_app: this app is the process, not a test's guest
        self.exit_code = 0

    def compose(self) -> ComposeResult:
        yield Static("starting…", id="status")
        yield Static("", id="problem")
        yield Static("", id="confirm")
        with Horizontal(id="main"):
            yield Static("", id="words", classes="panel")
            with Vertical(classes="panel", id="left"):
                yield Static("", id="centre")
            yield Static("", id="seat", classes="panel")
            yield Static("", id="scores", classes="panel")
        yield Static("", id="hand", classes="panel")
        yield LogPane(id="log")
        yield Static("", id="help")

    def on_mount(self) -> None:
        self.query_one("#left").border_title = "centre LEDs"
        self.query_one("#words").border_title = "table"
        self.query_one("#scores").border_title = "seats"
        self.query_one("#log", LogPane).can_focus = False
        self.query_one("#log").border_title = "what happened"
        self.sharp = self.sharp_fits
        self._title_seat()
        self._apply_mode()
        self.daemon.attach(TextualFrontend(self))
        self._thread = threading.Thread(target=self._serve, name="table", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            self.exit_code = self.daemon.serve()
        finally:
            self.post_message(DaemonStopped())
            if self.end_process_if_stuck:
                # The table is closed and saved. Textual now restores the terminal; when the terminal
                # is gone (a hang-up), its writes wait for ever on a writer that died of EIO. So the
                # process ends here if the app has not ended by then: nothing is left to lose.
                ending = threading.Timer(SHUTDOWN_GRACE_S, os._exit, args=(self.exit_code or 0,))
                ending.daemon = True
                ending.start()

    # ------------------------------------------------------------ drawing

    @property
    def wide(self) -> bool:
        """Room for the matrix (one cell an LED) and the OLED side by side: 34 + 66 columns."""
        return self.size.width >= 100

    SHARP_SIZE = (196, 44)
    """The half-block seat is 128x32 cells in a border (130x34), beside the matrix's 66 columns
    (two cells an LED from 140 columns), above the log and the keys: any smaller and it would run
    past the edge."""
    SCORES_WIDTH = 30

    def _frames_width(self, width: int) -> int:
        """Columns the frames take side by side: the matrix and the seat, as drawn at `width`."""
        return (66 if width >= 140 else 34) + (130 if self.sharp else 66)

    @property
    def sharp_fits(self) -> bool:
        return self._fits_sharp(self.size.width, self.size.height)

    def _fits_sharp(self, width: int, height: int) -> bool:
        return width >= self.SHARP_SIZE[0] and height >= self.SHARP_SIZE[1]

    def _apply_mode(self, width: int | None = None) -> None:
        """`width`: the terminal's new width (a resize), else its present one."""
        width = self.size.width if width is None else width
        main = self.screen
        frames = self.mode != "words"
        main.set_class(not frames, "words")
        main.set_class(frames, "frames")
        # The seats' panel only where it fits beside the frames (the status line names them too).
        main.set_class(frames and width < self._frames_width(width) + self.SCORES_WIDTH, "narrow-frames")
        main.set_class(self.mode == "seat", "only-seat")
        main.set_class(self.mode == "centre", "only-centre")
        self._draw()

    def on_resize(self, event: events.Resize) -> None:
        if self.sharp and not self._fits_sharp(event.size.width, event.size.height):
            self.sharp = False
        wide = event.size.width >= 100
        if self.mode == "frames" and not wide:
            self.mode = "seat"
        elif self.mode in ("seat", "centre") and wide:
            self.mode = "frames"
        self._apply_mode(event.size.width)

    def on_view_changed(self, message: ViewChanged) -> None:
        before = self.view
        self.view = message.view
        if self.watching and message.view.in_match and (before is None or not before.in_match):
            self.watching = 0  # a new match opens on your own seat, not the one watched in the last
            self._title_seat()
        self._draw()
        log = self.query_one("#log", LogPane)
        view = self.view
        logged = view.logged or len(view.notices)
        fresh = view.notices[len(view.notices) - min(len(view.notices), logged - self._notices_shown):]
        for line in fresh:  # the lines logged since the last view (the pane keeps its own 500)
            log.write(line)
        self._notices_shown = logged

    def _draw(self) -> None:
        view = self.view
        if view is None:
            return
        self.query_one("#status", Static).update(Text(view.status))
        problem = self.query_one("#problem", Static)
        problem.update(Text(view.problem))
        problem.set_class(bool(view.problem), "shown")
        said = words_of(view)
        self.query_one("#words", Static).update(said.centre or Text(""))
        hand = said.hands.get(self.watching)
        self.query_one("#hand", Static).display = self.mode == "words" and bool(hand and hand.plain)
        self.query_one("#hand", Static).update(hand or Text(""))
        self.query_one("#centre", Static).update(centre_text(view, 2 if self.size.width >= 140 else 1))
        self.query_one("#scores", Static).update(Text(score_lines(view.scores, self.size.height)))
        # The frames fill a small terminal: there the terminal's own keys go on the log's lower
        # border (the game's are in the words view, `t` away), so "what happened" keeps its rows.
        short = self.mode != "words" and self.size.height < 40
        help_line = self.query_one("#help", Static)
        help_line.display = not short
        help_line.update(Text(f"{said.keys} · {self.OWN_KEYS}" if said.keys else self.OWN_KEYS))
        self.query_one("#log", LogPane).border_subtitle = self.OWN_KEYS if short else ""
        self._draw_seat()

    def on_sounded(self, _: Sounded) -> None:
        self.bell()

    def _draw_seat(self) -> None:
        if self.view is not None:
            self.query_one("#seat", Static).update(seat_text(self.view, self.watching, self.sharp))

    def _title_seat(self) -> None:
        who = "you" if self.watching == 0 else "watching"
        for panel in ("#seat", "#hand"):
            self.query_one(panel).border_title = f"seat {self.watching + 1} ({who})"

    def on_daemon_stopped(self, _: DaemonStopped) -> None:
        self.exit(self.exit_code)

    # ------------------------------------------------------------ keys

    def on_key(self, event: events.Key) -> None:
        if self.confirming is not None:
            yes, self.confirming = self.confirming, None
            self.query_one("#confirm").set_class(False, "shown")
            if event.character in ("y", "Y"):
                yes()
            event.stop()
            event.prevent_default()
            return
        name = event.character if event.character in ("b", "B") else event.key
        if name in self.LOCAL:
            return
        event.stop()
        if self.watching and self.view is not None and self.view.phase == "playing":
            # Your keys play seat 1: not while another seat is on screen, where you would not see
            # what they did. The key brings your seat back instead.
            self.watching = 0
            self._title_seat()
            self._draw()
            self._say("back to your seat, seat 1: your keys play it (v watches another seat)")
            return
        self.put(Key(name))

    def action_watch_next(self) -> None:
        seats = sorted(self.view.seats) if self.view is not None and self.view.seats else [0]
        later = [s for s in seats if s > self.watching]
        self.watching = later[0] if later else seats[0]
        self._title_seat()
        self._draw()

    def action_zoom(self) -> None:
        """Half blocks (a pixel a cell's half, as sharp as the OLED) or braille (every pixel, a
        quarter of the cells), where the terminal has room for them."""
        if not self.sharp and not self.sharp_fits:
            width, height = self.SHARP_SIZE
            said = (f"z: the sharp seat needs a terminal of {width}x{height} (this one is "
                    f"{self.size.width}x{self.size.height}); the compact one shows every pixel")
            self._say(said)
            return
        self.sharp = not self.sharp
        self._apply_mode()  # the seats' panel makes room for the sharp seat, or comes back

    def action_switch_view(self) -> None:
        """The table in words, then the faithful frames (one at a time on a narrow terminal)."""
        views = self.VIEWS if self.wide else self.NARROW_VIEWS
        self.mode = views[(views.index(self.mode) + 1) % len(views)] if self.mode in views else views[0]
        self._apply_mode()

    def _ask(self, question: str, yes: Callable[[], None]) -> None:
        self.confirming = yes
        confirm = self.query_one("#confirm", Static)
        confirm.update(Text(f"{question}  y: yes  ·  any other key: no"))
        confirm.set_class(True, "shown")

    def action_abort(self) -> None:
        """Back to the lobby from any match (a resumed one too), after a yes."""
        if self.view is not None and self.view.phase == "match_result":
            self._say("x: the match is over; space goes back to the lobby")
            return
        if self.view is None or not self.view.in_match:
            self._say("x: no match is running, nothing to abort")
            return
        self._ask("Abort the match and go back to the lobby?", lambda: self.put(AbortAsked()))

    def _say(self, line: str) -> None:
        """A word from the terminal itself, in the log and on top (a frame may leave the log no rows)."""
        self.query_one("#log", LogPane).write(line)
        self.notify(line, timeout=4)

    def action_quit_table(self) -> None:
        """Stop the daemon; it tells us when it has closed everything, then we exit. During a
        match only after a yes, as `x` asks (the match is kept and comes back at the next start)."""
        if self.view is not None and self.view.in_match and self.confirming is None:
            self._ask("Quit the table? The match is kept and comes back at the next start.",
                      self.action_quit_now)
            return
        self.action_quit_now()

    def action_quit_now(self) -> None:
        self.put(Signal("term"))

    def on_unmount(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            self.put(Signal("term"))
            self._thread.join(timeout=5)


def run_app(daemon: Daemon) -> int:
    tracker_started()  # before Textual takes stderr: the statistics' process needs its descriptor
    app = TableApp(daemon)
    app.end_process_if_stuck = True
    result: Any = None
    with contextlib.suppress(KeyboardInterrupt):
        result = app.run()
    if app._thread is not None and app._thread.is_alive():  # the app ended first (a crash)
        daemon.loop.put(Signal("term"))
        app._thread.join(timeout=5)
    return int(result or 0)
