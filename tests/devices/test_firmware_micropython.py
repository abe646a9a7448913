"""The LED controller's firmware under the real MicroPython interpreter (hil/firmware.py):
its WebAssembly port under node, on a pseudo-terminal, against the host's real LedLink."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from hil import firmware  # noqa: E402

from firmware_host.devices.displays import firmware as fw  # noqa: E402


def board_pin() -> int:
    tree = ast.parse((ROOT / "hardware" / "led_controller" / "board.py").read_text())
    return next(ast.literal_eval(n.value) for n in tree.body
                if isinstance(n, ast.Assign) and n.targets[0].id == "DATA_PIN")  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not installed: MicroPython's WebAssembly port cannot run here")
    return firmware.run(ROOT / ".cache", seconds=1.5)


def test_it_is_micropython_1_27_running_protocol_3(run) -> None:
    assert run["micropython_version"].startswith("1.27.")
    assert run["hello"] and run["protocol"] == 3 and run["size"] == "32x16"
    assert run["firmware"] == "table-led unversioned"  # copied without ledversion.py, as the bench does


def test_the_firmware_drives_the_wired_data_pin(run) -> None:
    assert run["data_pins_driven"] == [board_pin()] == [2]
    assert run["firmware_data_pin"] == 2


def test_a_frame_is_acked_and_clocked_out_pixel_for_pixel_in_grb(run) -> None:
    assert run["frame_acked"] and run["frame_shown"]


def test_a_damaged_frame_is_refused_and_not_shown(run) -> None:
    assert run["damaged_naked"] and run["damaged_not_shown"]


def test_after_a_block_cut_short_the_next_one_is_taken_at_once(run) -> None:
    assert run["resync_at_once"] and run["resync_shown"]


def test_the_hosts_link_keeps_the_strip_on_the_newest_frame(run) -> None:
    assert run["link_online"] and run["firmware_frames_acked"] > 10
    assert run["pixels_match"] and run["last_frame_shown"]  # every shown frame was one the game drew
    assert run["naks"] == 0  # a clean pseudo-terminal damages nothing
    # A retransmit is an ack later than the link waits (ledlink.ACK_TIMEOUT_S): the WebAssembly
    # firmware on a loaded machine can be that slow now and then, but not for one frame in ten.
    assert run["retransmits"] * 10 <= run["firmware_frames_sent"]


def test_the_strip_is_fed_to_the_pio_program_and_its_waveform_is_the_ws2812bs(run) -> None:
    """The firmware's ws2812.py under the real interpreter, its PIO program run by the rp2 stand-in
    on each frame's first 24 bytes: T0H/T0L/T1H/T1L within the WS2812B datasheet's +-150 ns and
    1.25 us a bit at 8 MHz, the bits decoded from the waveform those pushed; every frame's bytes
    reached the chain in G, R, B order (frame_shown, pixels_match above)."""
    assert run["pio_in_spec"] and run["pio_bits_ok"]
    assert run["pio"]["freq"] == 8_000_000 and run["pio"]["bit_ns"] == [1250, 1250]
    assert run["pio"]["t0h_ns"] == [375, 375] and run["pio"]["t1h_ns"] == [750, 750]


def test_the_part_flashes_a_board_holding_an_older_version_and_hears_this_one(run) -> None:
    assert run["flash_reported"] and run["flash_before"] == "0.0.9+deadbeef", run.get("flash_error", run)
    assert run["flash_after"] == run["flash_expected"] == fw.expected() and run["flash_boots"] == 2


def test_the_wasm_port_runs_the_plain_loops_and_says_so(run) -> None:
    # viper cannot compile under WebAssembly: the fallback runs, and the hello reply says so.
    assert run["bench"]["impl"] == "python" and not run["firmware_native"]
    assert set(run["bench"]["per_frame_ms"]) == {"read", "crc", "copy", "strip_write", "frame"}


OLD_MAIN = """\
import sys

import board
import ledctl
import machine
import micropython
import neopixel


def main():
    strip = neopixel.NeoPixel(machine.Pin(board.DATA_PIN), board.WIDTH * board.HEIGHT)
    strip.write()
    micropython.kbd_intr(-1)
    controller = ledctl.Controller(sys.stdout.buffer.write, strip, board.WIDTH, board.HEIGHT,
                                   board.DATA_PIN)
    controller.serve(sys.stdin.buffer.readinto)


main()
"""
"""main.py as it was until Ctrl-C went first: kbd_intr(-1) after the imports and the first strip write."""


def test_a_hello_waiting_at_start_with_0x03_in_it_is_answered_not_taken_for_ctrl_c(run) -> None:
    assert run["hello_bytes_0x03_at"] == [1, 6]  # 16x16: the block's length is 0x030a; protocol 3
    assert run["early_hello_answered"] and run["early_hello_size"] == "16x16"
    assert not run["early_hello_interrupted"] and run["early_hello_exit"] == 0


def test_the_bench_drops_a_firmware_that_disables_ctrl_c_late_to_the_repl(run, tmp_path: Path) -> None:
    # The check above can fail: the firmware as it was, on the same bench, is interrupted.
    for f in firmware.FIRMWARE.glob("*.py"):
        (tmp_path / f.name).write_text(f.read_text())
    (tmp_path / "main.py").write_text(OLD_MAIN)
    old = firmware.early_hello(firmware.node_modules(ROOT / ".cache"), tmp_path)
    assert old["early_hello_interrupted"] and old["early_hello_exit"] == 1
    assert not old["early_hello_answered"]


def test_main_py_disables_ctrl_c_before_anything_else() -> None:
    tree = ast.parse((ROOT / "hardware" / "led_controller" / "main.py").read_text())
    first, second = tree.body[:2]
    assert isinstance(first, ast.Import) and [a.name for a in first.names] == ["micropython"]
    assert ast.unparse(second) == "micropython.kbd_intr(-1)"


# ---------------------------------------------------------------- tablectl firmware flash


def older_board(modules: Path, tmp_path: Path, version: str = "0.0.9+deadbeef") -> firmware.Board:
    """A board whose flash holds this firmware with an older version written beside it, as a
    board flashed by an earlier table-host would."""
    flash = tmp_path / "flash"
    flash.mkdir()
    for name, data in fw.files().items():
        (flash / name).write_bytes(data)
    (flash / fw.VERSION_FILE).write_bytes(fw.version_module(version))
    return firmware.Board(modules, flash=flash)


def hello_name(board: firmware.Board) -> str:
    from firmware_host.devices.displays import ledproto

    board.send(ledproto.encode(1, ledproto.HELLO, bytes((ledproto.VERSION, 32, 16))))
    reply = board.replies(ledproto.Decoder(), 1, 10.0)
    return bytes(reply[0][2][5:]).decode() if reply else ""


def test_tablectl_firmware_flash_puts_this_firmware_on_the_board_and_hears_it(run, tmp_path: Path) -> None:
    """The real command, the real mpremote from this environment, the real MicroPython (its
    WebAssembly port) on a pseudo-terminal, no daemon running: the board said 0.0.9+deadbeef,
    takes STOP, goes to its REPL, gets the files, is reset, and says this table-host's version."""
    board = older_board(firmware.node_modules(ROOT / ".cache"), tmp_path)
    try:
        assert hello_name(board) == "table-led 0.0.9+deadbeef"
        env = {**os.environ, "TABLE_HOST_SOCKET": str(tmp_path / "no-daemon.sock")}
        ctl = [sys.executable, "-m", "firmware_host.cli.ctl", "--json", "firmware"]
        status = subprocess.run([*ctl, "--port", board.path], cwd=ROOT, env=env, capture_output=True,
                                text=True, timeout=60)
        assert status.returncode == 1, status.stderr  # not the firmware this table-host carries
        assert json.loads(status.stdout) | {"port": ""} == {
            "ok": True, "controller": "0.0.9+deadbeef", "expected": fw.expected(), "current": False,
            "port": "", "online": True}
        done = subprocess.run([*ctl, "flash", "--port", board.path], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert (answer["before"], answer["after"]) == ("0.0.9+deadbeef", fw.expected()) and answer["current"]
        assert board.boots == 2  # the reset started it again, from its flash
        assert (tmp_path / "flash" / fw.VERSION_FILE).read_bytes() == fw.version_module(fw.expected())
        assert "copied main.py, board.py, ws2812.py, ledproto.py, ledctl.py, ledviper.py, ledversion.py " \
               "with mpremote and reset the board" in done.stderr  # the steps, as they came
    finally:
        board.close()


def test_a_running_daemons_link_lets_go_for_the_flash_and_hears_the_new_version(run, tmp_path: Path) -> None:
    from firmware_host.devices.displays.ledlink import LedLink

    board = older_board(firmware.node_modules(ROOT / ".cache"), tmp_path)
    link = LedLink(board.path, 32, 16)
    try:
        deadline = time.monotonic() + 20
        while not link.stats.online and time.monotonic() < deadline:
            time.sleep(0.05)
        assert link.stats.firmware == "0.0.9+deadbeef" and not link.stats.firmware_current
        done = fw.flash(board.path, (32, 16), pause=lambda: link.pause(300) and None, resume=link.resume,
                        reported=lambda: link.stats.firmware if link.stats.online else None)
        assert done.ok and done.before == "0.0.9+deadbeef" and done.after == fw.expected()
        assert done.steps[0] == "the daemon's LED link let go of the port and waits"
        assert link.stats.firmware_current and not link.stats.paused
    finally:
        link.close()
        board.close()
