"""The table's parts (devices/parts.py): each one object built by board.py that opens, says its
problem, probes itself, registers its own timers and closes; the service only goes round them."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest

from firmware_host.config import TableConfig, emulated_config, parse_config
from firmware_host.devices.board import EmulatedBoard, open_board, open_parts
from firmware_host.devices.buzzer import BUZZERS, Buzzer, BuzzerPlayer, OnOffBuzzer
from firmware_host.devices.parts import MISSING, OK, Check, Part
from firmware_host.service.daemon import Daemon
from firmware_host.service.selftest import SelfTest


def with_buzzer(kind: str) -> TableConfig:
    data = emulated_config(4).model_dump()
    assert data["buzzer"] is not None, "the 4-seat build has a buzzer"
    data["buzzer"]["kind"] = kind
    return parse_config(data)


def probed(parts: Any, config: TableConfig) -> dict[str, tuple[str, str]]:
    """The self-test's probe, run here (on this thread), as `tablectl selftest --probe` reports it."""
    found: list[Any] = []
    test = SelfTest(config, parts, found.append, lambda _seat, _frame: None, probe_only=True)
    test._probe()
    return {c.part: (c.result, c.detail) for c in test.parts}


def test_an_on_off_buzzer_is_built_by_the_board_and_its_self_test_says_what_it_did(dirs: Path) -> None:
    """The issue's case: an on/off buzzer was built in the daemon, and the self-test still said
    "duty 50 %" of it while every test passed. Now the board builds it from `[buzzer] kind`, and
    its line is its own: switched on and off, the line high for the note and low after."""
    config = with_buzzer("on-off")
    daemon = Daemon(config)
    try:
        assert type(daemon.parts.buzzer) is OnOffBuzzer
        found = probed(daemon.parts, config)
        assert found["buzzer"] == ("ok", "played 'go' (350 ms, switched on and off: its own pitch): "
                                         "did you hear it?")
        board = daemon.board
        assert isinstance(board, EmulatedBoard)
        pin = board.factory.pin(18)
        assert [s.state for s in pin.states][-2:] == [True, False]  # on for the note, off after
        assert pin.pwm == []  # never a PWM: an active buzzer makes its own pitch
    finally:
        daemon.close()


@pytest.mark.parametrize("kind", sorted(BUZZERS))
def test_each_kind_of_buzzer_describes_its_own_probe(kind: str) -> None:
    config = with_buzzer(kind)
    board = open_board(config)
    parts = open_parts(board, config, lambda _event: None)
    try:
        assert type(parts.buzzer) is BUZZERS[kind]
        result, detail = probed(parts, config)["buzzer"]
        assert result == OK
        if kind == "pwm":
            assert "duty 50%" in detail
        else:
            assert "duty" not in detail and "switched on and off" in detail
    finally:
        parts.close()


def test_a_part_or_a_buzzer_that_does_not_say_its_probe_cannot_be_built() -> None:
    class Fan(Part):
        def close(self) -> None:
            pass

    with pytest.raises(TypeError, match="probe"):
        Fan()  # type: ignore[abstract]

    class Beeper(Buzzer):  # a new kind that forgot to say what it does with a tune
        def _sound(self, hz: float) -> None:
            pass

        def _silence(self) -> None:
            pass

    with pytest.raises(TypeError, match="_how"):
        Beeper(None)  # type: ignore[abstract]
    assert BuzzerPlayer(None, None).probe(emulated_config(4))[0].detail == "no [buzzer] in the configuration"


class Fan(Part):
    """A part the service has never heard of."""

    name = "fan"

    def __init__(self) -> None:
        self.closed = False
        self.ticks: list[int] = []

    @property
    def problem(self) -> str:
        return "fan: stalled"

    def start(self, timers: Any) -> None:
        timers.register_timer(self.ticks.append, 0)

    def probe(self, config: TableConfig) -> list[Check]:
        return [Check("fan", "GPIO26", MISSING, "stalled at 0 rpm")]

    def close(self) -> None:
        self.closed = True


def test_status_selftest_timers_and_shutdown_go_round_every_part(dirs: Path) -> None:
    """A part added to the board's list is in `tablectl status`'s missing parts, the STATUS=
    line, the self-test's report and shutdown, with no line of the service naming it."""
    config = emulated_config(4)
    board = open_board(config)
    original = open_parts

    fan = Fan()

    def with_fan(*args: Any, **kwargs: Any) -> Any:
        parts = original(*args, **kwargs)
        parts.add(fan)
        return parts

    from firmware_host.service import daemon as module

    module.open_parts = with_fan  # type: ignore[assignment]
    try:
        daemon = Daemon(config, board=board)
    finally:
        module.open_parts = original  # type: ignore[assignment]
    try:
        assert daemon.status.extra()["hardware"]["missing"] == ["fan"]
        assert daemon.status.text().startswith("DEGRADED, not answering: fan; ")
        daemon.loop.settle(5)
        assert fan.ticks == [5]  # its own timer, registered with the loop when the parts started
        found = probed(daemon.parts, config)
        assert found["fan"] == (MISSING, "stalled at 0 rpm")
        assert list(found)[-1] == "fan"  # after the parts the board built before it
    finally:
        daemon.close()
    assert fan.closed


def test_no_component_is_handed_the_daemon(dirs: Path) -> None:
    """Status and the self-test were handed the whole daemon. Now no component holds it, in an
    attribute or in a function it was given (a lambda over `self`, a bound method)."""
    daemon = Daemon(emulated_config(4))
    try:
        def holds_daemon(value: Any, depth: int = 0) -> bool:
            if value is daemon:
                return True
            if depth > 4:
                return False
            if isinstance(value, types.MethodType):
                return holds_daemon(value.__self__, depth + 1)
            if isinstance(value, types.FunctionType):
                return any(holds_daemon(c.cell_contents, depth + 1) for c in value.__closure__ or ())
            if isinstance(value, list | tuple):
                return any(holds_daemon(v, depth + 1) for v in value)
            if isinstance(value, dict):
                return any(holds_daemon(v, depth + 1) for v in value.values())
            return False

        components = [v for v in vars(daemon).values() if hasattr(v, "__dict__")]
        assert len(components) > 10
        holding = [f"{type(c).__name__}.{name}" for c in components for name, value in vars(c).items()
                   if holds_daemon(value)]
        assert holding == []
    finally:
        daemon.close()
