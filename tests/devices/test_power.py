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
    assert budget.panels == 2 and budget.panel_a == pytest.approx(256 * (0.060 * 0.35 + 0.001))  # 5.63 A
    # 3 A is 75 % of 4 A; a panel's 5.63 A is over 75 % of 6.3 A (4.73 A); 0.09 A takes the smallest
    assert (budget.pi_fuse_a, budget.panel_fuse_a, budget.others_fuse_a) == (4.0, 8.0, 2.0)


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
    assert budget.panel_a == pytest.approx(256 * 0.061)
    assert budget.panel_fuse_a == 25.0  # 15.6 A is 78 % of 20 A, 62 % of 25 A


def test_the_power_command_prints_the_figures_with_their_units(tmp_path) -> None:
    out = subprocess.run([sys.executable, "-m", "firmware_host", "power", "--json"], capture_output=True,
                         text=True, check=True)
    figures = json.loads(out.stdout)
    assert figures["supply_a"] == 20 and figures["total_a"] == pytest.approx(14.354)
    assert figures["panels"] == 2 and figures["panel_fuse_a"] == 8.0
    pi5 = json.loads(subprocess.run([sys.executable, "-m", "firmware_host", "power", "--json", "--pi", "pi5"],
                                    capture_output=True, text=True, check=True).stdout)
    assert pi5["supply_a"] == 30 and pi5["total_a"] == pytest.approx(16.354)  # the bill's supply: 30 A
    bad = tmp_path / "table.toml"
    bad.write_text("[inputs]\nseats = []\n")
    failed = subprocess.run([sys.executable, "-m", "firmware_host", "power", "--config", str(bad)],
                            capture_output=True, text=True)
    assert failed.returncode != 0 and "table.toml:2: inputs.seats" in failed.stderr


def test_hardware_readme_shows_the_pi_5_budget_the_drawings_are_checked_at() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "hardware" / "README.md").read_text()
    budget = power_budget(default_config(4), "pi5")
    assert "\n".join("    " + line for line in budget.text().splitlines()) in readme
    text = " ".join(readme.split())
    pi4 = power_budget(default_config(4), "pi4")
    share = pi4.total_a / 20 * 100
    assert f"A Pi 4 (`--pi pi4`, 3 A) makes it {pi4.total_a:.2f} A, {share:.0f} % of 20 A" in text
    assert f"{budget.total_a:.2f} A would be {budget.total_a / 20 * 100:.0f} % of a 20 A supply" in text
