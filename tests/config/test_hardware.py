"""One source of truth: the schematic connects exactly the pin map the daemon uses by default."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from firmware_host.config import default_config, load_config, parse_config
from firmware_host.devices.power import power_budget

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
    seat1 = next(ends for ends in nets.values() if ("R_S1_SLAP", "2") in ends)  # past the series resistor
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
    assert net("D_BZ", "K") == net("BZ1", "+") == "+5V_LOGIC"  # the controller's fused branch
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
    assert ("U_LED", "39") not in nets["+5V_LOGIC"]
    diode = next(ref for ref, _ in vsys if ref.startswith("D_"))
    assert (diode, "1") in vsys and (diode, "2") in nets["+5V_LOGIC"]  # cathode to VSYS, anode to 5 V
    assert all(("U_LED", "40") not in nodes for name, nodes in nets.items() if name != "NC")


# ------------------------------------------------------------ power: fused branches and ratings


def _net_of(nets: dict[str, set[tuple[str, str]]], ref: str, pin: str) -> str:
    return next((name for name, nodes in nets.items() if (ref, pin) in nodes), "")


def test_each_fused_branch_is_its_own_net_behind_its_fuse_and_the_pi_takes_usb_c(build) -> None:
    name, config, _, _, text = build
    nets = table.nets_of(text)
    budget = power_budget(config, "pi5")
    branches = ["PI", *[f"LED{k}" for k in range(1, budget.panels + 1)], "LOGIC"]
    assert {n for n in nets if n.startswith("+5V")} == {"+5V", *(f"+5V_{b}" for b in branches)}
    for b in branches:  # fuse pin 1 at the star, pin 2 the branch's own net
        assert ("F_" + b, "1") in nets["+5V"] and ("F_" + b, "2") in nets[f"+5V_{b}"], (name, b)
    star = {ref for ref, _ in nets["+5V"]}
    assert star == {"PS1", "W_SUPPLY", "J_PWR", *(f"F_{b}" for b in branches)}  # nothing else unfused
    assert ("J_PI_USB", "1") in nets["+5V_PI"]  # VBUS of the USB-C pigtail
    assert _net_of(nets, "J_PI", "2") == _net_of(nets, "J_PI", "4") == ""  # the header's 5 V pins: unused
    for k in range(1, budget.panels + 1):  # each panel on its own branch, through its lever connectors
        assert {(f"P_LED{k}", "1"), (f"J_LED{k}_PWR", "1")} <= nets[f"+5V_LED{k}"]
    for plug in ["J_LED", *[f"J_LINK{k}" for k in range(1, budget.panels)]]:  # data only
        assert _net_of(nets, plug, "1") == "" and _net_of(nets, plug, "3") == "GND"


def test_the_fuses_drawn_are_the_ones_the_power_budget_sizes(build) -> None:
    """Each build's netlist as the module's fixture made it (a build of the schematic is seconds)."""
    _, config, _, _, netlist = build
    comps = table.components_of(netlist)
    budget = power_budget(config, "pi5")
    assert comps["F_PI"]["value"] == f"{budget.pi_fuse_a:g}A T" == "8A T"
    assert comps["F_LOGIC"]["value"] == f"{budget.others_fuse_a:g}A T" == "2A T"
    for k in range(1, budget.panels + 1):
        assert comps[f"F_LED{k}"]["value"] == f"{budget.panel_fuse_a:g}A T" == "8A T"


def test_every_connector_wire_and_fuse_on_the_5v_path_is_within_its_rating(build) -> None:
    """At `table-host power --pi pi5`'s worst case, every LED white at the cap and the Pi at 5 A."""
    name, config, _, _, text = build
    carried, problems = table.power_check(table.nets_of(text), table.components_of(text),
                                          power_budget(config, "pi5"))
    assert problems == [], name
    amps = {(c.ref, c.what): c.amps for c in carried}
    assert amps["J_PWR", "5V star"] == pytest.approx(16.354) == amps["W_SUPPLY", "supply lead 12AWG"]
    assert amps["F_LED1", "8 A time-lag fuse (75 %)"] == pytest.approx(5.632)  # 256 x (60 mA x 0.35 + 1 mA)
    assert amps["J_PI_USB", "USB-C pigtail 5A"] == 5.0
    assert amps["J_LED", "data in"] == 0.0  # the JST SM carries data only now
    assert {c.ref for c in carried} >= {"PS1", "J_PWR", "W_SUPPLY", "F_PI", "W_PI", "J_PI_USB", "F_LED1",
                                        "W_LED1", "J_LED1_PWR", "J_LED", "J_LINK1", "F_LOGIC", "D_VSYS"}
    # A Pi 4 build takes a 4 A fuse (3 A is 75 % of it): within too.
    pi4 = table.power_check(table.nets_of(text), table.components_of(text), power_budget(config, "pi4"),
                            fuses={"F_PI": 4.0})
    assert pi4[1] == []


def test_the_power_check_fails_when_a_part_carries_more_than_its_rating() -> None:
    config = load_config(table.BUILDS["4-seat"])
    text = (table.OUT / "table-4-seat.net").read_text()
    nets, comps = table.nets_of(text), table.components_of(text)
    # The old drawing: a panel's power through its JST SM data plug (3 A a contact).
    through_jst = {name: set(nodes) for name, nodes in nets.items()}
    through_jst["+5V_LED1"].add(("J_LED", "1"))
    _, problems = table.power_check(through_jst, comps, power_budget(config, "pi5"))
    assert problems == ["J_LED (data in) carries 5.63 A, over the 3 A it may carry"]
    # The brightness cap raised to 1: 15.6 A a panel, 36.3 A in all.
    data = config.model_dump()
    data["centre"]["brightness"] = 1.0
    _, problems = table.power_check(nets, comps, power_budget(parse_config(data), "pi5"))
    assert problems == [
        "F_LED1 (8 A time-lag fuse (75 %)) carries 15.62 A, over the 6 A it may carry",
        "F_LED1 (its holder) carries 15.62 A, over the 10 A it may carry",
        "F_LED2 (8 A time-lag fuse (75 %)) carries 15.62 A, over the 6 A it may carry",
        "F_LED2 (its holder) carries 15.62 A, over the 10 A it may carry",
        "J_PWR (5V star) carries 36.32 A, over the 20 A it may carry",
        "PS1 (5V 40A supply (80 %)) carries 36.32 A, over the 32 A it may carry",
        "W_LED1 (panel 1 lead 18AWG) carries 15.62 A, over the 10 A it may carry",
        "W_LED2 (panel 2 lead 18AWG) carries 15.62 A, over the 10 A it may carry",
        "W_SUPPLY (supply lead 12AWG) carries 36.32 A, over the 25 A it may carry",
    ]
    # A connector on the 5 V path that says no rating is refused too.
    unrated = dict(comps, J_PWR={"value": "5V star", "description": "two lever connectors"})
    _, problems = table.power_check(nets, unrated, power_budget(config, "pi5"))
    assert problems == ["J_PWR (5V star) is on +5V without a rating"]


# ------------------------------------------------------------ the slap inputs' protection


def test_every_slap_line_has_its_pull_up_tvs_series_resistor_and_filter(build) -> None:
    """1 m of cable or more: 4.7 kohm to 3.3 V and a TVS where the cable ends, then 1 kohm and
    10 nF before the GPIO (tau 10 us, the same on every seat)."""
    name, config, _, _, text = build
    nets, comps = table.nets_of(text), table.components_of(text)
    for n in range(1, len(config.inputs.seats) + 1):
        line = _net_of(nets, f"SW_S{n}", "2")
        gpio = _net_of(nets, f"R_S{n}_SLAP", "2")
        assert {(f"J_S{n}", "6"), (f"R_S{n}_SLAP_PU", "1"), (f"R_S{n}_SLAP", "1"), (f"D_S{n}_SLAP", "1")} \
            <= nets[line], (name, n)
        assert _net_of(nets, f"R_S{n}_SLAP_PU", "2") == "+3V3" and _net_of(nets, f"D_S{n}_SLAP", "2") == "GND"
        assert (f"C_S{n}_SLAP", "1") in nets[gpio] and _net_of(nets, f"C_S{n}_SLAP", "2") == "GND"
        assert not any(ref == "J_PI" for ref, _ in nets[line])  # the GPIO only behind the resistor
        refs = (f"R_S{n}_SLAP_PU", f"R_S{n}_SLAP", f"C_S{n}_SLAP", f"D_S{n}_SLAP")
        assert [comps[ref]["value"] for ref in refs] == ["4k7", "1k", "10nF C0G", "SD03 3.3V"]


def test_the_buzzer_footprint_is_the_cd_1206s_surface_mount_land() -> None:
    """CUI's CD-1206 datasheet: "Terminal: SMD type"; the 12 mm pin-type footprint did not fit it."""
    comps = table.components_of((table.OUT / "table-4-seat.net").read_text())
    text = (table.OUT / "table-4-seat.net").read_text()
    assert "CD-1206: surface-mount" in comps["BZ1"]["description"]
    assert '(footprint "table:Buzzer_CUI_CD-1206_SMD_D12mm")' in text and "Buzzer_12x9.5RM7.6" not in text


# ------------------------------------------------------------ the bill of materials follows the netlist


def _count(comps: dict[str, dict[str, str]], ref: str, value: str | None = None, each: int = 1) -> int:
    return each * sum(1 for r, c in comps.items()
                      if re.match(ref, r) and (value is None or c["value"] == value))


BOM_ROWS = {  # the row's first words -> how to count it in a netlist
    "60 mm arcade button": lambda c: _count(c, r"SW_S\d+$"),
    "5-way navigation switch": lambda c: _count(c, r"SW_S\d+_NAV$"),
    "OLED 128×64": lambda c: _count(c, r"DS_S\d+$"),
    "MCP23017-E/SP": lambda c: _count(c, r"U_NAV\d+$"),
    "TCA9548A I2C multiplexer": lambda c: _count(c, r"U_MUX\d+$"),
    "12-way ribbon seat cable": lambda c: _count(c, r"J_S\d+$"),
    "WS2812B 16×16 panel": lambda c: _count(c, r"P_LED\d+$"),
    "5 V supply": lambda c: _count(c, r"PS\d+$"),
    "time-lag fuse 5×20 mm, Littelfuse 215 series: 8 A": lambda c: _count(c, r"F_", "8A T"),
    "time-lag fuse 5×20 mm, Littelfuse 215 series: 2 A": lambda c: _count(c, r"F_", "2A T"),
    "fuse holder 5×20 mm": lambda c: _count(c, r"F_"),
    "lever connector WAGO 221-415": lambda c: _count(c, r"J_PWR$", each=2),
    "lever connector WAGO 221-412": lambda c: _count(c, r"J_LED\d+_PWR$", each=2),
    "lead pair 12 AWG": lambda c: _count(c, r"W_SUPPLY$"),
    "lead pair 18 AWG": lambda c: _count(c, r"W_(PI|LED\d+|LOGIC)$"),
    "USB-C plug pigtail": lambda c: _count(c, r"J_PI_USB$"),
    "resistors 4.7 kΩ": lambda c: _count(c, r"R_", "4k7"),
    "resistors 1 kΩ": lambda c: _count(c, r"R_", "1k"),
    "capacitors 10 nF C0G": lambda c: _count(c, r"C_", "10nF C0G"),
    "TVS diode 3.3 V": lambda c: _count(c, r"D_S\d+_SLAP$"),
    "resistor 330 Ω": lambda c: _count(c, r"R_", "330"),
    "capacitors 100 nF": lambda c: _count(c, r"C_", "100nF"),
    "capacitor 1000 µF": lambda c: _count(c, r"C_", "1000uF 10V"),
    "Schottky diode 1N5819": lambda c: _count(c, r"D_VSYS$"),
}


def test_the_bill_of_materials_counts_what_the_netlists_hold() -> None:
    readme = (ROOT / "hardware" / "README.md").read_text()
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in readme.splitlines()
            if line.startswith("| ") and line.count("|") == 6]
    comps = {name: table.components_of((table.OUT / f"table-{name}.net").read_text()) for name in BUILDS}
    for start, count in BOM_ROWS.items():
        row = next((r for r in rows if r[0].startswith(start)), None)
        assert row is not None, f"hardware/README.md: no bill of materials row for {start!r}"
        assert (int(row[1]), int(row[2])) == (count(comps["4-seat"]), count(comps["12-seat"])), row[0]
    supply = next(r for r in rows if r[0].startswith("5 V supply"))
    budget = power_budget(load_config(table.BUILDS["4-seat"]), "pi5")
    assert f"at least {budget.supply_a} A" in supply[0] and "LRS-200-5 (40 A" in supply[0]  # PS1: rated 40 A
    assert f"({budget.total_a:.2f} A" in supply[4]
