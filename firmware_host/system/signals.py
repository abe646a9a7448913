"""The signals the table stops by (SIGTERM, SIGINT) and reloads by (SIGHUP), taken at every
moment of its life, from the first line of `table-host run` to its last.

`hold()` is the first thing `table-host run` does: the three are blocked, so one that comes while
Python imports, while the process becomes itself again with the table's allocator (memory.py; a
blocked signal stays pending across execve) or while the hardware opens waits in the kernel,
neither killing the process half-started nor lost. Threads started meanwhile inherit the block and
keep it, so the kernel gives the three to the main thread. `release()`, once the loop exists,
installs the handlers and unblocks: what was held is delivered then, and honoured by the loop.

CPython runs a signal's Python handler only when the main thread next runs bytecode. The loop's
thread sleeps in a queue's get; a signal whose C part ran just before that wait began left it
asleep until something else came (SIGTERM lost after start-up, systemd's SIGKILL 10 s later: issue
22). So the C part also writes to a pipe (`signal.set_wakeup_fd`), and a thread reading it wakes
the loop, whose thread then runs the handler.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["HANDLED", "hold", "release", "taken"]

HANDLED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def hold() -> None:
    """Block the three signals until `release()`: the kernel keeps one that comes meanwhile."""
    signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)


def release(handlers: Mapping[int, Callable[[int, Any], None]], wake: Callable[[], None]) -> None:
    """Install `handlers` (from the main thread), start the thread that calls `wake()` after each
    signal, then unblock: a signal held since `hold()` is handled from here on."""
    for signum, handler in handlers.items():
        signal.signal(signum, handler)
    read, write = os.pipe2(os.O_CLOEXEC)
    os.set_blocking(write, False)  # set_wakeup_fd's rule: a full pipe must not block the handler
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)

    def watch() -> None:
        while os.read(read, 512):
            wake()

    # Started while the signals are blocked: this thread never takes one itself.
    threading.Thread(target=watch, name="signals", daemon=True).start()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)


def taken(pid: int, signum: int) -> bool:
    """Process `pid` has run `hold()` or installed a handler: `signum` is blocked or caught
    (/proc/PID/status SigBlk, SigCgt: hexadecimal masks, bit signum - 1). False once it has gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
    except OSError:
        return False
    bit = 1 << (signum - 1)
    return any(int(fields[key], 16) & bit for key in ("SigBlk", "SigCgt"))
