"""Reloads and starts on configuration files as a hostile operator or file system leaves them
(issue 22, items 4-7): the daemon answers, keeps what runs, falls back to the last good copy, and
that copy is always a whole valid file, even while someone rewrites table.toml under it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from plumbing import DaemonProcess, configured_daemon, wait_for

from firmware_host.config import (
    ConfigError,
    TableConfig,
    last_good_path,
    load,
    load_config,
    read_config,
    remember_good,
)
from firmware_host.service.configuration import Configuration
from firmware_host.service.loop import Loop
from firmware_host.system.children import ending_with_me
from firmware_host.table.machine import Table

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = (ROOT / "systemd" / "table.toml.example").read_bytes()
HUGE = TEMPLATE.replace(b"window_ms = ", b"window_ms = " + b"9" * 5000 + b"#", 1)
NOBODY = 65534


class Quiet:
    def send(self, *_lines: str) -> None:
        pass


# ---------------------------------------------------------------- 6, 9. the last good copy in a race


WRITER = """
import sys, time
path, pause = sys.argv[1], float(sys.argv[2])
versions = [open(path, "rb").read()]
versions.append(versions[0].replace(b"window_ms = ", b"window_ms = 1", 1))
n = 0
while True:
    data = versions[n % 2]
    cut = data.index(b"[[screens]]")
    with open(path, "wb") as f:
        f.write(data[:cut])  # cut before [[screens]]: a valid file, were it read now
        f.flush()
        time.sleep(0.02)
        f.write(data[cut:])
    n += 1
    print(n, flush=True)
    time.sleep(pause)
"""


def test_no_reload_keeps_a_file_cut_short_while_table_toml_is_rewritten_in_place(
        dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer (a process of its own, as an editor is) rewrites table.toml in place: truncate,
    then two writes, then it leaves the file alone a little longer than a read waits for. Reload
    threads read it meanwhile and a sampler reads last-good.toml: every reload that loads, loads
    one of the two whole files, and the copy is always one of them. (A read waits 0.5 s here: on
    a machine this busy a writer can stall for 0.2 s between its writes, and a file left cut
    short that long is read as it is.)"""
    monkeypatch.setattr(load, "SETTLE_S", 0.5, raising=False)
    path = dirs / "table.toml"
    path.write_bytes(TEMPLATE)
    other = TEMPLATE.replace(b"window_ms = ", b"window_ms = 1", 1)
    configuration = Configuration(Loop(), load_config(path), path, Table(4), Quiet(), remember_good)
    remember_good(TEMPLATE)
    stop = threading.Event()
    counts = {"samples": 0, "invalid": 0, "loaded": 0, "refused": 0}
    wrong: list[str] = []

    def reloader() -> None:
        while not stop.is_set():
            read = configuration.read()
            if isinstance(read, ConfigError):  # cut to nothing and stalled: refused, the running one stays
                counts["refused"] += 1
            else:
                counts["loaded"] += 1
                if (read.arbiter.window_ms, len(read.screens)) not in ((5.0, 4), (15.0, 4)):
                    wrong.append(f"loaded {read.arbiter.window_ms} ms, {len(read.screens)} screens")
            time.sleep(0.01)

    def sampler() -> None:
        while not stop.is_set():
            counts["samples"] += 1
            if last_good_path().read_bytes() not in (TEMPLATE, other):
                counts["invalid"] += 1
            time.sleep(0.001)

    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(load.SETTLE_S * 1.5)],
                              stdout=subprocess.PIPE, text=True, preexec_fn=ending_with_me())
    saved: list[str] = []  # the writer's count, one line a save

    def saves() -> None:
        for line in writer.stdout:  # type: ignore[union-attr]
            saved.append(line)

    threads = [threading.Thread(target=t, daemon=True) for t in (reloader, reloader, sampler, saves)]
    try:
        for t in threads:
            t.start()
        # The race run long enough, however busy the machine: saves, loads and samples enough.
        wait_for(lambda: len(saved) >= 4 and counts["loaded"] > 5 and counts["samples"] > 50, timeout=120,
                 said=lambda: (len(saved), counts))
    finally:
        stop.set()
        writer.kill()
        writer.wait()
        for t in threads:
            t.join(10)
    assert len(saved) >= 4 and counts["loaded"] > 5, (saved, counts)  # the race was run
    assert wrong == [], counts
    assert counts["samples"] > 50 and counts["invalid"] == 0, counts
    assert last_good_path().read_bytes() in (TEMPLATE, other)
    assert [p.name for p in last_good_path().parent.iterdir() if p.name.startswith(".")] == []


def test_a_file_being_written_is_read_once_it_is_whole(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The first half is valid on its own (no [[screens]], [buzzer], [web]); the second comes
    80 ms later, well inside the moment a read waits for (1 s here, so that a slow machine
    does not make it look settled)."""
    monkeypatch.setattr(load, "SETTLE_S", 1.0, raising=False)
    path = tmp_path / "table.toml"
    cut = TEMPLATE.index(b"[[screens]]")
    assert len(load_config_bytes(tmp_path, TEMPLATE[:cut]).screens) == 0  # valid, cut short
    with open(path, "wb") as f:
        f.write(TEMPLATE[:cut])
        f.flush()
        later = threading.Timer(0.08, lambda: (f.write(TEMPLATE[cut:]), f.flush()))
        later.start()
        config, raw = read_config(path)
        later.join()
    assert raw == TEMPLATE and len(config.screens) == 4


def load_config_bytes(tmp_path: Path, data: bytes) -> TableConfig:
    other = tmp_path / "other.toml"
    other.write_bytes(data)
    return load_config(other)


def test_a_file_that_never_settles_is_refused_naming_it(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(load, "SETTLE_WAIT_S", 1.0, raising=False)
    path = tmp_path / "table.toml"
    path.write_bytes(TEMPLATE)
    stop = threading.Event()

    def append() -> None:
        with open(path, "ab") as f:
            while not stop.wait(0.02):
                f.write(b"# more\n")
                f.flush()

    writer = threading.Thread(target=append, daemon=True)
    writer.start()
    try:
        with pytest.raises(ConfigError) as refused:
            read_config(path)
    finally:
        stop.set()
        writer.join(5)
    assert refused.value.problems == [f"{path}: still being written: it changed while it was read, again and "
                                      "again for 1 s; it is read once left alone for 200 ms"]


def test_a_file_stamped_in_the_future_is_watched_once_then_read(tmp_path: Path) -> None:
    """A clock set back (a Pi without a real-time clock, before its time is set) must not make
    every file look just written: it is watched for the moment a read waits for, then read."""
    path = tmp_path / "table.toml"
    path.write_bytes(TEMPLATE)
    tomorrow = time.time() + 86400
    os.utime(path, (tomorrow, tomorrow))
    config, raw = read_config(path)
    assert raw == TEMPLATE and len(config.screens) == 4


# ---------------------------------------------------------------- 5. a directory nobody may search, for real


def test_a_directory_that_may_not_be_searched_at_start_and_at_reload() -> None:
    """For real: as root, the bench's child runs as nobody with no capability (CAP_DAC_OVERRIDE
    would search anything); as anyone else, as themselves."""
    from firmware_host.bench.config_faults import NOBODY_CHILD, TEMPLATE, as_nobody, closed_directory
    from firmware_host.bench.harness import DAEMON, daemon_env

    with closed_directory() as top:
        path = top / "etc" / "table.toml"
        said = f"{path}: cannot look for it: {top / 'etc'} may not be searched (permission denied)"
        run = as_nobody(DAEMON[1:], daemon_env(top))
        assert run.returncode == 2, run.stderr
        assert said in run.stderr and "Traceback" not in run.stderr
        assert len(run.stderr.strip().splitlines()) == 1
        child = as_nobody(["-c", NOBODY_CHILD, str(path), str(TEMPLATE)], daemon_env(top))
        assert child.returncode == 0, child.stderr
        assert json.loads(child.stdout) == {
            "start": {"error": said},  # no last good copy: refused, in one line
            "reload": {"reloaded": False, "problems": [said], "kept": True},
            "start with a copy": {"problem": f"configuration invalid, running the last good one: {said}",
                                  "seats": len(load_config(TEMPLATE).inputs.seats)}}


# ---------------------------------------------------------------- 4, 7. through the real daemon and tablectl


def test_a_named_config_that_does_not_exist_is_one_line_and_exit_2(tmp_path: Path) -> None:
    run = tmp_path / "run"
    env = {**os.environ, "STATE_DIRECTORY": str(tmp_path / "state"), "RUNTIME_DIRECTORY": str(run),
           "TABLE_HOST_SOCKET": str(run / "control.sock")}
    missing = tmp_path / "no" / "such.toml"
    result = subprocess.run([sys.executable, "-m", "firmware_host", "run", "--config", str(missing),
                             "--ui", "none"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(f"{missing}: no such file (named by --config)"), lines


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    proc = configured_daemon(tmp_path, TEMPLATE)
    yield proc
    proc.close()


def test_a_huge_integer_is_refused_by_reload_and_check_and_a_start_runs_the_last_good_copy(
        daemon: DaemonProcess, tmp_path: Path) -> None:
    config = tmp_path / "etc" / "table.toml"
    daemon.start()
    config.write_bytes(HUGE)
    line = HUGE[: HUGE.index(b"9" * 5000)].count(b"\n") + 1
    problem = f"{config}:{line}: an integer of more than 4300 digits"
    answer = daemon.ctl("config", "reload")
    assert answer == {"ok": False, "reloaded": False, "problems": [problem], "error": problem}
    daemon.wait_for("READY=1")  # said after the reload: not to be taken for the next start's
    # it was: "running the last good one", though what runs is what ran before the reload
    assert daemon.ctl("status")["warning"] == f"configuration refused, the running one stays: {problem}"
    assert daemon.ctl("config", "get", "arbiter.window_ms")["value"] == load_config(
        tmp_path / "state" / "last-good.toml").arbiter.window_ms
    check = subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", "config", "check", str(config)],
                           cwd=ROOT, env=daemon.env, capture_output=True, text=True, timeout=60)
    assert (check.returncode, check.stdout, check.stderr) == (1, f"{config}: invalid\n",
                                                              f"tablectl: {problem}\n")
    daemon.proc.send_signal(signal.SIGTERM)
    daemon.proc.wait(timeout=10)
    daemon.start()
    assert daemon.ctl("status")["warning"] == f"configuration invalid, running the last good one: {problem}"
    assert (tmp_path / "state" / "last-good.toml").read_bytes() == TEMPLATE


def test_a_dangling_link_is_said_at_reload_and_in_status_after_a_start(daemon: DaemonProcess,
                                                                       tmp_path: Path) -> None:
    config = tmp_path / "etc" / "table.toml"
    daemon.start()
    config.unlink()
    config.symlink_to(tmp_path / "card" / "table.toml")
    said = f"{config} is a symbolic link to {tmp_path / 'card' / 'table.toml'}, which does not exist"
    assert daemon.ctl("config", "reload") == {"ok": False, "reloaded": False, "problems": [said],
                                              "error": said}
    daemon.wait_for("READY=1")  # said after the reload: not to be taken for the next start's
    daemon.proc.send_signal(signal.SIGTERM)
    daemon.proc.wait(timeout=10)
    daemon.start()
    assert daemon.ctl("status")["warning"] == f"configuration invalid, running the last good one: {said}"
    (tmp_path / "state" / "last-good.toml").unlink()
    daemon.proc.send_signal(signal.SIGTERM)
    daemon.proc.wait(timeout=10)
    daemon.start()  # off systemd, with nothing to fall back on: the built-in build, and why, in status
    assert daemon.ctl("status")["warning"] == f"{said}, and there is no last good copy"
