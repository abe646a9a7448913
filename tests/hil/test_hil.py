"""The virtual Pi's pure parts: no VM boots here (`./dev hil` does that)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from firmware_host.config import load_config, parse_config
from hil import __main__ as orchestrator
from hil import i2c
from hil.gpio import SLAPS, Sent, analyse, hil_config, percentile, stalled_over
from hil.kernel import Kernel, abi_from_depends, apt_config, config_value
from hil.simchip import SimChip, make_spares

MS = 1_000_000
S = 1_000_000_000
EPS = 200_000
PHASE = [{"from_ns": 0, "window_ns": 5 * MS, "epsilon_ns": EPS}]


# ------------------------------------------------------------------ gpio-sim through configfs and sysfs


def fake_kernel(tmp_path: Path) -> SimChip:
    """A folder laid out as the kernel shows a live gpio-sim device (gpio-sim.rst): the read-only
    attributes it fills in are written here beforehand."""
    chip = SimChip(configfs=tmp_path / "config", platform=tmp_path / "platform")
    (chip.bank).mkdir(parents=True)
    (chip.device / "dev_name").write_text("gpio-sim.0\n")
    (chip.bank / "chip_name").write_text("gpiochip3\n")
    for n in range(chip.lines):
        line = tmp_path / "platform/gpio-sim.0/gpiochip3" / f"sim_gpio{n}"
        line.mkdir(parents=True)
        (line / "pull").write_text("pull-down\n")  # the kernel's default before a consumer sets a bias
    return chip


def test_the_chip_has_the_pis_28_lines_named_by_bcm_number_and_goes_live_last(tmp_path: Path) -> None:
    chip = fake_kernel(tmp_path).create()
    assert (chip.bank / "num_lines").read_text() == "28\n"
    assert (chip.bank / "label").read_text() == "hil-pi-gpio\n"
    assert [(chip.bank / f"line{n}" / "name").read_text() for n in (0, 5, 27)] == ["GPIO0\n", "GPIO5\n",
                                                                                  "GPIO27\n"]
    assert (chip.device / "live").read_text() == "1\n"
    assert (chip.dev_name, chip.chip_name) == ("gpio-sim.0", "gpiochip3")


def test_a_press_pulls_the_line_down_through_sysfs_and_is_timed(tmp_path: Path) -> None:
    chip = fake_kernel(tmp_path).create()
    before, after = chip.press(13)
    pull = tmp_path / "platform/gpio-sim.0/gpiochip3/sim_gpio13/pull"
    assert pull.read_text() == "pull-down" and before <= after
    chip.release(13)
    assert pull.read_text() == "pull-up"
    assert [(line, p) for line, p, _, _ in chip.writes] == [(13, "pull-down"), (13, "pull-up")]


def test_the_hil_configuration_is_the_4_seat_build_on_the_pi_backend_and_the_stub_bus() -> None:
    config = parse_config(tomllib.loads(hil_config(7)))
    build = load_config(Path(__file__).parents[2] / "hardware/wiring/4-seat.toml")
    assert config.hardware.backend == "pi" and config.hardware.chip is None  # found by label, as on a Pi
    assert [s.slap for s in config.inputs.seats] == [s.slap for s in build.inputs.seats] == list(SLAPS)
    assert config.inputs.seats == build.inputs.seats and config.arbiter == build.arbiter
    assert [(e.name, e.bus, e.address, e.interrupt_gpio) for e in config.inputs.expanders] == \
        [("nav1", 7, 0x20, 17), ("nav2", 7, 0x21, 27)]
    assert [(m.address, m.bus) for m in config.i2c_muxes] == [(0x70, 7)]
    assert [(s.mux, s.channel, s.bus, s.address) for s in config.screens] == [
        (0x70, 0, None, 0x3C), (None, None, 7, 0x3D), (0x70, 2, None, 0x3C), (0x70, 3, None, 0x3C)]
    assert config.buzzer is None


def test_spare_chips_go_live_one_by_one_with_a_line_each(tmp_path: Path) -> None:
    for n in range(3):
        (tmp_path / f"config/spare{n}/bank0").mkdir(parents=True)
        (tmp_path / f"config/spare{n}/dev_name").write_text(f"gpio-sim.{n}\n")
        (tmp_path / f"config/spare{n}/bank0/chip_name").write_text(f"gpiochip{n}\n")
    spares = make_spares(3, tmp_path / "config", tmp_path / "platform")
    assert [s.chip_name for s in spares] == ["gpiochip0", "gpiochip1", "gpiochip2"]
    assert [(s.bank / "label").read_text() for s in spares] == ["hil-spare-0\n", "hil-spare-1\n",
                                                                 "hil-spare-2\n"]
    assert all((s.bank / "num_lines").read_text() == "1\n" and (s.device / "live").read_text() == "1\n"
               for s in spares)


# ------------------------------------------------------------------ I2C: hil/i2c.py


class StubRegisters:
    """smbus2's byte transfers on i2c-stub: registers that keep what is written."""

    def __init__(self) -> None:
        self.regs: dict[int, list[int]] = {}

    def write_byte_data(self, address: int, register: int, value: int) -> None:
        self.regs.setdefault(address, [0] * 256)[register] = value

    def read_byte_data(self, address: int, register: int) -> int:
        return self.regs.setdefault(address, [0] * 256)[register]


def test_the_bench_seeds_power_on_values_and_plays_the_expanders_latch(tmp_path: Path) -> None:
    from firmware_host.devices.inputs.mcp23017 import GPIOA, GPIOB, INTCAPB, INTFA, INTFB, IODIRA, IODIRB

    stub = i2c.StubBus(1, tmp_path, StubRegisters())
    stub.seed()
    regs = stub.smbus.regs
    assert regs[0x20][IODIRA] == regs[0x20][IODIRB] == 0xFF and regs[0x20][0x0A] == 0x00  # DS Table 3-5
    assert regs[0x21][GPIOA] == regs[0x21][GPIOB] == 0xFF  # every button up
    assert regs[0x3C][0x40:0x60] == [i2c.SEED] * 32 and regs[0x70][0] == 0x69  # MPU-3050 WHO_AM_I
    assert i2c.latch(stub, 0x21, 1, 0xFE) == 0x01  # seat 4's left (B0) pressed
    nav2 = regs[0x21]
    assert (nav2[GPIOB], nav2[INTCAPB], nav2[INTFB], nav2[INTFA]) == (0xFE, 0xFE, 0x01, 0x00)
    i2c.unlatch(stub, 0x21, 1)
    assert regs[0x21][INTFB] == 0 and regs[0x21][INTCAPB] == 0xFE  # INTCAP keeps its value (DS §3.5.9)


def test_a_blocked_address_is_a_dummy_client_made_and_deleted_through_sysfs(tmp_path: Path) -> None:
    """Documentation/i2c/instantiating-devices.rst: `echo NAME ADDR > .../new_device`,
    `echo ADDR > .../delete_device`; the dummy driver is i2c-core-base.c's `dummy_id`."""
    (tmp_path / "i2c-3").mkdir()
    stub = i2c.StubBus(3, tmp_path, StubRegisters())
    stub.block(0x20)
    assert (tmp_path / "i2c-3/new_device").read_text() == "dummy 0x20\n" and stub.blocked == {0x20}
    stub.unblock(0x20)
    assert (tmp_path / "i2c-3/delete_device").read_text() == "0x20\n" and not stub.blocked


def test_expander_registers_are_checked_as_the_set_up_writes_them() -> None:
    from firmware_host.devices.inputs.mcp23017 import RESET_VALUES

    good = list(RESET_VALUES)  # IODIR 0xff after reset: GPA7/GPB7 still inputs
    good[0x00], good[0x01] = 0x7F, 0x7F  # GPA7/GPB7 made outputs (output only, DS20001952D)
    good[0x0A], good[0x0C], good[0x0D], good[0x04], good[0x05] = 0x40, 0x7F, 0x7F, 0x1F, 0x1F
    assert i2c.expander_problems(good, 0x1F1F) == []
    assert i2c.expander_problems(list(RESET_VALUES), 0x1F1F) == [
        "IOCON (0x0a) is 0x00, the set-up writes 0x40", "IODIRA (0x00) is 0xff, the set-up writes 0x7f",
        "IODIRB (0x01) is 0xff, the set-up writes 0x7f", "GPPUA (0x0c) is 0x00, the set-up writes 0x7f",
        "GPPUB (0x0d) is 0x00, the set-up writes 0x7f", "GPINTENA (0x04) is 0x00, the set-up writes 0x1f",
        "GPINTENB (0x05) is 0x00, the set-up writes 0x1f"]


def test_a_screens_registers_show_the_window_the_set_up_and_frame_data() -> None:
    start = [0xAE, 0xD5, 0x80, 0xA8, 0x3F, 0xD3, 0x00, 0x40, 0x8D, 0x14, 0x20, 0x00, 0xA1, 0xC8, 0xDA, 0x12,
             0xD9, 0xF1, 0xDB, 0x40, 0xA4, 0xA6]  # luma's ssd1306 start-up, one block at 0x00
    regs = [0] * 0x60
    regs[0:22] = start
    regs[0:6] = i2c.SSD1306_WINDOW  # then every frame's window, over its head
    regs[0x40:0x60] = [0x00] * 32  # the frame's last 32 bytes
    assert i2c.screen_problems(regs) == []
    seeded = regs[:0x40] + [i2c.SEED] * 32
    assert i2c.screen_problems(seeded) == ["registers 0x40-0x5f still hold the bench's seed: no frame data "
                                           "arrived"]
    only_started = start + [0] * (0x40 - 22) + [0] * 32
    assert i2c.screen_problems(only_started)[0].startswith("registers 0x00-0x05 are ae d5 80 a8 3f d3")


# ------------------------------------------------------------------ the checks


def sent(seat: int, before: int, expect: str = "decided", scenario: str = "single", group: int = -1,
         after: int | None = None) -> dict[str, Any]:
    return {"scenario": scenario, "seat": seat, "before_ns": before, "after_ns": after or before + MS,
            "expect": expect, "group": group}


def pressed(seat: int, ts: int, kind: str = "press", lag: int = 3 * MS) -> dict[str, Any]:
    return {"input": kind, "seat": seat, "control": "slap", "ts_ns": ts, "received_ns": ts + lag}


def decided(seat: int, ts: int, at: int) -> dict[str, Any]:
    return {"decided": "slap", "seat": seat, "ts_ns": ts, "decided_ns": at, "refused": None}


def trace(*events: dict[str, Any]) -> dict[str, Any]:
    return {"events": list(events), "arbiter": [], "window_ns": 5 * MS, "epsilon_ns": EPS}


def test_presses_decided_in_stamp_order_pass_with_their_latency() -> None:
    s = [sent(1, 1 * S), sent(2, 2 * S)]
    t = trace(pressed(1, 1 * S + 500_000), decided(1, 1 * S + 500_000, 1 * S + 6 * MS),
              pressed(2, 2 * S + 200_000), decided(2, 2 * S + 200_000, 2 * S + 8 * MS))
    r = analyse(s, t, [], PHASE)
    assert r["presses_sent"] == r["presses_decided"] == 2 and r["fraction_in_order"] == 1.0
    assert r["edge_to_decision_p50_ms"] == 5.5 and r["edge_to_decision_p99_ms"] == 7.8
    assert r["stamps_inside_write"] == "2/2"


def test_a_race_decided_against_its_stamps_fails_the_order_check() -> None:
    s = [sent(1, 1 * S, group=1, scenario="race in turn"),
         sent(2, 1 * S + 2 * MS, group=1, scenario="race in turn")]
    t = trace(pressed(2, 1 * S + 2 * MS + 10), pressed(1, 1 * S + 10),
              decided(2, 1 * S + 2 * MS + 10, 1 * S + 9 * MS), decided(1, 1 * S + 10, 1 * S + 9 * MS))
    r = analyse(s, t, [], PHASE)
    assert r["fraction_in_order"] == 0.5 and not r["checks"]["in_order"] and not r["checks"]["races"]
    assert r["races"]["beyond_epsilon"] == 1 and r["races"]["in_stamp_order"] == 0


def test_a_race_within_epsilon_needs_the_arbiters_drawn_tie() -> None:
    s = [sent(2, 1 * S, group=1, scenario="race at once"), sent(3, 1 * S, group=1, scenario="race at once")]
    a, b = 1 * S + 100, 1 * S + 150_000
    t = trace(pressed(3, b), pressed(2, a), decided(3, b, 1 * S + 6 * MS), decided(2, a, 1 * S + 6 * MS))
    tie = {"kind": "tie", "delta_ns": b - a, "presses": [{"seat": 3, "control": "slap", "ts_ns": b},
                                                         {"seat": 2, "control": "slap", "ts_ns": a}]}
    assert analyse(s, t, [tie], PHASE)["races"] == {"within_epsilon": 1, "tie_drawn": 1, "overloaded": 0,
                                                    "beyond_epsilon": 0, "in_stamp_order": 0, "late": 0}
    assert analyse(s, t, [tie], PHASE)["fraction_in_order"] == 1.0  # a tie in drawn order is in order
    assert not analyse(s, t, [], PHASE)["checks"]["races"]  # no draw logged


def test_a_race_within_epsilon_that_reached_the_engine_after_the_window_is_overloaded_not_a_fault() -> None:
    """Both presses arrived 57 and 69 ms after their edges with a 50 ms window (measured under load
    16): the arbiter decides each as it comes, as its model says, and draws no tie."""
    wide = [{"from_ns": 0, "window_ns": 50 * MS, "epsilon_ns": 10 * MS}]
    s = [sent(2, 1 * S, group=1, scenario="race at once"), sent(3, 1 * S, group=1, scenario="race at once"),
         sent(1, 2 * S, group=2, scenario="race in turn"),
         sent(4, 2 * S + 20 * MS, group=2, scenario="race in turn")]
    a, b = 1 * S + 100, 1 * S + 1_260_000
    spread = [pressed(1, 2 * S + 10), decided(1, 2 * S + 10, 2 * S + 51 * MS),
              pressed(4, 2 * S + 20 * MS), decided(4, 2 * S + 20 * MS, 2 * S + 71 * MS)]
    slow = trace(pressed(2, a, lag=57 * MS), decided(2, a, a + 57 * MS),
                 pressed(3, b, lag=69 * MS), decided(3, b, b + 69 * MS), *spread)
    r = analyse(s, slow, [], wide)
    assert r["races"]["overloaded"] == 1 and r["races"]["tie_drawn"] == 0 and r["checks"]["races"]
    quick = trace(pressed(2, a, lag=7 * MS), decided(2, a, a + 51 * MS),
                  pressed(3, b, lag=9 * MS), decided(3, b, a + 51 * MS), *spread)
    r = analyse(s, quick, [], wide)  # both were there within the window: a tie was owed
    assert r["races"]["overloaded"] == 0 and not r["checks"]["races"]


def test_a_press_the_arbiter_logged_late_is_out_of_order_as_fairness_md_promises() -> None:
    s = [sent(1, 1 * S, group=1, scenario="race in turn"),
         sent(2, 1 * S + 2 * MS, group=1, scenario="race in turn")]
    t = trace(pressed(2, 1 * S + 2 * MS + 10), decided(2, 1 * S + 2 * MS + 10, 1 * S + 8 * MS),
              pressed(1, 1 * S + 10, lag=40 * MS), decided(1, 1 * S + 10, 1 * S + 40 * MS))
    late = {"kind": "late", "delta_ns": 2 * MS,
            "presses": [{"seat": 1, "control": "slap", "ts_ns": 1 * S + 10}]}
    r = analyse(s, t, [late], PHASE)
    assert r["fraction_in_order"] == 0.5 and r["late_presses"] == 1
    assert r["checks"]["in_order"] and r["checks"]["races"] and r["races"]["late"] == 1
    assert not analyse(s, t, [], PHASE)["checks"]["in_order"]  # out of order and not logged: a fault


def test_false_start_and_bounce_and_stamps_before_their_write() -> None:
    s = [sent(2, 1 * S, "false_start", "false start"),
         sent(3, 2 * S, scenario="bounce", group=1), sent(3, 2 * S + 4 * MS, "bounce", "bounce", 1),
         sent(3, 2 * S + 8 * MS, "bounce", "bounce", 1)]
    good = trace(pressed(2, 1 * S + 10, "false_start"), pressed(3, 2 * S + 10),
                 decided(3, 2 * S + 10, 2 * S + 6 * MS))
    r = analyse(s, good, [], PHASE)
    assert r["checks"]["false_start"] and r["checks"]["debounce"] and r["bounce_first_contact"] == 1
    later = trace(pressed(2, 1 * S + 10, "false_start"), pressed(3, 2 * S + 4 * MS + 10),
                  decided(3, 2 * S + 4 * MS + 10, 2 * S + 10 * MS))  # the first contact's edge got lost
    r = analyse(s, later, [], PHASE)
    assert r["checks"]["debounce"] and r["bounce_first_contact"] == 0
    leaked = trace(*good["events"], pressed(3, 2 * S + 4 * MS + 10), decided(3, 2 * S + 4 * MS + 10, 3 * S))
    assert not analyse(s, leaked, [], PHASE)["checks"]["debounce"]
    early = trace(pressed(2, 1 * S - 10, "false_start"))  # stamped before the bench wrote: not the edge's
    assert not analyse(s, early, [], PHASE)["checks"]["kernel_stamps"]


def spiked(seat: int, before: int, width: int) -> dict[str, Any]:
    return {**sent(seat, before, "spike", "spike", after=before + 20_000),
            "up_before_ns": before + width - 20_000, "up_after_ns": before + width}


def test_a_spike_gives_no_slap_and_the_slap_after_it_keeps_its_own_stamp() -> None:
    a, b = 1 * S, 1 * S + 5 * MS  # the spike's writes, then the slap's 5 ms later
    s = [spiked(1, a, 60_000), sent(1, b, scenario="after spike")]
    traced = {"input": "spike", "seat": 1, "control": "slap", "ts_ns": a + 10_000, "received_ns": a + 2 * MS}
    good = trace(traced, pressed(1, b + 500), decided(1, b + 500, b + 6 * MS))
    r = analyse(s, good, [], PHASE)
    assert r["checks"]["spike_no_slap"] and r["spike_widths_us"] == [60.0]
    assert r["spikes_seen_by_daemon"] == "1/1"
    unseen = trace(pressed(1, b + 500), decided(1, b + 500, b + 6 * MS))  # gpio-sim named it "rising"
    assert analyse(s, unseen, [], PHASE)["checks"]["spike_no_slap"]
    assert analyse(s, unseen, [], PHASE)["spikes_seen_by_daemon"] == "0/1"
    # The table as it was: the spike's edge is the press, and the real slap inside the debounce is lost.
    old = trace(pressed(1, a + 10_000), decided(1, a + 10_000, a + 6 * MS))
    r = analyse(s, old, [], PHASE)
    assert not r["checks"]["spike_no_slap"] and not r["checks"]["every_press_decided"]
    assert "spikes: 1 of 1 narrower than 1000 µs, 1 of them pressed or decided; 0 of 1 slaps after a spike " \
           "decided once with their own stamp" in r["problems"]
    # Stamped when it was confirmed (1 ms on), not by its edge: refused too.
    confirmed_late = trace(pressed(1, b + 1 * MS + 5), decided(1, b + 1 * MS + 5, b + 6 * MS))
    assert not analyse(s, confirmed_late, [], PHASE)["checks"]["spike_no_slap"]


def test_a_spike_the_daemon_took_only_after_the_slap_began_is_a_vm_stall_tried_again() -> None:
    a, b = 1 * S, 1 * S + 5 * MS
    spike = Sent("spike", 3, a, a + 20_000, "spike", up_before_ns=a + 380_000, up_after_ns=a + 400_000)
    slap = Sent("after spike", 3, b, b + 20_000, "decided")
    took = {"input": "press", "seat": 3, "control": "slap", "ts_ns": a + 10_000}
    assert stalled_over(spike, slap, [{**took, "received_ns": b + 82 * MS}])  # judged by the slap's line
    assert not stalled_over(spike, slap, [{**took, "received_ns": a + 1 * MS + 300_000}])  # the table's fault
    assert not stalled_over(spike, slap, [{**took, "seat": 2, "received_ns": b + 82 * MS}])
    assert not stalled_over(spike, slap, [{**took, "input": "spike", "received_ns": b + 82 * MS}])


def test_a_spike_the_vm_made_wider_than_the_minimum_is_not_held_against_the_table() -> None:
    a, b = 1 * S, 1 * S + 5 * MS
    s = [spiked(1, a, 60_000), spiked(2, a, 1_500_000), sent(1, b, scenario="after spike")]
    t = trace(pressed(2, a + 10_000), decided(2, a + 10_000, a + 6 * MS),  # 1.5 ms down: a press by the rule
              pressed(1, b + 500), decided(1, b + 500, b + 6 * MS))
    assert analyse(s, t, [], PHASE)["checks"]["spike_no_slap"]


def test_navigation_and_expander_events_are_not_the_slaps_analysed() -> None:
    s = [sent(1, 1 * S)]
    slap = [pressed(1, 1 * S + 500_000), decided(1, 1 * S + 500_000, 1 * S + 6 * MS)]
    nav = [{**pressed(1, 1 * S - 10), "control": "left"},
           {**decided(1, 1 * S - 10, 2 * S), "decided": "left"},
           {"input": "fault", "seat": 0, "control": "nav1", "ts_ns": 3 * S, "received_ns": 3 * S}]
    assert analyse(s, trace(*slap, *nav), [], PHASE) == analyse(s, trace(*slap), [], PHASE)


def test_percentile_is_nearest_rank() -> None:
    assert percentile([], 99) is None
    assert percentile([float(i) for i in range(1, 101)], 99) == 99.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0


# ------------------------------------------------------------------ kernel and orchestrator


def test_the_kernel_version_comes_from_the_metapackage() -> None:
    depends = ("linux-base-amd64 (= 7.3.4-1~bpo13+1), linux-image-7.3.4+deb13-amd64 (= 7.3.4-1~bpo13+1), "
               "linux-modules-amd64 (= 7.3.4-1~bpo13+1)")
    assert abi_from_depends(depends) == "7.3.4+deb13-amd64"


def test_the_scratch_apt_configuration_names_only_trixie_backports(tmp_path: Path) -> None:
    conf = apt_config(tmp_path / "apt")
    text = conf.read_text()
    assert f'Dir::State::status "{(tmp_path / "apt").resolve()}/status";' in text
    assert (tmp_path / "apt/etc/sources.list").read_text() == \
        "deb http://deb.debian.org/debian trixie-backports main\n"


def test_config_value_reads_the_kernel_config(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("CONFIG_GPIO_SIM=m\n# CONFIG_GPIO_MOCKUP is not set\n")
    assert config_value(config, "CONFIG_GPIO_SIM") == "m"
    assert config_value(config, "CONFIG_GPIO_MOCKUP") is None


def test_a_missing_part_leaves_its_keys_null_and_says_why() -> None:
    parts = {"gpio": {"ran": True, "ok": True, "kernel": "7.3.4+deb13-amd64", "gpio_sim": True,
                      "presses_sent": 60, "presses_decided": 60, "fraction_in_order": 1.0,
                      "edge_to_decision_p99_ms": 12.5, "checks": {"in_order": True}, "backend": "pi",
                      "chip_label": "pinctrl-rp1", "revision": "c04170",
                      "chip": {"name": "gpiochip11", "spares": [f"gpiochip{n}" for n in range(11)]},
                      "i2c": {"bus": "/dev/i2c-1", "adapter": "SMBus stub driver", "how": "i2c-stub",
                              "answered": {"0x21": "nav2", "0x20": "nav1"}}},
             "firmware": orchestrator.run_part("firmware", "no_such_part", lambda m: {})}
    summary = orchestrator.summarise(parts, None, 61.0)
    assert set(orchestrator.SUMMARY_KEYS) <= set(summary)
    assert summary["micropython_version"] is None and summary["unit_active"] is None
    assert summary["presses_decided"] == 60 and summary["ok"] is True
    assert (summary["backend"], summary["chip_label"]) == ("pi", "pinctrl-rp1")
    assert summary["i2c"]["answered"] == {"0x21": "nav2", "0x20": "nav1"}
    assert summary["parts"]["firmware"] == {"ran": False, "ok": None,
                                            "why": "hil/no_such_part.py is not in this checkout"}
    text = orchestrator.human(summary, parts)
    assert "firmware  not run: hil/no_such_part.py is not in this checkout" in text
    assert "backend pi: found /dev/gpiochip11 labelled pinctrl-rp1 (revision c04170, after 11 other chips)" \
        in text
    assert "i2c: /dev/i2c-1 (SMBus stub driver), answered 0x20, 0x21; i2c-stub" in text


def test_a_part_that_raises_fails_the_run() -> None:
    def boom(_: Any) -> dict[str, Any]:
        raise OSError("no pty")

    part = orchestrator.run_part("firmware", "kernel", boom)
    assert part["ok"] is False and part["why"] == "OSError: no pty"
    assert orchestrator.summarise({"firmware": part}, None, 1.0)["ok"] is False


def test_a_missing_host_tool_is_one_line_naming_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(orchestrator.shutil, "which", lambda tool, path=None: None)
    with pytest.raises(orchestrator.SetupMissing, match=r"^qemu-system-x86_64 is missing: apt-get install "
                                                        r"qemu-system-x86"):
        orchestrator.check_host()


def test_a_part_missing_a_host_tool_is_a_set_up_problem() -> None:
    class Missing(Exception):
        pass

    def needs_node(_: Any) -> dict[str, Any]:
        raise Missing("node not found on PATH: apt-get install nodejs npm")

    part = orchestrator.run_part("firmware", "kernel", needs_node)
    assert part == {"ran": False, "ok": False, "setup": True,
                    "why": "node not found on PATH: apt-get install nodejs npm"}


def _alive(pid: int) -> bool:
    """Running or stopped, not gone and not a zombie waiting for its reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_a_vm_that_times_out_is_killed_with_its_whole_process_group(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """vng starts virtme-run, which starts QEMU: a stand-in vng starts a grandchild the same way,
    and the timeout must take it too (killing only vng left QEMU running)."""
    import time

    pidfile = tmp_path / "grandchild.pid"
    vng = tmp_path / "vng"
    vng.write_text(f"#!/bin/sh\nsh -c 'sleep 300 & echo $! > {pidfile}; wait' &\nwait\n")
    vng.chmod(0o755)
    kernel = Kernel("7.3.4+deb13-amd64", "7.3.4-1~bpo13+1", tmp_path, tmp_path / "vmlinuz", tmp_path,
                    tmp_path)
    monkeypatch.setattr(orchestrator, "VM_TIMEOUT_S", 2)
    started = time.monotonic()
    code, output = orchestrator.boot(vng, kernel, "true", tmp_path, lambda line: None)
    assert code == 124 and "did not finish in 2 s" in output
    assert time.monotonic() - started < 30
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)


def test_an_undecided_press_says_what_the_daemon_saw_of_it() -> None:
    s = [sent(1, 1 * S, after=1 * S + 130 * MS), sent(2, 2 * S), sent(3, 3 * S)]
    t = trace(pressed(2, 2 * S + 500_000), decided(3, 3 * S + 200_000, 3 * S + 6 * MS),
              decided(3, 3 * S + 40 * MS, 3 * S + 46 * MS))
    problems = analyse(s, t, [], PHASE)["problems"]
    masked = "an edge the simulator raises while the line's interrupt is masked is lost"
    assert ("single: seat 1's press decided 0 times: no edge reached the daemon from its write (which "
            f"took 130.0 ms; {masked})") in problems
    assert ("single: seat 2's press decided 0 times: the daemon saw press +0.500 ms (read 3.0 ms later), "
            "and decided none of them (the write took 1.0 ms)") in problems
    assert ("single: seat 3's press decided 2 times: decided at +0.200 ms, +40.000 ms after its write "
            "began (the write took 1.0 ms)") in problems


def test_a_source_distributions_build_requirements_join_the_wheelhouse(tmp_path: Path) -> None:
    """pip builds a source distribution in an isolated environment it fills from the index: the
    guests' offline wheelhouse must hold those requirements (PEP 518), for the guest's Python."""
    import io
    import tarfile

    from hil.systemd_vm import build_requirements

    def sdist(name: str, pyproject: str | None) -> None:
        with tarfile.open(tmp_path / f"{name}-1.0.tar.gz", "w:gz") as tar:
            files = {"setup.py": "", **({"pyproject.toml": pyproject} if pyproject is not None else {})}
            for file, text in files.items():
                data = text.encode()
                info = tarfile.TarInfo(f"{name}-1.0/{file}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))

    sdist("manpage", '[build-system]\nrequires = ["setuptools>=61", "tomli; python_version < \'3.11\'", '
                     '"packaging"]\n')
    sdist("legacy", None)  # setup.py alone: built with the venv's own setuptools
    assert build_requirements(tmp_path, "311") == ["setuptools>=61", "packaging"]
    assert build_requirements(tmp_path, "310") == ["setuptools>=61", "tomli", "packaging"]
