"""One root for the errors the table raises, each also the builtin it resembles; the bugs apart."""

from __future__ import annotations

import inspect
import pkgutil
import subprocess
import sys
from importlib import import_module

import pytest

import firmware_host
from firmware_host.system import errors
from firmware_host.system.errors import TableBug, TableError

BUILTIN = {
    "ConfigError": ValueError, "PathError": OSError, "StoreError": RuntimeError, "ScenarioError": ValueError,
    "RoundStalled": RuntimeError, "HardwareUnavailable": RuntimeError, "I2CBusMissing": OSError,
    "ControllerError": ValueError, "NotRunning": RuntimeError,
    # defined beside the code that raises them
    "RulesError": ValueError, "StorageError": RuntimeError, "Damaged": ValueError,
    "CommandError": RuntimeError, "TooFewDescriptors": OSError, "DanglingLink": ValueError,
    "Paused": RuntimeError, "FlashError": RuntimeError, "NameRefused": ValueError, "Refused": RuntimeError,
    "BadOptions": ValueError,
}
BUGS = {"RoundStalled", "CommandError"}
"""Always a bug in the table's own code, whatever it was given."""


NOT_HERE = {"firmware_host.devices.displays.ledviper"}
"""Modules that never run in the table's Python (the LED controller's MicroPython)."""


def every_exception_class() -> dict[str, type[Exception]]:
    """Every error class the package defines, found by loading each of its modules (a signal to stop,
    `system.children.Stopped`, is a BaseException as KeyboardInterrupt is: no error)."""
    found: dict[str, type[Exception]] = {}
    for module in pkgutil.walk_packages(firmware_host.__path__, "firmware_host."):
        if module.name.endswith("__main__") or module.name in NOT_HERE:
            continue
        for name, value in vars(import_module(module.name)).items():
            if inspect.isclass(value) and issubclass(value, Exception) \
                    and value.__module__.startswith("firmware_host.") and value not in (TableError, TableBug):
                found[name] = value
    return found


def test_every_exception_the_package_defines_is_under_the_root_and_its_builtin() -> None:
    found = every_exception_class()
    assert set(found) == set(BUILTIN)  # a new error is listed here with its builtin
    for name, error in found.items():
        assert issubclass(error, TableError) and issubclass(error, BUILTIN[name]), name
        assert issubclass(error, TableBug) == (name in BUGS), name


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_except_table_error_catches_each_of_them(name: str) -> None:
    error = every_exception_class()[name]
    raised = error(["a problem"]) if issubclass(error, errors.ConfigError) else error("a problem")
    with pytest.raises(TableError):
        raise raised


def test_the_errors_keep_their_homes() -> None:
    from firmware_host.config import ConfigError
    from firmware_host.devices.board import HardwareUnavailable
    from firmware_host.play.scenario import ScenarioError
    from firmware_host.service.journal import StoreError
    from firmware_host.system.paths import PathError

    for error in (ConfigError, HardwareUnavailable, ScenarioError, StoreError, PathError):
        assert getattr(errors, error.__name__) is error


def test_table_host_turns_the_root_into_one_line_and_exit_2() -> None:
    """A RulesError (now under the root) from a command line: one line, exit 2, no traceback."""
    result = subprocess.run([sys.executable, "-m", "firmware_host", "simulate", "--game", "classic",
                             "--players", "1"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr == "table-host: error: classic takes 2 to 12 players, not 1\n"


@pytest.mark.parametrize("error", [errors.PathError("a problem"), errors.RoundStalled("a problem")])
def test_tablectl_turns_the_root_into_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str],
                                                          error: TableError) -> None:
    from firmware_host.cli import ctl

    def ask(body: object) -> object:
        raise error

    monkeypatch.setattr(ctl, "ask", ask)
    assert ctl.main(["status"]) == 2
    bug = " (a bug in table-host: please report it)" if isinstance(error, TableBug) else ""
    assert capsys.readouterr().err == f"tablectl: error: a problem{bug}\n"


def test_a_bug_says_it_is_one(capsys: pytest.CaptureFixture[str]) -> None:
    from firmware_host.cli.common import one_line_errors

    @one_line_errors("table-host")
    def stalls() -> int:
        raise errors.RoundStalled("classic: a round ran past 5000 actions")

    assert stalls() == 2
    assert capsys.readouterr().err == ("table-host: error: classic: a round ran past 5000 actions "
                                       "(a bug in table-host: please report it)\n")
