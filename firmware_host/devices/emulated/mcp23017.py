"""A register-level emulation of the MCP23017, and an I2C bus to hang it on.

Facts cited as "DS §x" are from Microchip's datasheet DS20001952C (MCP23017/MCP23S17); the
driver it stands in for is `devices/inputs/mcp23017.py`, which shares its register map.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..inputs.mcp23017 import (
    DEFVALA,
    GPINTENA,
    GPIOA,
    GPIOB,
    INTCAPA,
    INTCAPB,
    INTCONA,
    INTFA,
    INTFB,
    IOCON,
    IOCON_ALIAS,
    IOCON_BANK,
    IOCON_INTPOL,
    IOCON_MIRROR,
    IOCON_ODR,
    IODIRA,
    IODIRB,
    IPOLA,
    IPOLB,
    OLATA,
    OUTPUT_ONLY,
    REGISTERS,
    RESET_VALUES,
)


@dataclass(slots=True)
class EmulatedMCP23017:
    """One MCP23017 as DS20001952C defines it, seen through byte-wide I2C register transfers.

    - Registers and reset values: DS Table 3-5 (IOCON.BANK = 0); IOCON answers at
      0x0A and 0x0B. Setting IOCON.BANK (the Table 3-4 map) or IPOL (§3.5.2) is
      refused with an error: the model does not implement them.
    - Interrupt-on-change, per port (§3.6.2, §3.6.3, §3.6.5): a pin that is an
      input (IODIR) with GPINTEN set interrupts when it differs from its previous
      level (INTCON = 0) or from DEFVAL (INTCON = 1). The first such change latches
      that port's INTF (the pin or pins) and INTCAP (the whole port); while that
      port's interrupt is pending, further changes latch nothing (§3.6.4).
    - Clearing (§3.6.1, §3.6.4, §3.5.9): reading GPIOx or INTCAPx clears port x's
      interrupt only, after the byte is read; INTFx goes to 0, INTCAPx keeps its
      value. The "previous level" becomes the port's level then (§3.6.5 item 1); a
      DEFVAL mismatch that remains interrupts again at once (§3.6.5 item 2).
    - INT pins (§3.6.1, §3.6.1.1, IOCON §3.5.6): INTA follows port A and INTB port
      B, or with IOCON.MIRROR both follow either port; active-low push-pull after
      reset, active-high with INTPOL, open-drain (low or released) with ODR.
    - Writing GPIOx writes OLATx (§3.5.10); output pins (IODIR = 0) read OLAT and
      never interrupt (§3.6.4). INTF and INTCAP are read-only.
    - GPA7 and GPB7 are output only (DS20001952D page 1). They power up as inputs (IODIR
      0xFF, Table 3-5, unchanged), so the model cannot refuse that state; it refuses a
      write that sets IODIR bit 7 (a driver making them inputs), and counts in
      `gpx7_input_reads` every read of GPIOx or INTCAPx, the reads that take GPx7's
      level, made while that port's bit 7 is still an input.

    `set_input` is the outside world: a button pulling a pin low (True) or
    letting the pull-up take it high. `interrupt(low, at_ns)` is told of every
    change of INTA's level, `interrupt_b` of INTB's. The model has no clock: a
    register read happens at `now`, the time of the latest input change.
    Transfers are single-register byte reads and writes, as smbus2's
    read_byte_data/write_byte_data do, so the sequential address pointer
    (IOCON.SEQOP, §3.2.1) never comes into play.
    """

    interrupt: Callable[[bool, int], None] | None = None
    interrupt_b: Callable[[bool, int], None] | None = None
    regs: bytearray = field(default_factory=lambda: bytearray(RESET_VALUES))
    levels: int = 0xFFFF  # the pins as the buttons leave them: 1 = high (released)
    fail: bool = False  # an unplugged expander: every transfer fails as on a real bus
    now: int = 0
    gpx7_input_reads: int = 0
    """Reads of GPIOx/INTCAPx with GPx7 still an input: each one against the datasheet."""
    _pending: list[bool] = field(default_factory=lambda: [False, False])
    _previous: list[int] = field(default_factory=lambda: [0xFF, 0xFF])
    _int_low: list[bool] = field(default_factory=lambda: [False, False])  # INTA, INTB pad levels

    def reset(self) -> None:
        """Power-on reset: registers to their POR/RST values (DS Table 3-5), nothing pending."""
        self.regs[:] = RESET_VALUES
        self._pending = [False, False]
        self._previous = [self._port(0), self._port(1)]
        self._drive_pins()

    @property
    def pending(self) -> bool:
        """Either port's interrupt is pending."""
        return any(self._pending)

    # ------------------------------------------------------------ the bus side

    def read(self, reg: int) -> int:
        self._check(reg)
        if reg in (GPIOA, GPIOB, INTCAPA, INTCAPB) and self.regs[IODIRA + (reg & 1)] & OUTPUT_ONLY:
            self.gpx7_input_reads += 1
        if reg in (GPIOA, GPIOB):
            port = reg - GPIOA
            value = self._port(port)
            self._clear(port)  # after the LSb is clocked out: the value read is from before
            return value
        if reg in (INTCAPA, INTCAPB):
            port = reg - INTCAPA
            value = self.regs[reg]
            self._clear(port)
            return value
        if reg == IOCON_ALIAS:
            reg = IOCON
        return self.regs[reg]

    def write(self, reg: int, value: int) -> None:
        self._check(reg)
        value &= 0xFF
        if reg == IOCON_ALIAS:
            reg = IOCON
        if reg == IOCON and value & IOCON_BANK:
            raise ValueError("EmulatedMCP23017: IOCON.BANK = 1 (the split register map) is not modelled")
        if reg in (IPOLA, IPOLB) and value:
            raise ValueError("EmulatedMCP23017: IPOL (input polarity, DS §3.5.2) is not modelled")
        if reg in (IODIRA, IODIRB) and value & OUTPUT_ONLY:
            raise ValueError(f"EmulatedMCP23017: IODIR{'AB'[reg - IODIRA]} 0x{value:02x} makes "
                             f"GP{'AB'[reg - IODIRA]}7 an input; it is output only (DS20001952D)")
        if reg in (INTFA, INTFB, INTCAPA, INTCAPB):
            return  # read-only (DS Registers 3-8, 3-9)
        if reg in (GPIOA, GPIOB):
            reg += OLATA - GPIOA  # DS §3.5.10
        self.regs[reg] = value
        for port in (0, 1):
            self._evaluate(port)
        self._drive_pins()

    # ------------------------------------------------------------ the pin side

    def set_input(self, pin: int, low: bool, at_ns: int) -> None:
        bit = 1 << pin
        new = (self.levels & ~bit) | (0 if low else bit)
        self.now = at_ns
        if new == self.levels:
            return
        self.levels = new
        self._evaluate(pin // 8)
        self._drive_pins()

    # ------------------------------------------------------------ the logic

    def _port(self, port: int) -> int:
        """GPIOx: inputs read the pin, outputs their OLAT bit (DS §3.5.10, §3.5.11)."""
        inputs = self.regs[IODIRA + port]
        return (self.levels >> 8 * port & inputs | self.regs[OLATA + port] & ~inputs) & 0xFF

    def _evaluate(self, port: int) -> None:
        """Latch an interrupt on `port` if an enabled input meets its condition (DS §3.6.2-3.6.5)."""
        value = self._port(port)
        if self._pending[port]:
            return  # one latch until cleared (DS §3.6.4)
        enabled = self.regs[GPINTENA + port] & self.regs[IODIRA + port]
        intcon = self.regs[INTCONA + port]
        reference = self.regs[DEFVALA + port] & intcon | self._previous[port] & ~intcon
        caused = (value ^ reference) & enabled
        self._previous[port] = value
        if caused:
            self._pending[port] = True
            self.regs[INTFA + port] = caused
            self.regs[INTCAPA + port] = value

    def _clear(self, port: int) -> None:
        """Reading GPIOx/INTCAPx clears that port's interrupt (DS §3.6.1); a DEFVAL mismatch
        still there raises it again (DS §3.6.5 item 2)."""
        if self._pending[port]:
            self._pending[port] = False
            self.regs[INTFA + port] = 0
            self._previous[port] = self._port(port)
            self._evaluate(port)
        self._drive_pins()

    def _drive_pins(self) -> None:
        """INTA/INTB pad levels from the ports' internal signals (DS §3.6.1.1, IOCON §3.5.6)."""
        iocon = self.regs[IOCON]
        active = list(self._pending)
        if iocon & IOCON_MIRROR:
            active = [any(active)] * 2
        active_high = iocon & IOCON_INTPOL and not iocon & IOCON_ODR
        for i, callback in enumerate((self.interrupt, self.interrupt_b)):
            low = active[i] != bool(active_high)  # open drain released: the pull-up holds it high
            if low != self._int_low[i]:
                self._int_low[i] = low
                if callback is not None:
                    callback(low, self.now)

    def int_low(self, pin: str = "A") -> bool:
        """Is INTA (or INTB) low now?"""
        return self._int_low[0 if pin == "A" else 1]

    def _check(self, reg: int) -> None:
        if self.fail:
            raise OSError(121, "Remote I/O error")
        if not 0 <= reg < REGISTERS:
            raise ValueError(f"EmulatedMCP23017: register 0x{reg:02x} is not in the map (DS Table 3-5)")


@dataclass(slots=True)
class EmulatedBus:
    """An I2C bus of emulated devices, with smbus2's method names."""

    devices: dict[int, EmulatedMCP23017] = field(default_factory=dict)

    def _device(self, addr: int) -> EmulatedMCP23017:
        try:
            return self.devices[addr]
        except KeyError:
            raise OSError(121, f"Remote I/O error (no device at 0x{addr:02x})") from None

    def read_byte_data(self, i2c_addr: int, register: int) -> int:
        return self._device(i2c_addr).read(register)

    def write_byte_data(self, i2c_addr: int, register: int, value: int) -> None:
        self._device(i2c_addr).write(register, value)
