# The WS2812 chain driven by one of the RP2040's PIO state machines (RP2040 datasheet, chapter 3,
# "PIO"), as MicroPython's own example does (examples/rp2/pio_ws2812.py): the CPU hands the
# state machine one byte at a time through its TX FIFO, and the state machine shapes each bit.
# Interrupts stay on: the USB keeps receiving the host's next frame while this one goes out
# (machine.bitstream, which neopixel.write uses, holds them off for the whole 15.4 ms).
#
# One bit is T1 + T2 + T3 = 10 cycles of the state machine at FREQ = 8 MHz, 125 ns each:
#   a 0: high T1 = 3 cycles (375 ns), low T2 + T3 = 7 (875 ns)
#   a 1: high T1 + T2 = 6 cycles (750 ns), low T3 = 4 (500 ns)
# against the WS2812B datasheet's T0H 0.4 us, T0L 0.85 us, T1H 0.8 us, T1L 0.45 us (each
# +-150 ns) and 1.25 us a bit. The virtual Pi's rp2 stand-in (tests/hil/micropython/standins)
# runs this program as the datasheet defines the instructions and measures the waveform.
#
# Bytes go out as they lie in `buf` (G, R, B for each LED in chain order, as neopixel keeps
# them): put(buf, 24) pushes each byte as a word shifted to its top, and autopull with a
# threshold of 8 takes the next word after every 8 bits, most significant bit first.

import rp2
import time
from machine import Pin

FREQ = 8_000_000
RESET_US = 300  # the line low between frames: WS2812B 50 us at least, WS2812B-V5 280 us


@rp2.asm_pio(sideset_init=rp2.PIO.OUT_LOW, out_shiftdir=rp2.PIO.SHIFT_LEFT, autopull=True, pull_thresh=8)
def ws2812():
    T1 = 3  # the PIO assembler swaps this module's globals while it runs: constants live here
    T2 = 3
    T3 = 4
    wrap_target()
    label("bitloop")
    out(x, 1).side(0)[T3 - 1]
    jmp(not_x, "do_zero").side(1)[T1 - 1]
    jmp("bitloop").side(1)[T2 - 1]
    label("do_zero")
    nop().side(0)[T2 - 1]
    wrap()


class Strip:
    """What ledctl.Controller needs of a strip (neopixel.NeoPixel's `buf`, ORDER, write())."""

    ORDER = (1, 0, 2, 3)  # r, g, b at byte offsets 1, 0, 2: a WS2812 takes G, R, B

    def __init__(self, pin, n, state_machine=0):
        self.buf = bytearray(n * 3)
        self.sm = rp2.StateMachine(state_machine, ws2812, freq=FREQ, sideset_base=Pin(pin))
        self.sm.active(1)
        self.done = time.ticks_us()

    def write(self):
        # The chain latches after the line has been low RESET_US: wait out what is left of it.
        left = RESET_US - time.ticks_diff(time.ticks_us(), self.done)
        if left > 0:
            time.sleep_us(left)
        self.sm.put(self.buf, 24)
        while self.sm.tx_fifo():  # the last bytes still in the FIFO
            pass
        self.done = time.ticks_add(time.ticks_us(), 10 * 8 * 1000000 // FREQ)  # and the last byte's bits
