"""MCP23017 I/O expander for the navigation buttons, and a register-level emulation of it.

The expander raises its (mirrored, active-low) interrupt line when an enabled
input changes and latches the port levels of that moment in INTCAP. The
interrupt line is a Pi GPIO, so its edge carries a kernel timestamp; every
change read out of INTF/INTCAP is stamped with that edge, never with the time
the I2C read happened to run.

`bus` is anything with smbus2's `read_byte_data(addr, reg)` and
`write_byte_data(addr, reg, value)`: `smbus2.SMBus(n)` on the Pi,
`EmulatedBus` in emulation and tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

IODIRA, IODIRB = 0x00, 0x01
GPINTENA, GPINTENB = 0x04, 0x05
DEFVALA, DEFVALB = 0x06, 0x07
INTCONA, INTCONB = 0x08, 0x09
IOCON = 0x0A
GPPUA, GPPUB = 0x0C, 0x0D
INTFA, INTFB = 0x0E, 0x0F
INTCAPA, INTCAPB = 0x10, 0x11
GPIOA, GPIOB = 0x12, 0x13
IOCON_MIRROR = 0x40  # one interrupt line for both ports


class Bus(Protocol):
    def read_byte_data(self, i2c_addr: int, register: int) -> int: ...
    def write_byte_data(self, i2c_addr: int, register: int, value: int) -> None: ...


def pin_index(name: str) -> int:
    """`A0`..`A7` are 0..7, `B0`..`B7` are 8..15."""
    n = name.strip().upper()
    if len(n) == 2 and n[0] in "AB" and n[1] in "01234567":
        return (8 if n[0] == "B" else 0) + int(n[1])
    raise ValueError(f"not an MCP23017 pin: {name!r} (A0..A7, B0..B7)")


@dataclass(slots=True)
class MCP23017:
    bus: Bus
    address: int
    pins: Iterable[int]  # indices 0..15 wired to buttons
    _mask: int = 0
    _levels: int = 0xFFFF

    def setup(self) -> None:
        """All inputs with pull-ups; interrupt on any change of a wired pin; INT mirrored."""
        self._mask = 0
        for p in self.pins:
            self._mask |= 1 << p
        w = self.bus.write_byte_data
        w(self.address, IOCON, IOCON_MIRROR)
        w(self.address, IODIRA, 0xFF)
        w(self.address, IODIRB, 0xFF)
        w(self.address, GPPUA, 0xFF)
        w(self.address, GPPUB, 0xFF)
        w(self.address, INTCONA, 0x00)  # compare with the previous level: both edges
        w(self.address, INTCONB, 0x00)
        w(self.address, GPINTENA, self._mask & 0xFF)
        w(self.address, GPINTENB, self._mask >> 8)
        self._levels = self._read_pair(GPIOA)  # also clears a pending interrupt

    def levels(self) -> int:
        return self._levels

    def on_interrupt(self) -> list[tuple[int, bool]]:
        """What changed at the interrupt: [(pin, pressed)], pressed meaning pulled low.

        INTCAP holds the levels latched at the interrupt; GPIO, read next, shows
        any change that came while the interrupt was pending (the chip latches
        only one), which is reported too. Both reads re-arm the interrupt.
        """
        changes: list[tuple[int, bool]] = []
        for levels in (self._read_pair(INTCAPA), self._read_pair(GPIOA)):
            diff = (levels ^ self._levels) & self._mask
            for p in range(16):
                if diff >> p & 1:
                    changes.append((p, not levels >> p & 1))
            self._levels ^= diff
        return changes

    def _read_pair(self, reg_a: int) -> int:
        r = self.bus.read_byte_data
        return r(self.address, reg_a) | r(self.address, reg_a + 1) << 8


@dataclass(slots=True)
class EmulatedMCP23017:
    """The registers of one MCP23017, enough for the driver above (IOCON.BANK = 0).

    `set_input` changes a pin's level as a button would and, when that pin's
    interrupt is enabled and none is pending, latches INTF/INTCAP and pulls the
    interrupt line low through `interrupt(level_low, at_ns)`.
    """

    interrupt: Callable[[bool, int], None] | None = None
    regs: dict[int, int] = field(default_factory=lambda: {IODIRA: 0xFF, IODIRB: 0xFF})
    levels: int = 0xFFFF
    pending: bool = False
    fail: bool = False  # an unplugged expander: every transfer fails as on a real bus

    def read(self, reg: int) -> int:
        self._check()
        if reg in (GPIOA, GPIOB):
            self._clear()
            return self.levels >> (8 if reg == GPIOB else 0) & 0xFF
        if reg in (INTCAPA, INTCAPB):
            value = self.regs.get(reg, 0)
            self._clear()
            return value
        return self.regs.get(reg, 0)

    def write(self, reg: int, value: int) -> None:
        self._check()
        self.regs[reg] = value & 0xFF

    def set_input(self, pin: int, low: bool, at_ns: int) -> None:
        bit = 1 << pin
        new = (self.levels & ~bit) | (0 if low else bit)
        if new == self.levels:
            return
        self.levels = new
        enabled = self.regs.get(GPINTENA, 0) | self.regs.get(GPINTENB, 0) << 8
        if enabled & bit and not self.pending:
            self.pending = True
            self.regs[INTFA], self.regs[INTFB] = bit & 0xFF, bit >> 8
            self.regs[INTCAPA], self.regs[INTCAPB] = new & 0xFF, new >> 8
            if self.interrupt is not None:
                self.interrupt(True, at_ns)

    def _clear(self) -> None:
        if self.pending:
            self.pending = False
            self.regs[INTFA] = self.regs[INTFB] = 0
            if self.interrupt is not None:
                self.interrupt(False, 0)

    def _check(self) -> None:
        if self.fail:
            raise OSError(121, "Remote I/O error")


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
