"""A bench stopped or killed mid-run leaves no process behind: `bench daemon` killed left its
emulated daemon running with parent 1, and a `bench faults` stopped by `timeout` left one running
15 minutes later (system/children.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest
from plumbing import ROOT, alive, descendants, in_session, left_after


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_a_bench_killed_mid_run_leaves_no_process(signum: int) -> None:
    bench = [sys.executable, "-m", "firmware_host", "bench", "daemon", "--idle", "30", "--play", "3"]
    proc = subprocess.Popen(bench, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 60
        while not any("firmware_host run" in p for p in in_session(proc.pid)):  # mid-run: its daemon is up
            assert proc.poll() is None and time.monotonic() < end, "the bench started no daemon"
            time.sleep(0.1)
        below = descendants(proc.pid)
        assert below  # the daemon, at least
        proc.send_signal(signum)
        _, said = proc.communicate(timeout=60)
        assert left_after(lambda: sorted({*in_session(proc.pid), *alive(below)})) == []
        if signum == signal.SIGTERM:  # its finally ran: the daemon was stopped, and it says why it ended
            assert (proc.returncode, said) == (128 + signal.SIGTERM, "table-host bench: stopped by SIGTERM\n")
        else:
            assert proc.returncode == -signal.SIGKILL
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
