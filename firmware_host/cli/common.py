"""What `table-host` and `tablectl` share: the games they offer, the version, a reader that
stops early (`tablectl history | head -1`), and how a refusal is said: one line on stderr and,
with `--json`, `{"ok": false, "error": ...}` on stdout, so a script reads every failure the same
way from either command."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable
from typing import Any

EXIT_PIPE = 141  # 128 + SIGPIPE: what a shell shows for a program its reader stopped
EXIT_BAD_INPUT = 2

WORDS: list[str] = []
"""The command line being run (each `main` sets it): a refusal looks for --json in it, since it
may come before the parser has read it (an unknown option, a bad value)."""


def wants_json() -> bool:
    return "--json" in WORDS


def refuse(prog: str, message: str, status: int = EXIT_BAD_INPUT, **more: Any) -> int:
    """Say why the command did not do it: one line on stderr and, with --json, the object scripts
    read on stdout (`ok` false, as for every status but 0). Returns `status`."""
    line = f"{prog}: error: {message}"
    if wants_json():
        print(json.dumps({"ok": False, "error": line, **more}), flush=True)
    print(line, file=sys.stderr)
    return status


def with_games() -> None:
    """Register the built-in games (importing `firmware_host.games` does): the command lines are
    the composition roots that do it, on the paths that need a game (`--version` and `tablectl
    status` load none)."""
    from .. import games  # noqa: F401


def version_text(prog: str) -> str:
    """The version from the package itself (pyproject.toml takes it from there too) and the commit
    recorded when it was installed (system/build.py): asking the installed metadata
    (importlib.metadata) or git would cost more than the rest of the command. table-host's
    adds the LED controller's firmware: the running daemon's link says what the controller
    reported; this table-host's own is computed from the files it carries."""
    from ..system.build import commit_line, describe

    build = describe()
    head = f"{prog} {build['version']}\n{commit_line(build)}\nPython {build['python']}"
    if prog != "table-host":
        return head
    from ..control.client import NotRunning, ask
    from ..devices.displays.carried import expected

    try:
        answer = ask({"cmd": "firmware", "action": "status"}, timeout=2.0)
        led = answer.get("firmware") or {}
        said = led.get("controller") or "not heard from yet"
        match = " (the same)" if led.get("current") else \
            " (another: sudo tablectl firmware flash)" if led.get("controller") else ""
    except (NotRunning, OSError):
        said, match = "no table runs to ask it", ""
    return (f"{head}\nLED controller firmware: {said}{match}\n"
            f"LED controller firmware this table-host carries: {expected()}")


def add_version(parser: argparse.ArgumentParser, prog: str) -> None:
    """`--version`, its text read from the installed package only when asked for (importlib.metadata
    costs more than the rest of `tablectl status`)."""

    class Version(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
            print(version_text(prog))
            parser.exit()

    parser.add_argument("--version", nargs=0, action=Version, help="show the version and exit")


def quiet_broken_pipe(main: Callable[..., int]) -> Callable[..., int]:
    """The reader went away: stop without a traceback, as `cat` would. Whatever is still
    buffered goes to /dev/null, so that Python's own flush at exit does not complain either
    (the Python manual, signal module: "Note on SIGPIPE")."""

    @functools.wraps(main)
    def wrapped(*args: Any, **kwargs: Any) -> int:
        try:
            status = main(*args, **kwargs)
            sys.stdout.flush()
            return status
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return EXIT_PIPE

    return wrapped


def one_line_errors(prog: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Any of the table's own errors (system/errors.py) ends the command with one line naming
    the problem and exit 2, never a traceback (with --json, the error object too: `refuse`)."""

    def decorate(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def wrapped(*args: Any, **kwargs: Any) -> int:
            from ..system.errors import TableBug, TableError

            try:
                return main(*args, **kwargs)
            except TableError as exc:
                bug = " (a bug in table-host: please report it)" if isinstance(exc, TableBug) else ""
                return refuse(prog, f"{exc}{bug}")

        return wrapped

    return decorate
