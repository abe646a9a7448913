"""The daemon's log: one `logging` logger per component, set up once by `table-host run`.

Components log to `table_host.<component>` (daemon, table, arbiter, control, displays,
ledlink, inputs, config, sounds, selftest, realtime). Game events are INFO, in the players'
words; per-connection chatter and the arbiter's internals are DEBUG. Under systemd, with
stderr connected to the journal, every line starts with its syslog priority (`<3>`, `<6>`,
`<7>`, sd-daemon(3)); journald reads that prefix (SyslogLevelPrefix=, on by default), so
`journalctl -u table-host -p info` leaves the debug lines out. On a terminal a line reads
`12:03:41 INFO  table: Match started: ...`. A terminal UI takes the INFO lines into its log
pane (`PaneHandler`) and the terminal handler stays quiet while the UI owns the screen.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections import deque
from types import TracebackType
from typing import IO

ROOT = "table_host"
LEVELS = ("debug", "info", "warning", "error")

# sd-daemon(3): SD_ERR "<3>", SD_WARNING "<4>", SD_NOTICE "<5>", SD_INFO "<6>", SD_DEBUG "<7>".
_PRIORITY = ((logging.ERROR, 3), (logging.WARNING, 4), (logging.INFO, 6))


MAINTAINER = {"maintainer": True}
"""`extra=` for a line for whoever keeps the table (the allocator, the threads' priority): the log
has it, a terminal UI's pane for the players does not."""


def logger(component: str) -> logging.Logger:
    return logging.getLogger(f"{ROOT}.{component}")


def escape(text: object) -> str:
    """A string a client sent, fit for one log line: control characters (newline, ESC, DEL,
    C1) written as `\\n`, `\\x1b`, ..., so nothing a client sends can forge a line or drive
    the terminal reading the log. Printable text, accents included, is kept as it is."""
    out = []
    for ch in str(text):
        code = ord(ch)
        if code < 0x20 or 0x7F <= code < 0xA0 or ch in "\u2028\u2029":
            out.append(ch.encode("unicode_escape").decode("ascii"))
        elif ch == "\\":
            out.append("\\\\")
        else:
            out.append(ch)
    return "".join(out)


def priority(level: int) -> int:
    """The syslog priority of a logging level (CRITICAL and ERROR are both <3>)."""
    for floor, prio in _PRIORITY:
        if level >= floor:
            return prio
    return 7


def _component(record: logging.LogRecord) -> str:
    return record.name.removeprefix(ROOT + ".")


class JournalFormatter(logging.Formatter):
    """`<6>table: Match started ...`: the priority prefix on every line of the record
    (journald makes an entry of each line; a traceback's lines keep the record's priority)."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"{_component(record)}: {super().format(record)}"
        prefix = f"<{priority(record.levelno)}>"
        return "\n".join(prefix + line for line in text.split("\n"))


class TerminalFormatter(logging.Formatter):
    """`12:03:41 INFO  table: Match started ...`."""

    def __init__(self) -> None:
        super().__init__(datefmt="%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        record.asctime = self.formatTime(record, self.datefmt)
        return f"{record.asctime} {record.levelname:<5} {_component(record)}: {super().format(record)}"


def to_journal(stream: IO[str] | None = None) -> bool:
    """Is `stream` (stderr) the journal? systemd says so in $JOURNAL_STREAM ("device:inode" of
    the stream it connected, systemd.exec(5)); a service logging to a file or a tty gets none."""
    value = os.environ.get("JOURNAL_STREAM", "")
    if not value:
        return False
    try:
        st = os.fstat((stream or sys.stderr).fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return value == f"{st.st_dev}:{st.st_ino}"


class _Quiet(logging.Filter):
    """Holds the terminal handler's lines back while a terminal UI owns the screen."""

    def __init__(self) -> None:
        super().__init__()
        self.quiet = False

    def filter(self, record: logging.LogRecord) -> bool:
        return not self.quiet


_quiet = _Quiet()
_console: logging.Handler | None = None


def configure(level: str | int = "info", stream: IO[str] | None = None,
              journal: bool | None = None) -> logging.Handler:
    """Set up the daemon's log once (again: replaces the handler it set before). `journal`:
    prefix the priorities; by default when stderr is the journal."""
    global _console
    stream = stream or sys.stderr
    journal = to_journal(stream) if journal is None else journal
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JournalFormatter() if journal else TerminalFormatter())
    handler.addFilter(_quiet)
    root = logging.getLogger(ROOT)
    if _console is not None:
        root.removeHandler(_console)
    root.addHandler(handler)
    root.setLevel(level_of(level))
    _console = handler
    return handler


def route_uncaught() -> None:
    """An exception nothing caught, in any thread, is one ERROR record (its traceback's lines
    keep the <3> prefix in the journal) rather than bare lines journald would file as info."""
    daemon = logger("daemon")

    def main_thread(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)
            return
        daemon.critical("uncaught %s", kind.__name__, exc_info=(kind, exc, tb))

    def other_thread(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "?"
        daemon.critical("uncaught %s in thread %s", args.exc_type.__name__, name,
                        exc_info=(args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback))

    sys.excepthook = main_thread
    threading.excepthook = other_thread


class Collected(logging.Handler):
    """The messages of one component, in a list, while it is attached (a bench, the virtual Pi)."""

    def __init__(self, component: str) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self._logger = logger(component)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def __enter__(self) -> list[str]:
        self._logger.addHandler(self)
        self._level_before = self._logger.level
        self._logger.setLevel(logging.DEBUG)
        return self.lines

    def __exit__(self, *_: object) -> None:
        self._logger.removeHandler(self)
        self._logger.setLevel(self._level_before)


def level_of(level: str | int) -> int:
    if isinstance(level, int):
        return level
    if level.lower() not in LEVELS:
        raise ValueError(f"log level {level!r}: choose {', '.join(LEVELS)}")
    return getattr(logging, level.upper())


class PaneHandler(logging.Handler):
    """The INFO lines a terminal UI shows in its log pane, newest last. Once the UI holds the
    terminal, the terminal handler is quiet (its lines would scribble over the UI)."""

    def __init__(self, keep: int = 500) -> None:
        super().__init__(logging.INFO)
        self.setFormatter(logging.Formatter("%(message)s"))
        self.lines: deque[str] = deque(maxlen=keep)
        self.count = 0  # lines ever taken: the UI redraws when it changes
        self._lock_lines = threading.Lock()
        self._level_before = logging.NOTSET

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "maintainer", False):  # the log's, not the players'
            return
        try:
            line = self.format(record)
        except Exception:
            self.handleError(record)
            return
        with self._lock_lines:
            self.lines.append(line)
            self.count += 1

    def snapshot(self) -> tuple[list[str], int]:
        """The lines kept and how many were ever taken, read together."""
        with self._lock_lines:
            return list(self.lines), self.count

    def attach(self) -> PaneHandler:
        root = logging.getLogger(ROOT)
        root.addHandler(self)
        self._level_before = root.level
        if root.level == logging.NOTSET or root.level > logging.INFO:
            root.setLevel(logging.INFO)  # the pane shows the game whatever --log-level says
        return self

    def hold_terminal(self) -> None:
        """The UI owns the screen from now on: the terminal handler stays quiet until `detach`."""
        _quiet.quiet = True

    def detach(self) -> None:
        root = logging.getLogger(ROOT)
        root.removeHandler(self)
        root.setLevel(self._level_before)
        _quiet.quiet = False

