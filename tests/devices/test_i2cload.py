"""The seat buses' rise time against UM10204 rev 7, with every figure worked out here by hand
from the datasheets: t_r = 0.8473 Rp Cb (§7.1), t_r at most 300 ns at 400 kHz and 1000 ns at
100 kHz, Cb at most 400 pF, Rp(min) = (3.3 V - 0.4 V) / 3 mA (Table 10); TCA9548A Cio(off) 28 pF
upstream and 7.5 pF a channel (SCPS207H §5.5); 10 pF for any other pin (Table 10, Ci); ribbon
23 pF/ft; the Pi's 1.8 kOhm pull-ups and the seats' 4.7 kOhm."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from firmware_host.config import default_config, parse_config
from firmware_host.devices.i2cload import i2c_load

ROOT = Path(__file__).resolve().parents[2]
RIBBON = 23 / 0.3048  # pF/m
MAIN_4 = 10 + 0.3 * RIBBON + 2 * 10 + 28  # Pi, 30 cm of wiring, 2 MCP23017, 1 TCA9548A
MAIN_12 = 10 + 0.3 * RIBBON + 6 * 10 + 2 * 28


def seat(cable_m: float) -> float:
    return 7.5 + cable_m * RIBBON + 10  # the channel's pins, the ribbon, the OLED


def test_the_4_seat_build_rises_in_233_ns_at_400_khz_with_its_1_5_m_cables() -> None:
    load = i2c_load(default_config(4))
    cb = MAIN_4 + seat(1.5)  # 211.3 pF: one multiplexer, one channel on
    rp = 1 / (1 / 1800 + 1 / 4700)  # 1301.5 ohm
    assert load.speed_hz == 400_000 and load.cable_m == 1.5 and load.segments_attached == 1
    assert load.bus_pf == pytest.approx(cb) == pytest.approx(211.33, abs=0.01)
    assert load.pullup_ohm == pytest.approx(rp)
    assert load.rise_time_ns == pytest.approx(0.8473 * rp * cb * 1e-3, rel=1e-4)
    assert load.rise_time_ns == pytest.approx(233.0, abs=0.1)
    assert load.pullup_min_ohm == pytest.approx(2.9 / 0.003)  # 966.7 ohm
    assert load.pullup_max_ohm == pytest.approx(300e-9 / (0.8473 * cb * 1e-12), rel=1e-4)  # 1675 ohm
    # The longest cable: the rise time decides (Cb at most 300 ns / (0.8473 * 1301.5 ohm) = 272 pF).
    assert load.longest_cable_m == pytest.approx((300e3 / (0.8473 * rp) - MAIN_4 - 17.5) / RIBBON, rel=1e-3)
    assert load.longest_cable_m == pytest.approx(2.30, abs=0.01)
    assert load.ok


def test_the_12_seat_build_with_1_5_m_cables_is_over_the_limits_and_1_m_is_within() -> None:
    # Two multiplexers, each with its last channel left on: two seat segments on the bus at once.
    over = i2c_load(default_config(12), cable_m=1.5)
    cb = MAIN_12 + 2 * seat(1.5)  # 410.0 pF
    rp = 1 / (1 / 1800 + 2 / 4700)  # 1019.3 ohm
    assert over.segments_attached == 2
    assert over.bus_pf == pytest.approx(cb) == pytest.approx(410.0, abs=0.1)
    assert over.rise_time_ns == pytest.approx(0.8473 * rp * cb * 1e-3, rel=1e-4)
    assert over.rise_time_ns == pytest.approx(354.1, abs=0.1)
    assert over.problems == ["bus load 410.0 pF is over 400 pF", "rise time 354 ns is over 300 ns"]
    assert over.longest_cable_m == pytest.approx(((300e3 / (0.8473 * rp) - MAIN_12) / 2 - 17.5) / RIBBON,
                                                 rel=1e-3) == pytest.approx(1.08, abs=0.01)
    # The seat pull-ups cannot fix it: to rise in time they would have to be at most 3320 ohm,
    # but with the Pi's 1.8 kOhm they may not go below 4176 ohm (3 mA at 0.4 V).
    assert over.seat_pullup_max_ohm == pytest.approx(2 / (0.8473 * cb * 1e-12 / 300e-9 - 1 / 1800), rel=1e-4)
    assert over.seat_pullup_min_ohm == pytest.approx(2 / (0.003 / 2.9 - 1 / 1800), rel=1e-4)
    assert over.seat_pullup_max_ohm < over.seat_pullup_min_ohm
    built = i2c_load(default_config(12))  # the bill of materials' 1.0 m cables
    assert built.cable_m == 1.0 and built.ok
    assert built.rise_time_ns == pytest.approx(0.8473 * rp * (MAIN_12 + 2 * seat(1.0)) * 1e-3, rel=1e-4)
    assert built.rise_time_ns == pytest.approx(289.0, abs=0.5)


def test_at_100_khz_the_12_seat_build_is_held_by_the_400_pf_load_not_the_rise_time() -> None:
    load = i2c_load(default_config(12), cable_m=1.5, speed_hz=100_000)
    assert load.problems == ["bus load 410.0 pF is over 400 pF"]
    assert load.longest_cable_m == pytest.approx(((400 - MAIN_12) / 2 - 17.5) / RIBBON, rel=1e-4)  # 1.43 m


def test_the_speed_is_the_one_boot_config_writes() -> None:
    from firmware_host.config import boot_config

    config = default_config(4)
    assert "dtparam=i2c_arm_baudrate=400000" in boot_config(config)
    assert i2c_load(config).speed_hz == 400_000
    no_i2c = parse_config({**config.model_dump(), "screens": [], "i2c_muxes": [],
                           "inputs": {**config.inputs.model_dump(), "expanders": [],
                                      "seats": [{"slap": s.slap} for s in config.inputs.seats]}})
    assert i2c_load(no_i2c).segments_attached == 0


def test_the_command_prints_human_and_json_and_fails_outside_the_specification() -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "firmware_host", *args], capture_output=True,
                              text=True, cwd=ROOT)

    ok = run("--json", "i2c", "--seats", "12")
    data = json.loads(ok.stdout)
    assert ok.returncode == 0 and data["ok"] and data["cable_m"] == 1.0
    assert {"rise_time_ns", "rise_time_max_ns", "bus_pf", "pullup_ohm", "longest_cable_m",
            "seat_pullup_min_ohm", "speed_hz"} <= set(data)
    over = run("i2c", "--seats", "12", "--cable-m", "1.5")
    assert over.returncode == 1 and "NOT WITHIN UM10204: bus load 410.0 pF is over 400 pF" in over.stdout
    bad = run("i2c", "--cable-m", "-2")
    assert bad.returncode == 2
    assert bad.stderr == "table-host: error: a seat cable of -2.0 m: give 0 to 100 m\n"


def test_hardware_readme_shows_what_the_command_prints_and_buys_those_cables() -> None:
    readme = (ROOT / "hardware" / "README.md").read_text()
    for seats in (4, 12):
        shown = "\n".join("    " + line for line in i2c_load(default_config(seats)).text().splitlines())
        assert shown in readme, f"hardware/README.md: the {seats}-seat output of table-host i2c"
    row = next(line for line in readme.splitlines() if line.startswith("| 12-way ribbon seat cable"))
    assert re.search(r"1\.5 m \(4 seats\), 1\.0 m \(12 seats\)", row)
