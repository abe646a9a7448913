"""One way to replace a file whole: written beside it, synced, renamed over it. A kill or a power
cut at any moment leaves the old file or the new one, never a part of either; the temporary copy
goes on any failure. The table keeps these files so: the last good configuration, `tablectl config
set`'s table.toml, the journal's held writes (`<database>.held`), the files `tablectl restore`
puts back and the build's record (`system/build.py`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO


def temporary_for(target: Path) -> Path:
    """`.NAME.PID` beside `target`: a kill between the write and the rename leaves one of these,
    which the owner of the file may clear at its start (`config.files.clean_stale_copies`)."""
    return target.with_name(f".{target.name}.{os.getpid()}")


def replace_whole(target: Path, write: Callable[[IO[bytes]], None], mode: int = 0o600,
                  like: Path | None = None) -> None:
    """Replace `target` with what `write` writes, atomically. The new file has `mode` (whatever
    the umask), or `like`'s mode and, where this process may give it, its owner (a file an admin
    edits keeps its group). The temporary file is opened without following a link. Raises the
    OSError that stopped it; `target` is then as it was."""
    temporary = temporary_for(target)
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with open(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
            if like is None:
                os.fchmod(f.fileno(), mode)
            else:
                st = like.stat()
                os.fchmod(f.fileno(), st.st_mode & 0o777)
                with contextlib.suppress(PermissionError):
                    os.fchown(f.fileno(), st.st_uid, st.st_gid)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def sync_directory(directory: Path) -> None:
    """A rename in `directory` on the card before this returns (the directory's own fsync)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_link(at: Path, target: str) -> None:
    """`at` becomes a symbolic link to `target` by one rename over the old link (a power cut leaves
    the old link or the new): `tablectl update`'s switch between versions."""
    temporary = at.with_name(f".{at.name}.new")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    os.symlink(target, temporary)
    os.replace(temporary, at)
    sync_directory(at.parent)
