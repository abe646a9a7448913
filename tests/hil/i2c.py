"""Inside the VM: the seats' expanders and screens on the kernel's I2C, through /dev/i2c-N.

QEMU here has no MCP23017, SSD1306 or PCA9548 model and Debian's kernel builds no I2C mux
driver for them, so the parts are the kernel's own stand-ins:
- **i2c-stub** (drivers/i2c/i2c-stub.c) is an SMBus adapter, "SMBus stub driver", with a chip
  at each address given as `chip_addr`: 256 registers each that store what is written and
  answer what was stored (byte, word and I2C-block transfers); any other address answers
  -ENODEV. It does no plain I2C (no I2C_FUNC_I2C, I2C_RDWR gives EOPNOTSUPP).
- **i2c-dev** gives the adapter its /dev/i2c-N, opened by the daemon through smbus2 and luma
  exactly as on a Pi.
- **the mux's sysfs layout** is built by the kernel's i2c-mux core (drivers/i2c/i2c-mux.c,
  `i2c_mux_add_adapter`: the `channel-<n>` link in the mux's directory, the channel's own
  adapter and /dev/i2c-M) for a driver that adds a channel. The MPU-3050 gyroscope driver
  (drivers/iio/gyro/mpu3050-i2c.c) does, for its pass-through I2C gate: one channel, added in
  its probe once the chip at its address answers 0x69 at register 0x00 (mpu3050-core.c,
  MPU3050_CHIP_ID). Instantiated at 0x70 on the stub (`new_device`), it stands where the
  TCA9548A is: `/sys/bus/i2c/devices/<bus>-0070/channel-0` leads to a real mux channel, and a
  screen behind it reaches the stub's chip at 0x3c through the mux core. Channels 1-7 are not
  there (a gate has one), which the daemon reports as it would for a one-channel mux.
- **a device that stops answering**: i2c-stub cannot drop one chip, and the adapter cannot be
  removed while the daemon holds /dev/i2c-N open (i2c-dev takes a module reference: rmmod says
  "in use"). The kernel's own "dummy" client (i2c-core-base.c, `dummy_id`) bound at an address
  makes i2c-dev refuse that address to user space (i2c-dev.c, `i2cdev_check`: -EBUSY), from the
  next time a file selects it (I2C_SLAVE), until the client is deleted again.

What is not modelled: the chips' behaviour beyond storing bytes (the MCP23017's interrupt latch
is played by the bench, writing INTF, INTCAP and GPIO as DS20001952C §3.6 says the chip would and
pulling the INT line on the gpio-sim chip; the SSD1306 shows nothing), a NACK (EREMOTEIO) from a
chip unplugged under an open file, the TCA9548A's channel switching (every channel would reach
the same stub chips), bus speed, clock stretching and rise times.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from firmware_host.devices.inputs.mcp23017 import (
    GPINTENA,
    GPINTENB,
    GPIOA,
    GPPUA,
    GPPUB,
    INTCAPA,
    INTCONA,
    INTCONB,
    INTFA,
    IOCON,
    IOCON_MIRROR,
    IODIRA,
    IODIRB,
    IPOLA,
    IPOLB,
    RESET_VALUES,
)

DEVICES = Path("/sys/bus/i2c/devices")
STUB_NAME = "SMBus stub driver"  # i2c-stub.c: stub_adapter.name
EXPANDERS = {"nav1": 0x20, "nav2": 0x21}  # the 4-seat build's addresses (hardware/wiring/4-seat.toml)
SCREEN_BEHIND_MUX = 0x3C  # seat 1's screen, on the mux's channel 0
SCREEN_ON_BUS = 0x3D  # seat 2's screen, on the stub's bus itself: absent when the daemon starts
MUX = 0x70
ADDRESSES = (*EXPANDERS.values(), SCREEN_BEHIND_MUX, SCREEN_ON_BUS, MUX)
MPU3050_CHIP_ID = 0x69  # mpu3050-core.c: MPU3050_CHIP_ID, read at MPU3050_CHIP_ID_REG 0x00
SEED = 0xA5  # a screen's data registers before the daemon draws: not a byte it would leave by chance
RELEASED = 0xFF  # every button up: the pull-ups hold the pins high


def _run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, text=True)


@dataclass
class StubBus:
    """The i2c-stub adapter and the bench's own file on it (the daemon opens its own)."""

    number: int
    devices: Path = DEVICES
    smbus: Any = None
    blocked: set[int] = field(default_factory=set)

    @classmethod
    def load(cls, addresses: tuple[int, ...] = ADDRESSES, devices: Path = DEVICES) -> StubBus:
        _run("modprobe", "i2c-dev")
        _run("modprobe", "i2c-stub", "chip_addr=" + ",".join(f"0x{a:02x}" for a in addresses))
        for adapter in sorted(devices.glob("i2c-*")):
            if (adapter / "name").read_text().strip() == STUB_NAME:
                import smbus2

                return cls(int(adapter.name[4:]), devices, smbus2.SMBus(int(adapter.name[4:])))
        raise OSError(f"i2c-stub loaded, but no adapter named {STUB_NAME!r} in {devices}")

    def write(self, address: int, register: int, value: int) -> None:
        self.smbus.write_byte_data(address, register, value)

    def registers(self, address: int, first: int, count: int) -> list[int]:
        return [int(self.smbus.read_byte_data(address, first + i)) for i in range(count)]

    def seed(self) -> None:
        """Each chip as the daemon finds it at power-on: the MCP23017s with their POR values
        (DS20001952C Table 3-5) and every button up; the screens' data registers at SEED; the
        MPU-3050's WHO_AM_I, so its driver takes the mux's address."""
        for address in EXPANDERS.values():
            for register, value in enumerate(RESET_VALUES):
                self.write(address, register, value)
            for port in (0, 1):
                self.write(address, GPIOA + port, RELEASED)
        for address in (SCREEN_BEHIND_MUX, SCREEN_ON_BUS):
            for register in range(0x40, 0x60):
                self.write(address, register, SEED)
        self.write(MUX, 0x00, MPU3050_CHIP_ID)

    def add_mux(self, timeout: float = 30.0) -> int:
        """The MPU-3050 driver at MUX: N of /dev/i2c-N its channel 0 became."""
        _run("modprobe", "mpu3050")
        (self.devices / f"i2c-{self.number}" / "new_device").write_text(f"mpu3050 0x{MUX:02x}\n")
        link = self.devices / f"{self.number}-{MUX:04x}" / "channel-0"
        end = time.monotonic() + timeout
        while not link.is_symlink():
            if time.monotonic() > end:
                raise OSError(f"the MPU-3050 driver made no {link} in {timeout:.0f} s (dmesg says why)")
            time.sleep(0.1)
        return int(Path(link.readlink()).name[4:])

    def add_unbound_device(self, name: str, address: int) -> None:
        """A client no driver takes: the kernel lists it in sysfs and nothing more."""
        (self.devices / f"i2c-{self.number}" / "new_device").write_text(f"{name} 0x{address:02x}\n")

    def block(self, address: int) -> None:
        """From now on i2c-dev refuses `address` (EBUSY) to every file that selects it."""
        (self.devices / f"i2c-{self.number}" / "new_device").write_text(f"dummy 0x{address:02x}\n")
        self.blocked.add(address)

    def unblock(self, address: int) -> None:
        (self.devices / f"i2c-{self.number}" / "delete_device").write_text(f"0x{address:02x}\n")
        self.blocked.discard(address)

    def close(self) -> None:
        for address in list(self.blocked):
            with contextlib.suppress(OSError):
                self.unblock(address)
        if self.smbus is not None:
            self.smbus.close()


# ------------------------------------------------------------------ the expander's latch, played


def latch(stub: StubBus, address: int, port: int, levels: int) -> int:
    """What an MCP23017 does when enabled inputs change (DS20001952C §3.6.2-§3.6.4): INTFx flags
    the pins that changed, INTCAPx captures the port, GPIOx reads the pins. Returns the flags."""
    changed = levels ^ stub.registers(address, GPIOA + port, 1)[0]
    stub.write(address, GPIOA + port, levels)
    stub.write(address, INTCAPA + port, levels)
    stub.write(address, INTFA + port, changed)
    return changed


def unlatch(stub: StubBus, address: int, port: int) -> None:
    """Reading INTCAPx or GPIOx clears the port's interrupt (DS §3.6.1): INTFx back to 0. The stub
    keeps what was written, so the bench clears it once the daemon has read."""
    stub.write(address, INTFA + port, 0)


# ------------------------------------------------------------------ checks (pure)

SETUP_NAMES = {IOCON: "IOCON", IODIRA: "IODIRA", IODIRB: "IODIRB", IPOLA: "IPOLA", IPOLB: "IPOLB",
               GPPUA: "GPPUA", GPPUB: "GPPUB", INTCONA: "INTCONA", INTCONB: "INTCONB",
               GPINTENA: "GPINTENA", GPINTENB: "GPINTENB"}


def expander_problems(registers: list[int], wired: int) -> list[str]:
    """The registers (0x00-0x15, IOCON.BANK = 0 map, DS Table 3-5) as the table's set-up leaves
    them: IOCON.MIRROR, one INT for both ports (Register 3-6); pins 0-6 of each port inputs (IODIR,
    Register 3-1) with their pull-ups (GPPU, Register 3-7), GPA7/GPB7 outputs with none (output
    only, DS20001952D page 1), not inverted (IPOL, Register 3-2); interrupt on
    change from the previous level (INTCON 0, Register 3-5) on the wired pins only (GPINTEN,
    Register 3-3)."""
    expected = {IOCON: IOCON_MIRROR, IODIRA: 0x7F, IODIRB: 0x7F, IPOLA: 0x00, IPOLB: 0x00,
                GPPUA: 0x7F, GPPUB: 0x7F, INTCONA: 0x00, INTCONB: 0x00,
                GPINTENA: wired & 0xFF, GPINTENB: wired >> 8}
    return [f"{SETUP_NAMES[reg]} (0x{reg:02x}) is 0x{registers[reg]:02x}, the set-up writes 0x{value:02x}"
            for reg, value in expected.items() if registers[reg] != value]


SSD1306_WINDOW = [0x21, 0x00, 0x7F, 0x22, 0x00, 0x07]
"""Set Column Address 21h 0..127 and Set Page Address 22h 0..7 (SSD1306 datasheet §10.1.4, §10.1.5):
what the driver sends before every frame."""
SSD1306_SETUP_TAIL = [0x8D, 0x14, 0x20, 0x00]
"""From luma's start-up sequence, bytes 8-11: charge pump on (8Dh 14h, the datasheet's appendix)
and horizontal addressing (20h 00h, §10.1.3), which the frame's 1024 data bytes rely on."""


def screen_problems(registers: list[int]) -> list[str]:
    """A screen's registers 0x00-0x5F in the stub after the daemon drew on it. An I2C-block write
    stores its bytes from the command byte on: the control byte 0x00 (commands) leaves the newest
    command block at 0x00 over the start-up sequence's tail, 0x40 (data: Co = 0, D/C# = 1, §8.1.5.2)
    leaves the frame's last 32 bytes at 0x40-0x5F."""
    problems = []
    if registers[0:6] != SSD1306_WINDOW:
        problems.append(f"registers 0x00-0x05 are {_hex(registers[0:6])}, not the frame's window "
                        f"{_hex(SSD1306_WINDOW)}")
    if registers[8:12] != SSD1306_SETUP_TAIL:
        problems.append(f"registers 0x08-0x0b are {_hex(registers[8:12])}, not the start-up sequence's "
                        f"{_hex(SSD1306_SETUP_TAIL)}")
    if registers[0x40:0x60] == [SEED] * 32:
        problems.append("registers 0x40-0x5f still hold the bench's seed: no frame data arrived")
    return problems


def _hex(values: list[int]) -> str:
    return " ".join(f"{v:02x}" for v in values)


def events_of(trace: dict[str, Any], kind: str, control: str, since_ns: int, seat: int | None = None
              ) -> list[dict[str, Any]]:
    """The trace's input events of one kind and control since a time (fault and recovered events
    carry the expander's name as their control and seat 0)."""
    return [e for e in trace["events"] if e.get("input") == kind and e.get("control") == control
            and e["ts_ns"] >= since_ns and (seat is None or e["seat"] == seat)]
