"""`table-host bench display`: engine decision to every affected display's frame queued, and the
bytes and bus time one frame costs, from the real drivers."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from typing import Any

from ..engine.game import find
from ..play.simulate import make_bots
from ..system.children import ending_with_me
from ..table.matches import new_match

DISPLAY_TARGET_P99_MS = 5.0
I2C_HZ = 400_000
USB_BYTES_PER_S = 1_000_000  # USB full speed CDC, a conservative effective rate


def bench_display(decisions: int = 1500, seed: int = 1) -> dict[str, Any]:
    """Engine decision to every affected display's frame queued, per game, on real workers."""
    import statistics
    import tempfile

    from ..devices.displays.ledlink import LedLink, frame_payload
    from ..devices.displays.ledproto import OVERHEAD
    from ..devices.displays.oled import SPI_HZ, DisplaySpec, SeatDisplays, open_luma
    from ..devices.emulated.oled import RecordingInterface, recording_opener
    from ..engine.game import sight_of
    from ..service.screen_feed import TableScreens
    from ..table.controls import SeatController
    from ..views.centre import render_centre
    from ..views.seat import render_seat

    # Bytes one seat frame puts on its bus, from the real drivers.
    wire = {}
    for kind in ("ssd1306", "sh1106"):
        interface = RecordingInterface()
        device = open_luma(DisplaySpec(0, kind), interface)
        start = len(interface.transfers)
        from PIL import Image

        device.display(Image.new("1", (128, 64), 1))
        frame = interface.transfers[start:]
        wire[kind] = {"i2c_bytes": interface.i2c_bytes(frame),
                      "spi_bytes": sum(len(p) for _, p in frame)}
    centre_bytes = OVERHEAD + len(frame_payload(Image.new("RGB", (32, 16))))
    buses = {
        "oled_ssd1306_i2c_ms": round(wire["ssd1306"]["i2c_bytes"] * 9 / I2C_HZ * 1e3, 2),
        "oled_sh1106_i2c_ms": round(wire["sh1106"]["i2c_bytes"] * 9 / I2C_HZ * 1e3, 2),
        "oled_ssd1306_spi_ms": round(wire["ssd1306"]["spi_bytes"] * 8 / SPI_HZ["ssd1306"] * 1e3, 3),
        "oled_sh1106_spi_ms": round(wire["sh1106"]["spi_bytes"] * 8 / SPI_HZ["sh1106"] * 1e3, 3),
        "centre_usb_serial_ms": round(centre_bytes / USB_BYTES_PER_S * 1e3, 2),
    }
    games: dict[str, Any] = {}
    all_times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        # The controller is a chip of its own on the real table: here a process of its own.
        emulator = subprocess.Popen([sys.executable, "-m", "firmware_host.devices.emulated.led", tmp],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                    preexec_fn=ending_with_me())
        assert emulator.stdout is not None
        path = emulator.stdout.readline().strip()
        link = LedLink(path, 32, 16)
        try:
            for game, players in (("classic", 12), ("classic", 4), ("dice", 4), ("domino", 4),
                                  ("crazy", 5)):
                long_match = find(game).long_options()
                match = new_match(game, players, f"display/{seed}", long_match)
                seats = [SeatController(s, match) for s in range(players)]
                specs = [DisplaySpec(s, bus=f"mux 0x{0x70 + s // 8:x} channel {s % 8}")
                         for s in range(players)]
                oleds = SeatDisplays(specs, recording_opener({}))
                screens = TableScreens(seats, oleds, link)
                screens.refresh(range(players))
                bots = make_bots(players, "instant", seed)
                rng = random.Random(seed)
                times: list[float] = []
                queued = 0
                seat_ms, centre_ms = [], []
                while len(times) < decisions:
                    if match.round.result is not None:
                        match.next_round()
                        screens.refresh(range(players))
                    seat = rng.randrange(players)
                    action = bots[seat].choose(sight_of(match.round, seat), len(times))
                    if action is None:
                        continue
                    match.apply(action)  # the engine's decision...
                    n, took = screens.after_decisions([seat])  # ...to every affected frame queued
                    times.append(took)
                    queued += n
                    if len(times) % 50 == 1:  # the first decision too: a short run has one
                        t0 = time.perf_counter()
                        render_seat(seats[seat])
                        t1 = time.perf_counter()
                        render_centre(match)
                        seat_ms.append((t1 - t0) * 1e3)
                        centre_ms.append((time.perf_counter() - t1) * 1e3)
                oleds.close()
                times.sort()
                all_times += times
                games[f"{game}_{players}"] = {
                    "decisions": len(times),
                    "frames_queued_per_decision": round(queued / len(times), 2),
                    "queue_p50_ms": round(times[len(times) // 2] * 1e3, 3),
                    "queue_p99_ms": round(times[int(len(times) * 0.99)] * 1e3, 3),
                    "render_seat_ms": round(statistics.fmean(seat_ms), 3),
                    "render_centre_ms": round(statistics.fmean(centre_ms), 3),
                }
        finally:
            link.close()
            assert emulator.stdin is not None
            emulator.stdin.close()
            emulator.wait(timeout=5)
    all_times.sort()
    p99 = all_times[int(len(all_times) * 0.99)] * 1e3
    return {
        "games": games,
        "bytes_per_frame": {"oled_ssd1306_i2c": wire["ssd1306"]["i2c_bytes"],
                            "oled_sh1106_i2c": wire["sh1106"]["i2c_bytes"],
                            "oled_ssd1306_spi": wire["ssd1306"]["spi_bytes"],
                            "centre_usb_serial_32x16": centre_bytes},
        "bus_time_per_frame": buses,
        "queue_p99_ms": round(p99, 3),
        "target_p99_ms": DISPLAY_TARGET_P99_MS,
        "meets_target": p99 <= DISPLAY_TARGET_P99_MS,
    }


def display_text(f: dict[str, Any]) -> str:
    from ..devices.displays.oled import SPI_HZ

    lines = ["display: engine decision to every affected frame queued (real OLED workers, "
             "LED link to the emulated controller)"]
    for name, g in f["games"].items():
        lines.append(f"  {name:<11} p50 {g['queue_p50_ms']:.3f} ms, p99 {g['queue_p99_ms']:.3f} ms, "
                     f"{g['frames_queued_per_decision']} frames/decision; render seat "
                     f"{g['render_seat_ms']:.3f} ms, centre {g['render_centre_ms']:.3f} ms")
    b, t = f["bytes_per_frame"], f["bus_time_per_frame"]
    lines.append(f"  bytes per frame: OLED I2C {b['oled_ssd1306_i2c']} (SSD1306) / {b['oled_sh1106_i2c']} "
                 f"(SH1106), OLED SPI {b['oled_ssd1306_spi']}, centre {b['centre_usb_serial_32x16']}")
    lines.append(f"  modelled bus time: I2C 400 kHz {t['oled_ssd1306_i2c_ms']} ms / "
                 f"{t['oled_sh1106_i2c_ms']} ms, SPI {SPI_HZ['ssd1306'] / 1e6:g} MHz (SSD1306) "
                 f"{t['oled_ssd1306_spi_ms']} ms / {SPI_HZ['sh1106'] / 1e6:g} MHz (SH1106) "
                 f"{t['oled_sh1106_spi_ms']} ms, "
                 f"USB serial {t['centre_usb_serial_ms']} ms")
    lines.append(f"  target: p99 <= {f['target_p99_ms']} ms: {'meets' if f['meets_target'] else 'MISSES'} "
                 f"({f['queue_p99_ms']} ms)")
    return "\n".join(lines)
