"""Fixtures several test files share."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

import firmware_host.games  # noqa: F401  (registers the built-in games, as the command lines do)


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """systemd's state and runtime directories, private to the test."""
    for name in ("STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(name, str(tmp_path / name))
    return tmp_path


class Said:
    """What the table's loggers said, as text, live (threads log while a test waits)."""

    def __init__(self, caplog: pytest.LogCaptureFixture) -> None:
        self._caplog = caplog

    def __iter__(self) -> Iterator[str]:
        return iter([r.getMessage() for r in list(self._caplog.records)])

    def __contains__(self, text: object) -> bool:
        return text in list(self)

    def __repr__(self) -> str:
        return repr(list(self))


@pytest.fixture
def said(caplog: pytest.LogCaptureFixture) -> Said:
    """Every record of the `table_host` loggers, DEBUG and up, as its message."""
    caplog.set_level(logging.DEBUG, logger="table_host")
    return Said(caplog)
