"""One root for the errors the table reports, each also the builtin it resembles."""

from __future__ import annotations

import pytest

from firmware_host.engine.round import RulesError
from firmware_host.system import errors
from firmware_host.system.errors import TableError

BUILTIN = {
    "ConfigError": ValueError, "PathError": OSError, "StoreError": RuntimeError, "ScenarioError": ValueError,
    "RoundStalled": RuntimeError, "HardwareUnavailable": RuntimeError, "I2CBusMissing": OSError,
    "ControllerError": ValueError, "NotRunning": RuntimeError,
}


def test_every_error_is_a_table_error_and_the_builtin_it_resembles() -> None:
    found = {name for name, value in vars(errors).items()
             if isinstance(value, type) and issubclass(value, Exception) and value is not TableError}
    assert found == set(BUILTIN)  # a new error is listed here with its builtin
    for name, builtin in BUILTIN.items():
        error = getattr(errors, name)
        assert issubclass(error, TableError) and issubclass(error, builtin), name


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_except_table_error_catches_each_of_them(name: str) -> None:
    error = getattr(errors, name)
    raised = error(["a problem"]) if name == "ConfigError" else error("a problem")
    with pytest.raises(TableError):
        raise raised


def test_the_errors_keep_their_old_homes_and_the_rules_keep_their_own_root() -> None:
    from firmware_host.config import ConfigError
    from firmware_host.devices.board import HardwareUnavailable
    from firmware_host.play.scenario import ScenarioError
    from firmware_host.service.journal import StoreError
    from firmware_host.system.paths import PathError

    for error in (ConfigError, HardwareUnavailable, ScenarioError, StoreError, PathError):
        assert getattr(errors, error.__name__) is error
    # The rules import nothing of the project: their root is their own, and `except` would not
    # honour a virtual subclass, so callers name both roots.
    assert not issubclass(RulesError, TableError) and issubclass(RulesError, ValueError)
    with pytest.raises((TableError, RulesError)):
        raise RulesError("two players at least")
