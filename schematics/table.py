"""The table's schematic as code (SKiDL), drawn from the wiring the daemon loads.

    .venv/bin/python schematics/table.py        # writes schematics/out/: netlists, ERC, diagrams

For each build in hardware/wiring/ (4 and 12 seats) it builds the circuit,
runs SKiDL's electrical rules check, writes a KiCad netlist, and from that
netlist draws the wiring diagram (wiring.py) and checks the 5 V path: every
connector, lead, fuse and the supply against its rating at the power budget's
worst case (`power_check`, `table-host power --pi pi5`); it exits 1 when the ERC
or that check finds a problem. tests/config/test_hardware.py reads the netlist
back, pin by pin, and proves it connects exactly the daemon's pin map.
"""

from __future__ import annotations

import io
import re
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

from firmware_host.config import TableConfig, load_config  # noqa: E402
from firmware_host.devices.i2cload import SEAT_PULLUP_OHM, ohms_label  # noqa: E402  (sized in hardware/README.md)
from firmware_host.devices.power import Budget, power_budget  # noqa: E402

SLAP_PULLUP_OHM = 4700.0  # to 3.3 V at the Pi: 0.7 mA through the switch, a stiff line on 1 m and more
SLAP_SERIES_OHM = 1000.0  # limits what a clamped spike pushes into the GPIO's own diodes
SLAP_FILTER = "10nF C0G"  # with 1 kohm: 10 us, the same on every seat (C0G: 5 %, no drift)

BUILDS = {"4-seat": ROOT / "hardware" / "wiring" / "4-seat.toml",
          "12-seat": ROOT / "hardware" / "wiring" / "12-seat.toml"}
OUT = HERE / "out"
NAV_PINS = {"left": "LEFT", "right": "RIGHT", "up": "UP", "down": "DOWN", "alt": "CENTER"}


def _quiet() -> Any:
    """SKiDL talks a lot on stderr (missing KiCad libraries we do not use)."""
    sink = io.StringIO()
    return redirect_stderr(sink), redirect_stdout(sink), sink


def build(config: TableConfig) -> tuple[Any, int, int]:
    """The circuit of a box wired as `config`; returns (circuit, ERC errors, ERC warnings)."""
    err, out, _ = _quiet()
    with err, out:
        import parts
        import skidl
        from skidl import Circuit, Net

        circuit = Circuit()
        circuit.no_files = True
        with circuit:
            _connect(config, skidl, Net, parts, circuit.NC)
        for part in circuit.parts:
            part.tag = part.ref  # stable: a netlist changes only with the circuit
        circuit.ERC()
        from skidl.logger import erc_logger

        errors, warnings = erc_logger.error.count, erc_logger.warning.count
    return circuit, errors, warnings


def _connect(config: TableConfig, skidl: Any, Net: Any, parts: Any, nc: Any) -> None:
    gnd, v5, v3 = Net("GND"), Net("+5V"), Net("+3V3")
    gnd.drive = v5.drive = v3.drive = skidl.POWER  # the supply; the Pi's own 3.3 V regulator
    budget = power_budget(config, "pi5")  # the worst case: a Pi 4 takes a smaller fuse (hardware/README.md)
    # The supply's lead ends at the star point; every branch leaves it through its own fuse.
    psu = parts.Supply(ref="PS1", value="5V 40A")
    star = parts.PowerIn(ref="J_PWR", value="5V star")
    lead = parts.Lead("W_SUPPLY", 12, "supply lead 12AWG")
    v5 += psu["+V"], star["+5V"], lead["+5V"]
    gnd += psu["-V"], star["GND"], lead["GND"]

    def branch(name: str, amps: float, awg: int, what: str) -> Any:
        """A fused branch: its own net behind its fuse, and its lead from the star."""
        net = Net(f"+5V_{name}")
        net.drive = skidl.POWER  # the supply, through the fuse
        fuse = parts.Fuse(ref=f"F_{name}", value=f"{amps:g}A T")
        v5.connect(fuse[1])
        net += fuse[2]
        wire = parts.Lead(f"W_{name}", awg, what)
        net += wire["+5V"]
        gnd.connect(wire["GND"])
        return net

    pi = parts.RaspberryPi(ref="J_PI", value="Raspberry Pi 4/5")
    # A Pi 5 takes 5 A through its USB-C socket (the header's 5 V pins are not meant for it): a
    # pigtail from its own fused branch. Pins 2 and 4 stay unconnected (they are the Pi's output).
    pi_feed = branch("PI", budget.pi_fuse_a, 18, "Pi branch 18AWG")
    usb = parts.UsbCLead(ref="J_PI_USB", value="USB-C pigtail 5A")
    pi_feed += usb["VBUS"]
    gnd += usb["GND"]
    nc.connect(pi[2], pi[4])
    v3 += pi[1], pi[17]
    gnd += [pi[n] for n, name in parts.PI_HEADER.items() if name == "GND"]
    used: set[str] = set()

    def gpio(n: int) -> Any:
        used.add(f"GPIO{n}")
        return pi[f"GPIO{n}"]

    sda, scl = Net("I2C_SDA"), Net("I2C_SCL")
    if config.uses_i2c():
        sda += gpio(2)
        scl += gpio(3)

    def decouple(ref: str, rail: Any) -> None:
        cap = parts.Capacitor(ref=ref, value="100nF")
        rail.connect(cap[1])
        gnd.connect(cap[2])

    def strap(pin: Any, high: bool) -> None:
        (v3 if high else gnd).connect(pin)

    chips = {}
    for e in config.inputs.expanders:
        chip = parts.MCP23017(ref=f"U_{e.name.upper()}", value=f"MCP23017 0x{e.address:02x}")
        chips[e.name] = chip
        v3 += chip["VDD"], chip["~RESET"]
        gnd += chip["VSS"]
        for bit in range(3):
            strap(chip[f"A{bit}"], bool(e.address >> bit & 1))
        sda += chip["SDA"]
        scl += chip["SCL"]
        Net(f"{e.name.upper()}_INT").connect(chip["INTA"], gpio(e.interrupt_gpio))
        decouple(f"C_{e.name.upper()}", v3)

    mux_channel: dict[tuple[int, int], tuple[Any, int]] = {}  # (mux address, channel)
    for m, mux in enumerate(config.i2c_muxes, 1):
        chip = parts.TCA9548A(ref=f"U_MUX{m}", value=f"TCA9548A 0x{mux.address:02x}")
        v3 += chip["VCC"], chip["~RESET"]
        gnd += chip["GND"]
        for bit in range(3):
            strap(chip[f"A{bit}"], bool(mux.address >> bit & 1))
        sda += chip["SDA"]
        scl += chip["SCL"]
        decouple(f"C_MUX{m}", v3)
        for channel in range(8):
            mux_channel[mux.address, channel] = (chip, channel)

    for s, seat in enumerate(config.inputs.seats):
        n = s + 1
        plug = parts.SeatPlug(ref=f"J_S{n}", value=f"seat {n} cable")
        slap = parts.Slap(ref=f"SW_S{n}", value=f"seat {n} slap")
        nav = parts.NavSwitch(ref=f"SW_S{n}_NAV", value=f"seat {n} navigation")
        gnd += plug["GND1"], plug["GND2"], plug["GND3"], slap["COM"], nav["COM"]
        v3 += plug["3V3"]
        # The slap line, 1 m of cable or more: 4.7 kohm to 3.3 V and a TVS at the cable's end, then
        # 1 kohm and 10 nF (C0G) before the GPIO: ESD and pick-up stop here, and the software
        # confirms a press only when the line stays down its minimum time ([inputs]).
        line = Net(f"S{n}_SLAP")
        line += plug["SLAP"], slap["NO"]
        pull = parts.Resistor(ref=f"R_S{n}_SLAP_PU", value=ohms_label(SLAP_PULLUP_OHM))
        series = parts.Resistor(ref=f"R_S{n}_SLAP", value=ohms_label(SLAP_SERIES_OHM))
        filt = parts.Capacitor(ref=f"C_S{n}_SLAP", value=SLAP_FILTER)
        tvs = parts.TVS(ref=f"D_S{n}_SLAP", value="SD03 3.3V")
        line += pull[1], series[1], tvs["K"]
        v3 += pull[2]
        gnd += tvs["A"], filt[2]
        Net(f"S{n}_SLAP_GPIO").connect(series[2], filt[1], gpio(seat.slap))
        for control, pin_name in NAV_PINS.items():
            line = getattr(seat, control)
            net = Net(f"S{n}_{pin_name}")
            net += plug[pin_name], nav[pin_name]
            if line is None:
                continue
            if line.gpio is not None:
                net += gpio(line.gpio)
            else:
                port, bit = str(line.pin).upper()[0], str(line.pin)[1:]
                net += chips[str(line.expander)][f"GP{port}{bit}"]
        if s < len(config.screens):
            screen = config.screens[s]
            oled = parts.OLED(ref=f"DS_S{n}", value=f"{screen.kind} 0x{screen.address:02x}")
            gnd += oled["GND"]
            v3 += oled["VCC"]
            if screen.mux is None:
                raise ValueError(f"screens[{s}]: the schematic needs the screen's mux and channel")
            chip, channel = mux_channel[screen.mux, screen.channel]
            for line_name, mux_pin in (("SDA", f"SD{channel}"), ("SCL", f"SC{channel}")):
                net = Net(f"S{n}_{line_name}")
                net += chip[mux_pin], plug[line_name], oled[line_name]
                pull = parts.Resistor(ref=f"R_S{n}_{line_name}", value=ohms_label(SEAT_PULLUP_OHM))
                net += pull[1]
                v3 += pull[2]
        else:
            for name in ("SDA", "SCL"):
                Net(f"S{n}_{name}_UNUSED").connect(plug[name])
                plug[name].do_erc = False

    for chip in chips.values():  # unused expander pins: no connection
        for pin in chip.pins:
            if pin.net is None:
                nc.connect(pin)
    for chip, channel in mux_channel.values():
        for name in (f"SD{channel}", f"SC{channel}"):
            if chip[name].net is None:
                nc.connect(chip[name])

    # The LED controller, its level shifter and the buzzer: one small branch of their own.
    logic = branch("LOGIC", budget.others_fuse_a, 18, "logic branch 18AWG")

    if config.buzzer is not None:
        # A magnetic transducer, low side switched at the tune's frequency: 470 ohm gives the
        # 2N3904 about 5 mA of base from 3.3 V, enough to saturate it at the coil's 100 mA peak
        # (5 V / 47 ohm); the diode takes the coil's flyback when the transistor opens.
        base = parts.Resistor(ref="R_BZ", value="470")
        transistor = parts.NPN(ref="Q_BZ", value="2N3904")
        transducer = parts.Buzzer(ref="BZ1", value="CD-1206 5V 2.4kHz")
        flyback = parts.Diode(ref="D_BZ", value="1N4148")
        Net("BUZZER").connect(gpio(config.buzzer.gpio), base[1])
        Net("BUZZER_B").connect(base[2], transistor["B"])
        gnd += transistor["E"]
        Net("BUZZER_C").connect(transistor["C"], transducer["-"], flyback["A"])
        logic += transducer["+"], flyback["K"]

    pico = parts.Pico(ref="U_LED", value="RP2040 (Pico)")
    shifter = parts.LevelShifter(ref="U_LVL", value="74AHCT125")
    feed = parts.Resistor(ref="R_LED", value="330")
    # Pico datasheet §4.5: an external supply on VSYS while USB VBUS is also connected goes
    # through a Schottky diode, so neither source feeds the other (the Pico's own D1 does VBUS).
    vsys = parts.Schottky(ref="D_VSYS", value="1N5819")
    logic += vsys["A"]
    pico_vsys = Net("PICO_VSYS")
    pico_vsys.connect(vsys["K"], pico["VSYS"])
    pico_vsys.drive = skidl.POWER  # the supply, through the diode
    logic += shifter["VCC"]
    gnd += pico["GND"], shifter["GND"], shifter["1OE"]
    Net("LED_DATA_3V3").connect(pico["GP2"], shifter["1A"])
    Net("LED_DATA_5V").connect(shifter["1Y"], feed[1])
    logic += shifter["2OE"], shifter["3OE"], shifter["4OE"]  # the spare buffers off, inputs held
    gnd += shifter["2A"], shifter["3A"], shifter["4A"]
    nc.connect(pico["VBUS"], shifter["2Y"], shifter["3Y"], shifter["4Y"])
    decouple("C_LVL", logic)

    # The panels: each on its own fused branch and power wires, 1000 uF at its input; the data
    # cable and the panel-to-panel plugs (JST SM, 3 A a contact) carry data and its ground only:
    # their +5V wire stays unconnected (cut on the panels' own plugs), so no panel's current
    # runs through them, whatever a fuse does.
    data = Net("LED_DIN")
    data += feed[2]
    for k in range(1, budget.panels + 1):
        panel = parts.LedPanel(ref=f"P_LED{k}", value=f"WS2812B 16x16 panel {k}")
        plug = parts.DataPlug(ref="J_LED" if k == 1 else f"J_LINK{k - 1}",
                              value="data in" if k == 1 else f"panel {k - 1} to {k}")
        data += plug["DATA"], panel["DIN"]
        gnd += plug["GND"], panel["GND"]
        nc.connect(plug["+5V"])
        power = branch(f"LED{k}", budget.panel_fuse_a, 18, f"panel {k} lead 18AWG")
        joint = parts.LeverPair(ref=f"J_LED{k}_PWR", value=f"panel {k} power")
        bulk = parts.Capacitor(ref=f"C_BULK{k}", value="1000uF 10V")
        power += joint["+5V"], panel["+5V"], bulk[1]
        gnd += joint["GND"], bulk[2]
        if k < budget.panels:
            data = Net(f"LED_D{k}")
            data += panel["DOUT"]
        else:
            nc.connect(panel["DOUT"])  # the chain's end

    for n, name in parts.PI_HEADER.items():  # the Pi's spare pins
        if name.startswith("GPIO") and name not in used:
            nc.connect(pi[n])


def netlist(circuit: Any) -> str:
    """The KiCad netlist, without the date line so that the file changes only with the circuit."""
    err, out, _ = _quiet()
    with err, out:
        from skidl import KICAD8

        text = str(circuit.generate_netlist(tool=KICAD8, do_backup=False))
    text = re.sub(r'\(date "[^"]*"\)', '(date "")', text)
    text = re.sub(r'\(source "[^"]*"\)', '(source "schematics/table.py")', text)
    text = re.sub(r'\s*\(field\s*\(name "SKiDL Line"\) "[^"]*"\)', "", text)
    return re.sub(r'\(tstamps? "[^"]*"\)', "", text)


# ------------------------------------------------------------ reading a netlist back


def parse_sexpr(text: str) -> list[Any]:
    tokens = re.findall(r'\(|\)|"(?:[^"\\]|\\.)*"|[^\s()]+', text)
    stack: list[list[Any]] = [[]]
    for token in tokens:
        if token == "(":
            stack.append([])
        elif token == ")":
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(token[1:-1] if token.startswith('"') else token)
    return stack[0]


def nets_of(text: str) -> dict[str, set[tuple[str, str]]]:
    """Net name -> {(ref, pin name)} from a KiCad netlist."""
    root = parse_sexpr(text)[0]
    out: dict[str, set[tuple[str, str]]] = {}
    for section in root:
        if isinstance(section, list) and section and section[0] == "nets":
            for net in section[1:]:
                fields = {f[0]: f for f in net[1:] if isinstance(f, list)}
                name = fields["name"][1]
                nodes = set()
                for node in net[1:]:
                    if isinstance(node, list) and node[0] == "node":
                        attrs = {a[0]: a[1] for a in node[1:] if isinstance(a, list) and len(a) > 1}
                        nodes.add((attrs["ref"], attrs.get("pinfunction", attrs["pin"])))
                out[name] = nodes
    return out


def components_of(text: str) -> dict[str, dict[str, str]]:
    """Reference -> {"value", "description"} from a KiCad netlist."""
    root = parse_sexpr(text)[0]
    out: dict[str, dict[str, str]] = {}
    for section in root:
        if isinstance(section, list) and section and section[0] == "components":
            for comp in section[1:]:
                fields = {f[0]: f[1] for f in comp[1:] if isinstance(f, list) and len(f) > 1
                          and isinstance(f[1], str)}
                out[fields["ref"]] = {"value": fields.get("value", ""),
                                      "description": fields.get("description", "")}
    return out


@dataclass(frozen=True)
class Carried:
    """One part on the 5 V supply's path: the current it carries at the budget's worst case."""

    ref: str
    what: str
    amps: float
    rating_a: float
    limit_a: float  # what it may carry: its rating, or the share of it its rule allows

    @property
    def ok(self) -> bool:
        return self.amps <= self.limit_a + 1e-9

    def line(self) -> str:
        rule = "" if self.limit_a == self.rating_a else f", at most {self.limit_a:g} A"
        return (f"{'ok' if self.ok else 'OVER':4} {self.ref:11} {self.amps:6.2f} A  rated {self.rating_a:g} A"
                f"{rule}: {self.what}")


def loads(budget: Budget) -> dict[tuple[str, str], float]:
    """(reference pattern, pin name) -> what that pin draws from 5 V at the budget's worst case."""
    from firmware_host.devices.power import BUZZER_A, PICO_A

    return {(r"J_PI_USB$", "VBUS"): budget.pi_a, (r"P_LED\d+$", "+5V"): budget.panel_a,
            (r"U_LED$", "VSYS"): PICO_A, (r"BZ\d+$", "+"): BUZZER_A}


def power_check(nets: dict[str, set[tuple[str, str]]], components: dict[str, dict[str, str]],
                budget: Budget, fuses: dict[str, float] | None = None) -> tuple[list[Carried], list[str]]:
    """Every connector, wire, fuse, diode and supply on the 5 V path against its rating, at the
    budget's worst case: (the parts, the problems). The current a part carries is the load of
    the nets behind it: a fuse or diode (in on pin 1 / A, out on pin 2 / K) carries its out-net's
    load and all behind it; a lead or connector, the load of the net its +5V pin is on. Fuses
    are loaded to at most 75 % of their rating (devices/power.py) and their holder's; the supply
    to 80 %. `fuses` overrides a fuse's rating (a Pi 4 build's 4 A)."""
    import parts

    from firmware_host.devices.power import FUSE_LOAD, LOAD

    where = {node: name for name, nodes in nets.items() for node in nodes}
    drawn = loads(budget)

    def pin(ref: str, name: str) -> str | None:
        template = next((t for pattern, t in parts.REFS if re.match(pattern, ref)), None)
        if template is None:
            return None
        number = next((n for n, p in parts.pin_names(template).items() if p == name), None)
        return where.get((ref, str(number))) if number else None

    series: dict[str, list[tuple[str, str]]] = {}  # in-net -> [(ref, out-net)]
    for ref in components:
        if ref.startswith("F_"):
            a, b = where.get((ref, "1")), where.get((ref, "2"))
        elif ref.startswith("D_VSYS"):
            a, b = pin(ref, "A"), pin(ref, "K")
        else:
            continue
        if a and b:
            series.setdefault(a, []).append((ref, b))

    def behind(net: str, seen: frozenset[str] = frozenset()) -> float:
        if net in seen:
            return 0.0
        own = sum(amps for (pattern, name), amps in drawn.items()
                  for ref, number in nets.get(net, ())
                  if re.match(pattern, ref) and parts.pin_name(ref, number) == name)
        return own + sum(behind(out, seen | {net}) for _, out in series.get(net, []))

    power_nets = {"+5V"}
    grew = True
    while grew:
        before = len(power_nets)
        power_nets |= {out for net in list(power_nets) for _, out in series.get(net, [])}
        grew = len(power_nets) > before
    carried, problems = [], []
    for ref, comp in sorted(components.items()):
        rated = re.search(r"rated (\d+(?:\.\d+)?) A", comp["description"])
        on_power = sorted({net for net in power_nets for r, _ in nets.get(net, ()) if r == ref})
        checked = ref.startswith(("F_", "W_", "J_", "PS", "D_VSYS"))
        if not checked or not (on_power or rated):
            continue
        if rated is None:
            problems.append(f"{ref} ({comp['value']}) is on {', '.join(on_power)} without a rating")
            continue
        rating = float(rated[1])
        inbound = [out for outs in series.values() for r, out in outs if r == ref]
        # A fuse or diode carries what is behind it; a lead or connector, what its +5V side feeds.
        amps = behind(inbound[0]) if inbound else sum(behind(net) for net in on_power)
        if ref.startswith("F_"):
            fuse = (fuses or {}).get(ref, float(re.match(r"([\d.]+)", comp["value"])[1]))  # type: ignore[index]
            carried.append(Carried(ref, f"{fuse:g} A time-lag fuse (75 %)", amps, fuse, fuse * FUSE_LOAD))
            carried.append(Carried(ref, "its holder", amps, rating, rating))
        elif ref.startswith("PS"):
            carried.append(Carried(ref, comp["value"] + " supply (80 %)", amps, rating, rating * LOAD))
        else:
            carried.append(Carried(ref, comp["value"], amps, rating, rating))
    problems += [f"{c.ref} ({c.what}) carries {c.amps:.2f} A, over the {c.limit_a:g} A it may carry"
                 for c in carried if not c.ok]
    return carried, problems


def mismatches(nets: dict[str, set[tuple[str, str]]], config: TableConfig) -> list[str]:
    """Every way the netlist's wires differ from the pin map, traced pin by pin from the
    buttons and displays back to the Pi and the chips (net names are not trusted)."""
    import parts

    where: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for nodes in nets.values():
        for node in nodes:
            where[node] = nodes

    def peers(ref: str, pin_name: str) -> set[tuple[str, str]]:
        template = next(t for pattern, t in parts.REFS if re.match(pattern, ref))
        number = next((num for num, name in parts.pin_names(template).items() if name == pin_name), None)
        return where.get((ref, str(number)), set())

    def named(nodes: set[tuple[str, str]], prefix: str) -> set[tuple[str, str]]:
        return {(ref, parts.pin_name(ref, pin)) for ref, pin in nodes if re.match(prefix, ref)}

    def pi_gpios(nodes: set[tuple[str, str]]) -> set[int]:
        return {int(name[4:]) for _, name in named(nodes, r"J_PI$") if name.startswith("GPIO")}

    def strapped(ref: str) -> int:
        address = 0
        for bit in range(3):
            if ("J_PI", "1") in peers(ref, f"A{bit}"):  # tied to 3V3 (header pin 1)
                address |= 1 << bit
        return address

    problems: list[str] = []
    refs = {ref for nodes in nets.values() for ref, _ in nodes}
    chips = {strapped(ref) | 0x20: ref for ref in refs if re.match(r"U_NAV\d+$", ref)}
    muxes = {strapped(ref) | 0x70: ref for ref in refs if re.match(r"U_MUX\d+$", ref)}
    expanders = {e.name: e for e in config.inputs.expanders}
    def through(nodes: set[tuple[str, str]], resistor: str) -> set[tuple[str, str]]:
        """A net and, past the series resistor named, the net on its other side."""
        other = {"1": "2", "2": "1"}
        out = set(nodes)
        for ref, pin in nodes:
            if ref == resistor:
                out |= where.get((ref, other[pin]), set())
        return out

    for s, seat in enumerate(config.inputs.seats):
        n = s + 1
        got = pi_gpios(through(peers(f"SW_S{n}", "NO"), f"R_S{n}_SLAP"))
        if got != {seat.slap}:
            problems.append(f"seat {n} slap: schematic GPIO{sorted(got)}, pin map GPIO{seat.slap}")
        for control, pin_name in NAV_PINS.items():
            line = getattr(seat, control)
            ends = peers(f"SW_S{n}_NAV", pin_name)
            if line is None:
                continue
            if line.gpio is not None:
                ok = pi_gpios(ends) == {line.gpio}
            else:
                e = expanders[str(line.expander)]
                chip = chips.get(e.address, "?")
                ok = (chip, f"GP{str(line.pin).upper()}") in named(ends, r"U_NAV")
            if not ok:
                problems.append(f"seat {n} {control}: schematic {sorted(named(ends, r'(U_|J_PI)'))}, "
                                f"pin map {line.key()}")
        if s < len(config.screens):
            screen = config.screens[s]
            for line_name, mux_pin in (("SDA", "SD"), ("SCL", "SC")):
                ends = named(peers(f"DS_S{n}", line_name), r"U_MUX")
                want = ({(muxes.get(screen.mux, "?"), f"{mux_pin}{screen.channel}")}
                        if screen.mux is not None else set())
                if ends != want:
                    problems.append(f"seat {n} display {line_name}: schematic {sorted(ends)}, pin map "
                                    f"{screen.place()} = {sorted(want)}")
    for e in config.inputs.expanders:
        chip = chips.get(e.address)
        got = pi_gpios(peers(chip, "INTA")) if chip else set()
        if got != {e.interrupt_gpio}:
            problems.append(f"expander {e.name} INTA: schematic GPIO{sorted(got)}, pin map "
                            f"GPIO{e.interrupt_gpio}")
    if set(chips) != {e.address for e in config.inputs.expanders}:
        problems.append(f"expanders at {sorted(map(hex, chips))}, pin map "
                        f"{sorted(hex(e.address) for e in config.inputs.expanders)}")
    if set(muxes) != {m.address for m in config.i2c_muxes}:
        problems.append(f"multiplexers at {sorted(map(hex, muxes))}, pin map "
                        f"{sorted(hex(m.address) for m in config.i2c_muxes)}")
    if config.buzzer is not None:
        base = next((ref for ref, name in named(peers("Q_BZ", "B"), r"R_")), "")
        got = pi_gpios(where.get((base, "1"), set()))
        if got != {config.buzzer.gpio}:
            problems.append(f"buzzer: schematic GPIO{sorted(got)}, pin map GPIO{config.buzzer.gpio}")
    wanted = {line.gpio for seat in config.inputs.seats for line in seat.lines().values()
              if line.gpio is not None}
    wanted |= {e.interrupt_gpio for e in config.inputs.expanders}
    wanted |= ({config.buzzer.gpio} if config.buzzer else set()) | ({2, 3} if config.uses_i2c() else set())
    wired = set().union(*map(pi_gpios, nets.values()))
    if wired != wanted:
        problems.append(f"Pi GPIOs wired {sorted(wired)}, pin map uses {sorted(wanted)}")
    return problems


def main() -> int:
    from wiring import draw

    OUT.mkdir(exist_ok=True)
    status = 0
    for name, path in BUILDS.items():
        config = load_config(path)
        circuit, errors, warnings = build(config)
        text = netlist(circuit)
        (OUT / f"table-{name}.net").write_text(text)
        draw(nets_of(text), config, name).save(OUT / f"table-{name}-wiring.png", optimize=True)
        print(f"{name}: {len(circuit.parts)} parts, {len(nets_of(text))} nets, "
              f"ERC {errors} errors, {warnings} warnings -> {OUT.relative_to(ROOT)}/table-{name}.net")
        carried, problems = power_check(nets_of(text), components_of(text), power_budget(config, "pi5"))
        print(f"{name}: the 5 V path at `table-host power --pi pi5`'s worst case:")
        print("\n".join("  " + c.line() for c in carried))
        for problem in problems:
            print(f"  PROBLEM: {problem}")
        status |= bool(errors or warnings or problems)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
