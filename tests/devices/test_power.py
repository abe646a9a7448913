"""The power budget: the LED matrix at its brightness cap decides the supply."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from firmware_host.config import default_config
from firmware_host.devices.power import power_budget


def test_the_4_seat_build_at_its_cap_calls_for_a_20_a_supply() -> None:
    budget = power_budget(default_config(4))
    assert budget.leds == 512 and budget.leds_a == pytest.approx(512 * (0.060 * 0.35 + 0.001))
    assert budget.total_a == pytest.approx(11.264 + 3.0 + 0.05 + 0.04)
    assert (budget.supply_a, budget.supply_w) == (20, 100)  # 14.3 A is 72 % of 20 A
    assert budget.logic_3v3_a == pytest.approx(4 * 0.020 + 2 * 0.001 + 0.001)
    assert (budget.pi_fuse_a, budget.led_fuse_a) == (4.0, 20.0)  # 3 A is 75 % of 4 A; 11.26 A > 75 % of 15 A


def test_a_pi_5s_fuse_keeps_a_margin_over_its_5_a_budget() -> None:
    budget = power_budget(default_config(4), "pi5")
    assert budget.pi_a == 5.0 and budget.pi_fuse_a == 8.0  # a 5 A or 6.3 A fuse would run at 100 / 79 %
    assert budget.pi_a <= budget.pi_fuse_a * 0.75 and "8 A for the Pi" in budget.text()


def test_full_brightness_or_a_pi_5_needs_a_bigger_supply() -> None:
    data = default_config(12).model_dump()
    data["centre"]["brightness"] = 1.0
    from firmware_host.config import parse_config

    budget = power_budget(parse_config(data), "pi5")
    assert budget.leds_a == pytest.approx(512 * 0.061)
    assert budget.total_a == pytest.approx(31.232 + 5.0 + 0.09)
    assert budget.supply_a == 60  # 36.3 A would load a 40 A supply to 91 %
    assert budget.led_fuse_a == 50.0  # 31.2 A is 78 % of 40 A


def test_the_power_command_prints_the_figures_with_their_units(tmp_path) -> None:
    out = subprocess.run([sys.executable, "-m", "firmware_host", "power", "--json"], capture_output=True,
                         text=True, check=True)
    figures = json.loads(out.stdout)
    assert figures["supply_a"] == 20 and figures["total_a"] == pytest.approx(14.354)
    bad = tmp_path / "table.toml"
    bad.write_text("[inputs]\nseats = []\n")
    failed = subprocess.run([sys.executable, "-m", "firmware_host", "power", "--config", str(bad)],
                            capture_output=True, text=True)
    assert failed.returncode != 0 and "table.toml:2: inputs.seats" in failed.stderr
