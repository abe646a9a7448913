"""One source of truth: the schematic connects exactly the pin map the daemon uses by default."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from firmware_host.config import default_config, load_config

ROOT = Path(__file__).resolve().parents[2]
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
    data["inputs"]["seats"][0]["left"] = {"expander": "nav1", "pin": "A6", "gpio": None}
    data["screens"][9]["channel"] = 5
    data["inputs"]["expanders"][5]["interrupt_gpio"] = 11
    data["buzzer"]["gpio"] = 8
    from firmware_host.config import parse_config

    problems = table.mismatches(nets, parse_config(data))
    joined = "\n".join(problems)
    assert "seat 4 slap: schematic GPIO[19], pin map GPIO7" in joined
    assert "seat 1 left: " in joined and "nav1:A6" in joined
    assert "seat 10 display SDA: schematic [('U_MUX2', 'SD1')], pin map mux 0x71 channel 5" in joined
    assert "expander nav6 INTA: schematic GPIO[10], pin map GPIO11" in joined
    assert "buzzer: schematic GPIO[18], pin map GPIO8" in joined
    assert "Pi GPIOs wired" in joined


def test_the_buzzers_coil_is_switched_low_side_with_its_flyback_diode(build) -> None:
    """A magnetic transducer is a coil: when the transistor opens, its current must go
    somewhere, through a diode back to +5 V, not through the 2N3904's collector."""
    name = build[0]
    nets = table.nets_of((table.OUT / f"table-{name}.net").read_text())
    numbers = {ref: {pin: num for num, pin in parts.pin_names(part).items()}
               for ref, part in (("D_BZ", parts.Diode), ("BZ1", parts.Buzzer), ("Q_BZ", parts.NPN))}
    net_of = {end: net for net, ends in nets.items() for end in ends}

    def net(ref: str, pin: str) -> str:
        return net_of[(ref, numbers[ref][pin])]

    assert net("D_BZ", "A") == net("BZ1", "-") == net("Q_BZ", "C")
    assert net("D_BZ", "K") == net("BZ1", "+") == "+5V"
    assert net("Q_BZ", "E") == "GND"


def test_the_header_pinout_matches_the_raspberry_pi_documentation() -> None:
    known = {1: "3V3", 2: "5V", 3: "GPIO2", 5: "GPIO3", 6: "GND", 11: "GPIO17", 12: "GPIO18",
             29: "GPIO5", 31: "GPIO6", 33: "GPIO13", 35: "GPIO19", 39: "GND", 40: "GPIO21"}
    assert {pin: parts.PI_HEADER[pin] for pin in known} == known
    gpios = [name for name in parts.PI_HEADER.values() if name.startswith("GPIO")]
    assert sorted(int(g[4:]) for g in gpios) == list(range(28))  # each GPIO once


# ------------------------------------------------------------ buses own their pins


def test_the_12_seat_build_leaves_spi_off_since_its_interrupts_use_gpio_9_and_10() -> None:
    from firmware_host.config import boot_config

    config = default_config(12)
    assert {e.interrupt_gpio for e in config.inputs.expanders} >= {9, 10}
    lines = boot_config(config)
    assert "dtparam=spi=on" not in lines
    assert lines == ["[all]", "dtparam=i2c_arm=on", "dtparam=i2c_arm_baudrate=400000",
                     "dtoverlay=i2c-mux,pca9548,addr=0x70,disconnect_on_idle",
                     "dtoverlay=i2c-mux,pca9548,addr=0x71,disconnect_on_idle"]


def test_two_muxes_disconnect_on_idle_only_when_they_share_a_bus() -> None:
    """Both TCA9548As answer for their last channel until told otherwise, so two on one bus
    put two screens at 0x3C on it at once; one mux, or muxes on different buses, need nothing."""
    from firmware_host.config import boot_config, parse_config

    twelve = default_config(12).model_dump()
    assert [m["bus"] for m in twelve["i2c_muxes"]] == [1, 1]
    shared = [ln for ln in boot_config(parse_config(twelve)) if ln.startswith("dtoverlay=i2c-mux")]
    assert all(ln.endswith(",disconnect_on_idle") for ln in shared) and len(shared) == 2
    twelve["i2c_muxes"][1]["bus"] = 3
    apart = [ln for ln in boot_config(parse_config(twelve)) if ln.startswith("dtoverlay=i2c-mux")]
    assert apart == ["dtoverlay=i2c-mux,pca9548,addr=0x70", "dtoverlay=i2c-mux,pca9548,addr=0x71"]
    four = boot_config(default_config(4))
    assert four[0] == "[all]" and "dtoverlay=i2c-mux,pca9548,addr=0x70" in four


def test_the_modules_loaded_at_boot_are_the_drivers_of_the_devices_the_unit_allows() -> None:
    """DeviceAllow=char-i2c, char-spi and char-ttyACM are resolved at the unit's start from
    /proc/devices: each driver the table uses is loaded before, at boot."""
    from firmware_host.config import boot_modules, parse_config

    assert boot_modules(default_config(4)) == ["i2c-dev", "cdc_acm"]
    spi = default_config(4).model_dump()
    spi["screens"][0] = {"kind": "ssd1306", "interface": "spi", "bus": 0, "spi_device": 0, "dc_gpio": 26}
    assert boot_modules(parse_config(spi)) == ["i2c-dev", "spidev", "cdc_acm"]
    unit = (ROOT / "systemd/table-host.service").read_text()
    allowed = {ln.split("=", 1)[1].split()[0] for ln in unit.splitlines() if ln.startswith("DeviceAllow=")}
    assert allowed == {"char-gpiochip", "char-i2c", "char-spi", "char-ttyACM"}  # gpiolib is built in


def test_an_spi_display_turns_spi_on_and_its_pins_are_refused_to_anything_else() -> None:
    import pytest

    from firmware_host.config import ConfigError, boot_config, parse_config

    data = default_config(12).model_dump()
    data["screens"][0] = {"kind": "ssd1306", "interface": "spi", "bus": 0, "spi_device": 0, "dc_gpio": 14}
    with pytest.raises(ConfigError) as caught:
        parse_config(data)
    problems = "\n".join(caught.value.problems)
    assert "GPIO9 is already used by SPI0 MISO" in problems  # an expander's interrupt line
    assert "GPIO10 is already used by SPI0 MOSI" in problems
    for e in data["inputs"]["expanders"]:
        e["interrupt_gpio"] = {9: 14, 10: 15}.get(e["interrupt_gpio"], e["interrupt_gpio"])
    with pytest.raises(ConfigError, match=r"interrupt_gpio GPIO14 is already used by screens\[1\]\.dc_gpio"):
        parse_config(data)
    data["screens"][0]["dc_gpio"] = 7  # SPI0 CE1: claimed even though this display uses CE0
    with pytest.raises(ConfigError, match="GPIO7 is already used by SPI0 CE1"):
        parse_config(data)
    small = default_config(4).model_dump()
    small["screens"][0] = data["screens"][0] | {"dc_gpio": 26}
    assert "dtparam=spi=on" in boot_config(parse_config(small))


# ------------------------------------------------------------ the seat cable and the LED controller


def _wire_roles(nets: dict[str, set[tuple[str, str]]], plug: str) -> list[str]:
    """What each conductor of a seat ribbon carries, in cable order, traced from the netlist:
    an I2C line by the multiplexer pin it reaches, power by the rail, else a button line."""
    by_pin = {pin: nodes for nodes in nets.values() for ref, pin in nodes if ref == plug}
    roles = []
    for number in sorted(by_pin, key=int):
        ends = {parts.pin_name(ref, pin) for ref, pin in by_pin[number] if ref.startswith("U_MUX")}
        names = {name for name, nodes in nets.items() if nodes is by_pin[number]}
        if any(e.startswith("SD") for e in ends):
            roles.append("SDA")
        elif any(e.startswith("SC") for e in ends):
            roles.append("SCL")
        elif names & {"GND", "+3V3"}:
            roles.append("power")
        else:
            roles.append("button")
    return roles


def test_no_seat_ribbon_lays_sda_or_scl_beside_anything_but_a_supply_wire(build) -> None:
    """UM10204 §7.5: on a flat cable over 10 cm, SDA and SCL are kept apart by VDD/VSS wires."""
    name, config, _, _, text = build
    nets = table.nets_of(text)
    for n in range(1, len(config.screens) + 1):
        roles = _wire_roles(nets, f"J_S{n}")
        assert roles.count("SDA") == roles.count("SCL") == 1, (name, n, roles)
        for i, role in enumerate(roles):
            if role in ("SDA", "SCL"):
                beside = roles[max(i - 1, 0):i] + roles[i + 1:i + 2]
                assert set(beside) == {"power"}, (name, n, roles)


def test_the_pico_takes_5_v_on_vsys_through_a_schottky_diode(build) -> None:
    """Pico datasheet §4.5: VSYS fed from outside while USB VBUS is connected needs the diode."""
    _, _, _, _, text = build
    nets = table.nets_of(text)
    vsys = next(nodes for nodes in nets.values() if ("U_LED", "39") in nodes)
    assert ("U_LED", "39") not in nets["+5V"]
    diode = next(ref for ref, _ in vsys if ref.startswith("D_"))
    assert (diode, "1") in vsys and (diode, "2") in nets["+5V"]  # cathode to VSYS, anode to 5 V
    assert all(("U_LED", "40") not in nodes for name, nodes in nets.items() if name != "NC")
