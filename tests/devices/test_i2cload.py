"""The seat buses' rise time against UM10204 rev 7, with every figure worked out here by hand
from the datasheets: t_r = 0.8473 Rp Cb (§7.1), t_r at most 300 ns at 400 kHz and 1000 ns at
100 kHz, Cb at most 400 pF, Rp(min) = (3.3 V - 0.4 V) / 3 mA (Table 10); TCA9548A Cio(off) 28 pF
upstream and 7.5 pF a channel (SCPS207H §5.5); 10 pF for any other pin (Table 10, Ci); ribbon
23 pF/ft; the Pi's 1.8 kOhm pull-ups, the seats' 4.7 kOhm, and the modules' own: 10 kOhm on each
TCA9548A board's upstream side (Adafruit 2717: R1, R2), 4.7 kOhm on each OLED module."""

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


def par(*ohms: float) -> float:
    return 1 / sum(1 / r for r in ohms)


def test_the_4_seat_build_as_bought_pulls_up_too_hard_until_the_mux_boards_pull_ups_are_cut() -> None:
    load = i2c_load(default_config(4))
    cb = MAIN_4 + seat(1.5)  # 211.3 pF: one multiplexer, its last channel left on
    assert load.speed_hz == 400_000 and load.cable_m == 1.5
    assert load.mux_idle == ["as-is"] and load.segments_attached == 1
    assert load.bus_pf == pytest.approx(cb) == pytest.approx(211.33, abs=0.01)
    bought = par(1800, 10_000, 4700, 4700)  # the Pi, the TCA9548A board, the seat, the OLED module
    assert load.pullup_ohm == pytest.approx(bought) == pytest.approx(925.0, abs=0.1)
    assert load.pullup_min_ohm == pytest.approx(2.9 / 0.003)  # 966.7 ohm
    assert load.problems == ["pull-ups 925 ohm sink more than 3 mA (at least 967 ohm)"]
    assert [(p.what, p.count) for p in load.remove] == [("TCA9548A board", 1)]  # two jumpers: least work
    after = load.after
    assert after is not None and after.ok
    assert after.pullup_ohm == pytest.approx(par(1800, 4700, 4700)) == pytest.approx(1019.3, abs=0.1)
    assert after.rise_time_ns == pytest.approx(0.8473 * par(1800, 4700, 4700) * cb * 1e-3, rel=1e-4)
    assert after.rise_time_ns == pytest.approx(182.5, abs=0.1)
    assert after.pullup_max_ohm == pytest.approx(300e-9 / (0.8473 * cb * 1e-12), rel=1e-4)  # 1675 ohm
    # The longest cable: the rise time decides (Cb at most 300 ns / (0.8473 * 1019 ohm) = 347 pF).
    longest = (300e3 / (0.8473 * 1019.3) - MAIN_4 - 17.5) / RIBBON
    assert after.longest_cable_m == pytest.approx(longest, rel=1e-3)
    text = load.text()
    assert ("remove: 1 x TCA9548A board 10000 ohm (its upstream SDA and SCL pull-ups: on Adafruit's "
            "board cut the SDAPU and SCLPU jumpers") in text
    assert text.endswith("NOT WITHIN UM10204: pull-ups 925 ohm sink more than 3 mA (at least 967 ohm); "
                         "within once the pull-ups named above are removed")


def test_the_12_seat_build_carries_one_segment_at_a_time_since_both_muxes_disconnect_on_idle() -> None:
    load = i2c_load(default_config(12))  # the bill of materials' 1.0 m cables
    cb = MAIN_12 + seat(1.0)  # 241.6 pF: only the channel in use is on
    assert load.mux_idle == ["disconnect", "disconnect"] and load.segments_attached == 1
    assert load.bus_pf == pytest.approx(cb) == pytest.approx(241.6, abs=0.1)
    bought = par(1800, 10_000 / 2, 4700, 4700)
    assert load.pullup_ohm == pytest.approx(bought) == pytest.approx(846.6, abs=0.1)
    assert [(p.what, p.count) for p in load.remove] == [("TCA9548A board", 2)]
    assert load.after is not None and load.after.ok
    assert load.after.rise_time_ns == pytest.approx(0.8473 * par(1800, 4700, 4700) * cb * 1e-3, rel=1e-4)
    assert load.after.rise_time_ns == pytest.approx(208.7, abs=0.1)
    why = "(the one in use: each multiplexer disconnects after a transfer, disconnect_on_idle)"
    assert why in load.text()


@pytest.mark.parametrize("seats", [4, 12])
@pytest.mark.parametrize("oled_ohm", [0, 4700, 10_000])
def test_with_the_mux_boards_pull_ups_cut_the_bills_cables_work_whatever_the_oled_carries(
        seats: int, oled_ohm: float) -> None:
    """The OLED modules sold carry 4.7 kOhm, 10 kOhm or nothing: the build must not depend on which."""
    load = i2c_load(default_config(seats), mux_pullup_ohm=0, oled_pullup_ohm=oled_ohm)
    assert load.ok and not load.remove, load.problems
    cb = (MAIN_4 + seat(1.5)) if seats == 4 else (MAIN_12 + seat(1.0))
    rp = par(1800, 4700, *([oled_ohm] if oled_ohm else []))
    assert load.rise_time_ns == pytest.approx(0.8473 * rp * cb * 1e-3, rel=1e-4)
    assert load.rise_time_ns <= 300 and rp >= 2.9 / 0.003


def test_an_os_without_disconnect_on_idle_puts_two_segments_on_the_12_seat_bus() -> None:
    """idle_state -1 (as is): each multiplexer keeps its last channel on, the issue's 711 ohm."""
    load = i2c_load(default_config(12), idle="as-is", mux_pullup_ohm=0)
    cb = MAIN_12 + 2 * seat(1.0)  # 334.6 pF
    assert load.segments_attached == 2 and load.bus_pf == pytest.approx(cb)
    assert load.pullup_ohm == pytest.approx(par(1800, 4700 / 2, 4700 / 2)) == pytest.approx(710.9, abs=0.1)
    # Only taking the OLED modules' pull-ups off (24 resistors on 12 modules) brings it back.
    assert [(p.what, p.count) for p in load.remove] == [("OLED module", 2)]
    assert "12 modules" in load.remove[0].removable
    assert load.after is not None and load.after.ok
    assert load.after.rise_time_ns == pytest.approx(0.8473 * par(1800, 4700 / 2) * cb * 1e-3, rel=1e-4)
    assert load.after.rise_time_ns == pytest.approx(289.0, abs=0.5)
    # Stronger seat pull-ups could not help: at most 5137 ohm to rise in time, at least 4176 (3 mA).
    highest = 2 / (0.8473 * cb * 1e-12 / 300e-9 - 1 / 1800)
    assert load.after.seat_pullup_max_ohm == pytest.approx(highest, rel=1e-4)
    assert load.after.seat_pullup_min_ohm == pytest.approx(2 / (0.003 / 2.9 - 1 / 1800), rel=1e-4)


def test_with_both_segments_on_1_5_m_cables_are_over_400_pf_at_any_speed() -> None:
    over = i2c_load(default_config(12), cable_m=1.5, speed_hz=100_000, idle="as-is", mux_pullup_ohm=0,
                    oled_pullup_ohm=0)
    assert over.bus_pf == pytest.approx(MAIN_12 + 2 * seat(1.5)) == pytest.approx(410.0, abs=0.1)
    assert over.problems == ["bus load 410.0 pF is over 400 pF"]
    assert over.longest_cable_m == pytest.approx(((400 - MAIN_12) / 2 - 17.5) / RIBBON, rel=1e-4)  # 1.43 m
    one = i2c_load(default_config(12), cable_m=1.5, mux_pullup_ohm=0)  # disconnect_on_idle: one segment
    assert one.ok and one.bus_pf == pytest.approx(MAIN_12 + seat(1.5))


def test_a_pull_up_too_weak_is_not_fixed_by_removing_anything() -> None:
    load = i2c_load(default_config(12), cable_m=2.0, seat_pullup_ohm=0, oled_pullup_ohm=0, mux_pullup_ohm=0)
    rise = 0.8473 * 1800 * (MAIN_12 + seat(2.0)) * 1e-3  # the Pi's pull-ups alone
    assert load.problems == [f"rise time {rise:.0f} ns is over 300 ns"]
    assert load.remove == [] and load.after is None


def test_the_speed_and_the_idle_states_are_the_ones_boot_config_writes() -> None:
    from firmware_host.config import boot_config

    config = default_config(4)
    assert "dtparam=i2c_arm_baudrate=400000" in boot_config(config)
    assert i2c_load(config).speed_hz == 400_000
    no_i2c = parse_config({**config.model_dump(), "screens": [], "i2c_muxes": [],
                           "inputs": {**config.inputs.model_dump(), "expanders": [],
                                      "seats": [{"slap": s.slap} for s in config.inputs.seats]}})
    assert i2c_load(no_i2c).segments_attached == 0
    apart = default_config(12).model_dump()
    apart["i2c_muxes"][1]["bus"] = 3  # the second multiplexer on another bus: not bus 1's load
    assert i2c_load(parse_config(apart)).mux_idle == ["as-is"]
    with pytest.raises(ValueError, match="idle state 'sometimes': give as-is or disconnect"):
        i2c_load(config, idle="sometimes")
    with pytest.raises(ValueError, match="the OLED module pull-up of 5 ohm: give 100 to 1000000 ohm, or 0 "):
        i2c_load(config, oled_pullup_ohm=5)


def test_the_command_prints_human_and_json_and_fails_outside_the_specification() -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "firmware_host", *args], capture_output=True,
                              text=True, cwd=ROOT)

    bought = run("--json", "i2c", "--seats", "12")
    data = json.loads(bought.stdout)
    assert bought.returncode == 1 and not data["ok"] and not data["within_spec"] and data["cable_m"] == 1.0
    assert [r["what"] for r in data["remove"]] == ["TCA9548A board"] and data["after_removal"]["within_spec"]
    assert data["mux_idle"] == ["disconnect", "disconnect"] and data["segments_attached"] == 1
    cut = run("--json", "i2c", "--seats", "12", "--mux-pullup-ohm", "0")
    data = json.loads(cut.stdout)
    assert cut.returncode == 0 and data["ok"] and data["within_spec"]
    assert data["remove"] == [] and data["after_removal"] is None
    assert {"rise_time_ns", "rise_time_max_ns", "bus_pf", "pullup_ohm", "longest_cable_m",
            "seat_pullup_min_ohm", "speed_hz", "pullups"} <= set(data)
    old = run("i2c", "--seats", "12", "--cable-m", "1.5", "--mux-idle", "as-is")
    assert old.returncode == 1 and "NOT WITHIN UM10204: bus load 410.0 pF is over 400 pF" in old.stdout
    bad = run("i2c", "--cable-m", "-2")
    assert bad.returncode == 2
    assert bad.stderr == "table-host: error: a seat cable of -2.0 m: give 0 to 100 m\n"
    weak = run("i2c", "--oled-pullup-ohm", "50")
    assert weak.returncode == 2
    assert weak.stderr == ("table-host: error: the OLED module pull-up of 50 ohm: give 100 to 1000000 ohm, "
                           "or 0 for none\n")


def test_hardware_readme_shows_what_the_command_prints_and_buys_those_cables() -> None:
    readme = (ROOT / "hardware" / "README.md").read_text()
    for seats in (4, 12):  # as bought: what to remove, and the bus once it is
        shown = "\n".join("    " + line for line in i2c_load(default_config(seats)).text().splitlines())
        assert shown in readme, f"hardware/README.md: the {seats}-seat output of table-host i2c"
    text = " ".join(readme.split())
    after = [i2c_load(default_config(n), mux_pullup_ohm=0) for n in (4, 12)]
    alone = [i2c_load(default_config(n), mux_pullup_ohm=0, oled_pullup_ohm=0) for n in (4, 12)]
    assert f"are {after[0].pullup_ohm:.0f} Ω, within" in text and after[0].pullup_ohm == after[1].pullup_ohm
    assert (f"{alone[0].pullup_ohm:.0f} Ω, {alone[0].rise_time_ns:.0f} ns in the 4-seat build, "
            f"{alone[1].rise_time_ns:.0f} ns in the 12-seat build") in text
    old = i2c_load(default_config(12), idle="as-is", mux_pullup_ohm=0)
    assert f"two segments on the bus, {old.pullup_ohm:.0f} Ω of pull-ups" in text
    longer = i2c_load(default_config(12), cable_m=1.5, idle="as-is")
    assert f"with 1.5 m cables two segments are {longer.bus_pf:.1f} pF" in text
    row = next(line for line in readme.splitlines() if line.startswith("| 12-way ribbon seat cable"))
    assert re.search(r"1\.5 m \(4 seats\), 1\.0 m \(12 seats\)", row)
