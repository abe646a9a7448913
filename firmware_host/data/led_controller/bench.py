# The firmware's own benchmark: what each part of a frame costs on the interpreter it
# runs on. On a board: `mpremote run bench.py` (with the firmware's files on the board)
# prints one line; the test bench (hil/firmware.py) runs it under MicroPython's
# WebAssembly port. Only a board's figures are RP2040 figures (docs/led-protocol.md).

import gc
import json
import sys
import time

import board
import ledctl
import ledproto
import ws2812

ROUNDS = 20
REPEATS = 5


def per_call_ms(fn, rounds=ROUNDS):
    """The best of REPEATS batches: what the code costs when nothing else runs (a shared
    machine, a garbage collection or the WebAssembly engine's compiler only add)."""
    best = None
    for _ in range(REPEATS):
        start = time.ticks_us()
        for _ in range(rounds):
            fn()
        took = time.ticks_diff(time.ticks_us(), start) / rounds / 1000
        best = took if best is None or took < best else best
    return best


def main():
    w, h = board.WIDTH, board.HEIGHT
    strip = ws2812.Strip(board.DATA_PIN, w * h)
    pixels = (bytes(range(256)) * (w * h * 3 // 256 + 1))[: w * h * 3]
    block = ledproto.encode(1, ledproto.FRAME, bytes((w, h)) + pixels)
    n = len(block)
    mv = memoryview(block)
    acks = []
    ctl = ledctl.Controller(acks.append, strip, w, h, board.DATA_PIN)
    where = [0]

    def readinto(buf):  # the host, sending this frame again and again
        k = min(len(buf), n - where[0])
        buf[:k] = mv[where[0] : where[0] + k]
        where[0] = (where[0] + k) % n
        return k

    reader = ledproto.Reader(readinto, n)

    def one_frame():
        seq, kind, end = reader.block()
        ctl.take(seq, kind, reader.mv[ledproto.HEADER : end - 2])

    for _ in range(ROUNDS):  # warm up (the WebAssembly engine compiles hot code as it goes)
        one_frame()
    parts = {
        "read": per_call_ms(reader.block),  # header, one read of the rest, CRC
        "crc": per_call_ms(lambda: ledproto.crc16(mv[: n - 2])),
        "copy": per_call_ms(lambda: ledproto.scatter(strip.buf, mv[8 : n - 2], ctl.index, len(ctl.index))),
        "strip_write": per_call_ms(strip.write),
        "frame": per_call_ms(one_frame),
    }
    class Quiet:  # the strip without its write: what the firmware itself allocates
        ORDER = strip.ORDER
        buf = strip.buf

        def write(self):
            pass

    ctl.strip = Quiet()
    gc.collect()
    gc.disable()
    before = gc.mem_alloc()
    for _ in range(ROUNDS):
        one_frame()
    allocated = (gc.mem_alloc() - before) // ROUNDS
    gc.enable()
    result = {
        "micropython": ".".join(str(v) for v in sys.implementation.version[:3]),
        "machine": sys.implementation._machine if hasattr(sys.implementation, "_machine") else "",
        "impl": ledproto.IMPL,
        "block_bytes": n,
        "per_frame_ms": dict((k, round(v, 3)) for k, v in parts.items()),
        "frames_per_s_cpu": round(1000 / parts["frame"], 1) if parts["frame"] else None,
        "allocated_per_frame_bytes": allocated,
        "acks": len(acks),
    }
    try:
        import hil  # the test bench's runner

        hil.report("bench " + json.dumps(result))
    except ImportError:
        print("bench " + json.dumps(result))


main()
