"""An SPI seat display: luma's real SPI interface, D/C and reset on the board's gpiozero pins
(MockFactory here, lgpio on the Pi), the bytes through a fake spidev that notes the D/C and reset
levels each transfer saw. Played into the controller models: the SSD1306 (rev 1.1 §8.1.3, Table
8-4) and SH1106 (V2.3, 4-wire SPI) take a byte as a command with D/C low and as display data with
D/C high, and are reset by a low pulse on RES# before the first byte (SSD1306 §8.9: 3 us at least)."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory
from PIL import Image
from plumbing import wait_for

from firmware_host.config import TableConfig, default_config, parse_config
from firmware_host.devices.displays import oled
from firmware_host.devices.displays.oled import DisplaySpec, SeatDisplays
from firmware_host.devices.emulated.controllers import model_for
from firmware_host.devices.emulated.oled import RecordingInterface, open_recorded

DC, RST = 24, 25


class FakeSpiDev:
    """spidev.SpiDev as luma uses it (open, max_speed_hz, mode, writebytes, close), noting the
    D/C and reset levels on the board's pins at each transfer."""

    def __init__(self, factory: MockFactory, missing: bool = False, dc: int = DC,
                 rst: int | None = RST) -> None:
        self.factory = factory
        self.missing = missing
        self.dc, self.rst = dc, rst
        self.opened: tuple[int, int] | None = None
        self.closed = False
        self.max_speed_hz = 0
        self.mode = 0
        self.writes: list[tuple[bool, bool, bytes]] = []  # (D/C high, reset high, bytes)

    def open(self, port: int, device: int) -> None:
        if self.missing:
            raise FileNotFoundError(2, "No such file or directory")
        self.opened = (port, device)

    def writebytes(self, data: list[int]) -> None:
        assert self.opened and not self.closed
        assert len(data) <= 4096  # spidev's default bufsiz: luma's transfer_size
        reset = self.factory.pin(self.rst).state if self.rst is not None else True
        self.writes.append((self.factory.pin(self.dc).state, reset, bytes(data)))

    def close(self) -> None:
        self.closed = True

    def transfers(self) -> list[tuple[str, bytes]]:
        """What the controller took: a byte with D/C low is a command, with D/C high data."""
        return [("data" if dc else "command", payload) for dc, _, payload in self.writes]


def maker(made: list[FakeSpiDev], factory: MockFactory, **kwargs: Any) -> Callable[[], FakeSpiDev]:
    """A SpiDev factory that keeps what it made."""

    def make() -> FakeSpiDev:
        made.append(FakeSpiDev(factory, **kwargs))
        return made[-1]

    return make


def spi_config(kind: str = "ssd1306", reset: int | None = RST) -> TableConfig:
    screens = [{"interface": "spi", "kind": kind, "spi_device": 0, "dc_gpio": DC, "reset_gpio": reset},
               {"interface": "spi", "kind": kind, "spi_device": 1, "dc_gpio": 23}]
    return parse_config({**default_config(2).model_dump(), "screens": screens, "i2c_muxes": []})


def spi_sysfs(root: Path, *devices: str) -> Path:
    for name in devices:
        (root / "class" / "spidev" / name).mkdir(parents=True)
    return root


def picture(kind: str) -> Image.Image:
    image = Image.new("1", (128, 64))
    for x in range(0, 128, 3):
        image.putpixel((x, (x * 7) % 64), 1)
    return image


@pytest.mark.parametrize(("kind", "offset"), [("ssd1306", 0), ("sh1106", 2)])
def test_luma_sends_commands_with_dc_low_and_the_frame_with_dc_high_after_a_reset_pulse(
        tmp_path: Path, kind: str, offset: int) -> None:
    factory = MockFactory()
    spi: list[FakeSpiDev] = []
    config = spi_config(kind)
    opener = oled.hardware_opener(config.screens, sysfs=spi_sysfs(tmp_path, "spidev0.0"), factory=factory,
                                  spidev=maker(spi, factory))
    device = opener(DisplaySpec(0, kind))
    frame = picture(kind)
    device.display(frame)
    bus = spi[0]
    # Each controller's datasheet clock: the SSD1306 10 MHz at most (8 taken), the SH1106 2 MHz.
    assert bus.opened == (0, 0) and bus.max_speed_hz == {"ssd1306": 8_000_000, "sh1106": 2_000_000}[kind]
    # Reset: low from the moment the pin is taken, high after RESET_HOLD_S, before any byte.
    reset = factory.pin(RST).states
    assert [s.state for s in reset] == [False, True]
    assert reset[1].timestamp >= oled.RESET_HOLD_S
    assert all(rst for _, rst, _ in bus.writes)
    # The controller model decodes what went over the wire: start-up commands, then the frame.
    model = model_for(kind)
    model.feed(bus.transfers())
    assert model.on and model.image(offset=offset).tobytes() == frame.tobytes()
    # The same sequence luma sends over I2C, byte for byte: on SPI D/C says what a control byte
    # (0x00 command, 0x40 data) says on I2C.
    recording = RecordingInterface()
    open_recorded(DisplaySpec(0, kind), recording).display(frame)
    assert bus.transfers() == list(recording.transfers)
    assert {dc for dc, _, _ in bus.writes} == {False, True}
    device.cleanup()
    assert bus.closed
    opener(DisplaySpec(0, kind)).cleanup()  # its pins were let go (no GPIOPinInUse): it opens again


def test_without_reset_wired_only_dc_is_taken(tmp_path: Path) -> None:
    factory = MockFactory()
    config = spi_config()
    made: list[FakeSpiDev] = []
    opener = oled.hardware_opener(config.screens, sysfs=spi_sysfs(tmp_path, "spidev0.1"), factory=factory,
                                  spidev=maker(made, factory, dc=23, rst=None))
    device = opener(DisplaySpec(1, "ssd1306"))
    device.display(picture("ssd1306"))
    assert made[-1].opened == (0, 1) and made[-1].writes
    assert {pin.info.name for pin in factory.pins.values()} == {"GPIO23"}
    device.cleanup()


def test_spi_not_switched_on_is_named_with_its_config_line(tmp_path: Path) -> None:
    factory = MockFactory()
    config = spi_config()
    opener = oled.hardware_opener(config.screens, sysfs=tmp_path, factory=factory,
                                  spidev=lambda: FakeSpiDev(factory))
    with pytest.raises(OSError) as err:
        opener(DisplaySpec(0, "ssd1306"))
    assert str(err.value) == (f"spi0.0: no /dev/spidev0.0 ({tmp_path}/class/spidev/spidev0.0 missing): "
                              "is `dtparam=spi=on` in config.txt and the box rebooted?")
    assert factory.pins == {}  # no pin taken


def test_a_spidev_that_will_not_open_lets_go_of_the_pins_and_says_which(tmp_path: Path) -> None:
    factory = MockFactory()
    config = spi_config()
    opener = oled.hardware_opener(config.screens, sysfs=spi_sysfs(tmp_path, "spidev0.0"), factory=factory,
                                  spidev=lambda: FakeSpiDev(factory, missing=True))
    for _ in range(2):  # the second attempt finds D/C and reset free again
        with pytest.raises(OSError) as err:
            opener(DisplaySpec(0, "ssd1306"))
        assert str(err.value) == "spi0.0 (D/C GPIO24, reset GPIO25): SPI device not found"


def test_without_the_spidev_library_the_error_says_what_to_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "spidev", None)  # import spidev raises ImportError
    config = spi_config()
    opener = oled.hardware_opener(config.screens, sysfs=spi_sysfs(tmp_path, "spidev0.0"),
                                  factory=MockFactory())
    with pytest.raises(OSError, match=r"^spi0\.0: the spidev library is not installed \(.*\): "
                                      r"pip install 'table-host\[pi\]'$"):
        opener(DisplaySpec(0, "ssd1306"))


def test_the_pi_board_hands_its_own_pin_factory_to_the_spi_screens(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from firmware_host.devices import board

    factory = MockFactory()
    made: list[FakeSpiDev] = []
    fake = types.ModuleType("spidev")
    fake.SpiDev = maker(made, factory)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "spidev", fake)  # what `pip install 'table-host[pi]'` brings
    sysfs = spi_sysfs(tmp_path, "spidev0.0")
    monkeypatch.setattr(board, "hardware_opener",
                        lambda *args, **kwargs: oled.hardware_opener(*args, sysfs=sysfs, **kwargs))
    pi = board.PiBoard.__new__(board.PiBoard)  # no lgpio here: the board with a stand-in factory
    pi.factory = factory
    pi.screen_opener(spi_config())(DisplaySpec(0, "ssd1306")).display(picture("ssd1306"))
    assert made[-1].writes and factory.pin(DC).state  # the frame went out, D/C on the board's pin


def test_a_failing_spi_screen_is_retried_through_the_worker_without_leaking_its_pins(
        tmp_path: Path, said: Any) -> None:
    factory = MockFactory()
    fail = [True]

    class Flaky(FakeSpiDev):
        def writebytes(self, data: list[int]) -> None:
            if fail[0]:
                raise OSError(5, "Input/output error")
            super().writebytes(data)

    config = spi_config()
    displays = SeatDisplays(oled.specs_for(config.screens[:1]),
                            oled.hardware_opener(config.screens, sysfs=spi_sysfs(tmp_path, "spidev0.0"),
                                                 factory=factory, spidev=lambda: Flaky(factory)))
    try:
        displays.show(0, picture("ssd1306"))
        wait_for(lambda: displays.status()[0]["failures"] >= 2, timeout=3)
        assert displays.status()[0]["problem"] == "spi0.0: [Errno 5] Input/output error"
        fail[0] = False
        wait_for(lambda: displays.status()[0]["online"], timeout=5)
        assert any(line.startswith("Seat 1's display is not answering (spi-0: spi0.0: ") for line in said)
    finally:
        displays.close()


def test_the_pi_extra_brings_spidev_on_a_pi() -> None:
    import tomllib

    from packaging.requirements import Requirement

    root = Path(__file__).resolve().parents[2]
    pi = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]["pi"]
    spidev = next(Requirement(r) for r in pi if r.startswith("spidev"))
    assert spidev.marker is not None
    assert [spidev.marker.evaluate({"platform_machine": m}) for m in ("aarch64", "armv7l", "x86_64")] == [
        True, True, False]
