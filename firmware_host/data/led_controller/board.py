# This board's wiring, the one place the firmware reads it from. tests/test_led_wiring.py
# checks it against the schematic's netlist (schematics/out/), hardware/README.md and the
# [centre] size of every build in hardware/wiring/: change those and this together.

WIDTH = 32  # [centre] width and height: 16x16 panels
HEIGHT = 16
DATA_PIN = 2  # GP2 (Pico pin 4) -> 74AHCT125 1A -> 1Y -> 330 ohm -> the first panel's DIN
