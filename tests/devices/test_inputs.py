"""Seat inputs through real gpiozero mock pins with exact timestamps, and their configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware_host.config import ConfigError, emulated_config, load_config, parse_config, pin_index
from firmware_host.devices.emulated.mcp23017 import EmulatedBus, EmulatedMCP23017
from firmware_host.devices.emulated.pins import EmulatedButtons, emulated_factory
from firmware_host.devices.inputs.mcp23017 import GPINTENA, GPINTENB, IOCON, IOCON_MIRROR
from firmware_host.devices.inputs.pins import TableInputs
from firmware_host.table.presses import SETTLE_GRACE_NS, Event, InputEvent, LineFilter, StartGate

MS = 1_000_000


@pytest.fixture
def table():
    """Four seats wired as the emulated default, started ("go") at 0."""

    def make(seats: int = 4, lockout_ms: float = 0.0):
        cfg = emulated_config(seats)
        if lockout_ms:
            data = cfg.model_dump()
            data["inputs"]["false_start_lockout_ms"] = lockout_ms
            cfg = parse_config(data)
        factory = emulated_factory()
        buttons = EmulatedButtons(cfg.inputs, factory)
        events: list[InputEvent] = []
        inputs = TableInputs(cfg.inputs, factory, buttons.buses, events.append)
        inputs.gate.go(0)
        return buttons, inputs, events

    return make


def presses(events: list[InputEvent]) -> list[tuple[int, str, int]]:
    return [(e.seat, e.control, e.ts) for e in events if e.kind is Event.PRESS]


def test_a_press_carries_the_edge_timestamp_not_the_callback_time(table) -> None:
    buttons, _, events = table()
    buttons.set(2, "slap", True, 1_234_567_891)
    assert presses(events) == [(2, "slap", 1_234_567_891)]


def test_bounces_within_30_ms_are_dropped_and_the_first_contact_counts(table) -> None:
    buttons, _, events = table()
    t = 5_000 * MS
    for i, down in enumerate([True, False, True, False, True]):  # chatter 1 ms apart
        buttons.set(0, "slap", down, t + i * MS)
    buttons.set(0, "slap", False, t + 40 * MS)
    buttons.set(0, "slap", True, t + 100 * MS)  # a real second press
    assert presses(events) == [(0, "slap", t), (0, "slap", t + 100 * MS)]


def test_a_button_held_2_s_is_stuck_ignored_until_released_and_reported(table) -> None:
    buttons, inputs, events = table()
    buttons.set(1, "slap", True, 10_000 * MS)
    assert inputs.next_deadline() == 12_000 * MS  # the caller's timer, no polling
    inputs.tick(11_999 * MS)
    assert not [e for e in events if e.kind is Event.STUCK]
    inputs.tick(12_000 * MS)
    assert events[-1] == InputEvent(Event.STUCK, 1, "slap", 12_000 * MS)
    buttons.set(1, "slap", False, 15_000 * MS)
    assert events[-1].kind is Event.UNSTUCK
    buttons.set(1, "slap", True, 16_000 * MS)
    assert presses(events)[-1] == (1, "slap", 16_000 * MS)  # works again


def test_a_button_held_at_start_up_is_no_press() -> None:
    flt = LineFilter()
    flt.start(True, 0)
    assert flt.edge(True, 10 * MS) is None
    assert flt.check(2_000 * MS) is Event.STUCK


def test_presses_before_go_are_false_starts_and_navigation_still_works(table) -> None:
    buttons, inputs, events = table()
    inputs.gate.arm()
    buttons.tap(0, "slap", 100 * MS)
    buttons.tap(0, "left", 200 * MS)
    assert next(e.kind for e in events if e.control == "slap") is Event.FALSE_START
    assert (0, "left", 200 * MS) in presses(events)


def test_an_optional_lockout_holds_back_who_jumped_the_start(table) -> None:
    buttons, inputs, events = table(lockout_ms=250)
    inputs.gate.arm()
    buttons.tap(0, "slap", 900 * MS)  # seat 1 jumps
    inputs.gate.go(1_000 * MS)
    buttons.tap(0, "slap", 1_100 * MS)  # inside seat 1's 250 ms lockout
    buttons.tap(1, "slap", 1_100 * MS)  # seat 2 did nothing wrong
    buttons.tap(0, "slap", 1_300 * MS)
    assert presses(events) == [(1, "slap", 1_100 * MS), (0, "slap", 1_300 * MS)]


def test_start_gate_alone() -> None:
    gate = StartGate(lockout_ns=250 * MS)
    assert gate.admit(0, 5) is None  # no countdown: presses count (the lobby)
    gate.arm()
    assert gate.admit(0, 5) is Event.FALSE_START  # counting down, no go yet
    gate.go(100)
    assert gate.admit(1, 100) is None


def test_navigation_on_the_expander_is_stamped_with_its_interrupt_edge(table) -> None:
    buttons, _, events = table(seats=12)
    buttons.set(7, "left", True, 3_000 * MS)  # seat 8's nav sits on expander x3, port B
    buttons.set(7, "left", False, 3_090 * MS)
    buttons.set(6, "alt", True, 3_500 * MS)  # seat 7 on the same chip, port A
    assert presses(events) == [(7, "left", 3_000 * MS), (6, "alt", 3_500 * MS)]
    assert [e.kind for e in events if e.seat == 7] == [Event.PRESS, Event.RELEASE]


def test_an_expander_that_fails_is_reported_once_retried_with_backoff_and_comes_back(table) -> None:
    buttons, inputs, events = table(seats=12)
    chip = buttons.chips["nav1"]
    chip.fail = True  # unplugged
    buttons.set(0, "right", True, 1_000 * MS)
    assert events[-1].kind == "fault" and "Remote I/O error" in events[-1].detail
    assert inputs.next_deadline() == 1_100 * MS  # first retry after 100 ms
    inputs.tick(1_100 * MS)
    assert inputs.next_deadline() == 1_300 * MS  # still gone: 200 ms, and no second report
    assert [e.kind for e in events].count("fault") == 1
    buttons.set(1, "up", True, 1_250 * MS)  # pressed while the chip is away
    chip.fail = False  # plugged back
    inputs.tick(1_300 * MS)
    back = [e.kind for e in events].index("recovered")
    # Both buttons pressed while it was away count, from when they were seen.
    assert sorted(presses(events[back:])) == [(0, "right", 1_300 * MS), (1, "up", 1_300 * MS)]
    buttons.set(1, "up", False, 1_400 * MS)
    buttons.set(0, "left", True, 1_500 * MS)
    assert presses(events)[-1] == (0, "left", 1_500 * MS)  # interrupts work again


def test_the_driver_programs_the_chip_for_mirrored_change_interrupts() -> None:
    chip = EmulatedMCP23017()
    bus = EmulatedBus({0x21: chip})
    from firmware_host.devices.inputs.mcp23017 import MCP23017

    MCP23017(bus, 0x21, [pin_index("A0"), pin_index("B4")]).setup()
    assert chip.regs[IOCON] == IOCON_MIRROR
    assert chip.regs[GPINTENA] == 0x01 and chip.regs[GPINTENB] == 0x10
    with pytest.raises(OSError, match="no device at 0x22"):
        bus.read_byte_data(0x22, 0)
    with pytest.raises(ValueError, match="not an MCP23017 pin"):
        pin_index("C1")


def test_out_of_order_delivery_through_pins_is_put_right_by_the_arbiter(table) -> None:
    from firmware_host.table.arbiter import Arbiter

    buttons, _, events = table()
    arb = Arbiter()
    buttons.set(3, "slap", True, 1_003 * MS)  # delivered first, pressed last
    buttons.set(0, "slap", True, 1_000 * MS)
    buttons.set(2, "slap", True, 1_002 * MS)
    for seat, control, ts in presses(events):
        arb.push(seat, control, ts)
    assert [p.seat for p in arb.release(1_003 * MS + arb.window_ns + arb.epsilon_ns)] == [0, 2, 3]


# ---------------------------------------------------------------- configuration


def test_configuration_reports_every_problem_with_its_path(tmp_path) -> None:
    path = tmp_path / "table.toml"
    path.write_text(
        "[inputs]\n"
        "seats = [{slap = 5, left = {gpio = 6}}, {slap = 5, alt = {expander = 'nope', pin = 'A1'}},"
        " {slap = 40}]\n"
        "[arbiter]\nwindow_ms = 1\nepsilon_ms = 2\n"
    )
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    assert "inputs.seats[3].slap" in text and "at most 27" in text
    assert "arbiter" in text and "epsilon_ms must be below window_ms" in text


def test_each_problem_names_its_line(tmp_path) -> None:
    template = (Path(__file__).resolve().parents[2] / "systemd" / "table.toml.example").read_text()
    broken = template.replace('pin = "B3" }', 'pin = "Q3" }').replace("window_ms = 5.0", "window_ms = -1")
    path = tmp_path / "table.toml"
    path.write_text(broken)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    numbered = {n: line for n, line in enumerate(broken.splitlines(), 1)}
    for problem in err.value.problems:
        name, number, rest = problem.split(":", 2)
        assert name == "table.toml"
        assert ("Q3" in numbered[int(number)]) == ("MCP23017 pin" in rest)
        assert ("window_ms = -1" in numbered[int(number)]) == ("arbiter.window_ms" in rest)
    assert len(err.value.problems) == 3  # seats 2 and 4 use B3, and the window


def test_lines_are_found_in_inline_arrays_and_for_semantic_problems(tmp_path) -> None:
    path = tmp_path / "table.toml"
    path.write_text(
        "# seats as one inline array\n"
        "[inputs]\n"
        "seats = [\n"
        "  {slap = 5, left = {gpio = 6}},\n"
        "  {slap = 6},\n"
        "]\n"
    )
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert err.value.problems == ["table.toml:5: inputs.seats[2].slap: GPIO6 is already used by "
                                  "inputs.seats[1].left"]


def test_two_controls_on_one_pin_and_unknown_expanders_are_named() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({"inputs": {"seats": [
            {"slap": 5, "left": {"gpio": 6}},
            {"slap": 6, "alt": {"expander": "nope", "pin": "A1"}},
        ]}})
    text = str(err.value)
    assert "inputs.seats[2].slap: GPIO6 is already used by inputs.seats[1].left" in text
    assert "inputs.seats[2].alt: no expander named 'nope'" in text


def test_seat_count_and_line_shape_are_checked() -> None:
    with pytest.raises(ConfigError, match="at least 2"):
        parse_config({"inputs": {"seats": [{"slap": 5}]}})
    with pytest.raises(ConfigError, match="either gpio"):
        parse_config({"inputs": {"seats": [{"slap": 5, "up": {}}, {"slap": 6}]}})
    with pytest.raises(ConfigError, match="Extra inputs"):
        parse_config({"inputs": {"seats": [{"slap": 5, "jump": {"gpio": 7}}, {"slap": 6}]}})


def test_the_default_wiring_is_the_built_box_for_2_to_12_seats() -> None:
    for seats in range(2, 13):
        cfg = emulated_config(seats)
        assert len(cfg.inputs.seats) == len(cfg.screens) == seats
        assert len(cfg.inputs.expanders) == (seats + 1) // 2  # two seats to an MCP23017
        assert len(cfg.i2c_muxes) == (1 if seats <= 8 else 2)  # eight OLEDs to a TCA9548A
        assert cfg.buzzer is not None and cfg.buzzer.gpio == 18
        assert all(seat.slap not in (2, 3) for seat in cfg.inputs.seats)  # I2C stays I2C


def test_i2c_pins_buzzer_and_mux_buses_are_checked() -> None:
    base = emulated_config(2).model_dump()
    base["inputs"]["seats"][0]["slap"] = 3
    base["buzzer"] = {"gpio": 6}
    base["i2c_muxes"].append({"address": 0x70, "bus": 1})
    with pytest.raises(ConfigError) as err:
        parse_config(base)
    text = str(err.value)
    assert "inputs.seats[1].slap: GPIO3 is already used by I2C SCL (bus 1)" in text
    assert "inputs.seats[2].slap: GPIO6 is already used by buzzer.gpio" in text
    assert "i2c_muxes[2]: two multiplexers at 0x70 on bus 1" in text


def test_broken_toml_names_the_line(tmp_path) -> None:
    path = tmp_path / "table.toml"
    path.write_text("[inputs\n")
    with pytest.raises(ConfigError, match="line 1"):
        load_config(path)


def test_keyboard_seats_press_the_emulated_pins(table) -> None:
    from firmware_host.devices.emulated.keyboard import KeyboardSeats

    buttons, _, events = table()
    keyboard = KeyboardSeats(buttons, seats=(0, 2))
    assert keyboard.key("space", 1_000 * MS) and keyboard.key("f", 1_001 * MS)
    assert keyboard.key("right", 1_200 * MS)
    assert not keyboard.key("q", 1_300 * MS)
    assert not keyboard.key("1", 1_400 * MS)  # no direct select buttons wired on seat 1
    assert presses(events) == [(0, "slap", 1_000 * MS), (2, "slap", 1_001 * MS), (0, "right", 1_200 * MS)]


def test_a_burst_of_keys_is_every_press_in_the_order_typed(table) -> None:
    """It was: three Right presses in one burst moved the choice by one, the second and third
    tap landing in the first one's hold and debounce window. Keys do not bounce: each is a tap of
    its own, as soon as its line is free (60 ms held, 30 ms quiet), in the order typed."""
    from firmware_host.devices.emulated.keyboard import HOLD_NS, KeyboardSeats

    buttons, _, events = table()
    keyboard = KeyboardSeats(buttons)
    t = 1_000 * MS
    for key in ("right", "right", "right", "space"):
        assert keyboard.key(key, t)
    gap = HOLD_NS + 30 * MS + 1
    assert presses(events) == [(0, "right", t)]  # the others wait for the line
    assert keyboard.due() == t + gap
    now = t
    while keyboard.due() is not None:
        now = keyboard.due()
        keyboard.tick(now)
    assert presses(events) == [(0, "right", t), (0, "right", t + gap), (0, "right", t + 2 * gap),
                               (0, "slap", t + 2 * gap + 1)]  # its own line: right after the last


def test_keys_1_to_5_are_seat_1s_direct_buttons_on_gpios_the_build_leaves_free(table) -> None:
    """Neither wiring file has select buttons; in emulation keys 1-5 get lines of their own on
    spare GPIOs, and take the pins' path like any button."""
    from firmware_host.config import gpios_used
    from firmware_host.devices.emulated.keyboard import HOLD_NS, KeyboardSeats
    from firmware_host.devices.emulated.pins import EmulatedButtons, emulated_factory
    from firmware_host.devices.inputs.pins import TableInputs

    for seats, spare in ((4, (4, 7, 8, 9, 10)), (12, (7, 8, 11, 14, 15))):
        cfg = emulated_config(seats)
        free = tuple(g for g in range(4, 28) if g not in gpios_used(cfg))
        assert free[:5] == spare
        factory = emulated_factory()
        buttons = EmulatedButtons(cfg.inputs, factory)
        keyboard = KeyboardSeats(buttons, (0,), free)
        assert {name: line.gpio for name, line in keyboard.wiring.seats[0].lines().items()
                if name.startswith("select")} == {f"select{i + 1}": g for i, g in enumerate(spare)}
        assert keyboard.wiring.seats[1] == cfg.inputs.seats[1]
        events: list[InputEvent] = []
        inputs = TableInputs(keyboard.wiring, factory, buttons.buses, events.append)
        inputs.gate.go(0)
        assert keyboard.key("4", 1_000 * MS) and keyboard.has(0, "select4")
        assert presses(events) == [(0, "select4", 1_000 * MS)]
        assert factory.pin(spare[3]).state == 0  # held: let go only when the 60 ms are over
        assert buttons.let_go(1_000 * MS + HOLD_NS - 1) == 1_000 * MS + HOLD_NS
        assert buttons.let_go(1_000 * MS + HOLD_NS) is None
        assert factory.pin(spare[3]).state == 1  # let go again (pulled up)


def test_a_tap_shorter_than_the_debounce_is_a_press_and_a_release_not_a_stuck_button(table) -> None:
    """A hard slap can be over in 20 ms: its release falls in the 30 ms quiet window. The window
    closing with the line up applies that release, with its own time stamp; the next slap counts."""
    buttons, inputs, events = table()
    buttons.tap(0, "slap", 1_000 * MS, hold_ns=20 * MS)
    assert inputs.next_deadline() == 1_280 * MS  # the window closes, the line is up; a grace for late edges
    inputs.tick(1_279 * MS)
    assert [e.kind for e in events if e.control == "slap"] == [Event.PRESS]
    inputs.tick(1_280 * MS)
    assert [(e.kind, e.ts) for e in events if e.control == "slap"] == [
        (Event.PRESS, 1_000 * MS), (Event.RELEASE, 1_020 * MS)]
    inputs.tick(5_000 * MS)
    assert not [e for e in events if e.kind is Event.STUCK]
    buttons.tap(0, "slap", 5_000 * MS)
    assert presses(events)[-1] == (0, "slap", 5_000 * MS)


def test_a_late_release_is_applied_before_the_next_edge_even_without_a_tick(table) -> None:
    buttons, _, events = table()
    buttons.tap(0, "slap", 1_000 * MS, hold_ns=10 * MS)
    buttons.set(0, "slap", True, 1_100 * MS)  # the next press comes before any timer ran
    assert [(e.kind, e.ts) for e in events if e.control == "slap"] == [
        (Event.PRESS, 1_000 * MS), (Event.RELEASE, 1_010 * MS), (Event.PRESS, 1_100 * MS)]


def test_bounce_that_ends_at_the_level_taken_changes_nothing() -> None:
    flt = LineFilter(debounce_ns=30 * MS)
    flt.start(False, 0)
    assert flt.edge(True, 100 * MS) is Event.PRESS
    for i, level in enumerate((False, True, False, True), 1):  # contact bounce, ends closed
        assert flt.edge(level, 100 * MS + i * MS) is None
    assert flt.settle_due() is None and flt.settle(200 * MS) is None and flt.down


def test_an_edge_delivered_late_is_still_judged_by_its_time_stamp() -> None:
    """Under load an edge can arrive long after it happened: the clock must not settle the window
    before it, or an old press would count twice (the virtual Pi saw two presses 25 ms apart)."""
    flt = LineFilter(debounce_ns=30 * MS)
    flt.start(False, 0)
    assert flt.edge(True, 0) is Event.PRESS
    assert flt.edge(False, 1 * MS) is None  # bounce: the line looks released
    assert flt.settle(30 * MS) is None  # the clock at the window's end: too early to decide
    assert flt.edge(True, 25 * MS) is None  # the last contact of the bounce, delivered late
    assert flt.settle(400 * MS) is None and flt.down  # it ended closed: one press, nothing to settle


# ------------------------------------------------------------ the minimum press (min_press_us)

US = 1_000


class Clock:
    """CLOCK_MONOTONIC as the table reads it, set by the test: each edge is delivered at its stamp
    unless the test says otherwise."""

    def __init__(self, now: int = 0) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def timed():
    """Four seats as the emulated default with the default minimum press (1 ms), and a clock."""

    def make(min_press_us: float | None = None):
        cfg = emulated_config(4)
        if min_press_us is not None:
            data = cfg.model_dump()
            data["inputs"]["min_press_us"] = min_press_us
            cfg = parse_config(data)
        factory = emulated_factory()
        buttons = EmulatedButtons(cfg.inputs, factory)
        events: list[InputEvent] = []
        clock = Clock()
        inputs = TableInputs(cfg.inputs, factory, buttons.buses, events.append, clock=clock)
        inputs.gate.go(0)

        def at(ns: int, seat: int, control: str, down: bool) -> None:
            clock.now = ns
            buttons.set(seat, control, down, ns)

        def tick(ns: int) -> None:
            clock.now = ns
            inputs.tick(ns)

        return at, tick, inputs, events

    return make


def test_the_default_minimum_press_is_1_ms() -> None:
    assert emulated_config(4).inputs.min_press_us == 1000


def test_a_50_us_spike_is_no_press_and_leaves_the_line_free_at_once(timed) -> None:
    at, tick, inputs, events = timed()
    t = 7_000 * MS
    at(t, 0, "slap", True)
    assert events == [] and inputs.next_deadline() == t + 1 * MS  # judged by the clock, no polling
    at(t + 50 * US, 0, "slap", False)
    assert inputs.next_deadline() == t + 50 * US + 1 * MS  # open that long: it was a spike
    tick(t + 50 * US + 1 * MS)
    # No press; the table is told, with the spike's stamp (its trace: `tablectl inputs`).
    spike = InputEvent(Event.SPIKE, 0, "slap", t, "a contact shorter than 1000 µs")
    assert events == [spike] and inputs._filters[(0, "slap")].spikes == 1
    at(t + 3 * MS, 0, "slap", True)  # a real slap 3 ms later, inside the 30 ms debounce window
    tick(t + 4 * MS)
    assert events == [spike, InputEvent(Event.PRESS, 0, "slap", t + 3 * MS)]


def test_a_noisy_line_tells_its_spikes_once_a_second_with_how_many(timed) -> None:
    at, _, _, events = timed()
    t = 7_000 * MS
    for k in range(40):  # 40 spikes 100 ms apart, each ended by the next contact's edge
        at(t + k * 100 * MS, 0, "slap", True)
        at(t + k * 100 * MS + 20 * US, 0, "slap", False)
    assert [(e.kind, e.ts, e.detail) for e in events] == [
        (Event.SPIKE, t, "a contact shorter than 1000 µs"),
        (Event.SPIKE, t + 1_000 * MS, "10 contacts shorter than 1000 µs since the last told"),
        (Event.SPIKE, t + 2_000 * MS, "10 contacts shorter than 1000 µs since the last told"),
        (Event.SPIKE, t + 3_000 * MS, "10 contacts shorter than 1000 µs since the last told")]


def test_a_press_held_past_the_minimum_keeps_its_first_edges_stamp(timed) -> None:
    at, tick, _, events = timed()
    t = 7_000 * MS
    at(t, 1, "slap", True)
    tick(t + 1 * MS - 1)
    assert events == []
    tick(t + 1 * MS)
    assert events == [InputEvent(Event.PRESS, 1, "slap", t)]
    at(t + 60 * MS, 1, "slap", False)
    assert events[-1] == InputEvent(Event.RELEASE, 1, "slap", t + 60 * MS)


def test_bounce_within_the_press_counts_its_contacts_and_keeps_the_first_stamp(timed) -> None:
    at, tick, inputs, events = timed()
    t = 7_000 * MS
    for offset, down in ((0, True), (200, False), (400, True), (500, False), (700, True)):
        at(t + offset * US, 2, "slap", down)
    # Down 200 + 100 µs so far, 700 µs to go from the last contact.
    assert events == [] and inputs.next_deadline() == t + 1400 * US
    tick(t + 1400 * US)
    assert events == [InputEvent(Event.PRESS, 2, "slap", t)]


def test_a_release_stamped_past_the_minimum_confirms_the_press_at_once(timed) -> None:
    """As `tap` delivers it (benchmarks, tests): both edges at once, the release's stamp later."""
    at, _, _, events = timed()
    t = 7_000 * MS
    at(t, 3, "slap", True)
    at(t + 40 * MS, 3, "slap", False)
    assert events == [InputEvent(Event.PRESS, 3, "slap", t),
                      InputEvent(Event.RELEASE, 3, "slap", t + 40 * MS)]


def test_a_press_delivered_after_its_minimum_with_the_line_still_down_counts_at_once(timed) -> None:
    _, _, inputs, events = timed()
    t = 7_000 * MS
    inputs.clock.now = t + 5 * MS  # lgpio's thread ran 5 ms after the edge
    inputs._line_pins[(0, "slap")].press(t)
    assert events == [InputEvent(Event.PRESS, 0, "slap", t)]


def test_without_a_minimum_the_first_edge_is_the_press_spike_or_not(timed) -> None:
    at, _, _, events = timed(min_press_us=0)
    t = 7_000 * MS
    at(t, 0, "slap", True)
    assert events == [InputEvent(Event.PRESS, 0, "slap", t)]


def test_the_expanders_lines_have_no_minimum_their_chip_reports_what_it_latched() -> None:
    cfg = emulated_config(12)
    factory = emulated_factory()
    buttons = EmulatedButtons(cfg.inputs, factory)
    events: list[InputEvent] = []
    inputs = TableInputs(cfg.inputs, factory, buttons.buses, events.append, clock=Clock(3_000 * MS))
    inputs.gate.go(0)
    buttons.set(7, "left", True, 3_000 * MS)
    assert presses(events) == [(7, "left", 3_000 * MS)]
    filters = inputs._filters
    assert filters[(7, "left")].min_press_ns == 0 and filters[(7, "slap")].min_press_ns == 1 * MS


def test_line_filter_a_late_delivered_spike_waits_for_its_edge_then_is_dropped() -> None:
    """lgpio's thread late: the clock looks after the minimum, the line reads up but no opening
    has been delivered yet. The press waits for that edge; its stamp shows a spike."""
    flt = LineFilter(debounce_ns=30 * MS, min_press_ns=1 * MS)
    flt.start(False, 0)
    assert flt.edge(True, 10 * MS) is None and flt.pending == 10 * MS
    assert flt.confirm(15 * MS, down=False) is None  # the line is up: an edge is on its way
    assert flt.confirm_due() == 10 * MS + SETTLE_GRACE_NS
    assert flt.confirm(10 * MS + 50 * US, down=False, edge=True) is None
    assert flt.edge(False, 10 * MS + 50 * US) is None
    assert flt.confirm(16 * MS, down=False) is None and flt.pending is None and flt.spikes == 1
    assert not flt.down and flt.settle_due() is None and flt.stuck_due() is None


def test_line_filter_a_spike_whose_opening_edge_was_lost_gives_the_next_contact_its_own_stamp() -> None:
    """The clock saw the line open, and the next edge closes it again: the opening between was
    lost. Nothing showed the first contact held, so it is a spike; the slap is a new press."""
    flt = LineFilter(debounce_ns=30 * MS, min_press_ns=1 * MS)
    flt.start(False, 0)
    assert flt.edge(True, 10 * MS) is None
    assert flt.confirm(11 * MS + 200 * US, down=False) is None  # up: its opening edge never comes
    assert flt.confirm(15 * MS, down=True, edge=True) is None and flt.spikes == 1 and flt.pending is None
    assert flt.edge(True, 15 * MS) is None and flt.pending == 15 * MS
    assert flt.confirm(16 * MS, down=True) == (Event.PRESS, 15 * MS)


def test_a_slap_after_a_spike_whose_release_the_kernel_lost_keeps_its_own_stamp(timed) -> None:
    """As the virtual Pi's CI run met it: a 0.4 ms spike, its release edge lost, a slap 5 ms on.
    The table must neither play the spike nor give the slap the spike's earlier stamp."""
    at, tick, inputs, events = timed()
    t = 7_000 * MS
    at(t, 2, "slap", True)
    inputs._line_pins[(2, "slap")]._state = True  # up 0.4 ms later, and the kernel lost that edge
    tick(t + 1 * MS + 300 * US)  # the clock's look: the line is up, the edges say down
    assert presses(events) == []
    at(t + 5 * MS, 2, "slap", True)
    tick(t + 6 * MS)
    at(t + 85 * MS, 2, "slap", False)
    assert [(e.kind, e.ts) for e in events if e.kind in (Event.PRESS, Event.SPIKE)] == [
        (Event.SPIKE, t), (Event.PRESS, t + 5 * MS)]
    assert inputs._filters[(2, "slap")].spikes == 1


def test_line_filter_a_press_whose_edges_never_come_is_dropped_after_the_grace() -> None:
    flt = LineFilter(debounce_ns=30 * MS, min_press_ns=1 * MS)
    flt.start(False, 0)
    flt.edge(True, 10 * MS)
    assert flt.confirm(12 * MS, down=False) is None and flt.pending == 10 * MS
    assert flt.confirm(10 * MS + SETTLE_GRACE_NS, down=False) is None and flt.pending is None


def test_line_filter_chatter_that_never_holds_is_no_press() -> None:
    """Contacts of 10 µs every 0.5 ms: never 1 ms down in all within the debounce time."""
    flt = LineFilter(debounce_ns=30 * MS, min_press_ns=1 * MS)
    flt.start(False, 0)
    confirmed = []
    for k in range(100):
        t = k * 500 * US
        for down, ts in ((True, t), (False, t + 10 * US)):
            confirmed.append(flt.confirm(ts, down, edge=True))
            flt.edge(down, ts)
    # Ended as no press once it chattered past the debounce time (30 ms); the next contact waits anew.
    assert confirmed == [None] * 200 and flt.spikes == 1 and flt.pending == 30 * MS


def test_a_minimum_press_above_half_the_window_is_refused_by_name() -> None:
    data = emulated_config(4).model_dump()
    data["inputs"]["min_press_us"] = 3000  # the window is 5 ms
    with pytest.raises(ConfigError) as err:
        parse_config(data)
    assert "inputs.min_press_us: 3000 µs is more than half the arbiter's window (5 ms)" in str(err.value)


def test_a_press_that_starts_waiting_wakes_the_loop_so_its_timer_is_set_anew() -> None:
    """The daemon's loop sleeps until its next timer or event; a waiting press sinks no event, so
    without a wake the loop slept past the press's minimum time (a held-press bench measured
    presses reaching the loop up to 100 ms after their edge)."""
    cfg = emulated_config(4)
    factory = emulated_factory()
    buttons = EmulatedButtons(cfg.inputs, factory)
    events: list[InputEvent] = []
    woken: list[int] = []
    clock = Clock(7_000 * MS)
    inputs = TableInputs(cfg.inputs, factory, buttons.buses, events.append, clock=clock,
                         wake=lambda: woken.append(clock.now))
    inputs.gate.go(0)
    buttons.set(0, "slap", True, 7_000 * MS)
    assert events == [] and woken == [7_000 * MS] and inputs.next_deadline() == 7_001 * MS
    buttons.set(0, "slap", False, 7_000 * MS + 40 * MS)  # confirmed by this edge: an event, no wake
    buttons.set(1, "slap", True, 6_000 * MS)  # delivered a second late: confirmed at once, no wake
    assert [e.kind for e in events] == [Event.PRESS, Event.RELEASE, Event.PRESS] and woken == [7_000 * MS]
