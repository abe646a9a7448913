"""MCP23017 I/O expander for the navigation buttons (its register-level emulation is
`devices/emulated/mcp23017.py`).

Facts cited as "DS §x" are from Microchip's datasheet DS20001952C (MCP23017/MCP23S17); the
register map and behaviour are unchanged in revision D (DS20001952D, 2022), which adds one
restriction: "Pins GPA7, GPB7 are output only for MCP23017" (page 1, Features). Microchip's
note with it: as inputs they can corrupt SDA while the chip talks on the bus. It is the
same silicon as before, only the document changed, so every chip is concerned: the
configuration refuses A7 and B7 for buttons, and the driver makes them outputs.
The chip raises its interrupt line when an enabled input changes and latches
that port's levels in the port's own INTCAP; INTFA/INTFB say which port (and
pin) caused it. INTCAPA and INTCAPB are separate latches: a port-B interrupt
leaves INTCAPA as it was (0x00 after power-up, DS Table 3-5), so INTCAPx means
something only while INTFx is non-zero (DS §3.5.8, §3.5.9; the Linux kernel's
pinctrl-mcp23s08.c reads them the same way). The interrupt line is a Pi GPIO,
so its edge carries a kernel timestamp; every change read out of the chip is
stamped with that edge, never with the time the I2C read happened to run.

`bus` is anything with smbus2's `read_byte_data(addr, reg)` and
`write_byte_data(addr, reg, value)`: `smbus2.SMBus(n)` on the Pi,
`devices.emulated.mcp23017.EmulatedBus` in emulation and tests.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from ...config import OUTPUT_ONLY_PINS
from ..parts import MISSING, OK, UNEXPECTED, Check

# Register addresses with IOCON.BANK = 0, the power-on map (DS Table 3-5).
IODIRA, IODIRB = 0x00, 0x01
IPOLA, IPOLB = 0x02, 0x03
GPINTENA, GPINTENB = 0x04, 0x05
DEFVALA, DEFVALB = 0x06, 0x07
INTCONA, INTCONB = 0x08, 0x09
IOCON = 0x0A  # also at 0x0B: one register, two addresses (DS Table 3-5)
IOCON_ALIAS = 0x0B
GPPUA, GPPUB = 0x0C, 0x0D
INTFA, INTFB = 0x0E, 0x0F
INTCAPA, INTCAPB = 0x10, 0x11
GPIOA, GPIOB = 0x12, 0x13
OLATA, OLATB = 0x14, 0x15
REGISTERS = 0x16

# IOCON bits (DS Register 3-6, §3.5.6).
IOCON_BANK = 0x80  # 1: the split register map (port A at 0x00-0x0A, port B at 0x10-0x1A)
IOCON_MIRROR = 0x40  # the INT pins are OR'ed: one line for both ports
IOCON_SEQOP = 0x20  # 1: the address pointer does not increment
IOCON_DISSLW = 0x10
IOCON_HAEN = 0x08  # MCP23S17 only
IOCON_ODR = 0x04  # INT is open-drain (overrides INTPOL)
IOCON_INTPOL = 0x02  # INT active-high (push-pull only)

RESET_VALUES = bytes(0xFF if reg in (IODIRA, IODIRB) else 0x00 for reg in range(REGISTERS))
"""Every register's POR/RST value (DS Table 3-5): IODIR 0xFF, all others 0x00."""

OUTPUT_ONLY = 0x80
"""GPA7 and GPB7, bit 7 of each port: output only (DS20001952D page 1)."""
IODIR_SET = 0xFF & ~OUTPUT_ONLY
"""What the driver writes to IODIRA and IODIRB: bits 0-6 inputs, bit 7 an output."""
INPUT_PINS = tuple(p for p in range(16) if p not in OUTPUT_ONLY_PINS)


class Bus(Protocol):
    def read_byte_data(self, i2c_addr: int, register: int) -> int: ...
    def write_byte_data(self, i2c_addr: int, register: int, value: int) -> None: ...


class Readout(NamedTuple):
    """One interrupt service: INTFB:INTFA as read, and what changed: [(pin, pressed)]."""

    flags: int
    changes: list[tuple[int, bool]]


@dataclass(slots=True)
class MCP23017:
    bus: Bus
    address: int
    pins: Iterable[int]  # indices 0..15 wired to buttons
    _mask: int = 0
    _levels: int = 0xFFFF

    def setup(self) -> None:
        """Inputs with pull-ups, but GPA7 and GPB7 outputs (DS20001952D: output only), driving
        OLAT's reset 0: nothing is wired to them. Interrupt on any change of a wired pin; INT
        mirrored, active-low push-pull (IOCON.ODR = INTPOL = 0)."""
        self._mask = 0
        for p in self.pins:
            if p in OUTPUT_ONLY_PINS:
                raise ValueError(f"MCP23017 0x{self.address:02x}: pin {p} (GP{'AB'[p // 8]}7) "
                                 "is output only, not a button (DS20001952D)")
            self._mask |= 1 << p
        w = self.bus.write_byte_data
        w(self.address, IOCON, IOCON_MIRROR)
        w(self.address, IODIRA, IODIR_SET)
        w(self.address, IODIRB, IODIR_SET)
        w(self.address, IPOLA, 0x00)
        w(self.address, IPOLB, 0x00)
        w(self.address, GPPUA, IODIR_SET)  # no pull-up behind an output
        w(self.address, GPPUB, IODIR_SET)
        w(self.address, INTCONA, 0x00)  # compare with the previous level: both edges (DS §3.6.2)
        w(self.address, INTCONB, 0x00)
        w(self.address, GPINTENA, self._mask & 0xFF)
        w(self.address, GPINTENB, self._mask >> 8)
        # Reading GPIOA and GPIOB clears both ports' pending interrupts (DS §3.6.1); a change
        # after the GPINTEN writes and before this read is in the levels read.
        self._levels = self._read_gpio()

    def levels(self) -> int:
        return self._levels

    def flags(self) -> int:
        """INTFB:INTFA: which pins latched an interrupt; reading them clears nothing."""
        r = self.bus.read_byte_data
        return r(self.address, INTFA) | r(self.address, INTFB) << 8

    def on_interrupt(self) -> Readout:
        """What changed since the last read, pressed meaning pulled low.

        INTFA/INTFB first: only a port whose INTF is set has a fresh INTCAP (DS
        §3.5.9), and that INTCAP holds the port as the interrupt found it. GPIO,
        read last, shows any change that came while the interrupt was pending
        (the chip latches only the first, DS §3.6.4) and clears both ports.
        """
        r = self.bus.read_byte_data
        flags = self.flags()
        changes: list[tuple[int, bool]] = []
        for shift, reg in ((0, INTCAPA), (8, INTCAPB)):
            if flags >> shift & 0xFF:
                self._take(r(self.address, reg) << shift, 0xFF << shift, changes)
        self._take(self._read_gpio(), 0xFFFF, changes)
        return Readout(flags, changes)

    def _take(self, levels: int, port_mask: int, changes: list[tuple[int, bool]]) -> None:
        diff = (levels ^ self._levels) & self._mask & port_mask
        for p in range(16):
            if diff >> p & 1:
                changes.append((p, not levels >> p & 1))
        self._levels ^= diff

    def _read_gpio(self) -> int:
        r = self.bus.read_byte_data
        return r(self.address, GPIOA) | r(self.address, GPIOB) << 8


# ---------------------------------------------------------------- the self-test's look


def probe_expander(bus: Any, name: str, bus_number: int, address: int) -> Check:
    """MCP23017 datasheet (DS20001952C) Table 3-5 and Register 3-1: IODIRA and IODIRB are
    0xFF after reset; the driver writes 0x7F (GPx7 an output: output only, DS20001952D). IOCON
    (0x0A) is 0x00 after reset; the driver sets MIRROR (0x40). Both at their reset values: the
    chip was reset or plugged in since it was set up, and gives no interrupts until it is set
    up again. Any other answer is some other device at that address."""
    check = Check(f"expander {name}", f"bus {bus_number}, 0x{address:02x}")
    try:
        iodir = bus.read_byte_data(address, IODIRA), bus.read_byte_data(address, IODIRB)
        iocon = bus.read_byte_data(address, IOCON)
    except OSError as exc:
        check.result, check.detail = MISSING, str(exc) or type(exc).__name__
        return check
    seen = f"IODIRA 0x{iodir[0]:02x}, IODIRB 0x{iodir[1]:02x}, IOCON 0x{iocon:02x}"
    if iodir == (RESET_VALUES[IODIRA], RESET_VALUES[IODIRB]) and iocon == RESET_VALUES[IOCON]:
        check.result = UNEXPECTED
        check.detail = (f"{seen}: the chip was reset since the table set it up (IODIR 0x{IODIR_SET:02x}, "
                        f"IOCON 0x{IOCON_MIRROR:02x}); its buttons give no interrupts until the daemon "
                        "restarts (power, cable?)")
    elif iodir != (IODIR_SET, IODIR_SET):
        check.result = UNEXPECTED
        check.detail = (f"{seen}: not an MCP23017 as the table sets it up (IODIR 0x{IODIR_SET:02x}): "
                        "another device?")
    elif iocon != IOCON_MIRROR:
        check.result = UNEXPECTED
        check.detail = f"{seen}: IOCON is not what the table set (0x{IOCON_MIRROR:02x}): another device?"
    else:
        check.result, check.detail = OK, seen
    return check


def unserved_interrupt(bus: Any, name: str, address: int, interrupt_gpio: int) -> str:
    """Why an expander's button may never arrive: INTFA/INTFB (DS20001952C §3.5.8) flag the pins
    whose change raised the interrupt, and stay set until INTCAP or GPIO is read (§3.6.4),
    which the table does as soon as INT's edge reaches its GPIO. Flags still set long after
    a press: the edge never came (the INTA wire, or its GPIO). Reading INTF clears nothing."""
    try:
        flags = bus.read_byte_data(address, INTFA) | bus.read_byte_data(address, INTFB) << 8
    except OSError as exc:
        return f"expander {name} does not answer now: {exc}"
    if not flags:
        return ""
    pins = ", ".join(f"{'AB'[p // 8]}{p % 8}" for p in range(16) if flags >> p & 1)
    return (f"expander {name} holds an interrupt for {pins} (INTF 0x{flags:04x}) that never reached "
            f"GPIO{interrupt_gpio}: check its INTA wire")
