"""Test plumbing shared by several files: waiting for another thread, a table on emulated pins."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from firmware_host.commands import handle
from firmware_host.config import emulated_config
from firmware_host.control import ControlServer, serve_request
from firmware_host.inputs.pins import EmulatedButtons, TableInputs, emulated_factory
from firmware_host.store import Store
from firmware_host.table import Table, Timing

MS = 1_000_000


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
