"""Configuration: seat wiring, screens, buzzer and the rest of table.toml, as pydantic models.

Types as written (strict mode), every problem with its dotted path; what no schema can express
(two controls on one pin, an expander nobody declared) is `checks.py`, reading the file and naming
lines is `load.py`, the file on disk (the last good copy, `config set`) is `files.py`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..system.paths import ADMIN_GROUP
from ..table.cues import Sound
from ..table.presses import NAV, SELECTS


def pin_index(name: str) -> int:
    """`A0`..`A7` are 0..7, `B0`..`B7` are 8..15."""
    n = name.strip().upper()
    if len(n) == 2 and n[0] in "AB" and n[1] in "01234567":
        return (8 if n[0] == "B" else 0) + int(n[1])
    raise ValueError(f"not an MCP23017 pin: {name!r} (A0..A7, B0..B7)")


OUTPUT_ONLY_PINS = (7, 15)
"""GPA7 and GPB7: output only (Microchip DS20001952D, page 1: as inputs they can corrupt SDA)."""


def input_pin_index(name: str) -> int:
    """A pin a button may use: any but A7 and B7, which are output only."""
    index = pin_index(name)
    if index in OUTPUT_ONLY_PINS:
        port = name.strip().upper()[0]
        raise ValueError(f"MCP23017 pin {name.strip().upper()} (GP{port}7) is output only (Microchip "
                         "DS20001952D: as an input it can corrupt SDA): use A0..A6 or B0..B6")
    return index



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
            raise ValueError("give either gpio = N or expander = \"name\" with pin = \"A0\"..\"B6\"")
        if self.expander is not None:
            if self.pin is None:
                raise ValueError("an expander line needs pin = \"A0\"..\"A6\" or \"B0\"..\"B6\"")
            input_pin_index(self.pin)  # A7 and B7 are output only
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
    min_press_us: float = Field(1000.0, ge=0, le=10_000, description=(
        "a slap line must stay down this long in all before it is a press (stamped with its first "
        "edge): an ESD spike lasts microseconds, a press tens of ms; 0 takes the first edge"))
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
    says which; the daemon reads them from sysfs (firmware_host/devices/i2cmux.py)."""

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
    """The buzzer's GPIO and how it sounds (table/cues.py, devices/buzzer.py; docs/sounds.md)."""

    gpio: int = Field(ge=0, le=27)
    kind: Literal["pwm", "on-off"] = Field(
        "pwm", description="pwm: a passive transducer played at each note's pitch; on-off: an active "
                           "buzzer with its own pitch, only switched on and off")
    enabled: bool = True
    volume: float = Field(1.0, ge=0.0, le=1.0,
                          description="0 silent .. 1 loudest: PWM duty 0 .. 50 % (on-off: above 0 is on)")
    mute: list[Sound] = Field([], description="sounds not to play, e.g. [\"count\"]")


BACKENDS = ("pi", "gpiochip", "emulated")


class HardwareConfig(_Strict):
    """Which hardware the table drives: said in the file, never guessed (firmware_host/devices/board.py)."""

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


class WebConfig(_Strict):
    """The web view (docs/web.md): the live table in a browser, read-only. On the Pi systemd's
    table-web.socket (port 80) wins over bind and port; on a laptop 127.0.0.1 and a free port."""

    enabled: bool = True
    bind: str = Field("127.0.0.1", description="the address to listen on: 127.0.0.1 this machine only, "
                                                "0.0.0.0 every network")
    port: int = Field(0, ge=0, le=65535, description="0: a free port, said in the log")
    max_clients: int = Field(32, ge=1, le=500, description="browsers watching at once; more are refused")
    seat_qr: bool = Field(True, description="the attract screen's seats show the address as a QR code")
    url: str = Field("", max_length=60, pattern=r"^(https?://[^\s/]+/?[^\s]*)?$",
                     description="the address shown and coded, if not the one found (e.g. http://table.local/)")
    names: list[str] = Field([], max_length=16, description="more names browsers may call the table by "
                                                          "(its hostname, HOSTNAME.local and its addresses "
                                                          "need none): a host name or an IP address")

    @model_validator(mode="after")
    def _address(self) -> WebConfig:
        import ipaddress

        try:
            ipaddress.ip_address(self.bind)
        except ValueError:
            raise ValueError(f"bind must be an IP address such as 127.0.0.1, 0.0.0.0 or ::, "
                             f"not {self.bind!r}") from None
        for name in self.names:
            if not _host_name(name):
                raise ValueError(f"names: {name!r} is neither a host name (letters, digits, '-' and dots, "
                                 "such as table.example.org) nor an IP address")
        return self


def _host_name(name: str) -> bool:
    """A host name (RFC 1123 labels) or an IP address."""
    import ipaddress
    import re

    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    label = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    return len(name) <= 253 and re.fullmatch(rf"{label}(?:\.{label})*\.?", name) is not None


class UpdateConfig(_Strict):
    """Where `tablectl update` takes new versions from (docs/keeping.md): a git remote and the
    branch or tag to follow. No source: updates are off, and `tablectl update` says how to set one."""

    source: str = Field("", max_length=500, pattern=r"^([^-\s]\S*)?$",
                        description="a git remote: a URL (https://...) or a repository's path here")
    ref: str = Field("main", max_length=200, pattern=r"^[A-Za-z0-9_.][A-Za-z0-9_./-]*$",
                     description="the branch or tag to install (a branch: its newest commit)")
    python: str = Field("python3", max_length=200, pattern=r"^[^-\s]\S*$",
                        description="the Python that makes each version's environment")


class TableConfig(_Strict):
    hardware: HardwareConfig = HardwareConfig()
    inputs: InputsConfig
    arbiter: ArbiterConfig = ArbiterConfig()
    screens: list[SeatScreen] = []
    i2c_muxes: list[I2CMux] = []
    centre: CentreConfig = CentreConfig()
    buzzer: BuzzerConfig | None = None
    control: ControlConfig = ControlConfig()
    web: WebConfig = WebConfig()
    update: UpdateConfig = UpdateConfig()

    def uses_i2c(self) -> bool:
        return bool(self.inputs.expanders or self.i2c_muxes
                    or any(s.interface == "i2c" for s in self.screens))
