# Stand-in for MicroPython's `machine` on the rp2 port, for the test bench's MicroPython
# (WebAssembly port, which has no `machine`). Only what the LED firmware and mpremote touch.
#
# bitstream follows the MicroPython documentation of machine.bitstream(pin, encoding,
# timing, buf) (docs/library/machine.rst): encoding 0 is high-low, `timing` the
# (high_0, low_0, high_1, low_1) nanoseconds, `buf` clocked out most significant bit
# first, with interrupts disabled for the whole transfer. Here nothing is clocked out:
# the bytes that would go on the wire are recorded and reported to the bench.

import binascii

try:
    import hil  # the bench's JS module (tests/hil/micropython/runner.mjs)
except ImportError:
    hil = None
if not hasattr(hil, "report"):  # under CPython (a test) `hil` may be the tests' package
    hil = None

shown = None  # the last buffer clocked out: what the LEDs show
writes = 0
last_pin = None  # the GPIO the last bitstream went out on
bits = 0  # bits clocked out so far: the board spends (high + low) ns on each


def freq():
    return 125000000  # the rp2 port's default system clock


def reset():
    """A hard reset: the bench keeps what was written to the board's files and starts it again
    (hil.reset ends this interpreter; tests/hil/micropython/runner.mjs)."""
    if hil is None:
        raise SystemExit
    hil.reset()


class Pin:
    IN = 0
    OUT = 1

    def __init__(self, pin, mode=-1, *args, **kwargs):
        self.pin = pin
        self.mode = mode

    def init(self, mode=-1, *args, **kwargs):
        self.mode = mode

    def __repr__(self):
        return f"Pin(GPIO{self.pin})"


def bitstream(pin, encoding, timing, buf):
    global shown, writes, bits, last_pin
    if encoding != 0:
        raise ValueError("encoding")
    if pin.mode != Pin.OUT:
        raise ValueError(f"pin {pin.pin} is not an output")
    shown = bytes(buf)
    last_pin = pin.pin
    writes += 1
    bits += len(buf) * 8
    if hil is not None:
        hil.report(f"bitstream {pin.pin} {writes} {binascii.hexlify(buf).decode()}")
