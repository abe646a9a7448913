"""What a schema cannot see: pins shared or claimed by a bus, unknown expanders, shared
addresses; and the config.txt lines the configured buses need."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .schema import TableConfig

SPI_PINS = {
    0: {8: "SPI0 CE0", 7: "SPI0 CE1", 9: "SPI0 MISO", 10: "SPI0 MOSI", 11: "SPI0 SCLK"},
    1: {18: "SPI1 CE0", 17: "SPI1 CE1", 16: "SPI1 CE2", 19: "SPI1 MISO", 20: "SPI1 MOSI", 21: "SPI1 SCLK"},
}
"""The GPIOs a Pi's SPI controller claims once config.txt enables it (`dtparam=spi=on` for SPI0,
`dtoverlay=spi1-3cs` for SPI1): every chip select, whether a display uses it or not."""
SPI_SWITCH = {0: "dtparam=spi=on", 1: "dtoverlay=spi1-3cs"}
"""The config.txt line that switches each SPI port on, giving it its /dev/spidevN.* files."""


def bus_pins(cfg: TableConfig) -> dict[int, str]:
    """GPIO -> the bus that owns it, for the buses this configuration switches on."""
    owned: dict[int, str] = {}
    if cfg.uses_i2c():  # the Pi's I2C bus 1 is on GPIO2 (SDA) and GPIO3 (SCL)
        owned |= {2: "I2C SDA (bus 1)", 3: "I2C SCL (bus 1)"}
    for port in sorted({s.spi_port for s in cfg.screens if s.interface == "spi"}):
        owned |= SPI_PINS.get(port, {})
    return owned


def gpios_used(cfg: TableConfig) -> set[int]:
    """Every GPIO the configuration gives a part: buttons, expander interrupts, the buzzer, the
    displays' extra lines, and the pins of the buses it switches on."""
    used = set(bus_pins(cfg))
    used |= {line.gpio for seat in cfg.inputs.seats for line in seat.lines().values()
             if line.gpio is not None}
    used |= {e.interrupt_gpio for e in cfg.inputs.expanders}
    if cfg.buzzer is not None:
        used.add(cfg.buzzer.gpio)
    used |= {g for s in cfg.screens for g in (s.dc_gpio, s.reset_gpio) if g is not None}
    return used


def boot_config(cfg: TableConfig) -> list[str]:
    """The config.txt lines this configuration needs: only the buses it uses, since an enabled
    bus claims its GPIOs (the 12-seat build's expander interrupts are on SPI0's GPIO 9 and 10).

    `[all]` first: config.txt's model filters ([pi5], [cm4], ...) hold until the next filter, so
    lines appended after a file that ends in `[pi5]` would apply to a Pi 5 only. Two TCA9548As
    on one bus each get `disconnect_on_idle` (the i2c-mux overlay's parameter, Raspberry Pi's
    kernel since 2024; the pca954x driver's idle state "disconnect"): without it each mux stays
    on its last channel, so a write to a screen at 0x3C behind one mux also reaches the 0x3C
    last used behind the other."""
    lines = ["[all]"]
    if cfg.uses_i2c():
        lines += ["dtparam=i2c_arm=on", "dtparam=i2c_arm_baudrate=400000"]
    on_bus = Counter(m.bus for m in cfg.i2c_muxes)
    lines += [f"dtoverlay=i2c-mux,pca9548,addr=0x{m.address:02x}"
              + (",disconnect_on_idle" if on_bus[m.bus] > 1 else "") for m in cfg.i2c_muxes]
    ports = {s.spi_port for s in cfg.screens if s.interface == "spi"}
    lines += [SPI_SWITCH[port] for port in sorted(ports) if port in SPI_SWITCH]
    return lines


def boot_modules(cfg: TableConfig) -> list[str]:
    """The kernel modules to load at boot (install.sh writes /etc/modules-load.d/table-host.conf).

    i2c-dev: /dev/i2c-N exists only while it holds bus N, and config.txt does not load it. All of
    them, cdc_acm (the LED controller's /dev/ttyACM0) and spidev too: the unit's
    `DeviceAllow=char-ttyACM` (char-i2c, char-spi) becomes device rules once, when the service
    starts, from the majors then in /proc/devices. A driver that loads later, as cdc_acm does when
    the Pico is plugged in after boot, stays denied (EPERM) until the service is restarted."""
    modules = ["i2c-dev"] if cfg.uses_i2c() else []
    if any(s.interface == "spi" for s in cfg.screens):
        modules.append("spidev")
    return [*modules, "cdc_acm"]


def semantic_problems(cfg: TableConfig) -> list[str]:
    """What a schema cannot see: shared pins, pins an enabled bus owns, unknown expanders,
    shared addresses."""
    problems: list[str] = []
    used: dict[str, str] = {f"GPIO{gpio}": owner for gpio, owner in bus_pins(cfg).items()}
    expanders = {e.name: e for e in cfg.inputs.expanders}
    if cfg.buzzer is not None:
        key = f"GPIO{cfg.buzzer.gpio}"
        if key in used:
            problems.append(f"buzzer.gpio: {key} is already used by {used[key]}")
        used.setdefault(key, "buzzer.gpio")
    for s, screen in enumerate(cfg.screens):
        for role in ("dc_gpio", "reset_gpio"):
            gpio = getattr(screen, role)
            if gpio is None:
                continue
            if f"GPIO{gpio}" in used:
                owner = used[f"GPIO{gpio}"]
                problems.append(f"screens[{s + 1}].{role}: GPIO{gpio} is already used by {owner}")
            used.setdefault(f"GPIO{gpio}", f"screens[{s + 1}].{role}")
    for e in cfg.inputs.expanders:
        key = f"GPIO{e.interrupt_gpio}"
        if key in used and used[key] != f"expanders.{e.name}.interrupt_gpio":
            problems.append(f"inputs.expanders: {e.name}'s interrupt_gpio {key} "
                            f"is already used by {used[key]}")
        used.setdefault(key, f"expanders.{e.name}.interrupt_gpio")
    for m, mux in enumerate(cfg.i2c_muxes):
        if any(o.address == mux.address and o.bus == mux.bus for o in cfg.i2c_muxes[:m]):
            problems.append(f"i2c_muxes[{m + 1}]: two multiplexers at 0x{mux.address:02x} on bus {mux.bus}")
    seen_addr: dict[tuple[int, int], str] = {}
    for e in cfg.inputs.expanders:
        key = (e.bus, e.address)
        if key in seen_addr:
            problems.append(f"inputs.expanders: {e.name} and {seen_addr[key]} share bus {e.bus} "
                            f"address 0x{e.address:02x}")
        seen_addr[key] = e.name
    if cfg.screens and len(cfg.screens) != len(cfg.inputs.seats):
        problems.append(f"screens: {len(cfg.screens)} screens for {len(cfg.inputs.seats)} seats")
    seen_screen: dict[tuple[Any, ...], int] = {}
    for s, screen in enumerate(cfg.screens):
        if screen.interface == "spi":
            key: tuple[Any, ...] = ("spi", screen.spi_port, screen.spi_device)
        elif screen.bus is not None:
            key = ("bus", screen.bus, screen.address)
        else:
            muxes = [m for m in cfg.i2c_muxes if m.address == screen.mux]
            if not muxes:
                problems.append(f"screens[{s + 1}].mux: no [[i2c_muxes]] at 0x{screen.mux:02x}")
            elif len(muxes) > 1:
                problems.append(f"screens[{s + 1}].mux: multiplexers at 0x{screen.mux:02x} on buses "
                                f"{sorted(m.bus for m in muxes)}: give the screen a fixed bus = N")
            key = ("mux", screen.mux, screen.channel, screen.address)
        if key in seen_screen:
            what = f"{screen.place()}, address 0x{screen.address:02x}" if screen.interface == "i2c" \
                else screen.place()
            problems.append(f"screens[{s + 1}]: same place ({what}) as screens[{seen_screen[key] + 1}]")
        seen_screen[key] = s
        if screen.interface == "spi" and screen.dc_gpio is None:
            problems.append(f"screens[{s + 1}]: an SPI display needs dc_gpio")
    for s, seat in enumerate(cfg.inputs.seats):
        for control, line in seat.lines().items():
            where = f"inputs.seats[{s + 1}].{control}"
            if line.expander is not None and line.expander not in expanders:
                problems.append(f"{where}: no expander named {line.expander!r}")
            key = line.key()
            if key in used:
                problems.append(f"{where}: {key} is already used by {used[key]}")
            else:
                used[key] = where
    # A press reaches the arbiter once its minimum time is over; the arbiter holds every press
    # for the window from its stamp, so a confirmation later than that would decide it late.
    if cfg.inputs.min_press_us * 2 > cfg.arbiter.window_ms * 1000:
        problems.append(f"inputs.min_press_us: {cfg.inputs.min_press_us:g} µs is more than half the "
                        f"arbiter's window ({cfg.arbiter.window_ms:g} ms): a press would reach the arbiter "
                        "too late to be ordered; keep it at most half of arbiter.window_ms")
    return problems
