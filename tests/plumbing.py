"""Test plumbing shared by several files: waiting for another thread, a table on emulated pins."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import queue
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from firmware_host.config import emulated_config
from firmware_host.control.server import ControlServer, serve_request
from firmware_host.devices.emulated.pins import EmulatedButtons, emulated_factory
from firmware_host.devices.inputs.pins import TableInputs
from firmware_host.play.scenario import load as load_scenario
from firmware_host.play.scenario import run as run_scenario
from firmware_host.service.binding import StoreBinding
from firmware_host.service.commands import handle
from firmware_host.service.journal import Store
from firmware_host.service.loop import Loop
from firmware_host.service.table_feed import TableFeed
from firmware_host.system.children import ending_with_me
from firmware_host.table.machine import Phase, Table, Timing
from firmware_host.table.matches import new_match
from firmware_host.table.presses import Event, InputEvent

MS = 1_000_000
S = 1_000_000_000
ROOT = Path(__file__).resolve().parents[1]
# Where the browser tests leave their screenshots: out of the tree, so a test run changes no
# file of the repository; `TABLE_WEB_SHOTS=docs` makes docs/web/'s pictures anew (docs/web.md).
SHOTS = ROOT / "docs" / "web" if os.environ.get("TABLE_WEB_SHOTS") == "docs" \
    else ROOT / ".cache" / "web-shots"


FAULTS_ARGS = ("--kills", "6", "--configs", "60", "--soak-minutes", "0.05")


@functools.cache
def bench_faults_run() -> subprocess.CompletedProcess[str]:
    """`table-host bench faults --json`, run once for every test that reads its figures: its
    fixed parts (the attacks on the socket, the start-ups signalled, the full disks, the
    damaged databases) take most of its two minutes whatever figures are asked for, and three
    tests ran it each. Once for the
    whole test run when its processes share TABLE_TESTS_SHARED (tests/conftest.py): the first
    to ask runs it, under a lock, and keeps the result there; another waits for it."""
    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "firmware_host", "bench", "faults", *FAULTS_ARGS,
                               "--json"], cwd=ROOT, capture_output=True, text=True, timeout=600)

    shared = os.environ.get("TABLE_TESTS_SHARED")
    if not shared:
        return run()
    kept = Path(shared) / "bench-faults.json"
    with open(Path(shared) / "bench-faults.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if kept.exists():
            return subprocess.CompletedProcess(**json.loads(kept.read_text()))
        result = run()
        kept.write_text(json.dumps({"args": result.args, "returncode": result.returncode,
                                    "stdout": result.stdout, "stderr": result.stderr}))
        return result


def in_session(session: int) -> list[str]:
    """The live processes of a session, each as `PID command line`: a process started with
    `start_new_session=True` leads one whose ID is its own, and whatever it starts stays in it
    however it is reparented (none of the table's processes makes a session of its own).
    Zombies (ended, not yet reaped) are not counted."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile
            continue
        if int(fields[3]) == session and fields[0] != "Z":  # proc(5): state, ppid, pgrp, session
            found.append(f"{entry.name} {command.strip()}")
    return sorted(found)


def descendants(pid: int) -> list[int]:
    """Every process below `pid` now (/proc/PID/task/TID/children of each thread, recursively)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{parent}/task").iterdir():
                with contextlib.suppress(OSError):
                    children = [int(c) for c in (task / "children").read_text().split()]
                    found += children
                    todo += children
    return sorted(found)


def alive(pids: list[int]) -> list[str]:
    """Those of `pids` still running (zombies aside), as `PID command line`."""
    left = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state != "Z":
            left.append(f"{pid} {command.strip()}")
    return left


def left_after(find: Callable[[], list[str]], timeout: float = 30.0) -> list[str]:
    """What `find` still finds once it has found nothing, or after `timeout` seconds: a process
    signalled to end takes a moment (a daemon stops in order)."""
    end = time.monotonic() + timeout
    while (left := find()) and time.monotonic() < end:
        time.sleep(0.2)
    return left


ATTACK_ARGS = ("--play", "2")


@functools.cache
def bench_attack_run() -> subprocess.CompletedProcess[str]:
    """`table-host bench attack --play 2 --json` (two turns of 1 s each way), run once for the
    tests that read it (its start: a daemon with 200 matches stored, a dozen attackers: 20 s)."""
    return subprocess.run([sys.executable, "-m", "firmware_host", "bench", "attack", *ATTACK_ARGS, "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def wait_for(condition: Callable[[], Any], timeout: float = 5.0, said: Callable[[], Any] | None = None,
             every: float = 0.005) -> None:
    """Poll until another thread has done its part; fail after `timeout` seconds, with `said()`
    in the message if given (what was seen instead)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(every)
    raise AssertionError(f"condition not met in {timeout} s" + (f": {said()}" if said else ""))


def journaled(db: Path, round_no: int | None = None) -> int:
    """How many actions the journal holds (of round `round_no`, from 1), read on a connection of
    its own as any reader would, while the table writes."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
        if round_no is None:
            return conn.execute("SELECT COUNT(*) FROM journal").fetchone()[0]
        return conn.execute("SELECT COUNT(*) FROM journal WHERE round_no = ?", (round_no - 1,)).fetchone()[0]


def table_box(timing: Timing) -> tuple[Table, Callable[[int, str, int], None]]:
    """A 4-seat table fed by the real input path (emulated pins and expanders), and `tap(seat,
    control, at_ns)` that presses a button at a chosen time with the table's clock there."""
    cfg = emulated_config(4)
    factory = emulated_factory()
    buttons = EmulatedButtons(cfg.inputs, factory)
    table = Table(4, timing)
    clock = {"now": 0}
    inputs = TableInputs(cfg.inputs, factory, buttons.buses,
                         lambda event: table.on_input(event, clock["now"]))
    inputs.gate = table.gate

    def tap(seat: int, control: str, at: int) -> None:
        clock["now"] = at
        buttons.tap(seat, control, at, 50 * MS)

    tap.inputs = inputs  # type: ignore[attr-defined]  # gpiozero holds pin callbacks weakly: keep them
    return table, tap


@contextlib.contextmanager
def request_owner(requests: queue.SimpleQueue, serve: Callable[[Any], None]) -> Iterator[None]:
    """A thread that takes each control request and hands it to `serve`, as the daemon's main
    loop does."""
    stop = threading.Event()

    def owner() -> None:
        while not stop.is_set():
            try:
                request = requests.get(timeout=0.05)
            except queue.Empty:
                continue
            serve(request)

    thread = threading.Thread(target=owner, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@contextlib.contextmanager
def served_table(sock: Path, table: Table, store: Store | None = None,
                 **server: Any) -> Iterator[ControlServer]:
    """A control server on `sock` and a thread that owns the table, as the daemon's main loop does."""
    requests: queue.SimpleQueue = queue.SimpleQueue()
    control = ControlServer(sock, requests, **server)
    try:
        with request_owner(requests, lambda request: serve_request(
                request, lambda body: handle(table, store, 0, body))):
            yield control
    finally:
        control.close()


class DaemonProcess:
    """The real daemon process, emulated and headless, with its sd_notify socket and tablectl.

    The socket is read all the time, on a thread of its own: a datagram socket holds only a few
    messages (net.unix.max_dgram_qlen, 10), the daemon says WATCHDOG=1 every 0.2 s here, and on a
    loaded machine a test busy for 2 s between two waits lost the READY=1 it then waited for."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.notify_path = tmp / "notify.sock"
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(str(self.notify_path))
        self.notify.settimeout(0.2)
        self._said: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._reader = threading.Thread(target=self._read, name="notify-reader", daemon=True)
        self._reader.start()
        self.env = {**os.environ, "NOTIFY_SOCKET": str(self.notify_path), "WATCHDOG_USEC": "400000",
                    "RUNTIME_DIRECTORY": str(tmp / "run"), "STATE_DIRECTORY": str(tmp / "state"),
                    "TABLE_HOST_SOCKET": str(tmp / "run" / "control.sock")}
        self.proc: subprocess.Popen | None = None
        self.messages: list[str] = []

    def start(self, prefix: tuple[str, ...] = ()) -> None:
        self.launch(prefix)
        self.wait_for("READY=1")

    def launch(self, prefix: tuple[str, ...] = ()) -> subprocess.Popen:
        """Started, not waited for."""
        self.log = open(self.tmp / "daemon.log", "a")  # noqa: SIM115 - kept open while it runs
        self.proc = subprocess.Popen([*prefix, sys.executable, "-m", "firmware_host", "run", "--emulate",
                                      "--ui", "none"], cwd=ROOT, env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=self.log, text=True,
                                     preexec_fn=ending_with_me())  # a test run cut short leaves none
        return self.proc

    def _read(self) -> None:
        while True:
            try:
                self._said.put(self.notify.recv(4096).decode())
            except TimeoutError:
                continue
            except OSError:  # closed: the test is over
                return

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        """The next message that holds `text` (those before it are passed over, kept in `messages`)."""
        end = time.monotonic() + timeout
        while (left := end - time.monotonic()) > 0:
            try:
                message = self._said.get(timeout=left)
            except queue.Empty:
                break
            self.messages.append(message)
            if text in message:
                return message
        raise AssertionError(f"no {text!r} from the daemon in {timeout} s; got {self.messages[-5:]}")

    def ctl(self, *args: str) -> dict:
        result = subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", "--json", *args], cwd=ROOT,
                                env=self.env, capture_output=True, text=True, timeout=30)
        return json.loads(result.stdout) if result.stdout else {"ok": False, "error": result.stderr}

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.notify.close()
        self._reader.join(5)
        if self.proc is not None:
            self.log.close()


# ---------------------------------------------------------------- a scenario's deal at the table


def played_table(store: Store, players: int, seed: int, game: str = "classic",
                 options: dict[str, Any] | None = None, window_ms: float = 5.0,
                 epsilon_ms: float = 0.2, names: dict[int, str] | None = None) -> tuple[TableFeed, Table]:
    """The table, its loop's game component and the store binding, as the daemon wires them,
    with a match of `players` seats started: "go" is at 0 on the inputs' clock. Press with
    `press`, let time run with `settle`. `names`: the named seats' names (by seat, from 0)."""
    table = Table(players, Timing(), seed=seed, window_ns=round(window_ms * MS),
                  epsilon_ns=round(epsilon_ms * MS))
    game_part = TableFeed(Loop(), table)
    binding = StoreBinding(table, store)
    game_part.follow(binding.began)
    game_part.follow(binding.journal)
    table.joined = list(range(players))
    table.names.update(names or {})
    table.phase, table.game, table.options = Phase.LOBBY, game, dict(options or {})
    table.start(-3 * S)
    game_part.advance(-3 * S)
    return game_part, table


def scenario_table(name: str, store: Store, monkeypatch: Any, players: int, seed: int,
                   window_ms: float = 5.0, epsilon_ms: float = 0.2) -> tuple[TableFeed, Table]:
    """`played_table` dealt as `scenarios/<name>` is (the match the table starts is that file's)."""
    played = run_scenario(load_scenario(ROOT / "scenarios" / name), name)
    deal = played.match
    fresh = new_match(deal.game, deal.players, deal.seed, deal.options, setup=deal.setups.get(0))
    monkeypatch.setattr("firmware_host.table.machine.new_match", lambda *a, **k: fresh)
    return played_table(store, players, seed, deal.game, None, window_ms, epsilon_ms)


def press(game: TableFeed, table: Table, seat: int, control: str, at_ms: float,
          arrive_ms: float | None = None) -> None:
    """A press stamped `at_ms`, reaching the loop at `arrive_ms`: the loop first does what fell
    due before it arrived, as the daemon's timers do. Before go (at_ms < 0) it is a false start."""
    arrive = round((at_ms if arrive_ms is None else arrive_ms) * MS)
    settle(game, table, arrive)
    kind = Event.PRESS if at_ms >= 0 else Event.FALSE_START  # the start gate's word on it
    game.on_input(InputEvent(kind, seat, control, round(at_ms * MS)), arrive)
    game.advance(arrive)


def settle(game: TableFeed, table: Table, until: int) -> None:
    """Time runs on to `until`: whatever falls due is done, in order."""
    while (due := table.deadline()) is not None and due <= until:
        game.advance(due)


ZBARIMG = "/usr/bin/zbarimg"


def qr_read(image: Path) -> list[str]:
    """What a real QR decoder (zbarimg, from zbar-tools) reads off an image file."""
    if not os.path.exists(ZBARIMG):
        raise AssertionError(f"{ZBARIMG} is missing: `./dev test` installs it as root "
                             "(apt-get install zbar-tools)")
    out = subprocess.run([ZBARIMG, "-q", "--raw", str(image)], capture_output=True, text=True, timeout=30)
    return out.stdout.split("\n")[:-1] if out.returncode == 0 else []


def on_a_terminal(command: list[str], timeout: float = 300) -> tuple[bytes, str, int]:
    """Run `command` with its stderr on a pseudo-terminal (progress is drawn only there): what
    the terminal was shown, the stdout, the exit status."""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=follower, text=True,
                            preexec_fn=ending_with_me())
    os.close(follower)
    shown = b""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        shown += chunk
    out, _ = proc.communicate(timeout=timeout)
    os.close(leader)
    return shown, out, proc.returncode


@contextlib.asynccontextmanager
async def gated_web(hub: Any, limits: Any = None, names: Any = None, bind: str = "127.0.0.1") -> Any:
    """The web view's app served as the daemon serves it: accepted by its gate (web/gate.py) on a
    socket of its own on `bind`; yields (its URL on 127.0.0.1, the gate)."""
    from aiohttp import web

    from firmware_host.web.gate import Gate, Limits
    from firmware_host.web.listen import open_socket
    from firmware_host.web.server import build_app

    runner = web.AppRunner(build_app(hub, names=names), handle_signals=False)
    await runner.setup()
    sock = open_socket(bind, 0)
    gate = Gate(sock, runner.server, limits or Limits.of(hub.max_clients))
    gate.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", gate
    finally:
        gate.stop()
        await runner.cleanup()
        sock.close()


def configured_daemon(tmp: Path, data: bytes) -> DaemonProcess:
    """A DaemonProcess (not started) whose configuration directory is `tmp/etc`, holding a
    table.toml of `data`."""
    proc = DaemonProcess(tmp)
    proc.env["CONFIGURATION_DIRECTORY"] = str(tmp / "etc")
    (tmp / "etc").mkdir()
    (tmp / "etc" / "table.toml").write_bytes(data)
    return proc
