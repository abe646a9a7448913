"""The emulated table in a plain terminal (`--ui plain`): the real frames, your keys pressing pins.

Seat 1 is yours: arrows move the cursor, space slaps, enter is alt, 1-5 the
direct buttons. In the lobby: space joins, left/right choose the game, enter
starts; `b` adds a bot, `B` removes one, `l` the next bot's level; `q` quits
(during a match after a yes). Keys go through the emulated pins like any
button (devices/emulated/keyboard.py). The Textual UI (textual_app.py) is the default;
this one needs nothing but a tty.

Everything drawn fits the terminal's width: where the frames fit beside the
rest (the OLED in braille, 64 columns by 16 rows, under the matrix's 32 by 8)
they are drawn; in a smaller terminal (80x24) the table in words
(views/readable.py) is drawn instead, wrapped to the width.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import termios
import threading
import tty
from typing import TYPE_CHECKING, ClassVar, TextIO

from rich.console import Console
from rich.text import Text

from ..service.events import Key
from ..service.frontend import Put, TableView, ViewMaker
from .terminal import mono_braille, rgb_text
from .words import VIEWS, words_of

if TYPE_CHECKING:
    from ..table.cues import Cue

__all__ = ["TableView", "TerminalUI", "parse_keys"]

ARROWS = {"A": "up", "B": "down", "C": "right", "D": "left"}
OWN_KEYS = "q quit"
QUESTION = "Quit the table? The match is kept and comes back at the next start.  y: yes · any other key: no"
FRAMES_SIZE = (64, 8 + 16 + 8)
"""Columns and rows the frames need: the OLED in braille (64 x 16) under the matrix (32 x 8), and
the status, the scores, the log and the keys."""
NOTICES = 3  # the log's latest lines shown


def parse_keys(data: str) -> list[str]:
    """Key names from raw terminal input (arrows arrive as ESC [ A..D)."""
    keys = []
    i = 0
    while i < len(data):
        ch = data[i]
        if ch == "\x1b" and data[i + 1 : i + 2] == "[" and data[i + 2 : i + 3] in ARROWS:
            keys.append(ARROWS[data[i + 2]])
            i += 3
            continue
        keys.append({" ": "space", "\r": "enter", "\n": "enter"}.get(ch, ch))
        i += 1
    return keys


class TerminalUI:
    """A Frontend (service/frontend.py) on a plain terminal: redraws the table, rings BEL."""

    VIEWS: ClassVar[dict[str, ViewMaker]] = VIEWS

    def __init__(self, out: TextIO | None = None, size: tuple[int, int] | None = None) -> None:
        """`size`: (columns, rows) to draw for; None: the terminal's, at each draw."""
        self._put: Put = lambda _event: None
        self._out = out or sys.stdout
        self._size = size
        self._last: tuple[object, ...] = ()
        self._view: TableView | None = None
        self._asking = False  # "quit?" is on the screen: the next key answers it
        self._drawing = threading.Lock()  # the table's thread draws, the keys' thread asks
        self._saved: list[int | list[bytes | int]] | None = None  # the terminal's modes (termios)
        self._stop = False

    def start(self, put: Put) -> None:
        """Keys are read on a thread of their own, the terminal in cbreak mode until `stop`."""
        self._put = put
        if sys.stdin.isatty():
            self._saved = termios.tcgetattr(sys.stdin.fileno())
            tty.setcbreak(sys.stdin.fileno())
            threading.Thread(target=self._read, name="keys", daemon=True).start()

    def _read(self) -> None:
        fd = sys.stdin.fileno()
        while not self._stop:
            try:
                data = os.read(fd, 64).decode(errors="ignore")
            except OSError:
                return
            if not data:
                return
            for key in parse_keys(data):
                self.key(key)

    def key(self, name: str) -> None:
        """A key typed: `q` during a match asks first (as the Textual UI's `q` and `x` do)."""
        if self._asking:
            self._asking = False
            if name in ("y", "Y"):
                self._put(Key("q"))
            else:
                self._redraw()
            return
        if name == "q" and self._view is not None and self._view.in_match:
            self._asking = True
            self._redraw()
            return
        self._put(Key(name))

    def _columns_rows(self) -> tuple[int, int]:
        if self._size is not None:
            return self._size
        size = shutil.get_terminal_size((80, 24))
        return size.columns, size.lines

    def show(self, view: TableView) -> None:
        """Redraw when anything shown changed; the frames are the ones sent to the devices."""
        self._view = view
        self._redraw()

    def _redraw(self) -> None:
        view = self._view
        if view is None:
            return
        columns, rows = self._columns_rows()
        centre, seat, notices = view.centre, view.seats.get(0), view.notices
        said = words_of(view)
        key = (view.status, None if centre is None else centre.tobytes(),
               None if seat is None else seat.tobytes(), tuple(notices[-NOTICES:]), tuple(view.scores),
               None if said.centre is None else said.centre.plain, said.keys, columns, rows, self._asking)
        with self._drawing:
            if key == self._last:
                return
            self._last = key
            screen = "\x1b[H\x1b[2J" + "\n".join(self.lines(view, columns, rows))
            with contextlib.suppress(OSError):
                self._out.write(screen)
                self._out.flush()

    def lines(self, view: TableView, columns: int, rows: int) -> list[str]:
        """The screen's lines, none wider than `columns`, at most `rows` of them."""
        said = words_of(view)
        top = wrapped([Text(f"table-host: {view.status}", style="bold")], columns)
        body: list[str] = []
        if columns >= FRAMES_SIZE[0] and rows >= FRAMES_SIZE[1]:
            if view.centre is not None:
                body += rgb_text(view.centre).splitlines()
            seat = view.seats.get(0)
            if seat is not None:
                body += mono_braille(seat).splitlines()
        else:  # no room for the frames: the table in words, as the Textual UI draws it
            hand = said.hands.get(0)
            body = wrapped([t for t in (said.centre, hand) if t is not None and t.plain], columns)
        keys = f"{said.keys} · {OWN_KEYS}" if said.keys else OWN_KEYS
        bottom = wrapped([Text(QUESTION, style="bold white on dark_red") if self._asking else Text(keys)],
                         columns)
        scores = wrapped([Text("  ".join(" ".join(s.split()) for s in view.scores))], columns)
        room = max(0, rows - len(top) - len(scores) - len(bottom))
        body = body[:room]  # a terminal too small for the table's words: their end is cut, never the keys
        log = wrapped([Text(line) for line in view.notices[-NOTICES:]], columns)
        log = log[max(0, len(log) - (room - len(body))):] if room > len(body) else []
        return (top + body + scores + log + bottom)[:rows]

    def ring(self, cue: Cue) -> None:
        """A sound the table played: the terminal's bell (BEL), where the terminal has one."""
        with contextlib.suppress(OSError):
            self._out.write("\a")
            self._out.flush()

    def stop(self) -> None:
        self._stop = True
        if self._saved is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, self._saved)


def wrapped(texts: list[Text], columns: int) -> list[str]:
    """Rich text as terminal lines (ANSI colours), each wrapped to `columns`."""
    console = Console(file=io.StringIO(), width=max(1, columns), force_terminal=True,
                      color_system="truecolor", legacy_windows=False)
    for text in texts:
        console.print(text, overflow="fold", crop=True)
    file = console.file
    assert isinstance(file, io.StringIO)
    return [line.rstrip() for line in file.getvalue().splitlines()]
