"""The LED controller's wiring has one source: hardware/led_controller/board.py, which the
firmware reads and which must agree with the schematic's netlist, the builder's guide and
every build's [centre] size. (The firmware once drove GP0 while the board wires GP2.)"""

from __future__ import annotations

import ast
import re
import runpy
import sys
import types
from pathlib import Path

import pytest

from firmware_host.config import load_config

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "hardware" / "led_controller"
sys.path[:0] = [str(ROOT / "schematics")]

import parts  # noqa: E402
import table  # noqa: E402

# Raspberry Pi Pico datasheet, "Pinout" (figure 2): physical pin -> the GPIO it carries.
PICO_PINOUT = {1: "GP0", 2: "GP1", 4: "GP2", 5: "GP3", 6: "GP4", 7: "GP5", 9: "GP6", 10: "GP7"}


def board() -> dict[str, int]:
    tree = ast.parse((FIRMWARE / "board.py").read_text())
    return {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body  # type: ignore[attr-defined]
            if isinstance(node, ast.Assign)}


def wired_data_pin(netlist: str) -> int:
    """The RP2040 GPIO that reaches the first panel's DIN, traced through the netlist:
    DIN <- 330 ohm <- 74AHCT125 1Y, its 1A <- the Pico pin; names from the part templates."""
    nets = table.nets_of(netlist)

    def net_of(ref: str, name: str) -> set[tuple[str, str]]:
        return next(ends for ends in nets.values()
                    if any(r == ref and parts.pin_name(r, p) == name for r, p in ends))

    def other(ends: set[tuple[str, str]], ref: str) -> tuple[str, str]:
        (end,) = [(r, parts.pin_name(r, p)) for r, p in ends if r == ref]
        return end

    feed = other(net_of("P_LED1", "DIN"), "R_LED")
    assert other(net_of("R_LED", "2" if feed[1] == "1" else "1"), "U_LVL") == ("U_LVL", "1Y")
    pico = [(r, p) for r, p in net_of("U_LVL", "1A") if r == "U_LED"]
    assert len(pico) == 1, "the level shifter's 1A must come from exactly one Pico pin"
    name = parts.pin_name(*pico[0])
    assert PICO_PINOUT[int(pico[0][1])] == name, f"Pico pin {pico[0][1]} is not {name}"
    return int(name.removeprefix("GP"))


@pytest.mark.parametrize("build", ["4-seat", "12-seat"])
def test_the_firmware_drives_the_pin_the_schematic_wires_and_the_size_each_build_has(build: str) -> None:
    values = board()
    assert wired_data_pin((table.OUT / f"table-{build}.net").read_text()) == values["DATA_PIN"]
    centre = load_config(table.BUILDS[build]).centre
    assert (centre.width, centre.height) == (values["WIDTH"], values["HEIGHT"])


def test_the_builders_guide_names_the_same_pin() -> None:
    guide = (ROOT / "hardware" / "README.md").read_text()
    assert re.findall(r"\*\*LED data\*\*: Pico GP(\d+)", guide) == [str(board()["DATA_PIN"])]
    assert "board.py" in (FIRMWARE / "README.md").read_text()


def test_the_firmware_main_loop_opens_the_strip_on_board_data_pin() -> None:
    """main.py as the board runs it (stand-ins for machine and rp2, and MicroPython's ticks in
    `time`), until stdin ends."""
    standins = ROOT / "tests" / "hil" / "micropython" / "standins"
    saved_path, saved_modules = list(sys.path), dict(sys.modules)
    saved_io = sys.stdin, sys.stdout
    micropython = types.ModuleType("micropython")
    micropython.kbd_intr = lambda _c: None  # type: ignore[attr-defined]

    class Line:
        def readinto(self, _buf: memoryview) -> int:
            raise EOFError("the test's line is empty")

        def write(self, data: bytes) -> int:
            return len(data)

    import time as real_time

    ticks = types.ModuleType("time")  # MicroPython's time: CPython's, and the ticks functions
    ticks.__getattr__ = lambda name: getattr(real_time, name)  # type: ignore[attr-defined]
    ticks.ticks_us = lambda: real_time.monotonic_ns() // 1000  # type: ignore[attr-defined]
    ticks.ticks_diff = lambda a, b: a - b  # type: ignore[attr-defined]
    ticks.ticks_add = lambda a, b: a + b  # type: ignore[attr-defined]
    ticks.sleep_us = lambda us: real_time.sleep(us / 1e6)  # type: ignore[attr-defined]
    try:
        sys.path[:0] = [str(standins), str(FIRMWARE)]
        sys.modules["micropython"] = micropython
        sys.modules["time"] = ticks
        for name in ("machine", "rp2", "ws2812", "board", "ledctl", "ledproto", "ledviper"):
            sys.modules.pop(name, None)
        sys.stdin = types.SimpleNamespace(buffer=Line())  # type: ignore[assignment]
        sys.stdout = types.SimpleNamespace(buffer=Line())  # type: ignore[assignment]
        with pytest.raises(Exception):  # noqa: B017 - the loop ends only when its line does
            runpy.run_path(str(FIRMWARE / "main.py"), run_name="__main__")
        rp2 = sys.modules["rp2"]  # the PIO program's side-set pin, and what it was fed
        assert rp2.puts >= 1 and rp2.last_pin == board()["DATA_PIN"] == 2  # type: ignore[attr-defined]
    finally:
        sys.modules["time"] = real_time
        sys.stdin, sys.stdout = saved_io
        sys.path[:] = saved_path
        for name in list(sys.modules):
            if name not in saved_modules:
                del sys.modules[name]
        sys.modules.update(saved_modules)
