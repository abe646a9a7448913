"""Test plumbing shared by several files: waiting for another thread, a table on emulated pins."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
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
from firmware_host.game.table import Table, Timing
from firmware_host.service.commands import handle
from firmware_host.service.store import Store

MS = 1_000_000
ROOT = Path(__file__).resolve().parents[1]


def wait_for(condition: Callable[[], Any], timeout: float = 5.0) -> None:
    """Poll until another thread has done its part; fail after `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.005)
    raise AssertionError("condition not met in time")


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
def served_table(sock: Path, table: Table, store: Store | None = None,
                 **server: Any) -> Iterator[ControlServer]:
    """A control server on `sock` and a thread that owns the table, as the daemon's main loop does."""
    requests: queue.SimpleQueue = queue.SimpleQueue()
    control = ControlServer(sock, requests, **server)
    stop = threading.Event()

    def owner() -> None:
        while not stop.is_set():
            try:
                request = requests.get(timeout=0.05)
            except queue.Empty:
                continue
            serve_request(request, lambda body: handle(table, store, 0, body))

    thread = threading.Thread(target=owner, daemon=True)
    thread.start()
    try:
        yield control
    finally:
        stop.set()
        thread.join()
        control.close()


class DaemonProcess:
    """The real daemon process, emulated and headless, with its sd_notify socket and tablectl."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.notify_path = tmp / "notify.sock"
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(str(self.notify_path))
        self.notify.settimeout(0.2)
        self.env = {**os.environ, "NOTIFY_SOCKET": str(self.notify_path), "WATCHDOG_USEC": "400000",
                    "RUNTIME_DIRECTORY": str(tmp / "run"), "STATE_DIRECTORY": str(tmp / "state"),
                    "TABLE_HOST_SOCKET": str(tmp / "run" / "control.sock")}
        self.proc: subprocess.Popen | None = None
        self.messages: list[str] = []

    def start(self, prefix: tuple[str, ...] = ()) -> None:
        self.log = open(self.tmp / "daemon.log", "a")  # noqa: SIM115 - kept open while it runs
        self.proc = subprocess.Popen([*prefix, sys.executable, "-m", "firmware_host", "run", "--emulate",
                                      "--ui", "none"], cwd=ROOT, env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=self.log, text=True)
        self.wait_for("READY=1")

    def wait_for(self, text: str, timeout: float = 20.0) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                message = self.notify.recv(4096).decode()
            except TimeoutError:
                continue
            self.messages.append(message)
            if text in message:
                return message
        raise AssertionError(f"no {text!r} from the daemon; got {self.messages[-5:]}")

    def ctl(self, *args: str) -> dict:
        result = subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", "--json", *args], cwd=ROOT,
                                env=self.env, capture_output=True, text=True, timeout=30)
        return json.loads(result.stdout) if result.stdout else {"ok": False, "error": result.stderr}

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.notify.close()
        if self.proc is not None:
            self.log.close()


def configured_daemon(tmp: Path, data: bytes) -> DaemonProcess:
    """A DaemonProcess (not started) whose configuration directory is `tmp/etc`, holding a
    table.toml of `data`."""
    proc = DaemonProcess(tmp)
    proc.env["CONFIGURATION_DIRECTORY"] = str(tmp / "etc")
    (tmp / "etc").mkdir()
    (tmp / "etc" / "table.toml").write_bytes(data)
    return proc
