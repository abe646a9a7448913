"""`tablectl selftest` end to end: tablectl -> control socket -> the daemon's loop -> the emulated
board's parts (each following its datasheet) -> the report. Presses go through the emulated pins
and expanders, so the walk takes the path a real press takes."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware_host.cli import ctl
from firmware_host.config import emulated_config
from firmware_host.devices.board import EmulatedBoard, open_board, open_parts
from firmware_host.devices.displays.firmware import expected
from firmware_host.devices.displays.ledctl import led_index
from firmware_host.devices.emulated.oled import RecordingInterface
from firmware_host.devices.inputs.mcp23017 import IODIRA, IODIRB
from firmware_host.service.daemon import Daemon
from firmware_host.service.events import Signal
from firmware_host.service.selftest import matrix_pattern, probe_expander

ROOT = Path(__file__).resolve().parents[2]
CONTROLS = ["slap", "left", "right", "up", "down", "alt"]


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Daemon]]:
    """A daemon on the emulated 4-seat build, its loop running on a thread, its socket live."""
    for name in ("STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(name, str(tmp_path / name))
    for name in ("TABLE_HOST_SOCKET", "NOTIFY_SOCKET", "WATCHDOG_USEC"):
        monkeypatch.delenv(name, raising=False)
    running: list[tuple[Daemon, threading.Thread]] = []

    def make(before: Callable[[EmulatedBoard], None] | None = None) -> Daemon:
        config = emulated_config(4)
        board = open_board(config)
        assert isinstance(board, EmulatedBoard)
        if before is not None:
            before(board)
        daemon = Daemon(config, board=board)
        thread = threading.Thread(target=daemon.serve, daemon=True)
        thread.start()
        running.append((daemon, thread))
        return daemon

    yield make
    for daemon, thread in running:
        daemon.loop.put(Signal("term"))
        thread.join(timeout=10)


def tablectl(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    """Run tablectl in this process: (exit code, the JSON report, the progress lines)."""
    code = ctl.main(["--json", *args])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def results(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    checks = [*report["parts"], *(c for seat in report["seats"] for c in seat["controls"])]
    return {c["part"]: (c["result"], c["detail"]) for c in checks}


def walk_in_background(daemon: Daemon,
                       press: Callable[[int, str], tuple[int, str] | None]) -> threading.Thread:
    """A builder at the table: at each prompt, presses what `press` says (or nothing); asked to
    confirm a seat's test picture, `press` answering "picture" slaps (it looks whole). Presses
    are stamped 100 ms apart at least, as a hand presses (debounce drops faster ones)."""

    def hand() -> None:
        end = time.monotonic() + 30
        seen = None
        at = 0
        while time.monotonic() < end:
            test = daemon.selftest
            if test is not None and test.state not in ("probing", "walking"):
                return
            step = test._current() if test is not None and test.state == "walking" else None
            if step is not None and step is not seen:
                seen = step
                target = press(step.seat, step.control)
                if target is not None and target[1] == "picture":
                    target = (target[0], "slap")  # the builder sees the test picture whole
                if target is not None:
                    assert daemon.buttons is not None
                    at = max(time.monotonic_ns(), at + 100_000_000)
                    daemon.buttons.tap(*target, at, 35_000_000)
            time.sleep(0.002)

    thread = threading.Thread(target=hand, daemon=True)
    thread.start()
    return thread


def test_probe_with_everything_present_is_all_ok(table: Callable[..., Daemon],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    shown: list[list[tuple[int, int, int]]] = []

    def watch_the_strip(board: EmulatedBoard) -> None:
        strip, write = board.led.strip, board.led.strip.write

        def recorded() -> None:
            write()
            shown.append(strip.pixels)  # what the LEDs took up, in chain order

        strip.write = recorded  # type: ignore[method-assign]

    daemon = table(watch_the_strip)
    code, report, progress = tablectl(capsys, "selftest", "--probe")
    assert code == 0 and report["passed"] and report["state"] == "done" and report["seats"] == []
    found = results(report)
    assert found["GPIO chip"] == ("ok", "opened")
    assert found["expander nav1"] == ("ok", "IODIRA 0x7f, IODIRB 0x7f, IOCON 0x40")
    assert found["expander nav2"][0] == "ok"
    assert [found[f"seat {n} screen"][0] for n in (1, 2, 3, 4)] == ["ok"] * 4
    assert found["LED controller"] == ("ok", f"table-led {expected()}, protocol 3, 32x16, data on GP2")
    assert found["matrix"][0] == "ok"
    assert found["buzzer"] == ("ok", "played 'go' (350 ms, duty 50%): did you hear it?")
    assert "expander nav1" in progress and "self-test done: everything answered" in progress
    # The LEDs showed the pattern, each pixel where the chain has it (then the table's picture).
    pattern = matrix_pattern((32, 16), daemon.config.centre.brightness)
    on_leds = [None] * 512
    for y in range(16):
        for x in range(32):
            on_leds[led_index(x, y, 32)] = pattern.getpixel((x, y))
    assert on_leds in shown
    assert pattern.getpixel((0, 0)) == (89, 0, 0)  # the red origin pixel at the brightness cap
    board = daemon.board
    assert isinstance(board, EmulatedBoard)
    # The table's player sounded it on the buzzer's pin: 2400 Hz at half duty, then PWM off,
    # as lgpio would be told (tx_pwm frequency and whole-percent duty).
    assert daemon.buzzer.played == ["go"]
    assert board.factory.pin(18).pwm[-4:] == [(2400, 0), (2400, 50), (2400, 0), (0, 0)]


def test_a_missing_expander_and_a_dead_screen_are_named_with_their_errors(
        table: Callable[..., Daemon], capsys: pytest.CaptureFixture[str]) -> None:
    def unplug(board: EmulatedBoard) -> None:
        board.screens[1] = RecordingInterface()
        board.screens[1].fail = True

    daemon = table(unplug)
    assert daemon.buttons is not None
    daemon.buttons.chips["nav2"].fail = True  # taken out after the table set it up
    code, report, _ = tablectl(capsys, "selftest", "--probe")
    assert code == 1 and not report["passed"]
    found = results(report)
    assert found["expander nav2"] == ("missing", "[Errno 121] Remote I/O error")
    assert found["seat 2 screen"] == ("missing", "[Errno 121] Remote I/O error")
    assert found["expander nav1"][0] == found["seat 1 screen"][0] == "ok"
    assert report["problems"] == [
        "MISSING      expander nav2     bus 1, 0x21: [Errno 121] Remote I/O error",
        "MISSING      seat 2 screen     mux 0x70 channel 1, 0x3c: [Errno 121] Remote I/O error"]


def test_an_expander_reset_or_another_device_at_its_address_is_unexpected() -> None:
    from firmware_host.devices.emulated.mcp23017 import EmulatedBus, EmulatedMCP23017
    from firmware_host.devices.inputs.mcp23017 import MCP23017

    chip = EmulatedMCP23017()
    bus = EmulatedBus({0x20: chip})
    MCP23017(bus, 0x20, [0, 1, 2]).setup()  # as TableInputs sets it up
    assert probe_expander(bus, "nav1", 1, 0x20).result == "ok"
    chip.reset()  # a power glitch: IODIR 0xff, IOCON 0x00 again (DS20001952C Table 3-5)
    reset = probe_expander(bus, "nav1", 1, 0x20)
    assert reset.result == "unexpected" and "reset since the table set it up" in reset.detail
    chip.regs[IODIRA], chip.regs[IODIRB] = 0x00, 0x3C  # something else answers at 0x20
    other = probe_expander(bus, "nav1", 1, 0x20)
    assert other.result == "unexpected" and "another device" in other.detail
    assert probe_expander(bus, "nav2", 1, 0x21).detail == "[Errno 121] Remote I/O error (no device at 0x21)"


def test_a_walk_pressed_in_order_is_all_ok(table: Callable[..., Daemon],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    daemon = table()
    hand = walk_in_background(daemon, lambda seat, control: (seat, control))
    code, report, progress = tablectl(capsys, "selftest", "--timeout", "10")
    hand.join(timeout=5)
    assert code == 0 and report["passed"], report["problems"]
    assert [s["seat"] for s in report["seats"]] == [1, 2, 3, 4]
    for seat in report["seats"]:
        assert [(c["part"], c["result"]) for c in seat["controls"]] == [
            (f"seat {seat['seat']} {c}", "ok") for c in [*CONTROLS, "picture"]]
    assert report["seats"][1]["controls"][1]["where"] == "nav1:B0"  # seat 2's left, as wired
    assert "seat 1: press SLAP (GPIO5)" in progress and "seat 4: press ALT (nav2:B4)" in progress
    # After the test the screens are the table's again.
    end = time.monotonic() + 5
    while daemon.screens.phase_key[0] == "selftest" and time.monotonic() < end:
        time.sleep(0.01)
    assert daemon.screens.phase_key[0] == "attract"


def test_a_control_wired_to_another_seat_is_miswired(table: Callable[..., Daemon],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    daemon = table()

    def builder(seat: int, control: str) -> tuple[int, str]:
        if (seat, control) == (1, "left"):
            return 2, "up"  # seat 2's LEFT contact soldered to seat 3's UP pin
        swapped = {"left": "down", "down": "left"}  # on seat 3, the LEFT and DOWN wires swapped
        return (seat, swapped.get(control, control)) if seat == 2 else (seat, control)

    hand = walk_in_background(daemon, builder)
    code, report, _ = tablectl(capsys, "selftest", "--seats", "2,3")
    hand.join(timeout=5)
    assert code == 1 and [s["seat"] for s in report["seats"]] == [2, 3]
    found = results(report)
    assert found["seat 2 left"] == ("miswired", "arrived as seat 3's up")
    assert found["seat 3 left"] == ("miswired", "arrived as seat 3's down")
    assert found["seat 3 down"] == ("miswired", "arrived as seat 3's left")
    assert found["seat 3 up"][0] == found["seat 2 right"][0] == "ok"
    assert report["problems"] == ["MISWIRED     seat 2 left       nav1:B0: arrived as seat 3's up",
                                  "MISWIRED     seat 3 left       nav2:A0: arrived as seat 3's down",
                                  "MISWIRED     seat 3 down       nav2:A3: arrived as seat 3's left"]


def test_controls_nobody_presses_time_out_as_not_pressed(table: Callable[..., Daemon],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    daemon = table()
    # Seat 1's slap is found ok; when LEFT is asked, the slap is pressed again: a stray, not a miswire.
    hand = walk_in_background(daemon, lambda seat, control: (seat, "slap") if control in ("slap", "left")
                              else None)
    started = time.monotonic()
    code, report, _ = tablectl(capsys, "selftest", "--seats", "1", "--timeout", "0.2")
    hand.join(timeout=5)
    assert code == 1
    found = results(report)
    assert found["seat 1 slap"][0] == "ok"
    assert found["seat 1 left"] == ("not pressed",
                                    "nothing in 0.2 s; meanwhile seat 1's slap (tested ok before)")
    assert [found[f"seat 1 {c}"] for c in CONTROLS[2:]] == [("not pressed", "nothing in 0.2 s")] * 4
    assert time.monotonic() - started < 5  # five timeouts of 0.2 s and the probe, no more


def test_abort_and_a_long_slap_end_the_walk(table: Callable[..., Daemon],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    daemon = table()
    assert daemon.buttons is not None
    answer = ctl.ask({"cmd": "selftest", "action": "start", "seats": [1]})
    assert answer["ok"] and answer["selftest"]["state"] == "probing"
    assert "already" in ctl.ask({"cmd": "selftest", "action": "start"})["error"]
    assert "self-test is running" in ctl.ask({"cmd": "start"})["error"]
    while daemon.selftest is not None and daemon.selftest.prompt() != "seat 1: press SLAP":
        time.sleep(0.005)
    code, report, _ = tablectl(capsys, "selftest", "--abort")
    assert code == 1 and report["state"] == "aborted"
    assert results(report)["seat 1 slap"] == ("not tested", "aborted")
    # A slap held down for stuck_s (2 s) ends the walk too: its press is stamped 3 s ago.
    ctl.ask({"cmd": "selftest", "action": "start", "seats": [2]})
    while daemon.selftest is not None and daemon.selftest.prompt() != "seat 2: press SLAP":
        time.sleep(0.005)
    daemon.buttons.set(1, "slap", True, time.monotonic_ns() - 3_000_000_000)
    code, report, _ = tablectl(capsys, "selftest", "--report")
    while report["state"] == "walking":
        time.sleep(0.01)
        report = ctl.ask({"cmd": "selftest", "action": "status"})["selftest"]
    assert report["state"] == "aborted" and "self-test aborted: seat 2's slap held down" in report["log"]
    assert results(report)["seat 2 slap"][0] == "ok" and results(report)["seat 2 left"][0] == "not tested"


def test_refused_during_a_match_with_a_clear_message(table: Callable[..., Daemon],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    table()
    assert ctl.ask({"cmd": "new", "game": "classic"})["ok"]
    assert ctl.ask({"cmd": "bots", "count": 2})["ok"]
    assert ctl.ask({"cmd": "start"})["ok"]
    code, refusal, err = tablectl(capsys, "selftest", "--probe")
    assert code == 1 and refusal["ok"] is False
    assert err.strip() == ("tablectl: a match is running (countdown): the self-test runs between matches; "
                           "let it end or tablectl abort")
    assert ctl.ask({"cmd": "abort"})["ok"]
    code, refusal, err = tablectl(capsys, "selftest", "--seats", "2,5")
    assert code == 1 and err.strip() == "tablectl: seat 5 is not wired (this table has seats 1 to 4)"
    for bad in ("one", "0"):
        with pytest.raises(SystemExit) as exc:
            ctl.main(["selftest", "--seats", bad])
        assert exc.value.code == 2
    assert "seats are numbered from 1" in capsys.readouterr().err


def test_the_real_daemon_process_runs_the_probe_and_a_timed_out_walk(tmp_path: Path) -> None:
    from plumbing import DaemonProcess as Process

    daemon = Process(tmp_path)
    try:
        daemon.start()
        probe = subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", "--json", "selftest",
                                "--probe"],
                               cwd=ROOT, env=daemon.env, capture_output=True, text=True, timeout=60)
        report = json.loads(probe.stdout)
        assert probe.returncode == 0 and report["passed"], (report, probe.stderr)
        walk = subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", "selftest", "--seats", "4",
                               "--timeout", "0.1"], cwd=ROOT, env=daemon.env, capture_output=True, text=True,
                              timeout=60)
        assert walk.returncode == 1
        lines = walk.stdout.splitlines()
        assert "seat 4: press SLAP (GPIO19)" in lines
        assert "NOT PRESSED  seat 4 slap       GPIO19: nothing in 0.1 s" in lines
        assert "  NOT PRESSED  seat 4 alt        nav2:B4: nothing in 0.1 s" in lines
        told = " ".join(walk.stdout.split())  # the report, whitespace run together (its lines wrap)
        assert told.endswith("NOT PRESSED seat 4 picture ssd1306, mux 0x70 channel 3, 0x3c: nothing in "
                             "0.1 s; not confirmed (SLAP if its border is whole, ALT if not)")
        assert daemon.ctl("status")["phase"] == "attract"  # the table is back
    finally:
        daemon.close()


def test_each_seat_screen_asks_for_its_control_and_shows_what_arrived() -> None:
    from firmware_host.service.selftest import SelfTest
    from firmware_host.table.presses import Event, InputEvent
    from firmware_host.views.seat import render_banner

    shown: dict[int, Any] = {}
    config = emulated_config(4)
    board = open_board(config)  # its expanders answer, with no interrupt pending
    parts = open_parts(board, config, lambda _event: None)
    test = SelfTest(config, parts, lambda _item: None, shown.__setitem__, seats=[0, 1], timeout_s=10)
    test.on_probed(0)  # nothing probed: straight to the walk
    S = 1_000_000_000

    def on(seat: int, *lines: str, big: str) -> bool:
        return shown[seat].tobytes() == render_banner(*lines, big=big).tobytes()

    assert on(0, "seat 1: press", "1 of 6   10 s", "", big="SLAP")
    assert on(1, "seat 2", "now testing seat 1", "waiting", big="SELF-TEST")
    assert on(2, "seat 3", "skipped", big="SELF-TEST")
    test.on_input(InputEvent(Event.PRESS, 0, "slap", 5), 5)
    assert on(0, "seat 1: press", "2 of 6   10 s", "slap ok", big="LEFT")
    assert test.deadline() == 5 + S  # the countdown on the screen changes a second later
    test.on_input(InputEvent(Event.RELEASE, 0, "slap", 6), 6)  # releases are not presses
    test.on_input(InputEvent(Event.PRESS, 2, "up", 7), 7)
    assert on(0, "seat 1: press", "3 of 6   10 s", "left: got seat 3's up", big="RIGHT")
    test.tick(7 + S + S // 2)
    assert on(0, "seat 1: press", "3 of 6   9 s", "left: got seat 3's up", big="RIGHT")
    test.tick(7 + 10 * S)
    assert on(0, "seat 1: press", "4 of 6   10 s", "right not pressed", big="UP")
    assert test.prompt() == "seat 1: press UP"
    parts.close()


def test_a_led_controller_missing_or_of_another_size_is_reported(
        table: Callable[..., Daemon], capsys: pytest.CaptureFixture[str]) -> None:
    from firmware_host.devices.emulated.led import EmulatedLedController

    def smaller_matrix(board: EmulatedBoard) -> None:
        board.led.close()
        board.led = EmulatedLedController(board._led_dir.name, 16, 16)

    table(smaller_matrix)
    _, report, _ = tablectl(capsys, "selftest", "--probe")
    found = results(report)
    assert found["LED controller"] == ("unexpected",
                                       f"controller table-led {expected()} drives 16x16, configured 32x16")
    assert found["matrix"] == ("not tested", "no LED controller")


def test_a_led_controller_with_other_firmware_is_unexpected_and_says_how_to_update_it(
        table: Callable[..., Daemon], capsys: pytest.CaptureFixture[str]) -> None:
    def older(board: EmulatedBoard) -> None:
        board.led.controller.name = b"table-led 0.0.9+deadbeef"

    table(older)
    _, report, _ = tablectl(capsys, "selftest", "--probe")
    assert results(report)["LED controller"] == (
        "unexpected", f"table-led 0.0.9+deadbeef, protocol 3, 32x16, data on GP2; its firmware is "
                      f"0.0.9+deadbeef, this table-host carries {expected()}: sudo tablectl firmware flash")
    assert results(report)["matrix"][0] == "ok"  # it plays all the same


def test_an_unplugged_led_controller_is_missing_with_the_serial_error(
        table: Callable[..., Daemon], capsys: pytest.CaptureFixture[str]) -> None:
    daemon = table(lambda board: board.led.unplug())
    _, report, _ = tablectl(capsys, "selftest", "--probe")
    result, detail = results(report)["LED controller"]
    assert result == "missing" and str(daemon.led.path) in detail and "No such file" in detail


def test_a_led_port_the_service_may_not_open_names_the_driver_that_came_late(
        table: Callable[..., Daemon], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """EPERM from open(2) on the port is the unit's device cgroup (a file's mode gives EACCES):
    DeviceAllow=char-ttyACM was resolved at start, before cdc_acm loaded. pyserial itself turns the
    refused open(2) into its SerialException here, as it does on the Pi."""
    import errno
    import os

    import serial.serialposix

    class Refusing:
        """The os module, except that opening the LED port is refused as the device cgroup does."""

        def __init__(self, path: str) -> None:
            self.path = path

        def __getattr__(self, name: str) -> Any:
            return getattr(os, name)

        def open(self, path: str, *args: Any) -> int:
            if str(path) == self.path:
                raise OSError(errno.EPERM, os.strerror(errno.EPERM), path)
            return os.open(path, *args)

    def refused(board: EmulatedBoard) -> None:
        monkeypatch.setattr(serial.serialposix, "os", Refusing(str(board.led.path)))

    table(refused)
    _, report, _ = tablectl(capsys, "selftest", "--probe")
    result, detail = results(report)["LED controller"]
    assert result == "missing"
    assert "could not open port" in detail and "Operation not permitted" in detail  # pyserial's words
    assert detail.endswith("DeviceAllow=char-ttyACM when the service started, before cdc_acm (the port's "
                           "driver) was loaded. `sudo systemctl restart table-host` lets it in; cdc_acm in "
                           "/etc/modules-load.d/table-host.conf (install.sh writes it) loads it at boot")


def test_a_buzzer_the_player_cannot_open_or_switched_off_is_said(
        table: Callable[..., Daemon], capsys: pytest.CaptureFixture[str]) -> None:
    from gpiozero import OutputDevice

    def pin_taken(board: EmulatedBoard) -> None:
        board.squatter = OutputDevice(18, pin_factory=board.factory)  # type: ignore[attr-defined]

    table(pin_taken)
    _, report, _ = tablectl(capsys, "selftest", "--probe")
    result, detail = results(report)["buzzer"]
    assert result == "missing" and detail.startswith("buzzer on GPIO18: ")


def test_an_expander_press_whose_interrupt_never_reaches_the_pi_is_named(
        table: Callable[..., Daemon], capsys: pytest.CaptureFixture[str]) -> None:
    daemon = table()
    assert daemon.buttons is not None
    daemon.buttons.chips["nav1"].interrupt = None  # INTA's wire to GPIO17 cut
    hand = walk_in_background(daemon, lambda seat, control: (seat, control))
    code, report, _ = tablectl(capsys, "selftest", "--seats", "1", "--timeout", "0.2")
    hand.join(timeout=5)
    found = results(report)
    assert code == 1 and found["seat 1 slap"][0] == "ok"  # a Pi GPIO: no expander in the way
    assert found["seat 1 left"] == ("not pressed", "nothing in 0.2 s; expander nav1 holds an interrupt for "
                                    "A0 (INTF 0x0001) that never reached GPIO17: check its INTA wire")
    assert found["seat 1 alt"][1].endswith("(INTF 0x0001) that never reached GPIO17: check its INTA wire")


# ---------------------------------------------------------------- screens: SSD1306 or SH1106


def test_the_test_picture_shows_whole_only_on_the_controller_it_was_driven_as() -> None:
    """What a builder sees: the frame through luma's driver for one controller, played into the
    datasheet model of the other (devices/emulated/controllers.py). An SH1106 driven as an
    SSD1306 writes the frame into its first page; an SSD1306 driven as an SH1106 shows it two
    columns to the right. Either way the border is not whole."""
    from firmware_host.devices.displays.oled import DisplaySpec, open_luma
    from firmware_host.devices.emulated.controllers import model_for
    from firmware_host.service.selftest import screen_frame

    picture = screen_frame(0)

    def shown(driver: str, chip: str) -> Any:
        interface = RecordingInterface()
        open_luma(DisplaySpec(0, driver), interface).display(picture)
        model = model_for(chip)
        model.feed(interface.transfers)
        return model.image(offset=2 if chip == "sh1106" else 0)

    def border(img: Any) -> int:
        px = img.load()
        return sum(1 for x in range(128) for y in (0, 63) if px[x, y]) + \
            sum(1 for y in range(1, 63) for x in (0, 127) if px[x, y])

    assert border(picture) == 2 * 128 + 2 * 62
    for kind in ("ssd1306", "sh1106"):
        assert shown(kind, kind).tobytes() == picture.tobytes()
    assert border(shown("ssd1306", "sh1106")) < 100  # the top edge's right part, nothing else
    assert not shown("sh1106", "ssd1306").getpixel((127, 32))  # the right edge pushed off the panel


def picture_walk(shown: dict[int, Any], kind: str = "ssd1306") -> Any:
    """A self-test of seat 1 whose screen took the probe's frame, walked to its picture step."""
    from firmware_host.config import parse_config
    from firmware_host.devices.parts import Parts
    from firmware_host.service.selftest import Check, SelfTest
    from firmware_host.table.presses import Event, InputEvent

    data = emulated_config(4).model_dump()
    data["screens"][0]["kind"] = kind
    config = parse_config(data)
    test = SelfTest(config, Parts(), lambda _item: None, shown.__setitem__, seats=[0], timeout_s=10)
    test.parts.append(Check("seat 1 screen", "mux 0x70 channel 0, 0x3c", "ok"))
    test.on_probed(0)
    for t, control in enumerate(CONTROLS, start=1):
        test.on_input(InputEvent(Event.PRESS, 0, control, t), t)
    return test


def test_the_walk_ends_each_seat_asking_the_builder_to_confirm_its_screens_picture() -> None:
    from firmware_host.service.selftest import screen_frame
    from firmware_host.table.presses import Event, InputEvent

    shown: dict[int, Any] = {}
    test = picture_walk(shown)
    assert test.prompt() == ("seat 1: look at its screen: is the border around the test picture whole, on "
                             "all four edges? SLAP = yes, ALT = no (garbled, cut off or shifted)")
    assert shown[0].tobytes() == screen_frame(0).tobytes()  # the picture alone, nothing drawn over it
    test.on_input(InputEvent(Event.PRESS, 2, "alt", 20), 20)  # another seat: says nothing of this screen
    assert test.state == "walking"
    test.on_input(InputEvent(Event.PRESS, 0, "slap", 21), 21)
    assert test.state == "done" and test.problems() == []
    assert results(test.report())["seat 1 picture"] == ("ok", "the builder saw the border whole")


ONE_THREE = "1.3-inch modules usually carry an SH1106 (0.96-inch modules an SSD1306)"
NOUGHT_NINE_SIX = "0.96-inch modules usually carry an SSD1306 (1.3-inch modules an SH1106)"


@pytest.mark.parametrize(("kind", "other", "modules"), [("ssd1306", "sh1106", ONE_THREE),
                                                        ("sh1106", "ssd1306", NOUGHT_NINE_SIX)])
def test_a_garbled_picture_names_the_other_controller_and_how_to_set_it(kind: str, other: str,
                                                                       modules: str) -> None:
    from firmware_host.table.presses import Event, InputEvent

    test = picture_walk({}, kind)
    test.on_input(InputEvent(Event.PRESS, 0, "alt", 20), 20)
    assert test.problems() == [
        f"UNEXPECTED   seat 1 picture    {kind}, mux 0x70 channel 0, 0x3c: the builder saw it garbled or cut "
        f"off. Driven as {kind}: {modules}: sudo tablectl config set screens.1.kind '\"{other}\"' and run "
        "the self-test again"]


# ---------------------------------------------------------------- the multiplexers' idle state


def mux_sysfs(root: Path, states: dict[int, str | None]) -> Path:
    """/sys/bus/i2c/devices/1-00NN/idle_state for each mux (None: the device without the file)."""
    for address, state in states.items():
        device = root / "bus" / "i2c" / "devices" / f"1-{address:04x}"
        device.mkdir(parents=True)
        if state is not None:
            (device / "idle_state").write_text(f"{state}\n")
    return root


def test_two_muxes_on_one_bus_must_disconnect_on_idle(tmp_path: Path) -> None:
    from firmware_host.config import I2CMux
    from firmware_host.service.selftest import probe_mux

    first, second = I2CMux(address=0x70, bus=1), I2CMux(address=0x71, bus=1)
    good = mux_sysfs(tmp_path / "good", {0x70: "-2", 0x71: "-2"})
    check = probe_mux(first, [0x71], good)
    assert (check.part, check.where, check.result) == ("mux 0x70", "i2c-1", "ok")
    assert check.detail == "idle_state -2: disconnects after every transfer"
    old = mux_sysfs(tmp_path / "old", {0x70: "-1", 0x71: "-1"})  # a kernel before the overlay's parameter
    check = probe_mux(second, [0x70], old)
    assert check.result == "unexpected" and check.detail == (
        "idle_state -1: stays on its last channel, but it shares i2c-1 with the mux at 0x70: a screen behind "
        "one takes the frames for the screen at its address behind the other. config.txt needs "
        "`dtoverlay=i2c-mux,pca9548,addr=0x71,disconnect_on_idle` (install.sh writes it; reboot), which a "
        "Raspberry Pi OS kernel has since 2024 (update it); until the next boot: echo -2 | sudo tee "
        f"{old}/bus/i2c/devices/1-0071/idle_state")
    alone = probe_mux(first, [], old)
    assert (alone.result, alone.detail) == ("ok",
                                            "idle_state -1: stays on its last channel (alone on its bus)")


def test_a_mux_the_kernel_does_not_run_is_missing_with_what_to_check(tmp_path: Path) -> None:
    from firmware_host.config import I2CMux
    from firmware_host.service.selftest import probe_mux

    sysfs = mux_sysfs(tmp_path, {0x71: None})
    gone = probe_mux(I2CMux(address=0x70, bus=1), [], sysfs)
    assert gone.result == "missing" and gone.detail == (
        f"no i2c-mux at 0x70 on i2c-1 in sysfs ({sysfs}/bus/i2c/devices/1-0070 missing): is "
        "`dtoverlay=i2c-mux,pca9548,addr=0x70` in config.txt and the box rebooted?")
    unbound = probe_mux(I2CMux(address=0x71, bus=1), [], sysfs)
    assert unbound.result == "missing" and "has no idle_state" in unbound.detail


def test_the_probe_reads_the_muxes_idle_state_where_the_board_has_a_kernel(
        table: Callable[..., Daemon], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    def with_sysfs(board: EmulatedBoard) -> None:
        board.sysfs = mux_sysfs(tmp_path, {0x70: "-1"})

    table(with_sysfs)
    code, report, _ = tablectl(capsys, "selftest", "--probe")
    assert code == 0 and results(report)["mux 0x70"] == (
        "ok", "idle_state -1: stays on its last channel (alone on its bus)")
