# Stand-in for MicroPython's `neopixel` (micropython-lib,
# micropython/drivers/led/neopixel/neopixel.py, frozen into the rp2 firmware): the same
# state and the same wire bytes. `buf` is a bytearray of n * bpp bytes; ORDER places
# (r, g, b, w) at byte offsets (1, 0, 2, 3) of each pixel, so a WS2812 gets G, R, B;
# write() hands `buf` to machine.bitstream with encoding 0 and the 800 kHz timing
# (400, 850, 800, 450) ns.

from machine import bitstream


class NeoPixel:
    ORDER = (1, 0, 2, 3)

    def __init__(self, pin, n, bpp=3, timing=1):
        self.pin = pin
        self.n = n
        self.bpp = bpp
        self.buf = bytearray(n * bpp)
        self.pin.init(pin.OUT)
        if isinstance(timing, int):
            timing = (400, 850, 800, 450) if timing else (800, 1700, 1600, 900)
        self.timing = timing

    def __len__(self):
        return self.n

    def __setitem__(self, i, v):
        offset = i * self.bpp
        for k in range(self.bpp):
            self.buf[offset + self.ORDER[k]] = v[k]

    def __getitem__(self, i):
        offset = i * self.bpp
        return tuple(self.buf[offset + self.ORDER[k]] for k in range(self.bpp))

    def fill(self, v):
        for i in range(self.n):
            self[i] = v

    def write(self):
        bitstream(self.pin, 0, self.timing, self.buf)
