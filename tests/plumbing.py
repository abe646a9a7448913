"""Test plumbing shared by several files: waiting for another thread, a table on emulated pins."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from firmware_host.config import emulated_config
from firmware_host.inputs.pins import EmulatedButtons, TableInputs, emulated_factory
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
