"""One source of truth: the schematic connects exactly the pin map the daemon uses by default."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from firmware_host.config import default_config, load_config

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "schematics")]

import parts  # noqa: E402
import table  # noqa: E402

BUILDS = {"4-seat": 4, "12-seat": 12}


@pytest.fixture(scope="module", params=list(BUILDS))
def build(request: pytest.FixtureRequest) -> tuple[str, object, int, int, str]:
    name = request.param
    config = load_config(table.BUILDS[name])
    circuit, errors, warnings = table.build(config)
    return name, config, errors, warnings, table.netlist(circuit)


def test_the_schematic_passes_its_electrical_rules_check(build) -> None:
    name, _, errors, warnings, _ = build
    assert (errors, warnings) == (0, 0), f"{name}: run schematics/table.py to see the ERC report"


def test_the_committed_netlist_is_what_the_schematic_code_makes_now(build) -> None:
    name, _, _, _, fresh = build
    committed = (table.OUT / f"table-{name}.net").read_text()
    assert committed == fresh, f"schematics/out/table-{name}.net is stale: run schematics/table.py"


def test_the_daemons_default_pin_map_is_exactly_what_the_netlist_connects(build) -> None:
    name, config, _, _, _ = build
    nets = table.nets_of((table.OUT / f"table-{name}.net").read_text())
    assert default_config(BUILDS[name]) == config  # what the daemon and emulation load
    assert table.mismatches(nets, default_config(BUILDS[name])) == []
    seat1 = next(ends for ends in nets.values() if ("SW_S1", "2") in ends)
    assert ("J_PI", "29") in seat1  # seat 1's slap: header pin 29 is GPIO5, as the pin map says


def test_any_drift_between_pin_map_and_schematic_is_caught() -> None:
    nets = table.nets_of((table.OUT / "table-12-seat.net").read_text())
    config = default_config(12)
    data = config.model_dump()
    data["inputs"]["seats"][3]["slap"] = 7
    data["inputs"]["seats"][0]["left"] = {"expander": "nav1", "pin": "A7", "gpio": None}
    data["screens"][9]["channel"] = 5
    data["inputs"]["expanders"][5]["interrupt_gpio"] = 11
    data["buzzer"]["gpio"] = 8
    from firmware_host.config import parse_config

    problems = table.mismatches(nets, parse_config(data))
    joined = "\n".join(problems)
    assert "seat 4 slap: schematic GPIO[19], pin map GPIO7" in joined
    assert "seat 1 left: " in joined and "nav1:A7" in joined
    assert "seat 10 display SDA: schematic [('U_MUX2', 'SD1')], pin map mux 0x71 channel 5" in joined
    assert "expander nav6 INTA: schematic GPIO[10], pin map GPIO11" in joined
    assert "buzzer: schematic GPIO[18], pin map GPIO8" in joined
    assert "Pi GPIOs wired" in joined


def test_the_header_pinout_matches_the_raspberry_pi_documentation() -> None:
    known = {1: "3V3", 2: "5V", 3: "GPIO2", 5: "GPIO3", 6: "GND", 11: "GPIO17", 12: "GPIO18",
             29: "GPIO5", 31: "GPIO6", 33: "GPIO13", 35: "GPIO19", 39: "GND", 40: "GPIO21"}
    assert {pin: parts.PI_HEADER[pin] for pin in known} == known
    gpios = [name for name in parts.PI_HEADER.values() if name.startswith("GPIO")]
    assert sorted(int(g[4:]) for g in gpios) == list(range(28))  # each GPIO once
