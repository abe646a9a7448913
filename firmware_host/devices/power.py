"""The power budget of a build: what the 5 V supply must deliver, from the configuration.

The LED matrix dominates: a WS2812 draws up to 20 mA a colour (60 mA white) at
full level, scaled by the brightness cap the views apply to every LED
(views/centre.py `cap`), plus about 1 mA when dark. The budget takes the worst
frame (every LED white at the cap), because a finished round can light the
whole matrix; the supply is then sized so that worst case is 80 % of its rating.

The supply feeds fused branches (schematics/table.py draws them, each its own
net): the Pi through its USB-C socket, each 16x16 panel through its own power
leads, and the LED controller with the buzzer. Each fuse is sized here for its
branch's worst case; `schematics/table.py` checks every connector, wire and fuse
on the way against these figures.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..config import TableConfig

LED_WHITE_A = 0.060  # WS2812B, all three colours at full level
LED_IDLE_A = 0.001
PI_A = {"pi4": 3.0, "pi5": 5.0}  # the official supplies' ratings, USB peripherals included
OLED_A = 0.020  # SSD1306/SH1106 with every pixel lit, from the Pi's 3.3 V
EXPANDER_A = 0.001
MUX_A = 0.001
PICO_A = 0.050
BUZZER_A = 0.040  # CUI CD-1206 datasheet: 40 mA mean at 5 Vo-p, ½ duty
PANEL_SIDE = 16  # the matrix is built of 16x16 panels (config: width and height are whole panels)
SUPPLIES_A = (10, 15, 20, 30, 40, 60)  # common 5 V ratings
LOAD = 0.8  # run a supply at no more than 80 % of its rating
FUSES_A = (2.0, 3.15, 4.0, 5.0, 6.3, 8.0, 10.0, 12.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0, 80.0)
"""Time-lag (T) fuse ratings, amperes."""
FUSE_LOAD = 0.75
"""A time-lag fuse carries at most 75 % of its rating for good: a 5 A fuse on a Pi 5's 5 A budget
would have no margin and open on a warm day."""


@dataclass(frozen=True)
class Budget:
    leds: int
    brightness: float
    leds_a: float
    pi_a: float
    logic_3v3_a: float  # displays and chips, taken from the Pi's 3.3 V (inside pi_a's 5 V)
    others_a: float  # LED controller, buzzer
    total_a: float
    supply_a: int
    supply_w: int
    panels: int
    panel_a: float  # one 16x16 panel, its own fused branch
    pi_fuse_a: float
    panel_fuse_a: float
    others_fuse_a: float

    def text(self) -> str:
        return "\n".join([
            f"LED matrix: {self.leds} WS2812 at brightness cap {self.brightness:.2f}: "
            f"{self.leds_a:.2f} A worst case, {self.panel_a:.2f} A for each of its {self.panels} panels",
            f"Raspberry Pi: {self.pi_a:.2f} A (its 3.3 V also feeds displays and chips: "
            f"{self.logic_3v3_a:.3f} A)",
            f"LED controller and buzzer: {self.others_a:.2f} A",
            f"total at 5 V: {self.total_a:.2f} A -> a 5 V {self.supply_a} A ({self.supply_w} W) supply",
            f"fuses (time-lag, loaded to at most {FUSE_LOAD:.0%}): {self.pi_fuse_a:g} A for the Pi, "
            f"{self.panel_fuse_a:g} A for each LED panel, {self.others_fuse_a:g} A for the controller "
            "and buzzer",
        ])


def power_budget(config: TableConfig, pi: str = "pi4") -> Budget:
    leds = config.centre.width * config.centre.height
    leds_a = leds * (LED_WHITE_A * config.centre.brightness + LED_IDLE_A)
    logic = len(config.screens) * OLED_A + len(config.inputs.expanders) * EXPANDER_A \
        + len(config.i2c_muxes) * MUX_A
    others = PICO_A + (BUZZER_A if config.buzzer else 0.0)
    total = leds_a + PI_A[pi] + others
    supply = next((a for a in SUPPLIES_A if total <= a * LOAD), SUPPLIES_A[-1])
    panels = (config.centre.width // PANEL_SIDE) * (config.centre.height // PANEL_SIDE)
    panel_a = leds_a / panels
    return Budget(leds, config.centre.brightness, round(leds_a, 3), PI_A[pi], round(logic, 3),
                  round(others, 3), round(total, 3), supply, supply * 5, panels, round(panel_a, 3),
                  fuse_for(PI_A[pi]), fuse_for(panel_a), fuse_for(others))


def fuse_for(load_a: float) -> float:
    return next((f for f in FUSES_A if load_a <= f * FUSE_LOAD), FUSES_A[-1])


def as_dict(budget: Budget) -> dict[str, float | int]:
    return asdict(budget)
