"""Fixtures several test files share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """systemd's state and runtime directories, private to the test."""
    for name in ("STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(name, str(tmp_path / name))
    return tmp_path
