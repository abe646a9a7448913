"""The seat I2C buses' electrical budget: bus capacitance, pull-ups and rise time, from the
I2C specification's arithmetic and the parts' datasheets (`table-host i2c`, hardware/README.md).

NXP UM10204 rev 7, the I2C-bus specification:
- §7.1, Equation 2: a line rises from 0.3 VDD to 0.7 VDD in t_r = ln(0.7/0.3) Rp Cb = 0.8473 Rp Cb,
  so Rp(max) = t_r / (0.8473 Cb); Equation 1: Rp(min) = (VDD - VOL(max)) / IOL.
- Table 10: t_r at most 1000 ns in Standard-mode (100 kHz) and 300 ns in Fast-mode (400 kHz); Cb at
  most 400 pF in both; VOL(max) 0.4 V at IOL 3 mA; Ci at most 10 pF for any device's pin.

How the table's bus is built (hardware/README.md, schematics/): the Pi's bus 1 on the main board
(the Pi, the MCP23017s, the TCA9548As' upstream side), and behind each TCA9548A channel one seat's
ribbon cable and OLED with the channel's own pull-ups. A channel is a pass gate, not a buffer: while
it is on, its segment's capacitance and pull-ups are the main bus's too.

Which segments are on during a transfer is the kernel's doing (drivers/i2c/i2c-mux.c selects a
channel, transfers, then calls the driver's deselect; drivers/i2c/muxes/i2c-mux-pca954x.c,
pca954x_deselect_mux, writes 0, all channels off, when the idle state is "disconnect", and leaves
the channel on when it is "as is", the default). The i2c-mux overlay's `disconnect_on_idle`, which
`table-host boot-config` writes when two multiplexers share the bus, sets "disconnect". So during a
transfer the bus carries the channel being used plus the last channel of every "as is" multiplexer.

The modules carry pull-ups of their own, on the bus whenever their segment is: each OLED module on
its SDA and SCL, and each TCA9548A breakout on its upstream SDA and SCL (always on the main bus).
Together with the Pi's and the seats' they may be too strong for the 3 mA every device must sink;
`i2c_load` then says which to remove.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..config import TableConfig, boot_config

RISE_FACTOR = math.log(0.7 / 0.3)  # 0.8473: UM10204 §7.1, Equation 2
VDD_V = 3.3  # the Pi's 3.3 V rail: every pull-up goes there
VOL_MAX_V = 0.4  # UM10204 Table 10: VOL(max) at IOL 3 mA (Standard- and Fast-mode)
IOL_A = 0.003  # UM10204 Table 10: the sink current every Standard-/Fast-mode device guarantees at VOL(max)
MODES = {100_000: ("Standard-mode", 1000.0, 400.0), 400_000: ("Fast-mode", 300.0, 400.0)}
"""Bus speed -> (UM10204 name, t_r max ns, Cb max pF), UM10204 Table 10. Faster modes are not offered:
the TCA9548A runs 0 to 400 kHz (SCPS207H §5.6)."""

PIN_PF = 10.0
"""UM10204 Table 10: Ci at most 10 pF. For the parts whose datasheets give no pin capacitance: the
Pi's SDA1/SCL1, the MCP23017, the SSD1306/SH1106 module."""
MUX_UPSTREAM_PF = 28.0  # TCA9548A, TI SCPS207H §5.5: Cio(off) of SCL/SDA, max (20 typ)
MUX_CHANNEL_PF = 7.5  # TCA9548A, TI SCPS207H §5.5: Cio(off) of SCn/SDn, max (5.5 typ)
RIBBON_PF_PER_M = 23.0 / 0.3048
"""75.5 pF/m: 23 pF/ft, what TE's datasheet for its 0.64 mm (0.025") PVC IDC ribbon (57013 series)
gives. The build's 1.27 mm ribbon has its wires twice as far apart, so less: an upper bound until
the cable is measured (a capacitance meter between SDA and the other wires, tied together)."""
MAIN_WIRING_M = 0.3  # hardware/README.md: the main board's bus is kept under 30 cm
PI_PULLUP_OHM = 1800.0
"""The Pi's fixed pull-ups on GPIO2/GPIO3 (SDA1/SCL1), 1.8 kOhm to 3.3 V: always on the main bus."""
SEAT_PULLUP_OHM = 4700.0  # each seat channel's SDA and SCL pull-up at the multiplexer (schematics/)
OLED_PULLUP_OHM = 4700.0
"""The pull-ups an OLED module carries on its own SDA and SCL, to its VCC (the Pi's 3.3 V here):
4.7 kOhm (marked 472) on the common 4-pin 1.3" SH1106 boards, 10 kOhm on Adafruit's 1.3" board
(its schematic: resistor pack R3) and on many 0.96" ones; some carry none. The strongest is the
default: it is the worst case for the 3 mA limit. Measure yours (SDA to VCC, module unplugged)."""
MUX_BOARD_PULLUP_OHM = 10000.0
"""The TCA9548A breakout's own pull-ups on its upstream SDA and SCL: Adafruit's board (product 2717,
its schematic: R1 and R2, 10 kOhm to VIN through the solder jumpers SDAPU and SCLPU, closed as
shipped) and the clones drawn after it. They are on the main bus whatever the channels do."""
CABLE_M = {1: 1.5, 2: 1.0}
"""The seat cable hardware/README.md's bill of materials buys, by the build's multiplexers: 1.5 m for
the 4-seat build (one), 1.0 m for the 12-seat build (two)."""
IDLE = ("as-is", "disconnect")
"""A multiplexer's idle state: the pca954x driver's MUX_IDLE_AS_IS (-1, its last channel stays on)
or MUX_IDLE_DISCONNECT (-2, every channel off after each transfer: `disconnect_on_idle`)."""


def parallel(*ohms: float) -> float:
    return 1.0 / sum(1.0 / r for r in ohms)


def ohms_label(ohms: float) -> str:
    """4700 -> "4k7", as a schematic writes a value."""
    if ohms >= 1000:
        whole, rest = divmod(round(ohms / 100), 10)
        return f"{whole}k{rest}" if rest else f"{whole}k"
    return f"{ohms:g}"


def bus_speed_hz(config: TableConfig) -> int | None:
    """Bus 1's clock as `table-host boot-config` writes it into config.txt (None: no I2C)."""
    for line in boot_config(config):
        if line.startswith("dtparam=i2c_arm_baudrate="):
            return int(line.split("=", 2)[2])
    return 100_000 if config.uses_i2c() else None  # the Pi's default without the line


def mux_idle(config: TableConfig) -> list[str]:
    """Each bus-1 multiplexer's idle state, as the overlay lines boot-config writes leave it."""
    lines = boot_config(config)
    return ["disconnect" if f"dtoverlay=i2c-mux,pca9548,addr=0x{m.address:02x},disconnect_on_idle" in lines
            else "as-is" for m in config.i2c_muxes if m.bus == 1]


@dataclass(frozen=True)
class PullUp:
    """One kind of pull-up on the bus during a transfer: `count` of them in parallel."""

    what: str
    ohm: float
    count: int
    removable: str = ""  # how to take them off, for the advice; "" for the ones the build needs

    def label(self) -> str:
        return f"{self.count} x {self.what} {self.ohm:.0f} ohm"


@dataclass
class I2CLoad:
    """One build's bus 1, as the Pi sees it during a transfer, and what the specification allows."""

    speed_hz: int
    mode: str
    rise_time_max_ns: float
    bus_max_pf: float
    main_pf: float
    main_parts: list[tuple[str, float]]
    seat_pf: float
    seat_parts: list[tuple[str, float]]
    cable_m: float
    mux_idle: list[str]
    segments_attached: int
    bus_pf: float
    seat_pullup_ohm: float
    oled_pullup_ohm: float
    mux_pullup_ohm: float
    pullups: list[PullUp]
    pullup_ohm: float
    pullup_min_ohm: float
    pullup_max_ohm: float
    seat_pullup_min_ohm: float
    seat_pullup_max_ohm: float
    rise_time_ns: float
    longest_cable_m: float
    problems: list[str] = field(default_factory=list)
    remove: list[PullUp] = field(default_factory=list)
    """The module pull-ups to take off: the fewest that bring the bus within the specification."""
    after: I2CLoad | None = None
    """The bus once `remove` is done."""

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        skip = ("main_parts", "seat_parts", "pullups", "remove", "after")
        out = {k: v for k, v in vars(self).items() if k not in skip}
        out["main_parts_pf"] = {name: round(pf, 3) for name, pf in self.main_parts}
        out["seat_parts_pf"] = {name: round(pf, 3) for name, pf in self.seat_parts}
        out["pullups"] = [{"what": p.what, "ohm": p.ohm, "count": p.count} for p in self.pullups]
        out["remove"] = [{"what": p.what, "ohm": p.ohm, "count": p.count, "how": p.removable}
                         for p in self.remove]
        out["after_removal"] = self.after.as_dict() if self.after else None
        out["within_spec"] = self.ok  # UM10204's limits; `ok` is the command's (exit status 0)
        return {k: (round(v, 3) if math.isfinite(v) else None) if isinstance(v, float) else v
                for k, v in out.items()}

    def _segments(self) -> str:
        k = self.segments_attached
        if not k:
            return ""
        kept = self.mux_idle.count("as-is")
        if not kept:
            why = "the one in use: each multiplexer disconnects after a transfer, disconnect_on_idle"
        elif kept == len(self.mux_idle):
            why = ("one per multiplexer: the kernel leaves its last channel on" if kept > 1
                   else "the multiplexer leaves its last channel on")
        else:
            why = f"the one in use and the last channel of {kept} multiplexer(s) left on"
        return f" + {k} seat channel{'s' if k > 1 else ''} ({why})"

    def text(self) -> str:
        def parts(items: list[tuple[str, float]]) -> str:
            return " + ".join(f"{name} {pf:.1f}" for name, pf in items)

        lines = [
            f"I2C bus 1 at {self.speed_hz // 1000} kHz ({self.mode}, UM10204 Table 10: rise time at most "
            f"{self.rise_time_max_ns:.0f} ns, bus load at most {self.bus_max_pf:.0f} pF)",
            f"main board: {self.main_pf:.1f} pF = {parts(self.main_parts)}",
        ]
        if self.segments_attached:
            lines.append(f"seat channel, {self.cable_m:.2f} m cable: {self.seat_pf:.1f} pF = "
                         f"{parts(self.seat_parts)}")
        lines += [f"bus load: main{self._segments()} = {self.bus_pf:.1f} pF "
                  f"(at most {self.bus_max_pf:.0f} pF)", *self._pullup_lines(limits=not self.remove)]
        if self.remove and self.after is not None:
            lines.append("remove: " + "; ".join(f"{p.label()} ({p.removable})" for p in self.remove))
            lines += ["  then " + line for line in self.after._pullup_lines()]
        lines.append(self._verdict())
        return "\n".join(lines)

    def _pullup_lines(self, limits: bool = True) -> list[str]:
        """The pull-ups and the rise time; with `limits`, what the seats' pull-ups and cables may be
        (left out for pull-ups about to be removed: the bus after removal has its own)."""
        others = " || ".join(p.label() for p in self.pullups[1:])
        lines = [
            f"pull-ups: the Pi's {PI_PULLUP_OHM:.0f} ohm{' || ' + others if others else ''} = "
            f"{self.pullup_ohm:.0f} ohm (at least {self.pullup_min_ohm:.0f} ohm: (3.3 V - 0.4 V) / 3 mA; "
            f"at most {self.pullup_max_ohm:.0f} ohm for this load)",
            f"rise time: 0.8473 x {self.pullup_ohm:.0f} ohm x {self.bus_pf:.1f} pF = "
            f"{self.rise_time_ns:.0f} ns (at most {self.rise_time_max_ns:.0f} ns)",
        ]
        if self.segments_attached and limits:
            high = ("any" if math.isinf(self.seat_pullup_max_ohm)
                    else f"at most {self.seat_pullup_max_ohm:.0f} ohm")
            low = ("none fits" if math.isinf(self.seat_pullup_min_ohm)
                   else f"at least {self.seat_pullup_min_ohm:.0f} ohm")
            lines.append(f"seat pull-ups allowed: {low}, {high} (fitted: {self.seat_pullup_ohm:.0f} ohm)")
            lines.append(f"longest seat cable at {self.speed_hz // 1000} kHz: "
                         f"{max(self.longest_cable_m, 0.0):.2f} m")
        return lines

    def _verdict(self) -> str:
        if self.ok:
            return "ok: within UM10204"
        text = "NOT WITHIN UM10204: " + "; ".join(self.problems)
        if self.after is not None and self.remove:
            text += ("; within once the pull-ups named above are removed" if self.after.ok
                     else "; removing the pull-ups named above is not enough")
        return text


def bom_cable_m(config: TableConfig) -> float:
    return CABLE_M.get(len(config.i2c_muxes), min(CABLE_M.values()))


def i2c_load(config: TableConfig, cable_m: float | None = None, speed_hz: int | None = None,
             seat_pullup_ohm: float = SEAT_PULLUP_OHM, oled_pullup_ohm: float = OLED_PULLUP_OHM,
             mux_pullup_ohm: float = MUX_BOARD_PULLUP_OHM, idle: str | None = None) -> I2CLoad:
    """Bus 1 of the build `config` describes, every seat cable `cable_m` long (default: the bill
    of materials' cable), at `speed_hz` (default: what boot-config writes), with the modules'
    own pull-ups as given (0: none), and every multiplexer `idle` ("as-is" or "disconnect";
    default: as boot-config's overlay lines leave each)."""
    cable_m = bom_cable_m(config) if cable_m is None else cable_m
    speed = speed_hz if speed_hz is not None else bus_speed_hz(config) or 100_000
    if speed not in MODES:
        raise ValueError(f"{speed} Hz is not a bus speed this budget knows: "
                         f"{', '.join(str(s) for s in MODES)} (UM10204 Standard- and Fast-mode)")
    if not 0 <= cable_m <= 100:
        raise ValueError(f"a seat cable of {cable_m} m: give 0 to 100 m")
    for name, ohm in (("seat", seat_pullup_ohm), ("OLED module", oled_pullup_ohm),
                      ("multiplexer board", mux_pullup_ohm)):
        if not (ohm == 0 or 100 <= ohm <= 1_000_000):
            raise ValueError(f"the {name} pull-up of {ohm:g} ohm: give 100 to 1000000 ohm, or 0 for none")
    if idle is not None and idle not in IDLE:
        raise ValueError(f"idle state {idle!r}: give {' or '.join(IDLE)}")
    idles = [idle or state for state in mux_idle(config)]
    expanders, muxes = len(config.inputs.expanders), len(idles)
    direct = [s for s in config.screens if s.interface == "i2c" and s.mux is None]
    muxed = sum(1 for s in config.screens if s.interface == "i2c" and s.mux is not None)
    main_parts = [("Pi SDA1", PIN_PF), (f"wiring {MAIN_WIRING_M:g} m", MAIN_WIRING_M * RIBBON_PF_PER_M)]
    if expanders:
        main_parts.append((f"{expanders} x MCP23017", expanders * PIN_PF))
    if muxes:
        main_parts.append((f"{muxes} x TCA9548A", muxes * MUX_UPSTREAM_PF))
    if direct:  # a screen on the main bus itself: its cable and module load it directly
        main_parts.append((f"{len(direct)} x ({cable_m:g} m cable + OLED)",
                           len(direct) * (cable_m * RIBBON_PF_PER_M + PIN_PF)))
    seat_parts = [("TCA9548A channel", MUX_CHANNEL_PF), (f"ribbon {cable_m:g} m", cable_m * RIBBON_PF_PER_M),
                  ("OLED", PIN_PF)]
    attached = (idles.count("as-is") + ("disconnect" in idles)) if muxed else 0
    pullups = [PullUp("Pi", PI_PULLUP_OHM, 1)]
    if muxes and mux_pullup_ohm:
        pullups.append(PullUp("TCA9548A board", mux_pullup_ohm, muxes,
                              "its upstream SDA and SCL pull-ups: on Adafruit's board cut the SDAPU and "
                              "SCLPU jumpers; on another, take off the resistors from SDA and SCL to VIN"))
    if direct and oled_pullup_ohm:
        pullups.append(PullUp("OLED module on the main bus", oled_pullup_ohm, len(direct),
                              "the module's SDA and SCL pull-ups (the resistors from SDA and SCL to VCC)"))
    if attached and seat_pullup_ohm:
        pullups.append(PullUp("seat", seat_pullup_ohm, attached))
    if attached and oled_pullup_ohm:
        pullups.append(PullUp("OLED module", oled_pullup_ohm, attached,
                              f"the SDA and SCL pull-ups of every seat's module, {muxed} modules: the "
                              "resistors from SDA and SCL to VCC on the module's back"))
    main_pf = sum(pf for _, pf in main_parts)
    seat_pf = sum(pf for _, pf in seat_parts)
    figures = dict(speed_hz=speed, mode=MODES[speed][0], rise_time_max_ns=MODES[speed][1],
                   bus_max_pf=MODES[speed][2], main_pf=main_pf, main_parts=main_parts, seat_pf=seat_pf,
                   seat_parts=seat_parts, cable_m=cable_m, mux_idle=idles, segments_attached=attached,
                   bus_pf=main_pf + attached * seat_pf, seat_pullup_ohm=seat_pullup_ohm,
                   oled_pullup_ohm=oled_pullup_ohm, mux_pullup_ohm=mux_pullup_ohm)
    load = _evaluate(figures, pullups)
    if any(p.startswith("pull-ups") for p in load.problems):  # too strong: take module pull-ups off
        removable = [p for p in pullups if p.removable]
        choices = [[p] for p in removable] + ([removable] if len(removable) > 1 else [])
        for chosen in sorted(choices, key=lambda c: sum(_resistors(p, muxed) for p in c)):
            after = _evaluate(figures, [p for p in pullups if p not in chosen])
            if after.ok:
                load.remove, load.after = chosen, after
                break
        else:
            if choices:
                load.remove = choices[-1]
                load.after = _evaluate(figures, [p for p in pullups if p not in load.remove])
    return load


def _resistors(pullup: PullUp, modules: int) -> int:
    """How many resistors taking these off means: two a board, two a module (every seat's)."""
    return 2 * (modules if pullup.what == "OLED module" else pullup.count)


def _evaluate(figures: dict[str, Any], pullups: list[PullUp]) -> I2CLoad:
    """The limits and the rise time for one set of pull-ups on the bus."""
    t_r_max, cb_max = figures["rise_time_max_ns"], figures["bus_max_pf"]
    bus_pf, main_pf, attached = figures["bus_pf"], figures["main_pf"], figures["segments_attached"]
    pullup = parallel(*[p.ohm / p.count for p in pullups])
    rp_min = (VDD_V - VOL_MAX_V) / IOL_A
    rp_max = t_r_max * 1e-9 / (RISE_FACTOR * bus_pf * 1e-12)
    rise = RISE_FACTOR * pullup * bus_pf * 1e-12 * 1e9
    if attached:
        # The seats' own pull-ups (fitted at the multiplexer) against everything else on the bus.
        rest = sum(p.count / p.ohm for p in pullups if p.what != "seat")
        spare_min = 1 / rp_min - rest  # conductance the seat pull-ups may add at most
        spare_max = 1 / rp_max - rest  # ... and must add at least
        seat_min = attached / spare_min if spare_min > 0 else math.inf
        seat_max = attached / spare_max if spare_max > 0 else math.inf
        cb_allowed = min(cb_max, t_r_max * 1e-9 / (RISE_FACTOR * pullup) * 1e12)
        longest = ((cb_allowed - main_pf) / attached - MUX_CHANNEL_PF - PIN_PF) / RIBBON_PF_PER_M
    else:
        seat_min = seat_max = longest = math.nan
    problems = []
    if bus_pf > cb_max:
        problems.append(f"bus load {bus_pf:.1f} pF is over {cb_max:.0f} pF")
    if rise > t_r_max:
        problems.append(f"rise time {rise:.0f} ns is over {t_r_max:.0f} ns")
    if pullup < rp_min:
        problems.append(f"pull-ups {pullup:.0f} ohm sink more than 3 mA (at least {rp_min:.0f} ohm)")
    return I2CLoad(**figures, pullups=pullups, pullup_ohm=pullup, pullup_min_ohm=rp_min,
                   pullup_max_ohm=rp_max, seat_pullup_min_ohm=seat_min, seat_pullup_max_ohm=seat_max,
                   rise_time_ns=rise, longest_cable_m=longest, problems=problems)
