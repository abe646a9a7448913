"""The MCP23017 model against its datasheet (DS20001952C; GPA7/GPB7 output only since
DS20001952D), and the real driver and
TableInputs against the model: per-port INTCAP latching, per-port clearing, and the
interrupt line's edges as a Pi GPIO sees them."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_host.config import emulated_config, pin_index
from firmware_host.devices.emulated.mcp23017 import EmulatedBus, EmulatedMCP23017
from firmware_host.devices.emulated.pins import EmulatedButtons, emulated_factory
from firmware_host.devices.inputs.mcp23017 import (
    DEFVALA,
    GPINTENA,
    GPINTENB,
    GPIOA,
    GPIOB,
    GPPUA,
    GPPUB,
    INPUT_PINS,
    INTCAPA,
    INTCAPB,
    INTCONA,
    INTFA,
    INTFB,
    IOCON,
    IOCON_INTPOL,
    IOCON_MIRROR,
    IOCON_ODR,
    IODIRA,
    IODIRB,
    IPOLA,
    MCP23017,
    OLATA,
)
from firmware_host.devices.inputs.pins import TableInputs
from firmware_host.table.presses import Event, InputEvent

MS = 1_000_000


class Chip:
    """An emulated chip with its INTA/INTB levels recorded as (pin, low, at)."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, bool, int]] = []
        self.mcp = EmulatedMCP23017(interrupt=lambda low, at: self.lines.append(("A", low, at)),
                                    interrupt_b=lambda low, at: self.lines.append(("B", low, at)))

    def enable(self, a: int = 0xFF, b: int = 0xFF, iocon: int = IOCON_MIRROR) -> None:
        self.mcp.write(IOCON, iocon)
        self.mcp.write(GPINTENA, a)
        self.mcp.write(GPINTENB, b)


# ---------------------------------------------------------------- the model, register by register


def test_registers_power_up_with_the_datasheet_reset_values() -> None:
    """DS Table 3-5 (IOCON.BANK = 0): IODIRA/B 0xFF, every other register 0x00."""
    chip = EmulatedMCP23017()
    for reg in range(0x16):
        if reg in (GPIOA, GPIOB):
            continue  # GPIO reads the pins: released buttons, high through the pull-ups
        assert chip.read(reg) == (0xFF if reg in (IODIRA, IODIRB) else 0x00), hex(reg)
    assert chip.read(GPIOA) == chip.read(GPIOB) == 0xFF
    chip.write(0x0B, IOCON_MIRROR)  # IOCON answers at 0x0A and 0x0B
    assert chip.read(IOCON) == IOCON_MIRROR


def test_a_port_b_change_latches_only_port_b() -> None:
    """DS §3.5.9: INTCAP is updated only when (its port's) interrupt occurs."""
    c = Chip()
    c.enable()
    c.mcp.set_input(pin_index("B3"), True, 7 * MS)
    assert c.mcp.read(INTFB) == 0x08 and c.mcp.read(INTFA) == 0x00
    assert c.mcp.read(INTCAPA) == 0x00  # never latched: still the reset value, not the pins (0xFF)
    assert c.mcp.read(INTCAPB) == 0xF7
    assert c.lines == [("A", True, 7 * MS), ("B", True, 7 * MS), ("A", False, 7 * MS), ("B", False, 7 * MS)]


def test_reading_one_port_clears_only_that_port_and_mirrored_int_stays_low() -> None:
    """DS §3.6.1: each port's signal is cleared by its own GPIO or INTCAP read;
    §3.6.1.1: with MIRROR the INT pins show the OR of both."""
    c = Chip()
    c.enable()
    c.mcp.set_input(pin_index("A0"), True, 1)
    c.mcp.set_input(pin_index("B0"), True, 2)
    assert c.mcp.read(GPIOA) == 0xFE
    assert c.mcp.read(INTFA) == 0x00 and c.mcp.read(INTFB) == 0x01  # B still pending
    assert c.mcp.int_low("A") and c.mcp.int_low("B")
    assert c.mcp.read(INTCAPB) == 0xFE  # clears port B
    assert not c.mcp.int_low("A") and not c.mcp.int_low("B")
    assert c.mcp.read(INTCAPB) == 0xFE  # INTCAP keeps its value after the clear
    assert [(p, low) for p, low, _ in c.lines] == [("A", True), ("B", True), ("A", False), ("B", False)]


def test_without_mirror_inta_follows_port_a_and_intb_port_b() -> None:
    c = Chip()
    c.enable(iocon=0)
    c.mcp.set_input(pin_index("B5"), True, 3)
    assert c.lines == [("B", True, 3)]
    c.mcp.set_input(pin_index("A5"), True, 4)
    assert c.lines[-1] == ("A", True, 4)
    c.mcp.read(GPIOB)
    assert c.lines[-1] == ("B", False, 4) and c.mcp.int_low("A")


def test_a_change_while_pending_is_not_latched_and_seen_only_in_gpio() -> None:
    """DS §3.6.4: the first interrupt latches INTCAP; later conditions on the port do
    nothing until it is cleared. §3.6.5 (1): the previous level resets at the clear."""
    c = Chip()
    c.enable()
    c.mcp.set_input(pin_index("A0"), True, 1)
    c.mcp.set_input(pin_index("A1"), True, 2)
    c.mcp.set_input(pin_index("A0"), False, 3)
    assert c.mcp.read(INTFA) == 0x01
    assert c.mcp.read(INTCAPA) == 0xFE  # A0 low, A1 still high: as at the first change
    assert c.mcp.read(GPIOA) == 0xFD  # the pins now
    assert not c.mcp.pending and not c.mcp.int_low("A")  # A1's change raises nothing afterwards
    assert c.mcp.read(INTFA) == 0x00


def test_defval_compare_keeps_interrupting_while_the_mismatch_lasts() -> None:
    """DS §3.6.3 and §3.6.5 (2): INTCON = 1 compares with DEFVAL, and the condition
    remains whether or not INTCAP or GPIO is read."""
    c = Chip()
    c.mcp.write(IOCON, IOCON_MIRROR)
    c.mcp.write(DEFVALA, 0xFF)
    c.mcp.write(INTCONA, 0x01)
    c.mcp.write(GPINTENA, 0x01)
    c.mcp.set_input(0, True, 5)
    assert c.mcp.read(GPIOA) == 0xFE
    assert c.mcp.int_low("A") and c.mcp.read(INTFA) == 0x01  # latched again at once
    assert [low for p, low, _ in c.lines if p == "A"] == [True]  # INTA never went high
    c.mcp.set_input(0, False, 6)
    assert c.mcp.read(INTCAPA) == 0xFE  # still the re-latched value; this read clears
    assert not c.mcp.int_low("A")


def test_int_polarity_and_open_drain() -> None:
    """IOCON.INTPOL = 1: active-high push-pull, so idle is low; ODR overrides INTPOL (DS Register 3-6)."""
    c = Chip()
    c.mcp.write(IOCON, IOCON_INTPOL)
    assert c.lines == [("A", True, 0), ("B", True, 0)]
    c.mcp.write(GPINTENA, 0x01)
    c.mcp.set_input(0, True, 9)
    assert c.lines[-1] == ("A", False, 9)  # active: driven high
    c.mcp.write(IOCON, IOCON_INTPOL | IOCON_ODR)
    assert not c.mcp.int_low("B")  # idle open drain: released, the pull-up holds it high
    assert c.mcp.int_low("A")  # port A still pending: pulled low


def test_outputs_read_their_latch_and_never_interrupt() -> None:
    chip = EmulatedMCP23017()
    chip.write(GPINTENA, 0xFF)
    chip.write(IODIRA, 0x7E)  # A0 an output (and A7, which is output only)
    chip.write(GPIOA, 0x00)  # goes to OLATA (DS §3.5.10)
    assert chip.read(OLATA) == 0x00
    chip.set_input(0, False, 1)
    assert not chip.pending and chip.read(GPIOA) == 0x7E  # A0 and A7 read OLATA's 0


class Writes:
    """An emulated bus that keeps every register write, in order."""

    def __init__(self, chip: EmulatedMCP23017) -> None:
        self.bus = EmulatedBus({0x20: chip})
        self.writes: list[tuple[int, int]] = []

    def read_byte_data(self, i2c_addr: int, register: int) -> int:
        return self.bus.read_byte_data(i2c_addr, register)

    def write_byte_data(self, i2c_addr: int, register: int, value: int) -> None:
        self.writes.append((register, value))
        self.bus.write_byte_data(i2c_addr, register, value)


def test_the_driver_makes_gpa7_and_gpb7_outputs_before_it_reads_a_port() -> None:
    """DS20001952D page 1: GPA7 and GPB7 are output only. IODIR bit 7 = 0 is an output
    (Register 3-1); no pull-up behind it (GPPU bit 7 = 0)."""
    chip = EmulatedMCP23017()
    bus = Writes(chip)
    driver = MCP23017(bus, 0x20, list(INPUT_PINS))
    driver.setup()
    assert (IODIRA, 0x7F) in bus.writes and (IODIRB, 0x7F) in bus.writes
    assert (GPPUA, 0x7F) in bus.writes and (GPPUB, 0x7F) in bus.writes
    assert chip.read(IODIRA) == chip.read(IODIRB) == 0x7F
    for pin in INPUT_PINS:  # every other pin a button, and every press seen
        chip.set_input(pin, True, pin + 1)
        assert driver.on_interrupt().changes == [(pin, True)]
    chip.set_input(7, True, 20)  # the outside world on an output: no interrupt, not a press
    chip.set_input(15, True, 21)
    assert not chip.pending and driver.on_interrupt().changes == []
    assert chip.read(GPIOA) >> 7 == chip.read(GPIOB) >> 7 == 0  # the pins drive OLAT's 0
    assert chip.gpx7_input_reads == 0


def test_the_driver_refuses_gpx7_as_a_button() -> None:
    for pin in (7, 15):
        with pytest.raises(ValueError, match="output only"):
            MCP23017(EmulatedBus({0x20: EmulatedMCP23017()}), 0x20, [0, pin]).setup()


def test_the_model_refuses_gpx7_as_an_input_and_counts_reads_while_it_is_one() -> None:
    chip = EmulatedMCP23017()
    chip.read(GPIOA)  # after reset IODIR is 0xFF (Table 3-5): GPA7 is read as an input
    chip.read(INTCAPB)
    assert chip.gpx7_input_reads == 2
    chip.write(IODIRA, 0x7F)
    chip.read(GPIOA)  # port A is safe now, port B is not
    chip.read(GPIOB)
    assert chip.gpx7_input_reads == 3
    for reg, value in ((IODIRA, 0xFF), (IODIRB, 0x80)):
        with pytest.raises(ValueError, match="output only"):
            chip.write(reg, value)
    assert chip.read(IODIRA) == 0x7F and chip.read(IODIRB) == 0xFF  # refused: nothing written


def test_a_configuration_with_a_button_on_a7_or_b7_is_refused() -> None:
    from firmware_host.config import ConfigError, input_pin_index, parse_config

    assert [input_pin_index(n) for n in ("A0", "A6", "b0", "B6")] == [0, 6, 8, 14]
    data = emulated_config(6).model_dump(exclude_none=True)
    data["inputs"]["seats"][4]["up"] = {"expander": "nav1", "pin": "B7"}
    with pytest.raises(ConfigError) as refused:
        parse_config(data)
    assert refused.value.problems == [
        "table.toml: inputs.seats[5].up: Value error, MCP23017 pin B7 (GPB7) is output only "
        "(Microchip DS20001952D: as an input it can corrupt SDA): use A0..A6 or B0..B6"]


def test_what_the_model_does_not_implement_is_refused() -> None:
    chip = EmulatedMCP23017()
    with pytest.raises(ValueError, match="IPOL"):
        chip.write(IPOLA, 0x01)
    with pytest.raises(ValueError, match="BANK"):
        chip.write(IOCON, 0x80)
    with pytest.raises(ValueError, match="0x16"):
        chip.read(0x16)


# ---------------------------------------------------------------- the driver on the model


class HookBus:
    """An emulated bus that can run a step (a button moving) before or after a chosen read."""

    def __init__(self, inner: EmulatedBus) -> None:
        self.inner = inner
        self.before: Callable[[int], None] | None = None
        self.after: Callable[[int], None] | None = None
        self.reads: list[int] = []

    def read_byte_data(self, addr: int, reg: int) -> int:
        self.reads.append(reg)
        if self.before is not None:
            hook, self.before = self.before, None
            hook(reg)
        value = self.inner.read_byte_data(addr, reg)
        if self.after is not None:
            self.after(reg)
        return value

    def write_byte_data(self, addr: int, reg: int, value: int) -> None:
        self.inner.write_byte_data(addr, reg, value)


def make_table(hook: bool = False):
    """The 4-seat build on mock pins: seat 1's navigation on nav1 port A, seat 2's on port B."""
    cfg = emulated_config(4)
    factory = emulated_factory()
    buttons = EmulatedButtons(cfg.inputs, factory)
    buses = {n: HookBus(b) for n, b in buttons.buses.items()} if hook else buttons.buses
    events: list[InputEvent] = []
    return cfg, buttons, buses, events, factory


def start(cfg, buttons, buses, events, factory) -> TableInputs:
    inputs = TableInputs(cfg.inputs, factory, buses, events.append)
    inputs.gate.go(0)
    return inputs


def presses(events: list[InputEvent]) -> list[tuple[int, str, int]]:
    return [(e.seat, e.control, e.ts) for e in events if e.kind is Event.PRESS]


def test_the_first_port_b_interrupt_after_power_up_presses_nothing_on_port_a() -> None:
    parts = make_table()
    _, buttons, _, events, _ = parts
    start(*parts)
    buttons.set(1, "left", True, 1_000 * MS)  # seat 2: nav1 B0
    assert [(e.kind, e.seat, e.control) for e in events] == [(Event.PRESS, 1, "left")]


def test_a_change_on_port_a_while_pending_makes_no_phantom_press_later_nor_a_false_stuck() -> None:
    parts = make_table(hook=True)
    _, buttons, buses, events, _ = parts
    inputs = start(*parts)
    chip = buttons.chips["nav1"]
    buttons.set(0, "up", True, 1_000 * MS)  # seat 1 holds up (A2)
    # Seat 1 presses right (A1); up comes loose before the driver's first read, while port A's
    # interrupt is pending: INTCAPA keeps up low, GPIOA shows it high.
    buses[1].before = lambda reg: chip.set_input(pin_index("A2"), False, 1_500 * MS)
    buttons.set(0, "right", True, 1_500 * MS)
    buttons.set(0, "right", False, 1_600 * MS)
    buttons.set(1, "left", True, 2_000 * MS)  # seat 2, port B: INTCAPA is stale now
    inputs.tick(6_000 * MS)
    buttons.set(0, "up", True, 7_000 * MS)  # seat 1 presses up again: it must count
    assert presses(events) == [(0, "up", 1_000 * MS), (0, "right", 1_500 * MS), (1, "left", 2_000 * MS),
                               (0, "up", 7_000 * MS)]
    assert not [e for e in events if e.kind is Event.STUCK and e.seat == 0]


def test_an_edge_between_setup_clearing_the_chip_and_the_alert_being_armed_is_not_lost() -> None:
    parts = make_table(hook=True)
    _, buttons, buses, events, _ = parts
    chip = buttons.chips["nav1"]

    def press_after_setup_read(reg: int) -> None:
        if reg == GPIOB:  # setup's last read, which cleared the chip
            buses[1].after = None
            chip.set_input(pin_index("A1"), True, 500 * MS)

    buses[1].after = press_after_setup_read
    start(*parts)
    assert not chip.int_low("A")  # serviced: INTA is high again
    buttons.set(0, "right", False, 800 * MS)
    buttons.set(1, "left", True, 1_000 * MS)  # and later interrupts still come
    assert presses(events) == [(0, "right", 500 * MS), (1, "left", 1_000 * MS)]


def test_an_edge_during_recovery_is_serviced() -> None:
    parts = make_table(hook=True)
    _, buttons, buses, events, _ = parts
    inputs = start(*parts)
    chip = buttons.chips["nav1"]
    chip.fail = True
    buttons.set(0, "right", True, 1_000 * MS)
    assert events[-1].kind == "fault"
    chip.fail = False
    buttons.set(0, "right", False, 1_050 * MS)

    def press_after_recovery_read(reg: int) -> None:
        if reg == GPIOB:
            buses[1].after = None
            chip.set_input(pin_index("B2"), True, 1_150 * MS)  # seat 2's up, just after the clear

    buses[1].after = press_after_recovery_read
    inputs.tick(1_100 * MS)
    assert [e.kind for e in events].count("recovered") == 1
    assert presses(events) == [(1, "up", 1_150 * MS)]
    assert not chip.int_low("A")
    buttons.set(0, "left", True, 1_300 * MS)
    assert presses(events)[-1] == (0, "left", 1_300 * MS)


# ---------------------------------------------------------------- property: no phantom, none lost

ALL_PINS = list(INPUT_PINS)  # every pin a button may use: A7 and B7 are output only
changes_st = st.lists(st.tuples(st.sampled_from(range(16)), st.booleans()), max_size=60)
"""The outside world may move any pin, GPA7 and GPB7 too: as outputs they show nothing."""


def drive(chip: EmulatedMCP23017, driver: MCP23017) -> list[tuple[int, bool]]:
    """Service on each falling edge of INTA, and again while INTA is low after a read."""
    seen: list[tuple[int, bool]] = []

    def inta(low: bool, at: int) -> None:
        if low:
            while chip.int_low("A"):
                seen.extend(driver.on_interrupt().changes)

    chip.interrupt = inta
    return seen


@settings(max_examples=300, deadline=None)
@given(changes_st, st.sets(st.sampled_from(ALL_PINS), min_size=1))
def test_any_pin_changes_serviced_on_each_edge_give_exactly_the_true_presses(changes, wired) -> None:
    chip = EmulatedMCP23017()
    driver = MCP23017(EmulatedBus({0x20: chip}), 0x20, sorted(wired))
    driver.setup()
    seen = drive(chip, driver)
    levels = 0xFFFF
    truth: list[tuple[int, bool]] = []
    for t, (pin, low) in enumerate(changes):
        if (levels >> pin & 1) == (not low):
            continue  # no change at the pin
        levels ^= 1 << pin
        chip.set_input(pin, low, t)
        if pin in wired:
            truth.append((pin, low))
    assert seen == truth
    assert chip.gpx7_input_reads == 0  # GPx7 an output before any port was read


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(ALL_PINS), st.booleans(), st.integers(0, 6)), max_size=60))
def test_changes_that_come_while_an_interrupt_is_pending_are_seen_in_gpio(steps) -> None:
    """Changes land at any point of a service (between any two register reads). Per pin the
    driver reports alternating levels, never more changes than happened, and ends on the
    pin's true level: the chip latches one change per port (DS §3.6.4), GPIO shows the rest."""
    chip = EmulatedMCP23017()
    bus = HookBus(EmulatedBus({0x20: chip}))
    driver = MCP23017(bus, 0x20, ALL_PINS)
    driver.setup()
    edges: list[int] = []
    chip.interrupt = lambda low, at: edges.append(at) if low else None
    seen: list[tuple[int, bool]] = []
    true_changes = [0] * 16

    def move(pin: int, low: bool) -> None:
        if (chip.levels >> pin & 1) == low:
            true_changes[pin] += 1
        chip.set_input(pin, low, 0)

    for pin, low, at_read in steps:
        if at_read == 0 or not edges:
            move(pin, low)
        else:  # during the next service, before its at_read-th register read
            countdown = [at_read]

            def before(reg: int, pin: int = pin, low: bool = low, countdown: list[int] = countdown) -> None:
                countdown[0] -= 1
                if countdown[0] <= 0:
                    move(pin, low)
                else:
                    bus.before = before

            bus.before = before
        while edges or chip.int_low("A"):
            edges.clear()
            seen.extend(driver.on_interrupt().changes)
        bus.before = None
    for pin in ALL_PINS:
        reported = [low for p, low in seen if p == pin]
        assert all(a != b for a, b in zip([False, *reported], reported, strict=False))
        assert len(reported) <= true_changes[pin]
        assert (reported[-1] if reported else False) == (not chip.levels >> pin & 1)


def test_an_interrupt_line_stuck_low_is_a_fault_reported_once_and_retried() -> None:
    parts = make_table()
    cfg, buttons, _, events, factory = parts
    inputs = start(*parts)
    int_pin = factory.pin(cfg.inputs.expanders[0].interrupt_gpio)
    int_pin.set_level(False, 1_000 * MS)  # shorted to ground: low with nothing latched
    assert events[-1] == InputEvent("fault", -1, "nav1", 1_000 * MS,
                                    "expander nav1: its interrupt line GPIO17 stays low with nothing latched")
    inputs.tick(1_100 * MS)
    inputs.tick(1_300 * MS)
    assert [e.kind for e in events] == ["fault"]  # retried, still low, not reported again
    int_pin.set_level(True, 1_400 * MS)  # the short is gone
    inputs.tick(1_700 * MS)
    assert events[-1].kind == "recovered"
    buttons.set(1, "left", True, 2_000 * MS)
    assert presses(events) == [(1, "left", 2_000 * MS)]
