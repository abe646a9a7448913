"""The real daemon the benches start: `table-host run --emulate --ui none` in a process of its own,
with its own state, runtime and configuration directories, reached over its control socket as
`tablectl` reaches it."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..system.children import ending_with_me

DAEMON = [sys.executable, "-m", "firmware_host", "run", "--emulate", "--ui", "none"]
"""The command: the table's own, in this interpreter."""
ROOT = Path(__file__).resolve().parents[2]
SYSTEMD_VARIABLES = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "INVOCATION_ID", "JOURNAL_STREAM")


def daemon_env(directory: str | Path) -> dict[str, str]:
    """An environment whose table keeps everything under `directory`, and that no systemd of ours
    leaks into (the benches say when they want one)."""
    env = {**os.environ, "RUNTIME_DIRECTORY": f"{directory}/run", "STATE_DIRECTORY": f"{directory}/state",
           "CONFIGURATION_DIRECTORY": f"{directory}/etc",
           "TABLE_HOST_SOCKET": str(Path(directory) / "run" / "control.sock")}
    for name in SYSTEMD_VARIABLES:
        env.pop(name, None)
    return env


def stop(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM, as systemd stops the service; SIGKILL if it has not gone in 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def cpu_ticks(pid: int) -> int:
    """utime + stime of a process, in clock ticks (/proc/PID/stat fields 14 and 15, proc(5))."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def family(pid: int) -> list[int]:
    """`pid` and its children (/proc/PID/task/TID/children): the daemon and the web view's own
    process, whose work and memory are the table's too."""
    found = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


@dataclass
class EmulatedDaemon:
    """The real daemon in a process of its own, and what a client needs to reach it."""

    proc: subprocess.Popen[bytes]
    socket: Path
    env: dict[str, str]  # its environment: `tablectl` run with it finds its socket

    def ask(self, body: dict[str, Any]) -> dict[str, Any]:
        """What `tablectl` asks; not running is an answer too."""
        from ..control.client import NotRunning, ask

        try:
            return ask(body, self.socket)
        except NotRunning as exc:
            return {"ok": False, "error": str(exc)}

    def answers(self) -> bool:
        """Alive and answering `status`."""
        return self.proc.poll() is None and self.ask({"cmd": "status"}).get("ok") is True


def _prepared(descriptors: int | None) -> Callable[[], None]:
    """In the child, before it runs the daemon: it ends with this process (SIGTERM: in order) and,
    when asked, has the descriptor limit (nothing is imported between fork and exec: another
    thread may have held the import lock)."""
    ending = ending_with_me(signal.SIGTERM)

    def prepare() -> None:
        ending()
        if descriptors is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))
    return prepare


@contextlib.contextmanager
def emulated_daemon(log: Path | None = None, start_s: float = 30.0,
                    prepare: Callable[[Path], None] | None = None,
                    descriptors: int | None = None, config: str | None = None) -> Iterator[EmulatedDaemon]:
    """The real daemon (emulated, headless, its own state and socket, no configuration file), up
    and answering; stopped at the end. `log`: where its output goes (its tail names a failed start);
    `prepare(state directory)`: what to put there before it starts (a stored history);
    `descriptors`: its RLIMIT_NOFILE, soft and hard, as the unit's `LimitNOFILE=` sets it;
    `config`: a table.toml to start with (its configuration directory's), else none."""
    with tempfile.TemporaryDirectory(prefix="table-daemon-") as tmp:
        env = daemon_env(tmp)
        socket = Path(env["TABLE_HOST_SOCKET"])
        if prepare is not None:
            prepare(Path(env["STATE_DIRECTORY"]))
        if config is not None:
            etc = Path(env["CONFIGURATION_DIRECTORY"])
            etc.mkdir(parents=True, exist_ok=True)
            (etc / "table.toml").write_text(config, encoding="utf-8")
        with open(log or os.devnull, "ab") as out:
            proc = subprocess.Popen(DAEMON, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT,
                                    preexec_fn=_prepared(descriptors))
        daemon = EmulatedDaemon(proc, socket, env)
        try:
            deadline = time.monotonic() + start_s
            while not daemon.answers():
                if proc.poll() is not None or time.monotonic() > deadline:
                    said = log.read_text(errors="replace")[-400:] if log else ""
                    raise RuntimeError(f"the daemon did not come up (exit status {proc.poll()}) {said}")
                time.sleep(0.2)
            yield daemon
        finally:
            stop(proc)


def settled_files(directory: Path, contents: list[bytes]) -> list[Path]:
    """Each of `contents` in a file of its own, `N/table.toml`, all left alone long enough to be
    read at once: a configuration is read only once it has been still for SETTLE_S (config/load.py),
    so one wait for all of them, not one for each (400 waits of 0.2 s were 80 s of the run)."""
    from ..config.load import SETTLE_S

    paths = []
    for n, data in enumerate(contents, 1):
        path = directory / str(n) / "table.toml"
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        paths.append(path)
    if paths:  # the last written is the youngest: once it is settled, every one is
        last = paths[-1].stat()
        written = max(last.st_mtime_ns, last.st_ctime_ns) / 1e9
        time.sleep(max(0.0, SETTLE_S - (time.time() - written)) + 0.01)
    return paths
