"""Opening files as root in directories other people may write, without being sent elsewhere by a
symbolic link they planted: `tablectl debug-bundle` collects the configuration and writes its
bundle as root, and a member of the admin group may write the configuration directory.

A path is walked one name at a time from a directory descriptor (openat), so nothing can be
swapped between a check and the use: a directory link is followed only when it belongs to root or
to this process's user and has one name (a hard link to root's own link elsewhere is someone
else's). The kernel's fs.protected_symlinks rule is the same idea, for world-writable sticky
directories only; here it is every directory of the path.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .errors import PathError

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
MAX_LINKS = 40  # as the kernel's path walk (ELOOP)


def trusted_link(st: os.stat_result) -> bool:
    return st.st_uid in (0, os.geteuid()) and st.st_nlink == 1


def open_directory(path: Path) -> int:
    """A descriptor of the directory `path` (relative: from the working directory), reached
    without following a link someone else owns. A PathError names the link refused."""
    parts = list(path.parts)
    start = "/" if path.is_absolute() else "."
    if path.is_absolute():
        parts = parts[1:]
    fd = os.open(start, DIRECTORY)
    walked = Path(start)
    links = 0
    try:
        while parts:
            name = parts.pop(0)
            if name in ("", "."):
                continue
            try:
                step = os.open(name, DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if not stat.S_ISLNK(st.st_mode):
                    raise
                if not trusted_link(st):
                    raise PathError(f"{walked / name} is a symbolic link owned by uid {st.st_uid}: "
                                    "not following it; give the real path") from None
                links += 1
                if links > MAX_LINKS:
                    raise PathError(f"{path}: too many symbolic links") from None
                target = Path(os.readlink(name, dir_fd=fd))
                if target.is_absolute():
                    os.close(fd)
                    fd = os.open("/", DIRECTORY)
                    walked = Path("/")
                    parts = [*target.parts[1:], *parts]
                else:
                    parts = [*target.parts, *parts]
                continue
            os.close(fd)
            fd, walked = step, walked / name
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, limit: int) -> bytes | str:
    """The bytes of `path` if it is a regular file with one name, not a link (neither it nor a
    directory on the way someone else planted), at most `limit` bytes; else why not, in one line."""
    try:
        directory = open_directory(path.parent)
    except PathError as exc:
        return str(exc)
    except OSError as exc:
        return f"{path.parent}: {exc.strerror or exc}"
    try:
        try:
            fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=directory)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                try:
                    target = os.readlink(path.name, dir_fd=directory)
                except OSError:
                    target = "?"
                return f"{path} is a symbolic link to {target}: not followed"
            return f"{path}: {exc.strerror or exc}"
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return f"{path}: not a regular file"
            if st.st_nlink != 1:
                return f"{path} has {st.st_nlink} names (a hard link to another file?): not read"
            with open(fd, "rb", closefd=False) as f:
                data = f.read(limit + 1)
            return data if len(data) <= limit else f"{path}: larger than {limit} bytes"
        finally:
            os.close(fd)
    finally:
        os.close(directory)
