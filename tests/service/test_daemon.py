"""The real daemon process: sd_notify, tablectl, SIGKILL mid-round and back, SIGTERM."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from plumbing import DaemonProcess, journaled, wait_for

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def daemon(tmp_path: Path):
    d = DaemonProcess(tmp_path)
    yield d
    d.close()


def test_ready_status_and_watchdog_reach_systemd(daemon: DaemonProcess) -> None:
    daemon.start()
    assert any("STATUS=waiting for players" in m for m in daemon.messages)
    daemon.wait_for("WATCHDOG=1", timeout=5)  # fed from the main loop, every 0.2 s here
    daemon.wait_for("WATCHDOG=1", timeout=5)


def test_sigkill_mid_round_and_back_with_every_completed_round(daemon: DaemonProcess) -> None:
    daemon.start()
    assert daemon.ctl("new", "dice", "rounds=6")["ok"]
    assert daemon.ctl("bots", "2", "--level", "hard")["ok"]
    assert daemon.ctl("start")["ok"]
    end = time.monotonic() + 90
    status = {}
    while time.monotonic() < end:  # wait until a round is done and the next one running
        status = daemon.ctl("status")
        if status.get("round", 0) and status["round"] >= 2 and status["phase"] == "playing":
            break
        if status.get("phase") == "round_result":
            daemon.ctl("next")
        time.sleep(0.3)
    assert status.get("round", 0) >= 2, (status, (daemon.tmp / "daemon.log").read_text()[-2000:])
    wait_for(lambda: journaled(daemon.tmp / "state" / "table.db", status["round"]), timeout=60)  # some
    # of the round is played and journaled: what comes back must include it
    before = daemon.ctl("scores")
    daemon.proc.send_signal(signal.SIGKILL)
    daemon.proc.wait(timeout=10)
    daemon.start()
    after = daemon.ctl("status")
    scores = daemon.ctl("scores")
    assert scores["rounds"][: len(before["rounds"])] == before["rounds"]  # nothing completed lost
    assert after["round"] >= status["round"] and after["phase"] in ("countdown", "playing",
                                                                      "round_result")
    history = daemon.ctl("history")["matches"]
    assert history[0]["ended"] is None and len(history[0]["rounds"]) >= len(before["rounds"])
    assert after["bots"] == 2  # the same players, bots included, play on
    end = time.monotonic() + 60
    while time.monotonic() < end:
        if len(daemon.ctl("scores").get("rounds", [])) > len(scores["rounds"]):
            break  # the resumed round was played to its end
        time.sleep(0.5)
    else:
        raise AssertionError("the resumed round never ended: nobody played it")


def test_sigterm_stops_cleanly_and_garbage_config_is_refused(daemon: DaemonProcess,
        tmp_path: Path) -> None:
    daemon.start()
    daemon.proc.send_signal(signal.SIGTERM)
    daemon.wait_for("STOPPING=1")
    assert daemon.proc.wait(timeout=10) == 0
    assert not (tmp_path / "run" / "control.sock").exists()
    bad = tmp_path / "table.toml"
    bad.write_text("[inputs]\nseats = [{slap = 99}]\n")
    result = subprocess.run([sys.executable, "-m", "firmware_host", "run", "--emulate", "--ui", "none",
                             "--config", str(bad)], cwd=ROOT, env=daemon.env, capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "inputs.seats[1].slap" in result.stderr


def test_config_get_check_and_reload_keep_the_last_good_configuration(daemon: DaemonProcess,
                                                                     tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    good = (ROOT / "systemd" / "table.toml.example").read_text()
    config.write_text(good)
    daemon.env["CONFIGURATION_DIRECTORY"] = str(tmp_path)
    daemon.start()
    assert daemon.ctl("config", "get", "arbiter.window_ms")["value"] == 5.0
    config.write_text(good.replace("slap = 6", "slap = 5"))  # two seats on one pin
    reload = daemon.ctl("config", "reload")
    assert reload["reloaded"] is False
    assert any("GPIO5 is already used" in p for p in reload["problems"])
    daemon.wait_for("READY=1")  # said after that reload: not to be taken for the next one's
    status = daemon.ctl("status")
    assert status["warning"].startswith("configuration refused, the running one stays: ")
    assert daemon.ctl("config", "get", "arbiter.window_ms")["value"] == 5.0  # still running on it
    config.write_text(good.replace("window_ms = 5.0", "window_ms = 4.0"))
    daemon.proc.send_signal(signal.SIGHUP)  # reload the systemd way (the file is read once settled)
    daemon.wait_for("RELOADING=1")
    daemon.wait_for("READY=1")
    assert daemon.ctl("config", "get", "arbiter.window_ms")["value"] == 4.0
    assert "warning" not in daemon.ctl("status")
    check = daemon.ctl("config", "check", str(ROOT / "pyproject.toml"))
    assert check["valid"] is False and check["problems"]
    assert daemon.ctl("config", "check", str(config))["valid"] is True


def test_debug_bundle_holds_the_daemons_view_the_config_and_the_log(daemon: DaemonProcess,
        tmp_path: Path) -> None:
    import tarfile

    daemon.start()
    bundle = tmp_path / "bundle.tar.gz"
    result = subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", "debug-bundle", "bundle.tar.gz"],
                            cwd=tmp_path, env={**daemon.env, "PYTHONPATH": str(ROOT)}, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"wrote {bundle}, holding ")  # it was: the name alone, not where
    with tarfile.open(bundle) as tar:
        names = tar.getnames()
        view = json.loads(tar.extractfile("table-host-debug/daemon.json").read())
    assert "table-host-debug/journal.txt" in names
    assert view["ok"] and view["status"]["phase"] == "attract" and "gpiozero" in view["versions"]


def test_a_file_broken_while_stopped_starts_on_the_last_good_one(daemon: DaemonProcess,
        tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    good = (ROOT / "systemd" / "table.toml.example").read_text()
    config.write_text(good)
    daemon.env["CONFIGURATION_DIRECTORY"] = str(tmp_path)
    daemon.start()  # loads it: the last good copy is kept
    daemon.proc.send_signal(signal.SIGTERM)
    daemon.proc.wait(timeout=10)
    config.write_text("[inputs\n")  # broken while the table was off
    daemon.start()
    status = daemon.ctl("status")
    assert status["ok"] and "last good one" in status["warning"]
    assert any("CONFIGURATION INVALID" in m for m in daemon.messages)  # STATUS= for systemd


SETPRIV = shutil.which("setpriv")


@pytest.mark.skipif(os.geteuid() != 0, reason="as root the daemon may take real-time priority")
def test_the_game_thread_runs_real_time_and_the_daemons_workers_below_it(daemon: DaemonProcess) -> None:
    """The workers (displays, LED link, store, socket, web view) share the game thread's GIL: at
    normal priority a busy program preempted one holding it, and the game thread waited."""
    daemon.start()
    priority = daemon.ctl("status")["priority"]
    assert priority["game"] == "SCHED_FIFO 15"
    assert daemon.proc is not None
    tasks = Path(f"/proc/{daemon.proc.pid}/task")
    tids = [int(t.name) for t in tasks.iterdir()]
    policies = {tid: (os.sched_getscheduler(tid) & ~os.SCHED_RESET_ON_FORK,
                      os.sched_getparam(tid).sched_priority) for tid in tids}
    assert [tid for tid, p in policies.items() if p[0] == os.SCHED_FIFO] == [daemon.proc.pid]
    assert policies[daemon.proc.pid] == (os.SCHED_FIFO, 15)
    others = [p for tid, p in policies.items() if tid != daemon.proc.pid]
    assert len(others) > 5 and set(others) == {(os.SCHED_RR, 1)}
    assert priority["others"] == f"SCHED_RR 1 ({len(others)} threads)"


@pytest.mark.skipif(os.geteuid() != 0 or not SETPRIV, reason="root and setpriv take CAP_SYS_NICE away")
def test_refused_real_time_is_one_clear_line_and_the_table_plays_on(daemon: DaemonProcess) -> None:
    daemon.start(prefix=(SETPRIV, "--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice"))
    status = daemon.ctl("status")
    assert status["ok"] and status["priority"]["game"].startswith("SCHED_OTHER (real-time refused")
    log = (daemon.tmp / "daemon.log").read_text()
    refused = [line for line in log.splitlines() if "real-time priority refused" in line]
    assert len(refused) == 1 and "LimitRTPRIO=15" in refused[0], log


def test_a_second_daemon_on_the_same_state_is_refused_and_leaves_the_first_alone(
        daemon: DaemonProcess) -> None:
    """Two daemons on one state database wrote the same match and, quitting, deleted the first
    one's control socket (a newcomer running the terminal UI beside the headless daemon)."""
    daemon.start()
    assert daemon.proc is not None
    second = subprocess.run([sys.executable, "-m", "firmware_host", "run", "--emulate", "--ui", "none"],
                            cwd=ROOT, env=daemon.env, capture_output=True, text=True, timeout=30)
    assert second.returncode == 2
    assert f"another table-host (pid {daemon.proc.pid}) is running on" in second.stderr
    assert (daemon.tmp / "run" / "control.sock").exists()
    assert daemon.ctl("status")["phase"] == "attract"  # the first still answers


def test_the_daemon_listens_where_table_host_socket_says(daemon: DaemonProcess,
        tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "table.sock"
    daemon.env["TABLE_HOST_SOCKET"] = str(elsewhere)
    daemon.start()
    assert elsewhere.exists() and not (tmp_path / "run" / "control.sock").exists()
    assert daemon.ctl("status")["ok"]


def test_config_check_runs_in_tablectl_and_a_fifo_freezes_nothing(
        daemon: DaemonProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from firmware_host.cli import ctl

    daemon.start()
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    result = subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", "config", "check", str(fifo)],
                            cwd=ROOT, env=daemon.env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and result.stderr.strip() == f"tablectl: {fifo}: not a regular file"
    start = time.monotonic()  # timed in this process: an interpreter's start-up under load is no part of it
    assert ctl.check_config(fifo, as_json=True) == 1
    assert time.monotonic() - start < 1  # the daemon, asked, gave up only after 5 s
    assert "not a regular file" in capsys.readouterr().out
    assert daemon.ctl("status")["ok"]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:  # an old tablectl asks the daemon
        sock.settimeout(10)
        sock.connect(daemon.env["TABLE_HOST_SOCKET"])
        sock.sendall(json.dumps({"cmd": "config", "action": "check", "path": str(fifo)}).encode() + b"\n")
        answer = json.loads(sock.makefile().readline())
    assert answer == {"ok": False, "error": "config check runs in tablectl, with your own rights: "
                                            "update tablectl"}


def test_load_config_reads_regular_files_only(tmp_path: Path) -> None:
    from firmware_host.config import ConfigError, load_config

    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), tmp_path):
        with pytest.raises(ConfigError) as caught:
            load_config(path)  # a FIFO with no writer: no wait
        assert caught.value.problems == [f"{path}: not a regular file"]


def test_forty_tablectl_status_at_once_all_answered(daemon: DaemonProcess) -> None:
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    from firmware_host.cli import ctl

    daemon.start()
    path = Path(daemon.env["TABLE_HOST_SOCKET"])
    together = Barrier(40)

    def status(_: int) -> str:
        together.wait()
        try:
            return "ok" if ctl.ask({"cmd": "status"}, path)["ok"] else "refused"
        except ctl.NotRunning as exc:
            return str(exc)

    with ThreadPoolExecutor(40) as pool:
        answers = list(pool.map(status, range(40)))
    assert [a for a in answers if a != "ok"] == []
