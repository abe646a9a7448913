# The LED controller's logic, run by the RP2040 (hardware/led_controller/main.py)
# and by the emulated controller on a pseudo-terminal. MicroPython-compatible,
# like ledproto: plain Python, no typing.

try:
    from firmware_host.devices.displays import ledproto
except ImportError:  # on the RP2040, the files sit side by side
    import ledproto

import array

UNVERSIONED = "unversioned"  # firmware copied without the ledversion.py `tablectl firmware flash` writes
PANEL = 16  # the matrix is made of 16x16 panels, each wired in serpentine rows


def led_index(x, y, width):
    """Where pixel (x, y) sits on the LED chain: panels left to right, then down;
    in a panel, even rows run left to right and odd rows back."""
    panels_across = width // PANEL
    panel = (y // PANEL) * panels_across + x // PANEL
    lx, ly = x % PANEL, y % PANEL
    return panel * PANEL * PANEL + ly * PANEL + (lx if ly % 2 == 0 else PANEL - 1 - lx)


def byte_map(width, height, order):
    """For each byte of a frame's RGB rows, its offset in the strip's buffer: the chain
    position of its pixel times three, plus where the strip keeps that colour (`order`,
    neopixel's ORDER: a WS2812 takes G, R, B). Computed once, used for every frame."""
    index = array.array("H")
    for y in range(height):
        for x in range(width):
            led = led_index(x, y, width) * 3
            for c in range(3):
                index.append(led + order[c])
    return index


class Controller:
    """Takes blocks from the host, answers each, writes frames straight into the strip's
    buffer. `strip` is a neopixel.NeoPixel (or anything with its `buf`, ORDER, write())."""

    def __init__(self, write, strip, width, height, data_pin=0, firmware=UNVERSIONED):
        """`firmware`: this firmware's version, said in every hello reply (ledversion.py on a
        board, written by `tablectl firmware flash`)."""
        self.write = write
        self.strip = strip
        self.name = (ledproto.NAME + " " + firmware).encode()
        self.stopped = False
        self.width = width
        self.height = height
        self.data_pin = data_pin
        self.index = byte_map(width, height, getattr(strip, "ORDER", (1, 0, 2)))
        self.frame_len = ledproto.OVERHEAD + 2 + width * height * 3
        self.frames = 0
        self.naks = 0
        self.before_show = None  # a hook the test bench uses to model a busy controller

    def serve(self, readinto):
        """The main loop: blocks in, answers out, forever (until the line closes)."""
        # Room for any block, not only our frame: a host configured for another size still
        # gets a hello reply that says which size this controller drives.
        reader = ledproto.Reader(readinto, ledproto.MAX_BLOCK)
        while not self.stopped:
            seq, kind, n = reader.block()
            self.take(seq, kind, reader.mv[ledproto.HEADER : n - 2] if kind else None)

    def take(self, seq, kind, payload):
        if kind is None:
            self.naks += 1
            self.write(ledproto.encode(seq, ledproto.NAK, bytes((seq,))))
        elif kind == ledproto.HELLO:
            flags = 0 if ledproto.IMPL == "python" else ledproto.NATIVE
            reply = bytes((ledproto.VERSION, self.width, self.height, self.data_pin, flags)) + self.name
            self.write(ledproto.encode(seq, ledproto.HELLO_REPLY, reply))
        elif kind == ledproto.STOP:
            # The host is about to copy new firmware (tablectl firmware flash): say so, then
            # leave the loop; main.py returns and the board is at its REPL, where mpremote works.
            self.write(ledproto.encode(seq, ledproto.STOPPING, bytes((seq,))))
            self.stopped = True
        elif kind == ledproto.FRAME:
            w, h = payload[0], payload[1]
            if w != self.width or h != self.height or len(payload) != 2 + w * h * 3:
                self.naks += 1
                self.write(ledproto.encode(seq, ledproto.NAK, bytes((seq,))))
                return
            ledproto.scatter(self.strip.buf, payload[2:], self.index, len(self.index))
            # Taken: the ack goes before the bitstream, so the host's next frame is on its
            # way while this one is clocked out (15.4 ms for 512 LEDs, by the PIO: ws2812.py).
            self.write(ledproto.encode(seq, ledproto.ACK, bytes((seq,))))
            if self.before_show is not None:
                self.before_show()
            self.strip.write()
            self.frames += 1
