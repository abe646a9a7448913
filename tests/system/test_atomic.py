"""One helper replaces a file whole (system/atomic.py); the table's files use it, not copies of it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from firmware_host.system.atomic import replace_whole

PACKAGE = Path(__file__).resolve().parents[2] / "firmware_host"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "table.toml"
    target.write_bytes(b"old")

    def broken(f: object) -> None:
        f.write(b"half")  # type: ignore[attr-defined]
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        replace_whole(target, broken)
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["table.toml"]


def test_the_new_file_has_its_mode_whatever_the_umask_or_the_old_files(tmp_path: Path) -> None:
    target = tmp_path / "last-good.toml"
    before = os.umask(0)
    try:
        replace_whole(target, lambda f: f.write(b"new"))
    finally:
        os.umask(before)
    assert target.read_bytes() == b"new" and target.stat().st_mode & 0o777 == 0o600
    edited = tmp_path / "table.toml"
    edited.write_bytes(b"a = 1")
    edited.chmod(0o664)
    replace_whole(edited, lambda f: f.write(b"a = 2"), like=edited)
    assert edited.read_bytes() == b"a = 2" and edited.stat().st_mode & 0o777 == 0o664


def test_no_module_writes_a_file_whole_by_its_own_copy() -> None:
    """It was: three copies of write, fsync, rename (the last good copy, config set, the held
    writes). The debug bundle's, relative to a directory it holds open, is its own on purpose."""
    copies = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                    if re.search(r"os\.fsync\(", text := p.read_text()) and re.search(r"os\.replace\(", text))
    assert copies == ["system/atomic.py"]
