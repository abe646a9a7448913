"""The emulated table in a plain terminal (`--ui plain`): the real frames, your keys pressing pins.

Seat 1 is yours: arrows move the cursor, space slaps, enter is alt, 1-5 the
direct buttons. In the lobby: space joins, left/right choose the game, enter
starts; `b` adds a bot, `B` removes one; `q` quits. Keys go through the
emulated pins like any button (inputs/keyboard.py). The Textual UI
(textual_app.py) is the default; this one needs nothing but a tty.
"""

from __future__ import annotations

import contextlib
import os
import sys
import termios
import threading
import tty
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..service.events import Key
from ..service.frontend import TableView
from .terminal import mono_text, rgb_text

if TYPE_CHECKING:
    from ..devices.buzzer import Cue

__all__ = ["TableView", "TerminalUI", "parse_keys"]

ARROWS = {"A": "up", "B": "down", "C": "right", "D": "left"}
HELP = ("seat 1: arrows move, space slap, enter alt, 1-5 direct | lobby: space join, "
        "left/right game, enter start, b/B bots | q quit")


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
    """A Frontend (service/frontend.py) on a plain terminal: redraws the frames, rings BEL."""

    def __init__(self, out: Any = None) -> None:
        self._put: Callable[[Any], None] = lambda _event: None
        self._out = out or sys.stdout
        self._last: tuple[Any, ...] = ()
        self._saved: Any = None
        self._stop = False

    def start(self, put: Callable[[Any], None]) -> None:
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
                self._put(Key(key))

    def show(self, view: TableView) -> None:
        """Redraw when anything shown changed; the frames are the ones sent to the devices."""
        centre, seat, notices = view.centre, view.seats.get(0), view.notices
        key = (view.status, None if centre is None else centre.tobytes(),
               None if seat is None else seat.tobytes(), tuple(notices[-3:]), tuple(view.scores))
        if key == self._last:
            return
        self._last = key
        parts = ["\x1b[H\x1b[2J", f"table-host: {view.status}\n"]
        if centre is not None:
            parts += [rgb_text(centre), "\n"]
        if seat is not None:
            parts += [mono_text(seat), "\n"]
        parts.append("  ".join(view.scores) + "\n")
        parts += [line + "\n" for line in notices[-3:]]
        parts.append(HELP + "\n")
        with contextlib.suppress(OSError):
            self._out.write("".join(parts))
            self._out.flush()

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
