"""A stop or a reload asked at any moment of start-up: issue 22, item 10 (SIGTERM shortly after
start-up was sometimes lost, and systemd killed the table 10 s later)."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from plumbing import ROOT, DaemonProcess

from firmware_host.system.signals import taken

RUNS = 10
STOP_S = 60.0  # a signal lost never stops the table; a loaded machine may take long over the rest


def launched(tmp: Path) -> tuple[DaemonProcess, subprocess.Popen]:
    """The daemon, from the moment its Python runs the table's first line (before, only the
    interpreter's own start is under way, and the signal's default action ends it). By then it
    has done nothing of the table's: no state directory yet (the signals were caught only once
    the service was built, after the state, the hardware and the socket: a signal meanwhile
    killed it half-started)."""
    tmp.mkdir()
    daemon = DaemonProcess(tmp)
    proc = daemon.launch()
    try:
        deadline = time.monotonic() + 30
        while not taken(proc.pid, signal.SIGTERM):
            assert proc.poll() is None and time.monotonic() < deadline, "the daemon never took its signals"
            time.sleep(0.001)
        assert not Path(daemon.env["STATE_DIRECTORY"]).exists(), "signals taken only once start-up had begun"
    except BaseException:
        daemon.close()  # not left running when the check fails
        raise
    return daemon, proc


def test_sigterm_or_sigint_at_random_moments_of_start_up_stops_the_table_in_order(tmp_path: Path) -> None:
    rng = random.Random(22)
    for run in range(RUNS):
        daemon, proc = launched(tmp_path / str(run))
        try:
            at = 0.0 if run == 0 else rng.uniform(0.0, 2.5)  # start-up takes 1-2 s here
            time.sleep(at)
            which = signal.SIGINT if run % 3 == 2 else signal.SIGTERM
            proc.send_signal(which)
            try:
                code = proc.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                code = None
            said = (daemon.tmp / "daemon.log").read_text()
            assert code == 0, f"{which.name} {at:.3f} s into start-up: exit {code}; {said[-300:]}"
            assert "Traceback" not in said, said
        finally:
            daemon.close()


def test_a_sighup_during_start_up_is_a_reload_once_the_table_runs(tmp_path: Path) -> None:
    """Not the death a SIGHUP's default action would be: held, then honoured by the loop."""
    daemon, proc = launched(tmp_path / "hup")
    try:
        proc.send_signal(signal.SIGHUP)
        daemon.wait_for("READY=1")
        daemon.wait_for("RELOADING=1", timeout=10)
        assert proc.poll() is None and daemon.ctl("status")["ok"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=STOP_S) == 0
    finally:
        daemon.close()


def test_a_signal_whose_handler_is_due_wakes_the_loop_s_wait(tmp_path: Path) -> None:
    """The lost SIGTERM: the signal's C part ran where the loop's thread could not see it (here:
    another thread took it, as when it lands just before the wait begins), and the loop slept on
    in its queue. The wakeup pipe's thread wakes it; its handler then runs."""
    code = ("import os, signal, threading\n"
            "from firmware_host.service.daemon import Daemon\n"
            "from firmware_host.service.loop import Loop\n"
            "class D: pass\n"
            "d = D(); d.loop = Loop()\n"
            "Daemon.catch_signals(d)\n"
            "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # another thread must take it\n"
            "threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()\n"
            "seen = []\n"
            "while not seen or type(seen[-1]).__name__ == 'Wake':\n"
            "    seen.append(d.loop.events.get(timeout=5))\n"
            "print([type(e).__name__ for e in seen], seen[-1])\n")
    env = {**DaemonProcess(tmp_path).env, "INVOCATION_ID": "0123"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=60, start_new_session=True)
    assert result.stdout.strip() == "['Wake', 'Signal'] Signal(name='term')", result.stderr
