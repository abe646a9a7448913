"""Configuration: seat wiring and arbitration (the rest of table.toml comes with the daemon).

Validated with pydantic; `load_config` reports every problem at once, each with
its dotted path, plus the checks no schema can express (two controls on one
pin, an expander nobody declared).
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .control import ADMIN_GROUP
from .inputs.mcp23017 import pin_index
from .sounds import Sound

NAV = ("left", "right", "up", "down", "alt")
SELECTS = tuple(f"select{i}" for i in range(1, 6))
ARBITRATED = ("slap", "alt", *SELECTS)
"""Controls whose order across seats matters: they go through the arbiter."""


class ConfigError(ValueError):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class _Strict(BaseModel):
    """Types as written: `slap = true` is not GPIO 1 and `window_ms = "5"` is not 5.0 (pydantic's
    strict mode; an integer still fills a float setting, `window_ms = 5` is 5.0)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Line(_Strict):
    """Where one button is wired: a Pi GPIO (BCM number) or a pin of an MCP23017."""

    gpio: int | None = Field(None, ge=0, le=27)
    expander: str | None = None
    pin: str | None = None

    @model_validator(mode="after")
    def _one_place(self) -> Line:
        if (self.gpio is None) == (self.expander is None):
            raise ValueError("give either gpio = N or expander = \"name\" with pin = \"A0\"..\"B7\"")
        if self.expander is not None:
            if self.pin is None:
                raise ValueError("an expander line needs pin = \"A0\"..\"B7\"")
            pin_index(self.pin)
        return self

    def key(self) -> str:
        return f"GPIO{self.gpio}" if self.gpio is not None else f"{self.expander}:{str(self.pin).upper()}"


class SeatWiring(_Strict):
    slap: int = Field(ge=0, le=27, description="the big button: always a Pi GPIO, for its timestamp")
    left: Line | None = None
    right: Line | None = None
    up: Line | None = None
    down: Line | None = None
    alt: Line | None = None
    select1: Line | None = None
    select2: Line | None = None
    select3: Line | None = None
    select4: Line | None = None
    select5: Line | None = None

    def lines(self) -> dict[str, Line]:
        out = {"slap": Line(gpio=self.slap)}
        for name in (*NAV, *SELECTS):
            line = getattr(self, name)
            if line is not None:
                out[name] = line
        return out


class Expander(_Strict):
    name: str
    chip: Literal["mcp23017"] = "mcp23017"
    bus: int = Field(1, ge=0)
    address: int = Field(0x20, ge=0x20, le=0x27)
    interrupt_gpio: int = Field(ge=0, le=27)


class InputsConfig(_Strict):
    seats: list[SeatWiring] = Field(min_length=2, max_length=12)
    expanders: list[Expander] = []
    debounce_ms: float = Field(30.0, ge=0, le=500)
    stuck_s: float = Field(2.0, gt=0, le=600)
    false_start_lockout_ms: float = Field(0.0, ge=0, le=5000)


class ArbiterConfig(_Strict):
    window_ms: float = Field(5.0, gt=0, le=100)
    epsilon_ms: float = Field(0.2, ge=0, le=10)

    @model_validator(mode="after")
    def _epsilon_below_window(self) -> ArbiterConfig:
        if self.epsilon_ms >= self.window_ms:
            raise ValueError("epsilon_ms must be below window_ms")
        return self


class SeatScreen(_Strict):
    """A seat's OLED: on a channel of a TCA9548A (`mux` = its address, `channel` = 0..7 as
    on the chip's SD0..SD7), whose bus the daemon finds in sysfs when it opens the display,
    because the kernel numbers mux channels itself; or on a fixed bus (`bus` = N of
    /dev/i2c-N, which wins over mux and channel); or on SPI."""

    kind: Literal["ssd1306", "sh1106"] = "ssd1306"
    interface: Literal["i2c", "spi"] = "i2c"
    mux: int | None = Field(None, ge=0x70, le=0x77, description="i2c: the address of its TCA9548A")
    channel: int | None = Field(None, ge=0, le=7, description="i2c: the mux channel, SD0..SD7")
    bus: int | None = Field(None, ge=0, description="i2c: a fixed /dev/i2c-N; spi: the SPI port (0)")
    address: int = Field(0x3C, ge=0x03, le=0x77)
    spi_device: int = Field(0, ge=0, le=3)
    dc_gpio: int | None = Field(None, ge=0, le=27)
    reset_gpio: int | None = Field(None, ge=0, le=27)

    @model_validator(mode="after")
    def _placed(self) -> SeatScreen:
        if (self.mux is None) != (self.channel is None):
            raise ValueError("give mux = 0x70..0x77 and channel = 0..7 together")
        if self.interface == "i2c" and self.mux is None and self.bus is None:
            raise ValueError("an i2c screen needs mux = 0x70 with channel = 0..7, or a fixed bus = N")
        if self.interface == "spi" and self.mux is not None:
            raise ValueError("an SPI display is on no I2C mux: drop mux and channel")
        return self

    @property
    def spi_port(self) -> int:
        return self.bus if self.bus is not None else 0

    def place(self) -> str:
        """Where it is wired, in the builder's words: `mux 0x70 channel 0`, `i2c-22`, `spi0.0`."""
        if self.interface == "spi":
            return f"spi{self.spi_port}.{self.spi_device}"
        if self.bus is not None:
            return f"i2c-{self.bus}"
        return f"mux 0x{self.mux:02x} channel {self.channel}"


class CentreConfig(_Strict):
    port: str = "/dev/table-led"  # the udev rule's link to the RP2040's /dev/ttyACM*
    width: int = Field(32, ge=8, le=128)
    height: int = Field(16, ge=8, le=64)
    brightness: float = Field(0.35, ge=0.0, le=1.0, description="cap on every LED's level")

    @model_validator(mode="after")
    def _panels(self) -> CentreConfig:
        if self.width % 16 or self.height % 16:
            raise ValueError("width and height must be whole 16x16 panels")
        return self


class I2CMux(_Strict):
    """A TCA9548A run by the kernel's i2c-mux overlay. The kernel numbers its channels' buses
    after the board's highest i2c alias (a Pi 4 from 22 on, a Pi 5 from 11 on), so no file
    says which; the daemon reads them from sysfs (firmware_host/i2cmux.py)."""

    address: int = Field(0x70, ge=0x70, le=0x77)
    bus: int = Field(1, ge=0, description="the Pi bus it hangs on")

    @model_validator(mode="before")
    @classmethod
    def _no_first_bus(cls, data: Any) -> Any:
        if isinstance(data, dict) and "first_bus" in data:
            raise ValueError("first_bus is gone: the kernel numbers the channels and the daemon "
                             "finds them in sysfs; give each screen mux = 0x.. and channel = 0..7")
        return data


class BuzzerConfig(_Strict):
    """The buzzer's GPIO and how it sounds (sounds.py; docs/sounds.md)."""

    gpio: int = Field(ge=0, le=27)
    enabled: bool = True
    volume: float = Field(1.0, ge=0.0, le=1.0, description="0 silent .. 1 loudest: PWM duty 0 .. 50 %")
    mute: list[Sound] = Field([], description="sounds not to play, e.g. [\"count\"]")


BACKENDS = ("pi", "gpiochip", "emulated")


class HardwareConfig(_Strict):
    """Which hardware the table drives: said in the file, never guessed (firmware_host/board.py)."""

    backend: Literal["pi", "gpiochip", "emulated"] = "pi"
    chip: int | str | None = Field(
        None, description="the GPIO chip: its number, /dev/gpiochipN, or its label (gpiochip: required)")
    board_revision: str = Field(
        "c03114", pattern=r"^[0-9a-fA-F]{4,8}$",
        description="gpiochip: the Pi revision code whose BCM numbering the chip's lines follow")

    @model_validator(mode="after")
    def _chip_named(self) -> HardwareConfig:
        if self.backend == "gpiochip" and self.chip in (None, ""):
            raise ValueError('the gpiochip backend needs chip = N, "/dev/gpiochipN" or the chip\'s label')
        return self


class ControlConfig(_Strict):
    """Who may control the table over its socket (docs/daemon.md, "Access"): root and this group;
    the socket file belongs to the group, mode 0660."""

    admin_group: str = Field(ADMIN_GROUP, pattern=r"^[a-z_][a-z0-9_-]*[$]?$", max_length=32,
                             description="the group whose members may control the table")


class TableConfig(_Strict):
    hardware: HardwareConfig = HardwareConfig()
    inputs: InputsConfig
    arbiter: ArbiterConfig = ArbiterConfig()
    screens: list[SeatScreen] = []
    i2c_muxes: list[I2CMux] = []
    centre: CentreConfig = CentreConfig()
    buzzer: BuzzerConfig | None = None
    control: ControlConfig = ControlConfig()

    def uses_i2c(self) -> bool:
        return bool(self.inputs.expanders or self.i2c_muxes
                    or any(s.interface == "i2c" for s in self.screens))


SPI_PINS = {
    0: {8: "SPI0 CE0", 7: "SPI0 CE1", 9: "SPI0 MISO", 10: "SPI0 MOSI", 11: "SPI0 SCLK"},
    1: {18: "SPI1 CE0", 17: "SPI1 CE1", 16: "SPI1 CE2", 19: "SPI1 MISO", 20: "SPI1 MOSI", 21: "SPI1 SCLK"},
}
"""The GPIOs a Pi's SPI controller claims once config.txt enables it (`dtparam=spi=on` for SPI0,
`dtoverlay=spi1-3cs` for SPI1): every chip select, whether a display uses it or not."""


def bus_pins(cfg: TableConfig) -> dict[int, str]:
    """GPIO -> the bus that owns it, for the buses this configuration switches on."""
    owned: dict[int, str] = {}
    if cfg.uses_i2c():  # the Pi's I2C bus 1 is on GPIO2 (SDA) and GPIO3 (SCL)
        owned |= {2: "I2C SDA (bus 1)", 3: "I2C SCL (bus 1)"}
    for port in sorted({s.spi_port for s in cfg.screens if s.interface == "spi"}):
        owned |= SPI_PINS.get(port, {})
    return owned


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
    if 0 in ports:
        lines.append("dtparam=spi=on")
    if 1 in ports:
        lines.append("dtoverlay=spi1-3cs")
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
    return problems


Key = tuple[str | int, ...]


def dotted(path: Key) -> str:
    """A person counts from 1: the first `[[inputs.seats]]` is `inputs.seats[1]`, seat 1's table."""
    return ".".join(f"[{p + 1}]" if isinstance(p, int) else str(p) for p in path).replace(".[", "[")


def undotted(text: str) -> Key:
    """`inputs.seats[1].slap` -> ("inputs", "seats", 0, "slap"): from a person's count to an index."""
    return tuple(int(p) - 1 if p.isdigit() else p for p in re.split(r"[.\[\]]+", text) if p)


_HEADER = re.compile(r"^\[(\[?)\s*([^\]]+?)\s*\]\]?\s*$")
_ASSIGN = re.compile(r"^([A-Za-z0-9_\-.\" ]+?)\s*=\s*(.*)$")


def key_lines(text: str) -> dict[Key, int]:
    """Where each setting of a TOML file is (1-based line), so a problem can name its line.
    Reads what configuration files hold: tables, arrays of tables, keys, inline tables and
    arrays of inline tables one to a line."""
    lines: dict[Key, int] = {}
    counts: dict[Key, int] = {}
    prefix: Key = ()
    array: tuple[Key, int] | None = None  # inside a multi-line `key = [`: its path, next index
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip() if '"' not in raw else raw.strip()
        if not line:
            continue
        if array is not None:
            path, index = array
            if line.startswith(("{", '"')) or line[0].isdigit():
                lines.setdefault((*path, index), number)
                array = (path, index + 1)
            if line.startswith("]") or line.endswith("]"):
                array = None
            continue
        header = _HEADER.match(line)
        if header:
            parts = tuple(p.strip().strip('"') for p in header.group(2).split("."))
            resolved: list[str | int] = []
            for part in parts:
                resolved.append(part)
                if tuple(resolved) in counts and tuple(resolved) != parts:
                    resolved.append(counts[tuple(resolved)])
            key = tuple(resolved)
            if header.group(1):  # [[array of tables]]
                counts[key] = counts.get(key, -1) + 1
                lines.setdefault(key, number)
                key = (*key, counts[key])
            prefix = key
            lines.setdefault(prefix, number)
            continue
        assign = _ASSIGN.match(line)
        if assign:
            path = (*prefix, *(p.strip().strip('"') for p in assign.group(1).split(".")))
            lines.setdefault(path, number)
            value = assign.group(2)
            if value.startswith("[") and "]" not in value:
                array = (path, 0)
    return lines


def line_of(path: Key, lines: dict[Key, int]) -> int | None:
    """The line of the setting, or of the nearest table around it."""
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return None


def parse_config(data: dict[str, Any], source: str = "table.toml", text: str = "") -> TableConfig:
    """Every problem at once: `file:line: dotted.path: what is wrong` (the line when the
    text of the file is given)."""
    lines = key_lines(text) if text else {}

    def where(path: Key) -> str:
        number = line_of(path, lines)
        return f"{source}:{number}" if number else source

    try:
        cfg = TableConfig.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            path = tuple(p for p in err["loc"] if isinstance(p, str | int))
            problems.append(f"{where(path)}: {dotted(path)}: {err['msg']}")
        raise ConfigError(problems) from None
    problems = [f"{where(undotted(p.split(':', 1)[0]))}: {p}" for p in semantic_problems(cfg)]
    if problems:
        raise ConfigError(problems)
    return cfg


MAX_CONFIG_BYTES = 1 << 20
"""A wiring file is a few kB; anything past a MiB is not one (and is not read whole)."""


def load_config(path: str | Path) -> TableConfig:
    """Whatever bytes the file holds, the answer is a configuration or a ConfigError naming
    the problem: a daemon reloading it must never die of it (docs/daemon.md)."""
    p = Path(path)
    try:  # O_NONBLOCK: opening a FIFO must not wait for a writer; then only a regular file is read
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError([f"{p}: cannot read: {exc.strerror or exc}"]) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError([f"{p}: not a regular file"])
        with open(fd, "rb", closefd=False) as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError([f"{p}: cannot read: {exc.strerror or exc}"]) from None
    finally:
        os.close(fd)
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError([f"{p}: larger than {MAX_CONFIG_BYTES} bytes: not a configuration file"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError([f"{p}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                           f"{exc.start})"]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{p}: {exc}"]) from None
    except RecursionError:
        raise ConfigError([f"{p}: arrays or tables nested too deeply"]) from None
    try:
        return parse_config(data, p.name, text)
    except RecursionError:
        raise ConfigError([f"{p}: arrays or tables nested too deeply"]) from None


WIRING = Path(__file__).parent / "data" / "wiring"  # = hardware/wiring/


def build_file(seats: int) -> Path:
    """The wiring file of the build that has this many seats: the 4-seat box or the 12-seat one."""
    return WIRING / ("4-seat.toml" if seats <= 4 else "12-seat.toml")


def default_config(seats: int = 4) -> TableConfig:
    """The box as built (hardware/wiring/): the 4-seat build for up to 4 seats, the 12-seat
    build for more, with only the first `seats` seats connected. Emulation plays on it too,
    so a laptop runs the very pin map the schematic draws."""
    if not 2 <= seats <= 12:
        raise ConfigError([f"a table has 2 to 12 seats, not {seats}"])
    path = build_file(seats)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data["inputs"]["seats"] = data["inputs"]["seats"][:seats]
    used = {line.get("expander") for seat in data["inputs"]["seats"] for line in seat.values()
            if isinstance(line, dict)}
    data["inputs"]["expanders"] = [e for e in data["inputs"]["expanders"] if e["name"] in used]
    data["screens"] = data["screens"][:seats]
    muxes = {screen.get("mux") for screen in data["screens"]}
    data["i2c_muxes"] = [m for m in data["i2c_muxes"] if m["address"] in muxes]
    return parse_config(data, path.name)


def emulated_config(seats: int = 4) -> TableConfig:
    """The box as built with every part emulated: a laptop runs the very pin map the schematic draws."""
    return as_emulated(default_config(seats))


def as_emulated(config: TableConfig) -> TableConfig:
    return config.model_copy(update={"hardware": HardwareConfig(backend="emulated")})
