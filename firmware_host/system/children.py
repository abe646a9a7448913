"""Every process the table or a bench starts ends with its parent, however the parent ends: a
bench stopped by SIGTERM, by `timeout`, by SIGKILL; a daemon killed; a test run cut short.

Linux's parent-death signal (prctl(2), PR_SET_PDEATHSIG) does it: the kernel sends the child a
signal when its parent goes. It is set in the child between fork and exec (subprocess's
`preexec_fn=ending_with_me()`) or in its first lines (`die_with_parent`), and kept across
execve, so it holds for the Python a child becomes. Three things to know:

- it follows the *thread* that started the child, not the process: a child is started from a
  thread that lives as long as its process (the main thread; the web view's loop thread for the
  history's process);
- a change of user clears it (a child that becomes nobody sets it again afterwards: `setpriv
  --pdeathsig`, or `die_with_parent` after `setresuid`), and so does a set-user-ID program;
- a parent that died before the child set it is not signalled for: the child compares its
  parent's process ID with the one it was started by, and ends at once if they differ.

multiprocessing's resource tracker is not started by us; it ends when the last process holding
its pipe does (its parent and the workers that inherited it), so a worker that dies with its
parent takes the tracker with it.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
from collections.abc import Callable, Iterator

__all__ = ["Stopped", "die_with_parent", "ending_with_me", "stopped_by"]

PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)
_prctl = _libc.prctl  # resolved here, not in a forked child
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_prctl.restype = ctypes.c_int


def die_with_parent(signum: int = signal.SIGKILL, parent: int | None = None) -> None:
    """This process gets `signum` when its parent ends; `parent`: the process ID it was started
    by, and if that one has gone already, `signum` now."""
    if _prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_PDEATHSIG): {os.strerror(errno)}")
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), signum)


def ending_with_me(signum: int = signal.SIGKILL) -> Callable[[], None]:
    """A `preexec_fn` for subprocess: the child ends (`signum`) when this process does. SIGTERM
    for a daemon (it stops in order and ends its own children), SIGKILL for anything else."""
    return functools.partial(die_with_parent, signum, os.getpid())


class Stopped(BaseException):
    """A signal asked this command to stop: raised where it was, so every `finally` on the way
    out runs (a bench stops the daemons it started). A BaseException, as KeyboardInterrupt is:
    no `except Exception` of a bench counting failures takes it for one."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def stopped_by(*signums: int) -> Iterator[None]:
    """Within it (on the main thread), each of `signums` raises Stopped where the code is; the
    first one only, so a second SIGTERM does not cut the cleanup the first one started. The
    handlers before it come back at its end."""

    def raise_stopped(signum: int, _frame: object) -> None:
        for each in signums:
            signal.signal(each, signal.SIG_IGN)
        raise Stopped(signum)

    before = {signum: signal.signal(signum, raise_stopped) for signum in signums}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
