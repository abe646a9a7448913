"""Seat OLEDs: the real luma.oled drivers down to the bytes, workers per bus, faults."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from plumbing import wait_for

from firmware_host.devices.displays.oled import DisplaySpec, SeatDisplays, open_luma
from firmware_host.devices.emulated.controllers import ControllerError, SH1106Model, SSD1306Model, model_for
from firmware_host.devices.emulated.oled import RecordingInterface
from firmware_host.table.controls import SeatController
from firmware_host.table.matches import new_match
from firmware_host.views.seat import render_seat


def a_view(seat: int = 0, seed: int = 1) -> Image.Image:
    return render_seat(SeatController(seat, new_match("classic", 4, seed)))


@pytest.mark.parametrize(("kind", "offset", "wire_bytes"), [("ssd1306", 0, 1096), ("sh1106", 2, 1128)])
def test_the_bytes_the_real_driver_sends_decode_back_to_the_view(kind: str, offset: int,
                                                                  wire_bytes: int) -> None:
    interface = RecordingInterface()
    device = open_luma(DisplaySpec(0, kind), interface)
    setup = len(interface.transfers)
    view = a_view()
    device.display(view)
    model = model_for(kind)
    model.feed(interface.transfers)  # the init sequence, then the frame
    assert model.on and model.image(offset=offset).tobytes() == view.tobytes()
    assert interface.i2c_bytes(interface.transfers[setup:]) == wire_bytes


class Screens:
    """Emulated displays: a recording interface each, some of them unplugged or stalled."""

    def __init__(self) -> None:
        self.interfaces: dict[int, RecordingInterface] = {}
        self.stalled: dict[int, threading.Event] = {}  # drawing waits until the event is set
        self.log: list[str] = []

    def open(self, spec: DisplaySpec) -> Any:
        interface = self.interfaces.setdefault(spec.seat, RecordingInterface())
        device = open_luma(spec, interface)
        stall = self.stalled.get(spec.seat)
        if stall is not None:
            real = device.display

            def stalled_display(image: Image.Image) -> None:
                stall.wait(10)
                real(image)

            device.display = stalled_display
        return device

    def picture(self, seat: int) -> bytes:
        model = model_for("ssd1306")
        model.feed(self.interfaces[seat].transfers)
        return model.image().tobytes()


def test_a_view_is_sent_only_when_it_changed() -> None:
    screens = Screens()
    displays = SeatDisplays([DisplaySpec(0)], screens.open)
    try:
        first = a_view()
        assert displays.show(0, first) is True
        assert displays.show(0, first.copy()) is False  # same picture: nothing queued
        wait_for(lambda: displays.status()[0]["frames_sent"] == 1)
        second = a_view(seed=2)
        assert displays.show(0, second) is True
        wait_for(lambda: screens.picture(0) == second.tobytes())
        assert displays.status()[0]["frames_sent"] == 2
    finally:
        displays.close()


def test_a_display_that_fails_goes_offline_and_comes_back_with_the_newest_frame(said) -> None:
    screens = Screens()
    displays = SeatDisplays([DisplaySpec(0)], screens.open)
    try:
        displays.show(0, a_view(seed=1))
        wait_for(lambda: displays.status()[0]["online"])
        screens.interfaces[0].fail = True  # unplugged: OSError 121 on the bus
        displays.show(0, a_view(seed=2))
        wait_for(lambda: not displays.status()[0]["online"])
        assert any(line.startswith("Seat 1's display is not answering (i2c-1 at 0x3c: ") for line in said)
        newest = a_view(seed=3)
        displays.show(0, newest)  # the game goes on while it is away
        screens.interfaces[0].fail = False  # plugged back
        wait_for(lambda: displays.status()[0]["online"], timeout=3)
        wait_for(lambda: screens.picture(0) == newest.tobytes())
        assert "Seat 1's display is back" in said
    finally:
        displays.close()


def test_a_stalled_display_holds_up_only_its_own_bus() -> None:
    screens = Screens()
    release = screens.stalled[0] = threading.Event()
    displays = SeatDisplays([DisplaySpec(0, bus="i2c-3"), DisplaySpec(1, bus="i2c-4")], screens.open)
    try:
        displays.show(0, a_view(0))  # its bus hangs on this frame...
        displays.show(1, a_view(1))  # ...this one is drawn by the other bus's worker
        wait_for(lambda: displays.status()[1]["frames_sent"] == 1)
        assert displays.status()[0]["frames_sent"] == 0  # still stuck
        release.set()
        wait_for(lambda: displays.status()[0]["frames_sent"] == 1)
        names = {t.name for t in threading.enumerate()}
        assert {"display-i2c-3", "display-i2c-4"} <= names
    finally:
        displays.close()


@settings(max_examples=40, deadline=None)
@given(pixels=st.lists(st.tuples(st.integers(0, 127), st.integers(0, 63)), max_size=400),
       kind=st.sampled_from(["ssd1306", "sh1106"]))
def test_our_packing_sends_exactly_the_bytes_lumas_own_driver_sends(pixels: list, kind: str) -> None:
    from luma.oled.device import sh1106, ssd1306

    image = Image.new("1", (128, 64))
    for xy in pixels:
        image.putpixel(xy, 1)
    ours, theirs = RecordingInterface(), RecordingInterface()
    open_luma(DisplaySpec(0, kind), ours).display(image)
    {"ssd1306": ssd1306, "sh1106": sh1106}[kind](theirs, width=128, height=64).display(image)
    assert ours.transfers == theirs.transfers


# ------------------------------------------------------------ the controllers, as their datasheets say


def test_luma_starts_an_ssd1306_with_commands_its_datasheet_defines_and_a_frame_lands_in_ram() -> None:
    interface = RecordingInterface()
    device = open_luma(DisplaySpec(0, "ssd1306"), interface)
    model = SSD1306Model()
    model.feed(interface.transfers)
    assert model.on and model.charge_pump and model.mode == 0  # 8Dh 14h, 20h 00h (horizontal)
    assert model.contrast == 0xCF and model.segment_remap and model.com_reversed
    view = a_view()
    device.display(view)
    model.feed(interface.transfers[-2:])
    assert model.image().tobytes() == view.tobytes()


def test_luma_starts_an_sh1106_and_sends_it_only_the_ssd1306_bytes_it_ignores() -> None:
    interface = RecordingInterface()
    open_luma(DisplaySpec(0, "sh1106"), interface)
    model = SH1106Model()
    model.feed(interface.transfers)
    assert model.on and model.undefined == [0x20, 0x8D]  # SSD1306's memory mode and charge pump


def test_ssd1306_addressing_modes_move_the_pointer_as_section_10_1_3_says() -> None:
    page = SSD1306Model()  # page addressing after reset: past column 127 back to the start column set
    page.feed([("command", bytes([0xB3, 0x0E, 0x17])), ("data", bytes([1, 2, 3]))])  # page 3, col 126
    assert page.ram[3][126:128] == bytes([3, 2]) and page.page == 3 and page.column == 127
    horizontal = SSD1306Model()
    horizontal.feed([("command", bytes([0x20, 0x00, 0x21, 10, 11, 0x22, 1, 2])),
                     ("data", bytes(range(1, 6)))])
    assert (horizontal.ram[1][10:13], horizontal.ram[2][10:12]) == (b"\5\2\0", b"\3\4")  # 5 wrapped
    assert (horizontal.column, horizontal.page) == (11, 1)
    vertical = SSD1306Model()
    vertical.feed([("command", bytes([0x20, 0x01, 0x21, 5, 6, 0x22, 0, 1])), ("data", bytes([7, 8, 9]))])
    assert (vertical.ram[0][5], vertical.ram[1][5], vertical.ram[0][6]) == (7, 8, 9)


def test_a_byte_the_ssd1306_does_not_define_or_a_short_command_is_an_error() -> None:
    with pytest.raises(ControllerError, match="E0h is not an SSD1306 command"):
        SSD1306Model().feed([("command", bytes([0xE0]))])
    with pytest.raises(ControllerError, match="21h needs 2 more bytes, got 1"):
        SSD1306Model().feed([("command", bytes([0x21, 0]))])
    with pytest.raises(ControllerError, match="invalid addressing mode"):
        SSD1306Model().feed([("command", bytes([0x20, 0x03]))])
