"""Screens after decisions, the terminal renderer, PNG capture, display configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from firmware_host.config import ConfigError, emulated_config, parse_config
from firmware_host.devices.displays.oled import specs_for
from firmware_host.games.classic.rules import PlayCard, TurnHand
from firmware_host.service.screen_feed import TableScreens
from firmware_host.table.controls import SeatController
from firmware_host.table.matches import new_match
from firmware_host.ui.terminal import FULL, LOWER, UPPER, capture_png, mono_text, rgb_text


class Sink:
    def __init__(self) -> None:
        self.shown: list[int] = []
        self.last: dict[int, bytes] = {}

    def show(self, seat: int, frame: Image.Image) -> bool:
        if self.last.get(seat) == frame.tobytes():
            return False
        self.last[seat] = frame.tobytes()
        self.shown.append(seat)
        return True


class Centre:
    def __init__(self) -> None:
        self.frames: list[Image.Image] = []

    def show(self, frame: Image.Image) -> None:
        self.frames.append(frame)


def test_in_ligretto_a_decision_redraws_only_the_acting_seat_and_the_centre() -> None:
    match = new_match("classic", 4, 3)
    seats = [SeatController(s, match) for s in range(4)]
    sink, centre = Sink(), Centre()
    screens = TableScreens(seats, sink, centre)
    screens.refresh(range(4))
    sink.shown.clear()
    match.apply(TurnHand(2))
    queued, _ = screens.after_decisions([2])
    assert sink.shown == [2] and queued == 1  # the centre did not change: nothing queued
    card = next(c for c in match.round.visible(1) if match.round.fits(c))
    match.apply(PlayCard(1, card))
    queued, took = screens.after_decisions([1])
    assert sink.shown == [2, 1] and len(centre.frames) == 2 and queued == 2 and took < 1


def test_in_games_with_a_shared_board_every_seat_is_affected() -> None:
    match = new_match("dice", 3, 1)
    screens = TableScreens([SeatController(s, match) for s in range(3)], None, None)
    assert screens.affected([1]) == [0, 1, 2]


def test_the_terminal_draws_two_pixel_rows_per_line() -> None:
    img = Image.new("1", (3, 4))
    img.putpixel((0, 0), 1)
    img.putpixel((1, 1), 1)
    img.putpixel((2, 0), 1)
    img.putpixel((2, 1), 1)
    assert mono_text(img) == f"{UPPER}{LOWER}{FULL}\n"
    rgb = Image.new("RGB", (1, 2))
    rgb.putpixel((0, 0), (255, 0, 0))
    rgb.putpixel((0, 1), (0, 0, 255))
    assert rgb_text(rgb) == f"\x1b[38;2;255;0;0;48;2;0;0;255m{UPPER}\x1b[0m"  # rich's escapes
    from rich.text import Text

    import firmware_host.ui.terminal as terminal

    back = Text.from_ansi(rgb_text(Image.new("RGB", (2, 4), (10, 20, 30))))
    assert back.plain == f"{UPPER * 2}\n{UPPER * 2}"
    assert {str(span.style) for span in back.spans} == {"#0a141e on #0a141e"}
    assert "\\x1b" not in Path(terminal.__file__).read_text()  # it was: 24-bit escapes by hand


def test_a_png_of_the_table_holds_the_real_frames(tmp_path) -> None:
    centre = Image.new("RGB", (32, 16), (0, 0, 0))
    centre.putpixel((0, 0), (255, 0, 0))
    seat = Image.new("1", (128, 64))
    seat.putpixel((0, 0), 1)
    sheet = capture_png(tmp_path / "table.png", centre, [seat, seat])
    assert (tmp_path / "table.png").exists()
    colours = dict((rgb, n) for n, rgb in sheet.getcolors(maxcolors=10_000))
    assert colours[(255, 0, 0)] == 64  # one centre pixel, 8x8 on the picture


def test_each_seat_has_a_screen_on_its_own_mux_channel_by_default() -> None:
    specs = specs_for(emulated_config(4).screens)
    assert [s.bus for s in specs] == [f"mux 0x70 channel {c}" for c in range(4)]  # a worker each
    assert {s.address for s in specs} == {0x3C}


def test_display_configuration_problems_are_named() -> None:
    base = emulated_config(2).model_dump()
    base["screens"] = [{"bus": 3}, {"bus": 3}]
    with pytest.raises(ConfigError, match=r"screens\[2\]: same place \(i2c-3, address 0x3c\) as "
                                          r"screens\[1\]"):
        parse_config(base)
    base["screens"] = [{"bus": 3}, {"interface": "spi"}]
    with pytest.raises(ConfigError, match="an SPI display needs dc_gpio"):
        parse_config(base)
    base["screens"] = [{"bus": 3}]
    with pytest.raises(ConfigError, match="1 screens for 2 seats"):
        parse_config(base)
    base["screens"] = []
    base["centre"] = {"width": 24}
    with pytest.raises(ConfigError, match="whole 16x16 panels"):
        parse_config(base)
