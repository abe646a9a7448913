"""Seat OLEDs behind TCA9548A channels: the bus of each channel is read from sysfs as the kernel
lays it out (drivers/i2c/i2c-mux.c, i2c_mux_add_adapter: the mux device's `channel-N` links to
the channel adapters `i2c-M`; i2c-core-base.c names the mux device `<bus>-<addr %04x>`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from plumbing import wait_for

from firmware_host.config import ConfigError, I2CMux, SeatScreen, default_config, parse_config
from firmware_host.devices.displays import oled
from firmware_host.devices.displays.oled import SeatDisplays
from firmware_host.devices.emulated.controllers import model_for
from firmware_host.devices.emulated.oled import RecordingInterface, recording_opener
from firmware_host.devices.i2cmux import I2CBusMissing, channel_bus, check_i2c_dev, resolve_bus

PI4_I2C1 = "devices/platform/soc/fe804000.i2c"  # bcm2711's i2c_arm controller
PI5_I2C1 = "devices/platform/axi/1000120000.pcie/1f00074000.i2c"  # RP1's i2c1


def kernel_mux(sysfs: Path, controller: str, parent: int, address: int, buses: dict[int, int],
               driver: bool = True) -> Path:
    """A mux as the kernel leaves it in sysfs: the client device under its parent adapter,
    linked from /sys/bus/i2c/devices; each channel a child adapter `i2c-M` of the parent
    adapter (adap.dev.parent = &parent->dev), the mux's `channel-N` a relative link to it."""
    adapter = sysfs / controller / f"i2c-{parent}"
    device = adapter / f"{parent}-{address:04x}"
    device.mkdir(parents=True)
    (device / "name").write_text("pca9548\n")
    if driver:
        drivers = sysfs / "bus/i2c/drivers/pca954x"
        drivers.mkdir(parents=True, exist_ok=True)
        (device / "driver").symlink_to(os.path.relpath(drivers, device))
    links = sysfs / "bus/i2c/devices"
    links.mkdir(parents=True, exist_ok=True)
    (links / device.name).symlink_to(os.path.relpath(device, links))
    for channel, bus in buses.items():
        (adapter / f"i2c-{bus}").mkdir()
        (device / f"channel-{channel}").symlink_to(f"../i2c-{bus}")
        adapter_link(sysfs, adapter / f"i2c-{bus}")
    return device


def adapter_link(sysfs: Path, adapter: Path, i2c_dev: bool = True) -> None:
    """An adapter in /sys/bus/i2c/devices and, with i2c-dev loaded, its /sys/class/i2c-dev entry
    (drivers/i2c/i2c-dev.c names it i2c-%d after the adapter's number)."""
    adapter.mkdir(parents=True, exist_ok=True)
    links = sysfs / "bus/i2c/devices"
    links.mkdir(parents=True, exist_ok=True)
    (links / adapter.name).symlink_to(os.path.relpath(adapter, links))
    if i2c_dev:
        (adapter / "i2c-dev" / adapter.name).mkdir(parents=True)
        (sysfs / "class/i2c-dev").mkdir(parents=True, exist_ok=True)
        (sysfs / "class/i2c-dev" / adapter.name).symlink_to(
            os.path.relpath(adapter / "i2c-dev" / adapter.name, sysfs / "class/i2c-dev"))


def pi4(tmp_path: Path, muxes: int = 1) -> Path:
    """A Pi 4: aliases up to i2c20/i2c21, so the first mux's channels are 22..29, the next 30..37."""
    for m in range(muxes):
        kernel_mux(tmp_path, PI4_I2C1, 1, 0x70 + m, {c: 22 + 8 * m + c for c in range(8)})
    return tmp_path


def pi5(tmp_path: Path) -> Path:
    """A Pi 5: aliases up to i2c10, so the mux's channels are 11..18."""
    kernel_mux(tmp_path, PI5_I2C1, 1, 0x70, {c: 11 + c for c in range(8)})
    return tmp_path


def recorded(tmp_path: Path, state: str) -> Path:
    """The sysfs a real kernel showed (tests/golden/i2c-mux-sysfs-linux-6.1.txt), rebuilt."""
    golden = Path(__file__).parents[1] / "golden" / "i2c-mux-sysfs-linux-6.1.txt"
    snapshots: dict[str, list[str]] = {}
    for line in golden.read_text().splitlines():
        if line.startswith("== "):
            current = snapshots.setdefault(line[3:].split(":")[0], [])
        elif line and not line.startswith("#"):
            current.append(line)
    root = tmp_path / state
    for line in snapshots[state]:
        kind, path, *rest = line.split(" ", 2)
        where = root / path.removeprefix("/sys/")
        real = Path(os.path.realpath(where.parent))
        real.mkdir(parents=True, exist_ok=True)
        if kind == "l":
            Path(os.path.normpath(real / rest[0])).mkdir(parents=True, exist_ok=True)
            where.symlink_to(rest[0])
        else:
            (real / where.name).write_text(rest[0] + "\n" if rest else "")
    return root


def test_against_what_a_real_kernel_showed(tmp_path: Path) -> None:
    """Linux 6.1, i2c-stub as i2c-1, the i2c-mux core numbering the channels itself."""
    before = recorded(tmp_path, "before")
    with pytest.raises(I2CBusMissing, match="^the i2c-mux at 0x70 on i2c-1 has no channel-0 in sysfs "
                                            r"\(.*/1-0070/channel-0 missing\): no driver has taken it"):
        channel_bus(1, 0x70, 0, before)
    after = recorded(tmp_path, "after")
    assert [channel_bus(1, 0x70, c, after) for c in range(8)] == [2, 3, 4, 5, 6, 7, 8, 9]
    for bus in range(2, 10):
        check_i2c_dev(bus, after)
    with pytest.raises(I2CBusMissing, match=r"^no i2c-mux at 0x71 on i2c-1 in sysfs"):
        channel_bus(1, 0x71, 0, after)


def buses_of(seats: int, sysfs: Path) -> list[int]:
    config = default_config(seats)
    return [resolve_bus(screen, config.i2c_muxes, sysfs) for screen in config.screens]


def test_the_4_seat_box_finds_its_channels_on_a_pi_4_and_on_a_pi_5(tmp_path: Path) -> None:
    assert buses_of(4, pi4(tmp_path / "pi4")) == [22, 23, 24, 25]
    assert buses_of(4, pi5(tmp_path / "pi5")) == [11, 12, 13, 14]


def test_the_12_seat_box_finds_the_channels_of_both_muxes(tmp_path: Path) -> None:
    assert buses_of(12, pi4(tmp_path, muxes=2)) == [22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33]


def test_the_channel_links_are_read_not_counted(tmp_path: Path) -> None:
    """The kernel can hand out numbers in any order (a module loads late): each link counts."""
    kernel_mux(tmp_path, PI4_I2C1, 1, 0x70, {0: 29, 1: 23, 2: 40, 3: 22})
    assert buses_of(4, tmp_path) == [29, 23, 40, 22]


def test_a_fixed_bus_overrides_the_lookup(tmp_path: Path) -> None:
    screen = SeatScreen(mux=0x70, channel=0, bus=5)
    assert resolve_bus(screen, [I2CMux(address=0x70)], tmp_path) == 5  # no sysfs needed
    assert resolve_bus(SeatScreen(bus=3), [], tmp_path) == 3


def test_a_missing_mux_is_named_exactly(tmp_path: Path) -> None:
    with pytest.raises(I2CBusMissing) as err:
        resolve_bus(SeatScreen(mux=0x70, channel=1), [I2CMux(address=0x70)], tmp_path)
    assert str(err.value) == (
        f"no i2c-mux at 0x70 on i2c-1 in sysfs ({tmp_path}/bus/i2c/devices/1-0070 missing): "
        "is `dtoverlay=i2c-mux,pca9548,addr=0x70` in config.txt and the box rebooted?")


def test_a_missing_channel_link_is_named_exactly(tmp_path: Path) -> None:
    kernel_mux(tmp_path, PI4_I2C1, 1, 0x70, {c: 22 + c for c in range(4)})  # a 4-channel chip's worth
    with pytest.raises(I2CBusMissing) as err:
        channel_bus(1, 0x70, 5, tmp_path)
    assert str(err.value) == (
        "the i2c-mux at 0x70 on i2c-1 has channels 0, 1, 2, 3 but no channel-5 in sysfs "
        f"({tmp_path}/bus/i2c/devices/1-0070/channel-5 missing): "
        "is it a pca9548 (8 channels) in config.txt's dtoverlay line?")


def test_a_mux_no_driver_took_says_so(tmp_path: Path) -> None:
    kernel_mux(tmp_path, PI4_I2C1, 1, 0x71, {}, driver=False)  # in the device tree, chip silent
    with pytest.raises(I2CBusMissing, match=r"^the i2c-mux at 0x71 on i2c-1 has no channel-0 in "
                       r"sysfs \(.*/1-0071/channel-0 missing\): no driver has taken it \(yet\): .*"
                       r"`i2cdetect -y 1` shows 71 or UU"):
        channel_bus(1, 0x71, 0, tmp_path)


# ------------------------------------------------------------ through the real opener


class Bus(RecordingInterface):
    """A recorded /dev/i2c-N that counts how often it was closed."""

    def __init__(self) -> None:
        super().__init__()
        self.opened = 1
        self.closed = 0

    def cleanup(self) -> None:
        self.closed += 1


@pytest.fixture
def luma_i2c(monkeypatch: pytest.MonkeyPatch) -> dict[int, Bus]:
    """luma's I2C interface, recorded: which /dev/i2c-N each display was opened on."""
    import luma.core.interface.serial as serial

    opened: dict[int, Bus] = {}

    def i2c(port: int = 1, address: int = 0x3C, **_: Any) -> Bus:
        if port in opened:
            opened[port].opened += 1
        return opened.setdefault(port, Bus())

    monkeypatch.setattr(serial, "i2c", i2c)
    return opened


def picture(interface: RecordingInterface) -> bytes:
    model = model_for("ssd1306")
    model.feed(interface.transfers)
    return model.image().tobytes()


def frame(seat: int) -> Image.Image:
    image = Image.new("1", (128, 64))
    image.putpixel((seat, seat), 1)
    return image


def test_on_a_pi_4_the_oleds_are_opened_on_the_kernels_buses_not_10_to_13(
        tmp_path: Path, luma_i2c: dict[int, Bus]) -> None:
    """The old wiring files said /dev/i2c-10..13: on a Pi 4 those are not the mux's channels."""
    config = default_config(4)
    displays = SeatDisplays(oled.specs_for(config.screens),
                            oled.hardware_opener(config.screens, config.i2c_muxes, pi4(tmp_path)))
    try:
        for seat in range(4):
            displays.show(seat, frame(seat))
        wait_for(lambda: all(s["online"] for s in displays.status().values()))
        assert sorted(luma_i2c) == [22, 23, 24, 25]
        assert not {10, 11, 12, 13} & set(luma_i2c)
        assert [picture(luma_i2c[22 + seat]) for seat in range(4)] == [frame(s).tobytes() for s in range(4)]
    finally:
        displays.close()


def test_a_missing_channel_degrades_its_seat_only_and_says_why(
        tmp_path: Path, luma_i2c: dict[int, Bus], said) -> None:
    kernel_mux(tmp_path, PI5_I2C1, 1, 0x70, {0: 11, 1: 12, 3: 14})  # channel 2's link is gone
    config = default_config(4)
    log = said
    displays = SeatDisplays(oled.specs_for(config.screens),
                            oled.hardware_opener(config.screens, config.i2c_muxes, tmp_path))
    try:
        for seat in range(4):
            displays.show(seat, frame(seat))
        wait_for(lambda: sum(s["online"] for s in displays.status().values()) == 3 and list(log))
        status = displays.status()
        assert [status[s]["online"] for s in range(4)] == [True, True, False, True]
        assert status[2]["problem"].startswith("the i2c-mux at 0x70 on i2c-1 has channels 0, 1, 3 but no "
                                               "channel-2")
        assert list(log) == [f"Seat 3's display is not answering (mux 0x70 channel 2 at 0x3c: "
                             f"{status[2]['problem']}); retried every 8 s at most"]
    finally:
        displays.close()


def test_a_mux_that_appears_late_is_found_at_the_next_retry(
        tmp_path: Path, luma_i2c: dict[int, Bus], said) -> None:
    config = default_config(2)
    log = said
    displays = SeatDisplays(oled.specs_for(config.screens),
                            oled.hardware_opener(config.screens, config.i2c_muxes, tmp_path))
    try:
        displays.show(0, frame(0))
        displays.show(1, frame(1))
        wait_for(lambda: len(list(log)) == 2)  # one line a seat, in whichever order their workers ran
        first = sorted(log)[0]
        assert first == ("Seat 1's display is not answering (mux 0x70 channel 0 at 0x3c: no i2c-mux at "
                         f"0x70 on i2c-1 in sysfs ({tmp_path}/bus/i2c/"
                         "devices/1-0070 missing): is `dtoverlay=i2c-mux,pca9548,addr=0x70` in config.txt "
                         "and the box rebooted?); retried every 8 s at most")
        pi4(tmp_path)  # the module loads after the daemon started
        wait_for(lambda: all(s["online"] for s in displays.status().values()), timeout=3)
        assert sorted(luma_i2c) == [22, 23]
        assert "Seat 1's display is back" in log
    finally:
        displays.close()


def test_a_fixed_bus_is_opened_as_given(tmp_path: Path, luma_i2c: dict[int, Bus]) -> None:
    data = default_config(2).model_dump()
    data["screens"][1]["bus"] = 7  # someone knows better
    config = parse_config(data)
    adapter_link(tmp_path, tmp_path / "devices/platform/soc/fe805000.i2c/i2c-7")
    displays = SeatDisplays(oled.specs_for(config.screens),
                            oled.hardware_opener(config.screens, config.i2c_muxes, pi4(tmp_path)))
    try:
        displays.show(0, frame(0))
        displays.show(1, frame(1))
        wait_for(lambda: all(s["online"] for s in displays.status().values()))
        assert sorted(luma_i2c) == [7, 22]
        assert [s.bus for s in oled.specs_for(config.screens)] == ["mux 0x70 channel 0", "i2c-7"]
    finally:
        displays.close()


def test_a_bus_without_i2c_dev_or_a_bus_that_is_not_there_is_named(
        tmp_path: Path, luma_i2c: dict[int, Bus]) -> None:
    config = parse_config({**default_config(2).model_dump(), "screens": [{"bus": 3}, {"bus": 4}]})
    adapter_link(tmp_path, tmp_path / PI4_I2C1 / "i2c-3", i2c_dev=False)
    opener = oled.hardware_opener(config.screens, config.i2c_muxes, tmp_path)
    with pytest.raises(I2CBusMissing) as err:
        opener(oled.specs_for(config.screens)[0])
    assert str(err.value) == (
        f"no /dev/i2c-3: the i2c-dev module is not loaded ({tmp_path}/class/i2c-dev/i2c-3 missing; "
        "`sudo modprobe i2c-dev`, and list i2c-dev in /etc/modules-load.d/ so it loads at boot)")
    with pytest.raises(I2CBusMissing, match=r"^no bus i2c-4 in sysfs \(.*/bus/i2c/devices/i2c-4 missing\)"):
        opener(oled.specs_for(config.screens)[1])
    assert luma_i2c == {}


def test_a_display_that_keeps_failing_closes_its_bus_every_time(
        tmp_path: Path, luma_i2c: dict[int, Bus]) -> None:
    """smbus2 holds /dev/i2c-N open until closed: a retry every 8 s must not leak a file each."""
    config = default_config(2)
    displays = SeatDisplays(oled.specs_for(config.screens),
                            oled.hardware_opener(config.screens, config.i2c_muxes, pi4(tmp_path)))
    try:
        displays.show(0, frame(0))
        displays.show(1, frame(1))
        wait_for(lambda: all(s["online"] for s in displays.status().values()))
        luma_i2c[23].fail = True  # seat 2's OLED unplugged: no answer at 0x3c
        displays.show(1, frame(2))
        wait_for(lambda: luma_i2c[23].opened >= 3)  # failed while drawing, then failed to open again
        wait_for(lambda: luma_i2c[23].closed == luma_i2c[23].opened)
        assert displays.status()[1]["problem"].startswith("i2c-23 (mux 0x70 channel 1), address 0x3c: ")
        assert luma_i2c[22].closed == 0 and displays.status()[0]["online"]
    finally:
        displays.close()


def test_emulation_opens_no_bus(luma_i2c: dict[int, Bus]) -> None:
    config = default_config(4)
    interfaces: dict[int, Bus] = {}
    displays = SeatDisplays(oled.specs_for(config.screens), recording_opener(interfaces))
    try:
        for seat in range(4):
            displays.show(seat, frame(seat))
        wait_for(lambda: all(s["online"] for s in displays.status().values()))
        assert sorted(interfaces) == [0, 1, 2, 3] and luma_i2c == {}
    finally:
        displays.close()


# ------------------------------------------------------------ configuration


def test_screens_name_their_mux_and_channel(tmp_path: Path) -> None:
    config = default_config(12)
    assert [(s.mux, s.channel) for s in config.screens] == [(0x70, c) for c in range(8)] + \
        [(0x71, c) for c in range(4)]
    assert all(s.bus is None for s in config.screens)
    assert [m.address for m in config.i2c_muxes] == [0x70, 0x71]


def test_old_first_bus_and_bad_placements_name_their_line(tmp_path: Path) -> None:
    from firmware_host.config import load_config

    text = Path(oled.__file__).parents[2].joinpath("data/wiring/4-seat.toml").read_text()
    text = text.replace("bus = 1  # its channels'", "first_bus = 10\nbus = 1  # its channels'")
    text = text.replace("mux = 0x70\nchannel = 3", "mux = 0x71\nchannel = 3")
    text = text.replace("mux = 0x70\nchannel = 2  # SD2/SC2", "mux = 0x70")
    path = tmp_path / "table.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    lines = text.splitlines()
    mux_line = lines.index("[[i2c_muxes]]  # a TCA9548A on i2c-1 (config.txt: dtoverlay=i2c-mux,pca9548,"
                           "addr=0x70)") + 1
    seat3 = lines.index("[[screens]]  # seat 3") + 1
    assert f"table.toml:{mux_line}: i2c_muxes[1]: Value error, first_bus is gone" in str(err.value)
    assert f"table.toml:{seat3}: screens[3]: Value error, give mux = 0x70..0x77 and channel = 0..7 " \
           "together" in str(err.value)
    path.write_text(text.replace("first_bus = 10\n", "").replace("mux = 0x70\naddress", "mux = 0x70\n"
                                                                  "channel = 2\naddress"))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    seat4_mux = lines.index("[[screens]]  # seat 4") + 3
    assert str(err.value) == f"table.toml:{seat4_mux}: screens[4].mux: no [[i2c_muxes]] at 0x71"


def test_two_screens_on_one_channel_are_refused() -> None:
    data = default_config(2).model_dump()
    data["screens"][1]["channel"] = 0
    with pytest.raises(ConfigError, match=r"screens\[2\]: same place \(mux 0x70 channel 0, address 0x3c\) "
                                          r"as screens\[1\]"):
        parse_config(data)


def test_the_pi_board_opens_screens_through_the_sysfs_lookup() -> None:
    from firmware_host.devices.board import PiBoard

    if Path("/sys/bus/i2c/devices/1-0070").exists():
        pytest.skip("this machine has a mux at 0x70 on i2c-1")
    config = default_config(4)
    board = object.__new__(PiBoard)  # its GPIO side is not needed for I2C screens
    board.factory = None
    opener = board.screen_opener(config)
    with pytest.raises(I2CBusMissing, match=r"^no i2c-mux at 0x70 on i2c-1 in sysfs \(/sys/bus/i2c/devices/"
                                            r"1-0070 missing\)"):
        opener(oled.specs_for(config.screens)[0])


class SMBusOnlyAdapter:
    """/dev/i2c-N on an adapter that does SMBus transfers only, as the kernel's i2c-stub: its
    I2C_FUNCS (smbus2's `funcs`) lack I2C_FUNC_I2C, and a plain I2C write (I2C_RDWR) fails with
    EOPNOTSUPP (drivers/i2c/i2c-core-base.c, __i2c_transfer without master_xfer)."""

    def __init__(self, funcs: int) -> None:
        self.funcs = funcs
        self.blocks: list[tuple[int, int, bytes]] = []
        self.closed = 0

    def write_i2c_block_data(self, address: int, register: int, data: list[int]) -> None:
        assert len(data) <= 32  # I2C_SMBUS_BLOCK_MAX
        self.blocks.append((address, register, bytes(data)))

    def i2c_rdwr(self, *messages: Any) -> None:
        raise OSError(95, "Operation not supported")

    def close(self) -> None:
        self.closed += 1


@pytest.mark.parametrize("plain_i2c", [False, True])
def test_an_smbus_only_adapter_gets_the_frame_in_32_byte_blocks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plain_i2c: bool) -> None:
    """luma's own interface on the real opener: on an adapter without plain I2C the frame goes as
    I2C-block writes (command mode 0x00, data 0x40: SSD1306 datasheet §8.1.5.2, the control
    byte's D/C# bit), and the controller model shows the frame; with plain I2C, luma's 4 KiB
    write is used as before, and here refused, so the screen is offline saying why."""
    import smbus2

    from firmware_host.config import SeatScreen

    adapter = SMBusOnlyAdapter(0x0C7F0000 | (oled.I2C_FUNC_I2C if plain_i2c else 0))  # i2c-stub's funcs
    monkeypatch.setattr(smbus2, "SMBus", lambda port: adapter)
    (tmp_path / "class/i2c-dev/i2c-7").mkdir(parents=True)
    screens = [SeatScreen(bus=7, address=0x3C)]
    opener = oled.hardware_opener(screens, [], tmp_path)
    spec = oled.DisplaySpec(0, "ssd1306", "i2c-7", 0x3C)
    if plain_i2c:
        with pytest.raises(OSError, match=r"i2c-7, address 0x3c: \[Errno 95\] Operation not supported"):
            opener(spec)
        assert adapter.closed == 1  # its file closed again
        return
    device = opener(spec)
    device.display(frame(5))
    assert {address for address, _, _ in adapter.blocks} == {0x3C}
    assert {register for _, register, _ in adapter.blocks} == {0x00, 0x40}
    model = model_for("ssd1306")
    model.feed([("command" if register == 0x00 else "data", data) for _, register, data in adapter.blocks])
    assert model.image().tobytes() == frame(5).tobytes()
    device.cleanup()
    assert adapter.closed == 1
