"""The LED firmware's PIO program (hardware/led_controller/ws2812.py) through the virtual Pi's rp2
stand-in, under CPython: its encoding as the RP2040 datasheet gives the instructions, its waveform
against the WS2812B datasheet, and a clock that would break the timing caught."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
STANDINS = ROOT / "tests" / "hil" / "micropython" / "standins"
FIRMWARE = ROOT / "hardware" / "led_controller"


@pytest.fixture
def pio() -> Iterator[tuple[Any, Any, Any]]:
    """(rp2 stand-in, machine stand-in, the firmware's ws2812 module), imported fresh."""
    saved = list(sys.path)
    sys.path[:0] = [str(STANDINS), str(FIRMWARE)]
    for name in ("rp2", "machine", "ws2812"):
        sys.modules.pop(name, None)
    try:
        yield tuple(importlib.import_module(name) for name in ("rp2", "machine", "ws2812"))
    finally:
        sys.path[:] = saved
        for name in ("rp2", "machine", "ws2812"):
            sys.modules.pop(name, None)


def test_the_program_is_encoded_as_the_datasheet_gives_its_instructions(pio) -> None:
    """RP2040 datasheet 3.4: OUT 011 / JMP 000 / MOV 101; one side-set bit (every instruction
    has one, so no enable bit) at bit 12, the delay below it."""
    _, _, ws2812 = pio
    prog = ws2812.ws2812
    assert prog.words == [0x6321,  # out x, 1       side 0 [3]
                          0x1223,  # jmp !x, 3      side 1 [2]
                          0x1200,  # jmp 0          side 1 [2]
                          0xA242]  # nop (mov y, y) side 0 [2]
    assert (prog.wrap_target_at, prog.wrap_at, prog.pull_thresh, prog.autopull) == (0, 3, 8, True)


def state_machine(pio, freq: int) -> Any:
    rp2, machine, ws2812 = pio
    sm = rp2.StateMachine(0, ws2812.ws2812, freq=freq, sideset_base=machine.Pin(2))
    sm.active(1)
    return sm


def test_at_8_mhz_each_bit_is_in_the_ws2812b_windows_and_comes_out_as_pushed(pio) -> None:
    rp2 = pio[0]
    sm = state_machine(pio, 8_000_000)
    sm.put(bytes((0xA5, 0x00, 0xFF, 0x3C)), 24)  # as the firmware feeds it: a byte to the top of a word
    (timing,) = rp2.reports
    assert timing == {"freq": 8_000_000, "bits": 32, "t0h_ns": [375, 375], "t0l_ns": [875, 875],
                      "t1h_ns": [750, 750], "t1l_ns": [500, 500], "bit_ns": [1250, 1250], "in_spec": True,
                      "bits_ok": True}
    assert rp2.last_pin == 2


def test_a_clock_too_slow_for_the_chain_is_caught(pio) -> None:
    rp2 = pio[0]
    sm = state_machine(pio, 4_000_000)  # every time doubled: 2.5 us a bit
    sm.put(bytes((0xA5,)), 24)
    (timing,) = rp2.reports
    assert not timing["in_spec"] and not timing["bits_ok"]  # highs of 750/1500 ns: no bit the chain reads
    assert timing["bit_ns"] == [2500, 2500]
