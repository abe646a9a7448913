"""Every error the table reports, under one root (as gpiozero's exc.py keeps its own).

`TableError` is what a caller catches to turn any refusal into one line (exit 2 on the command
line, a one-line answer on the control socket): it never means a bug. Each error also subclasses
the builtin it resembles, so code that only knows Python's own (`except ValueError`, `except
OSError`) keeps catching it: a bad file is a `ValueError`, a directory the table cannot use an
`OSError`.

The rules have their own root, `engine.round.RulesError(ValueError)`: the rules import nothing of
the project, so it cannot sit under `TableError`. It is not registered as a virtual subclass
either: `except` matches by the real class hierarchy only, so `TableError.register(RulesError)`
would make `issubclass` say yes while `except TableError` still let it through. A caller that
reports errors catches `(TableError, RulesError)`; the two roots are the whole list.
"""

from __future__ import annotations


class TableError(Exception):
    """The root: a problem the table reports in one line and survives."""


class ConfigError(TableError, ValueError):
    """A configuration that cannot be used: every problem at once, each naming its place."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class PathError(TableError, OSError):
    """A directory the table cannot use; the message is one line naming it and why."""


class StoreError(TableError, RuntimeError):
    """The state database cannot be opened, locked or written."""


class ScenarioError(TableError, ValueError):
    """A scenario file that cannot be run; the message names the place and the problem."""


class RoundStalled(TableError, RuntimeError):
    """A round that would not end: always a bug in the rules or the bots."""


class HardwareUnavailable(TableError, RuntimeError):
    """The configured GPIO cannot be opened at all: the table cannot run on it."""


class I2CBusMissing(TableError, OSError):
    """The mux, its channel or the bus is not in sysfs (yet): the seat's screen stays offline
    and is looked up again at its next retry, so a mux whose driver loads late is found."""


class ControllerError(TableError, ValueError):
    """A byte sequence an emulated display controller's datasheet does not define."""


class NotRunning(TableError, RuntimeError):
    """No table daemon answers on the control socket (or it may not be reached)."""
