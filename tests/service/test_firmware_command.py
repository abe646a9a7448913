"""The daemon's side of `tablectl firmware`: what the LED link heard, and letting go of the port
for a flash (pause) and taking it back (resume), over the control socket; `tablectl status`
names the controller's firmware."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware_host.cli import ctl, show
from firmware_host.config import emulated_config
from firmware_host.devices.board import open_board
from firmware_host.devices.displays.firmware import expected
from firmware_host.service.daemon import Daemon
from firmware_host.service.events import Signal


@pytest.fixture
def daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Daemon]:
    for name in ("STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(name, str(tmp_path / name))
    for name in ("TABLE_HOST_SOCKET", "NOTIFY_SOCKET", "WATCHDOG_USEC"):
        monkeypatch.delenv(name, raising=False)
    config = emulated_config(4)
    running = Daemon(config, board=open_board(config))
    thread = threading.Thread(target=running.serve, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not running.led.stats.online and time.monotonic() < deadline:
        time.sleep(0.02)
    yield running
    running.loop.put(Signal("term"))
    thread.join(timeout=10)


def test_status_names_the_controllers_firmware_and_this_hosts(daemon: Daemon) -> None:
    answer = ctl.ask({"cmd": "firmware"})
    assert answer["ok"] and answer["firmware"] | {"port": ""} == {
        "controller": expected(), "expected": expected(), "current": True, "online": True, "paused": False,
        "port_open": True, "port": "", "size": [32, 16], "problem": ""}
    status = ctl.ask({"cmd": "status"})
    assert status["led_controller"] == {"online": True, "name": f"table-led {expected()}",
                                        "firmware": expected(), "expected": expected(), "current": True}
    assert show.led_controller_line(status["led_controller"]) == \
        f"table-led {expected()}: the firmware this table-host carries"


def test_pause_lets_go_of_the_port_and_resume_takes_it_back(daemon: Daemon) -> None:
    assert ctl.ask({"cmd": "firmware", "action": "pause", "seconds": 60})["firmware"]["paused"]
    deadline = time.monotonic() + 5
    while ctl.ask({"cmd": "firmware"})["firmware"]["port_open"] and time.monotonic() < deadline:
        time.sleep(0.02)
    now = ctl.ask({"cmd": "firmware"})["firmware"]
    assert not now["port_open"] and not now["online"]
    assert show.led_controller_line(ctl.ask({"cmd": "status"})["led_controller"]) == \
        "paused: tablectl firmware flash has the port (paused: tablectl firmware flash has the port)"
    ctl.ask({"cmd": "firmware", "action": "resume"})
    deadline = time.monotonic() + 5
    while not ctl.ask({"cmd": "firmware"})["firmware"]["online"] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ctl.ask({"cmd": "firmware"})["firmware"]["online"]


def test_a_pause_out_of_bounds_is_refused_by_name(daemon: Daemon) -> None:
    answer = ctl.ask({"cmd": "firmware", "action": "pause", "seconds": 10_000})
    assert not answer["ok"] and answer["error"] == "firmware pause: seconds must be above 0 and at most 900"


def test_other_firmware_is_said_in_status_with_how_to_update_it() -> None:
    line = show.led_controller_line({"online": True, "name": "table-led 0.0.9+deadbeef",
                                     "firmware": "0.0.9+deadbeef", "expected": "0.1.0+12345678",
                                     "current": False})
    assert line == ("table-led 0.0.9+deadbeef: firmware 0.0.9+deadbeef, this table-host carries "
                    "0.1.0+12345678: sudo tablectl firmware flash")
