"""Every error the table raises on purpose, under one root (as gpiozero's exc.py keeps its own).

`TableError` is what a caller catches to turn any of them into one line naming the problem (exit
2 on either command line, a one-line answer on the control socket). Its children say whose fault
it is: most are what the table was given (a file, a request, a disk, missing hardware), which it
reports and survives; those under `TableBug` are always a bug in the table's own code, reported
as such. Each error also subclasses the builtin it resembles, so code that only knows Python's
own (`except ValueError`, `except OSError`) keeps catching it: a bad file is a `ValueError`, a
directory the table cannot use an `OSError`.

The errors defined elsewhere sit under the same root: the rules' `engine.round.RulesError` (the
engine may import this module and nothing else of the project), the database's
`service.database.StorageError` and the commands' `service.registry.CommandError`.
`tests/system/test_errors.py` finds every exception class in the package and holds it to this.
"""

from __future__ import annotations


class TableError(Exception):
    """The root: an error the table raised on purpose, reported in one line."""


class TableBug(TableError, RuntimeError):
    """Always a bug in the table's own code, never in what it was given: the line says so."""


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


class RoundStalled(TableBug):
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
