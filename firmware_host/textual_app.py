"""The emulated table in the terminal (Textual): you play seat 1, bots play the others.

The daemon runs exactly as on the Pi, in its own thread; this app is only a
display and a keyboard. Keys go to the daemon's queue and from there to seat
1's emulated pins (inputs/keyboard.py), so a key press takes the Pi's path:
mock pin, edge filter, arbiter, engine. What is drawn are the frames the
devices were sent: the centre matrix in colour, a seat's OLED in braille
(`z` for the sharper half-block view).
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Footer, RichLog, Static

from .displays.terminal import mono_braille, mono_text, rgb_cells
from .tui import TableView

if TYPE_CHECKING:
    from .daemon import Daemon

HELP = ("[b]Seat 1 is yours.[/b] Lobby: [b]space[/b] join · [b]←/→[/b] game · [b]b[/b]/[b]B[/b] add/remove "
        "a bot · [b]enter[/b] start.  Playing: [b]←/→/↑/↓[/b] move · [b]space[/b] slap · [b]enter[/b] alt · "
        "[b]1-5[/b] direct buttons.")


def centre_text(view: TableView) -> Text:
    """The matrix frame, brightened like a camera would: the LEDs run capped at a fraction of
    full brightness, which on a screen would look nearly black."""
    text = Text()
    if view.centre is None:
        return text
    frame = view.centre.convert("RGB")
    brightest = max(high for _, high in frame.getextrema())
    if 0 < brightest < 255:
        frame = frame.point(lambda v: min(255, v * 255 // brightest))
    for i, row in enumerate(rgb_cells(frame)):
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


class ViewChanged(Message):
    """Posted from the daemon's thread (post_message is thread-safe)."""

    def __init__(self, view: TableView) -> None:
        super().__init__()
        self.view = view


class DaemonStopped(Message):
    pass


class Sounded(Message):
    """The table played a sound (its line is in the log already): ring the terminal's bell."""


class TableApp(App[int]):
    TITLE = "table-host"
    CSS = """
    Screen { background: #101014; }
    #main { height: auto; }
    #status { height: 1; background: #1f3a5f; color: white; padding: 0 1; }
    #problem { height: auto; background: darkred; color: white; padding: 0 1; display: none; }
    #problem.shown { display: block; }
    .panel { border: round #44506a; border-title-color: #c0c8e0; height: auto; width: auto; }
    #left { width: auto; }
    #centre, #seat, #scores { width: auto; }
    #centre { padding: 0 1; }
    #scores { padding: 1 1 0 1; }
    #log { height: 1fr; min-height: 5; border: round #44506a; }
    #help { height: auto; color: #a0a8b8; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("q", "quit_table", "quit"),
        Binding("ctrl+c", "quit_table", "quit", show=False, priority=True),
        Binding("v", "watch_next", "watch another seat"),
        Binding("z", "zoom", "sharp/compact seat"),
    ]

    def __init__(self, daemon: Daemon) -> None:
        super().__init__()
        self.daemon = daemon
        self.view: TableView | None = None
        self.watching = 0  # the physical seat whose screen is shown
        self.sharp = False
        self._notices_shown = 0
        self._thread: threading.Thread | None = None
        self.exit_code = 0

    def compose(self) -> ComposeResult:
        yield Static("starting…", id="status")
        yield Static("", id="problem")
        with Horizontal(id="main"):
            with Vertical(classes="panel", id="left"):
                yield Static("", id="centre")
                yield Static("", id="scores")
            yield Static("", id="seat", classes="panel")
        yield RichLog(id="log", wrap=True, markup=False, max_lines=500)
        yield Static(HELP, id="help")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#left").border_title = "centre"
        self.query_one("#log", RichLog).can_focus = False
        self.query_one("#log").border_title = "table"
        self.sharp = self.size.height >= 45 and self.size.width >= 200
        self._title_seat()
        self.daemon.on_view = self.post_message_view
        self.daemon.on_sound = lambda _cue: self.post_message(Sounded())
        self._thread = threading.Thread(target=self._serve, name="table", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            self.exit_code = self.daemon.serve()
        finally:
            self.post_message(DaemonStopped())

    def post_message_view(self, view: TableView) -> None:
        self.post_message(ViewChanged(view))

    # ------------------------------------------------------------ drawing

    def on_view_changed(self, message: ViewChanged) -> None:
        view = self.view = message.view
        self.query_one("#status", Static).update(Text(view.status))
        problem = self.query_one("#problem", Static)
        problem.update(Text(view.problem))
        problem.set_class(bool(view.problem), "shown")
        self.query_one("#centre", Static).update(centre_text(view))
        self.query_one("#scores", Static).update(Text("\n".join(view.scores) or "no match yet"))
        self._draw_seat()
        log = self.query_one("#log", RichLog)
        logged = view.logged or len(view.notices)
        fresh = view.notices[len(view.notices) - min(len(view.notices), logged - self._notices_shown):]
        for line in fresh:  # the lines logged since the last view (the pane keeps its own 500)
            log.write(line)
        self._notices_shown = logged

    def on_sounded(self, _: Sounded) -> None:
        self.bell()

    def _draw_seat(self) -> None:
        if self.view is not None:
            self.query_one("#seat", Static).update(seat_text(self.view, self.watching, self.sharp))

    def _title_seat(self) -> None:
        who = "you" if self.watching == 0 else "watching"
        self.query_one("#seat").border_title = f"seat {self.watching + 1} ({who})"

    def on_daemon_stopped(self, _: DaemonStopped) -> None:
        self.exit(self.exit_code)

    # ------------------------------------------------------------ keys

    def on_key(self, event: events.Key) -> None:
        name = event.character if event.character in ("b", "B") else event.key
        if name in ("q", "v", "z", "ctrl+c"):
            return
        self.daemon.events.put(("key", name))
        event.stop()

    def action_watch_next(self) -> None:
        seats = sorted(self.view.seats) if self.view is not None and self.view.seats else [0]
        later = [s for s in seats if s > self.watching]
        self.watching = later[0] if later else seats[0]
        self._title_seat()
        self._draw_seat()

    def action_zoom(self) -> None:
        self.sharp = not self.sharp
        self._draw_seat()

    def action_quit_table(self) -> None:
        """Stop the daemon; it tells us when it has closed everything, then we exit."""
        self.daemon.events.put(("signal", "term"))

    def on_unmount(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            self.daemon.events.put(("signal", "term"))
            self._thread.join(timeout=5)


def run_app(daemon: Daemon) -> int:
    app = TableApp(daemon)
    result: Any = None
    with contextlib.suppress(KeyboardInterrupt):
        result = app.run()
    if app._thread is not None and app._thread.is_alive():  # the app ended first (a crash)
        daemon.events.put(("signal", "term"))
        app._thread.join(timeout=5)
    return int(result or 0)
