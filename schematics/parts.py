"""The parts of the table, as SKiDL templates with their real pinouts (no KiCad library needed).

Pin numbers are the packages' own: the Pi's 40-pin header, MCP23017 in DIP-28,
TCA9548A in TSSOP-24 (the usual breakout passes them through), the 4-pin OLED
module header. Names are what the datasheets print, so a netlist reads like
the board.

Every part that carries the 5 V supply's current says its rating in its
description as "rated N A", with the datasheet or standard it comes from, so
the netlist itself carries the figures `table.py` checks the power budget
against (`power_check`). Off-board parts (leads, lever connectors, the supply)
have a `table:` footprint: they are in the netlist to be checked and ticked
off, not placed on a board.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any


def _import_skidl_without_files() -> None:
    """SKiDL opens `<script>.log` and `<script>.erc` (`skidl_REPL.*` from a shell) in the working
    directory the moment it is imported (skidl/logger.py, `_create_logger`). Import it once in a
    scratch directory and stop that file output there, so it writes nothing anywhere."""
    if "skidl" in sys.modules:
        return
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        try:
            from skidl.logger import stop_log_file_output

            stop_log_file_output()
        finally:
            os.chdir(here)


_import_skidl_without_files()

from skidl import SKIDL, TEMPLATE, Part, Pin  # noqa: E402

IO, PASSIVE, IN, OUT = Pin.types.BIDIR, Pin.types.PASSIVE, Pin.types.INPUT, Pin.types.OUTPUT
OC, PWR_IN, PWR_OUT, NC = Pin.types.OPENCOLL, Pin.types.PWRIN, Pin.types.PWROUT, Pin.types.NOCONNECT

# The Raspberry Pi 4/5 header: physical pin -> name (BCM GPIO numbers).
PI_HEADER = {
    1: "3V3", 2: "5V", 3: "GPIO2", 4: "5V", 5: "GPIO3", 6: "GND", 7: "GPIO4", 8: "GPIO14",
    9: "GND", 10: "GPIO15", 11: "GPIO17", 12: "GPIO18", 13: "GPIO27", 14: "GND", 15: "GPIO22",
    16: "GPIO23", 17: "3V3", 18: "GPIO24", 19: "GPIO10", 20: "GND", 21: "GPIO9", 22: "GPIO25",
    23: "GPIO11", 24: "GPIO8", 25: "GND", 26: "GPIO7", 27: "GPIO0", 28: "GPIO1", 29: "GPIO5",
    30: "GND", 31: "GPIO6", 32: "GPIO12", 33: "GPIO13", 34: "GND", 35: "GPIO19", 36: "GPIO16",
    37: "GPIO26", 38: "GPIO20", 39: "GND", 40: "GPIO21",
}
MCP23017_PINS = {
    **{1 + i: f"GPB{i}" for i in range(8)}, 9: "VDD", 10: "VSS", 11: "NC1", 12: "SCL", 13: "SDA",
    14: "NC2", 15: "A0", 16: "A1", 17: "A2", 18: "~RESET", 19: "INTB", 20: "INTA",
    **{21 + i: f"GPA{i}" for i in range(8)},
}
TCA9548A_PINS = {
    1: "A0", 2: "A1", 3: "~RESET", 4: "SD0", 5: "SC0", 6: "SD1", 7: "SC1", 8: "SD2", 9: "SC2",
    10: "SD3", 11: "SC3", 12: "GND", 13: "SD4", 14: "SC4", 15: "SD5", 16: "SC5", 17: "SD6",
    18: "SC6", 19: "SD7", 20: "SC7", 21: "A2", 22: "SCL", 23: "SDA", 24: "VCC",
}


def _template(name: str, prefix: str, pins: dict[int, str], kinds: dict[str, Any], default: Any,
              footprint: str, description: str) -> Part:
    return Part(tool=SKIDL, name=name, ref_prefix=prefix, dest=TEMPLATE, footprint=footprint,
                description=description,
                pins=[Pin(num=num, name=pin, func=kinds.get(pin, default)) for num, pin in pins.items()])


PI_KINDS = {"3V3": PASSIVE, "5V": PWR_IN, "GND": PWR_IN}  # both 3V3 pins: one regulator
RaspberryPi = _template("RPi_40pin", "J", PI_HEADER, PI_KINDS, IO, "Connector:Raspberry_Pi_40pin",
                        "Raspberry Pi 4/5, 40-pin header")
MCP23017 = _template("MCP23017", "U", MCP23017_PINS,
                     {"VDD": PWR_IN, "VSS": PWR_IN, "NC1": NC, "NC2": NC, "A0": IN, "A1": IN, "A2": IN,
                      "~RESET": IN, "INTA": OUT, "INTB": OUT, "SCL": IN},
                     IO, "Package_DIP:DIP-28_W7.62mm", "16-bit I2C I/O expander")
TCA9548A = _template("TCA9548A", "U", TCA9548A_PINS,
                     {"VCC": PWR_IN, "GND": PWR_IN, "A0": IN, "A1": IN, "A2": IN, "~RESET": IN},
                     IO, "Package_SO:TSSOP-24_4.4x7.8mm_P0.65mm", "8-channel I2C multiplexer")
OLED = _template("OLED_I2C_128x64", "DS", {1: "GND", 2: "VCC", 3: "SCL", 4: "SDA"},
                 {"GND": PWR_IN, "VCC": PWR_IN, "SCL": IN}, IO, "Connector_PinHeader_2.54mm:PinHeader_1x04",
                 "SSD1306/SH1106 128x64 OLED module, I2C")
Slap = _template("Arcade_60mm", "SW", {1: "COM", 2: "NO"}, {}, PASSIVE, "Button:Arcade_60mm_microswitch",
                 "60 mm arcade button, microswitch COM/NO")
NavSwitch = _template("Nav_5way", "SW", {1: "COM", 2: "LEFT", 3: "RIGHT", 4: "UP", 5: "DOWN", 6: "CENTER"},
                      {}, PASSIVE, "Button:Nav_5way_module", "5-way navigation switch")
SEAT_CABLE = ("SDA", "3V3", "GND1", "SCL", "GND2", "SLAP", "LEFT", "RIGHT", "UP", "DOWN", "CENTER", "GND3")
"""The seat ribbon, conductor by conductor (an IDC header's pin n is the ribbon's wire n). UM10204
§7.5 asks, for a flat cable longer than 10 cm, that SDA and SCL never lie side by side: SDA, VDD,
VSS, SCL; a second ground keeps SCL's edges off the slap line, a third closes the cable."""
SeatPlug = _template("Seat_12pin", "J", {i + 1: n for i, n in enumerate(SEAT_CABLE)}, {}, PASSIVE,
                     "Connector_IDC:IDC-Header_2x06_P2.54mm_Vertical", "seat cable, 12-way IDC")
Resistor = _template("R", "R", {1: "1", 2: "2"}, {}, PASSIVE, "Resistor_THT:R_Axial_DIN0207", "resistor")
TVS = _template("TVS", "D", {1: "K", 2: "A"}, {}, PASSIVE, "Diode_SMD:D_SOD-323",
                "TVS diode, 3.3 V working (SD03 class, SOD-323: VBR at least 4.0 V, clamps at most 10.9 V at "
                "20 A 8/20 us, IEC 61000-4-2 level 4: 8 kV contact)")
Capacitor = _template("C", "C", {1: "1", 2: "2"}, {}, PASSIVE, "Capacitor_THT:C_Disc_D5.0mm", "capacitor")
NPN = _template("NPN", "Q", {1: "E", 2: "B", 3: "C"}, {}, PASSIVE, "Package_TO_SOT_THT:TO-92_Inline",
                "NPN transistor (2N3904)")
Buzzer = _template("Transducer_magnetic", "BZ", {1: "+", 2: "-"}, {}, PASSIVE,
                   "table:Buzzer_CUI_CD-1206_SMD_D12mm",
                   "magnetic transducer, 5 Vo-p, 2400 Hz, 47 ohm coil, 40 mA mean (CUI CD-1206: "
                   "surface-mount pads under its 12 mm body, datasheet page 2; KiCad's library has no "
                   "land for it), driven by PWM")
Diode = _template("D", "D", {1: "K", 2: "A"}, {}, PASSIVE, "Diode_THT:D_DO-35_SOD27_P7.62mm_Horizontal",
                  "small-signal diode (1N4148)")
Supply = _template("PSU_5V", "PS", {1: "+V", 2: "-V"}, {"+V": PWR_OUT, "-V": PWR_OUT}, PASSIVE,
                   "table:PSU_MeanWell_LRS-200",
                   "5 V supply, rated 40 A (Mean Well LRS-200-5: 5 V 40 A 200 W), run at most 80 % of it "
                   "(devices/power.py)")
PowerIn = _template("Star_5V", "J", {1: "+5V", 2: "GND"}, {}, PASSIVE, "table:WAGO_221-415_pair",
                    "the star point: two WAGO 221-415 lever connectors (one +5V, one GND; 5 ways each, "
                    "0.14-4 mm2), rated 20 A (UL 486C; 32 A IEC)")
Fuse = _template("Fuse", "F", {1: "1", 2: "2"}, {}, PASSIVE,
                 "Fuse:Fuseholder_Cylinder-5x20mm_Schurter_0031_8201_Horizontal_Open",
                 "time-lag (T) fuse 5x20 mm, Littelfuse 215 series (IEC 60127-2 sheet 5, 125 mA-20 A), "
                 "loaded to at most 75 %, in a Schurter OG holder rated 10 A (UL/CSA; 2.5 W at 10 A)")
LEAD = ("lead pair (+5V and GND, {awg} AWG stranded copper), rated {amps} A (NFPA 70 Table "
        "400.5(A)(a), flexible cord, column B: two current-carrying conductors)")
LEAD_A = {18: 10, 16: 13, 14: 18, 12: 25}
"""NFPA 70 (NEC) Table 400.5(A)(a), column B: a flexible cord's ampacity, two conductors carrying
current (18 AWG is 0.82 mm2, 12 AWG 3.31 mm2)."""


def Lead(ref: str, awg: int, what: str) -> Part:
    """A lead pair, drawn as one part on its branch: pin 1 on the +5V side, pin 2 on GND."""
    template = _template("Lead", "W", {1: "+5V", 2: "GND"}, {}, PASSIVE, f"table:Lead_pair_{awg}AWG",
                         LEAD.format(awg=awg, amps=LEAD_A[awg]))
    return template(ref=ref, value=what)


UsbCLead = _template("USB-C_lead", "J", {1: "VBUS", 2: "GND"}, {}, PASSIVE, "table:USB-C_plug_pigtail",
                     "USB-C plug pigtail into the Pi's power socket, rated 5 A (USB Type-C Cable and "
                     "Connector Specification: a 5 A cable carries an electronic marker; an unmarked "
                     "one is for 3 A)")
LeverPair = _template("Lever_pair", "J", {1: "+5V", 2: "GND"}, {}, PASSIVE, "table:WAGO_221-412_pair",
                      "two WAGO 221-412 lever connectors joining the lead to the panel's own power "
                      "wires, rated 20 A (UL 486C; 32 A IEC)")
Schottky = _template("D_Schottky", "D", {1: "K", 2: "A"}, {}, PASSIVE,
                     "Diode_THT:D_DO-41_SOD81_P10.16mm_Horizontal",
                     "Schottky diode 1N5819, rated 1 A (its datasheet: average forward current)")
Pico = _template("RPi_Pico", "U", {39: "VSYS", 38: "GND", 4: "GP2", 40: "VBUS"},
                 {"VSYS": PWR_IN, "GND": PWR_IN, "GP2": OUT, "VBUS": NC}, IO, "Module:RaspberryPi_Pico",
                 "RP2040 board (LED controller; USB to the Pi)")
LevelShifter = _template("74AHCT125", "U", {1: "1OE", 2: "1A", 3: "1Y", 7: "GND", 14: "VCC",
                                            4: "2OE", 5: "2A", 6: "2Y", 10: "3OE", 9: "3A", 8: "3Y",
                                            13: "4OE", 12: "4A", 11: "4Y"},
                         {"GND": PWR_IN, "VCC": PWR_IN, "1A": IN, "1OE": IN, "2OE": IN, "3OE": IN,
                          "4OE": IN, "2A": IN, "3A": IN, "4A": IN, "1Y": OUT, "2Y": NC, "3Y": NC, "4Y": NC},
                         IO, "Package_DIP:DIP-14_W7.62mm", "3.3 V to 5 V buffer for the WS2812 data")
LedPanel = _template("WS2812_panel", "P", {1: "+5V", 2: "GND", 3: "DIN", 4: "DOUT"},
                     {"+5V": PWR_IN, "GND": PWR_IN, "DIN": IN, "DOUT": OUT}, PASSIVE,
                     "table:WS2812B_panel_16x16",
                     "WS2812B 16x16 panel: power on its own wires, data in and out on JST SM plugs")
DataPlug = _template("JST_SM_3pin", "J", {1: "+5V", 2: "DATA", 3: "GND"}, {}, PASSIVE,
                     "table:JST_SM_3pin_mated",
                     "JST SM 3-way plug and receptacle (SMR-03V/SMP-03V), rated 3 A a contact (JST SM "
                     "datasheet, AWG 22): data and its ground only, the +5V wire not connected")


def pin_names(template: Part) -> dict[str, str]:
    return {str(pin.num): pin.name for pin in template.pins}


# Which template a reference designator is, so a netlist (numbers only) reads back as names.
REFS: list[tuple[str, Part]] = [
    (r"J_PI$", RaspberryPi), (r"U_NAV\d+$", MCP23017), (r"U_MUX\d+$", TCA9548A), (r"DS_S\d+$", OLED),
    (r"SW_S\d+$", Slap), (r"SW_S\d+_NAV$", NavSwitch), (r"J_S\d+$", SeatPlug), (r"R_", Resistor),
    (r"C_", Capacitor), (r"Q_", NPN), (r"BZ\d+$", Buzzer), (r"J_PWR$", PowerIn), (r"U_LED$", Pico),
    (r"U_LVL$", LevelShifter), (r"P_LED\d+$", LedPanel), (r"J_LED\d+_PWR$", LeverPair),
    (r"J_(LED|LINK)\d*$", DataPlug), (r"D_BZ$", Diode), (r"D_VSYS$", Schottky), (r"D_S\d+_SLAP$", TVS),
    (r"PS\d+$", Supply), (r"F_", Fuse), (r"J_PI_USB$", UsbCLead),
    (r"W_", _template("Lead", "W", {1: "+5V", 2: "GND"}, {}, PASSIVE, "", "lead pair")),
]


def pin_name(ref: str, pin: str) -> str:
    import re

    for pattern, template in REFS:
        if re.match(pattern, ref):
            return pin_names(template).get(pin, pin)
    return pin
