"""The `pi` backend finds the header's GPIO chip by its label, never by its number.

gpiozero, given no chip, opens gpiochip4 on a Pi 5 when that file exists, else gpiochip0. The
RP1's chip moved from gpiochip4 to gpiochip0 in kernel 6.6.45, and later kernels list it from
gpiochip11 on; the label the driver gives it stays. Here a folder stands for /dev and a fake lgpio
answers the GPIO character device's chip-info call the way the kernel does, with the labels the
drivers set (board.HEADER_LABELS); gpiozero's own LGPIOFactory is the one the board opens.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from firmware_host.config import default_config, parse_config
from firmware_host.devices import board as board_module
from firmware_host.devices.board import HardwareUnavailable, PiBoard, find_chip, header_chip

PI5 = 0xC04170  # new-style code: type 0x17 (5B), processor 4 (BCM2712), 4 GB, Sony UK
PI4 = 0xC03111  # type 0x11 (4B), processor 3 (BCM2711)
PI3 = 0xA02082  # type 0x08 (3B), processor 2 (BCM2837)

# A Pi 5 on a recent kernel: the SoC's own brcmstb chips first, the RP1 (the header) at 11.
PI5_CHIPS = {10: "gpio-brcmstb@107d508500", 11: "pinctrl-rp1", 12: "gpio-brcmstb@107d508540",
             13: "gpio-brcmstb@107d517c00", 4: "spare-not-the-header"}


class FakeLgpio:
    """lgpio's chip calls, answered from a table of chip number -> label."""

    def __init__(self, labels: dict[int, str], refuse: frozenset[int] = frozenset()) -> None:
        self.labels, self.refuse = labels, refuse
        self.opened: list[int] = []
        self.closed: list[int] = []

    def gpiochip_open(self, number: int) -> int:
        if number in self.refuse:
            raise OSError(13, "Permission denied")
        if number not in self.labels:
            raise OSError(2, "No such file or directory")
        self.opened.append(number)
        return 100 + number

    def gpio_get_chip_info(self, handle: int) -> tuple[int, int, str, str]:
        number = handle - 100
        return 0, 54, f"gpiochip{number}", self.labels[number]

    def gpiochip_close(self, handle: int) -> None:
        self.closed.append(handle - 100)


MakeDev = Callable[..., tuple[Path, "FakeLgpio"]]


@pytest.fixture
def fake_dev(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MakeDev:
    """Lay out /dev as a folder with the given chips and answer lgpio from their labels."""

    def make(labels: dict[int, str], refuse: frozenset[int] = frozenset()) -> tuple[Path, FakeLgpio]:
        dev = tmp_path / "dev"
        dev.mkdir(exist_ok=True)
        for number in labels:
            (dev / f"gpiochip{number}").touch()
        (dev / "gpiochipX").touch()  # not a chip: ignored
        fake = FakeLgpio(labels, refuse)
        monkeypatch.setattr(board_module, "_import_lgpio", lambda: fake)
        monkeypatch.setattr(board_module, "DEV", dev)
        return dev, fake

    return make


def test_a_pi_5_finds_the_rp1_by_its_label_wherever_the_kernel_numbered_it(fake_dev: MakeDev) -> None:
    dev, fake = fake_dev(PI5_CHIPS)
    number, label, board = header_chip(PI5, dev)
    assert (number, label) == (11, "pinctrl-rp1")
    assert board == "Raspberry Pi 5B (BCM2712, revision c04170)"
    assert sorted(fake.closed) == sorted(fake.opened)  # every chip it looked at is closed again


@pytest.mark.parametrize(("revision", "labels", "expected"), [
    (PI4, {0: "pinctrl-bcm2711", 1: "raspberrypi-exp-gpio"}, (0, "pinctrl-bcm2711")),
    (PI3, {0: "pinctrl-bcm2835", 1: "raspberrypi-exp-gpio"}, (0, "pinctrl-bcm2835")),
    (PI5, {0: "pinctrl-rp1", 10: "gpio-brcmstb@107d508500"}, (0, "pinctrl-rp1")),  # 6.6.45 and later
    (PI5, {0: "gpio-brcmstb@107d508500", 4: "pinctrl-rp1"}, (4, "pinctrl-rp1")),  # before 6.6.45
])
def test_each_board_takes_the_label_its_soc_has(fake_dev: MakeDev, revision: int, labels: dict[int, str],
                                                 expected: tuple[int, str]) -> None:
    dev, _ = fake_dev(labels)
    assert header_chip(revision, dev)[:2] == expected


def test_a_pi_5_does_not_take_a_pi_4s_label_and_the_error_lists_every_chip(fake_dev: MakeDev) -> None:
    dev, _ = fake_dev({0: "pinctrl-bcm2711", 3: "gpio-sim.0-node0", 7: "locked"}, refuse=frozenset({7}))
    with pytest.raises(HardwareUnavailable) as caught:
        header_chip(PI5, dev)
    message = str(caught.value)
    assert message.startswith("no GPIO chip labelled 'pinctrl-rp1' for the header of this Raspberry Pi 5B "
                              "(BCM2712, revision c04170): gpiochip0 (pinctrl-bcm2711), gpiochip3 "
                              "(gpio-sim.0-node0), gpiochip7 (cannot open: [Errno 13] Permission denied)")
    assert "[hardware] chip" in message


def test_no_chips_at_all_is_said_so(fake_dev: MakeDev) -> None:
    dev, _ = fake_dev({})
    with pytest.raises(HardwareUnavailable, match=r"labelled 'pinctrl-bcm2711' .*: no GPIO chips in "):
        header_chip(PI4, dev)


def test_a_chip_named_by_label_is_found_in_number_order(fake_dev: MakeDev) -> None:
    dev, _ = fake_dev({2: "same", 10: "same", 11: "pinctrl-rp1"})
    assert find_chip("same", dev) == 2  # gpiochip2 before gpiochip10, not as the names sort
    assert find_chip("pinctrl-rp1", dev) == 11


class Opened(Exception):
    """Raised by the fake lgpio once gpiozero's factory has opened its chip: the test stops there."""


def pi_config(chip: Any = None) -> Any:
    data = default_config(2).model_dump()
    data["hardware"] = {"backend": "pi", **({"chip": chip} if chip is not None else {})}
    return parse_config(data)


def test_the_pi_board_hands_gpiozero_the_chip_it_found_not_gpiozeros_guess(
        fake_dev: MakeDev, monkeypatch: pytest.MonkeyPatch) -> None:
    """gpiozero's LGPIOFactory, given no chip, would open gpiochip4 here (a Pi 5 revision and a
    /dev/gpiochip4): the board gives it gpiochip11, the RP1's, and gpiozero opens that."""
    import gpiozero.pins.lgpio
    import gpiozero.pins.local

    _, fake = fake_dev(PI5_CHIPS)
    monkeypatch.setattr(gpiozero.pins.local, "get_pi_revision", lambda: PI5)
    monkeypatch.setattr(gpiozero.pins.lgpio, "lgpio", fake)  # the real factory, the fake library
    monkeypatch.setattr(board_module, "_chip_hint", lambda chip: "")
    board = PiBoard(pi_config())
    try:
        assert board.factory.chip == 11 and fake.opened[-1] == 11
        assert board.chip_info() == {"chip": "/dev/gpiochip11", "chip_label": "pinctrl-rp1",
                                     "chip_found": "by its label on this Raspberry Pi 5B (BCM2712, "
                                                   "revision c04170)"}
        assert board.describe() == ("pi (/dev/gpiochip11 'pinctrl-rp1', found by its label on this "
                                    "Raspberry Pi 5B (BCM2712, revision c04170))")
    finally:
        board.close()
    assert 11 in fake.closed


def test_an_explicit_chip_still_wins_and_is_named_with_its_label(
        fake_dev: MakeDev, monkeypatch: pytest.MonkeyPatch) -> None:
    import gpiozero.pins.lgpio
    import gpiozero.pins.local

    _, fake = fake_dev(PI5_CHIPS)
    monkeypatch.setattr(gpiozero.pins.local, "get_pi_revision", lambda: PI5)
    monkeypatch.setattr(gpiozero.pins.lgpio, "lgpio", fake)
    board = PiBoard(pi_config("gpio-brcmstb@107d508540"))
    try:
        assert board.factory.chip == 12
        assert board.chip_info()["chip_label"] == "gpio-brcmstb@107d508540"
        assert board.chip_info()["chip_found"] == "as [hardware] chip names it"
    finally:
        board.close()


def test_a_board_that_is_not_a_pi_says_so_before_looking_for_chips(
        fake_dev: MakeDev, monkeypatch: pytest.MonkeyPatch) -> None:
    import gpiozero.pins.local
    from gpiozero.exc import PinUnknownPi

    fake_dev(PI5_CHIPS)

    def unknown() -> int:
        raise PinUnknownPi("unable to locate Pi revision in /proc/device-tree or /proc/cpuinfo")

    monkeypatch.setattr(gpiozero.pins.local, "get_pi_revision", unknown)
    with pytest.raises(HardwareUnavailable, match=r"^cannot tell which Raspberry Pi this is \(unable to "):
        PiBoard(pi_config())


def test_tablectl_status_names_the_chip_and_its_label(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    from firmware_host.config import emulated_config
    from firmware_host.devices.board import EmulatedBoard
    from firmware_host.service.daemon import Daemon

    for name in ("STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(name, str(tmp_path / name))
    config = emulated_config(2)

    class ChipNamed(EmulatedBoard):
        def chip_info(self) -> dict[str, Any]:
            return {"chip": "/dev/gpiochip11", "chip_label": "pinctrl-rp1", "chip_found": "by its label"}

    daemon = Daemon(config, board=ChipNamed(config))
    try:
        hardware = daemon.status_extra()["hardware"]
    finally:
        daemon.close()
    assert hardware["chip"] == "/dev/gpiochip11" and hardware["chip_label"] == "pinctrl-rp1"
    assert hardware["chip_found"] == "by its label" and hardware["board"] == "emulated"
