# The LED controller's logic, run by the RP2040 (hardware/led_controller/main.py)
# and by the emulated controller on a pseudo-terminal. MicroPython-compatible,
# like ledproto: plain Python, no typing.

try:
    from firmware_host.displays import ledproto
except ImportError:  # on the RP2040, the two files sit side by side
    import ledproto

NAME = b"table-led 1.0"
PANEL = 16  # the matrix is made of 16x16 panels, each wired in serpentine rows


def led_index(x, y, width):
    """Where pixel (x, y) sits on the LED chain: panels left to right, then down;
    in a panel, even rows run left to right and odd rows back."""
    panels_across = width // PANEL
    panel = (y // PANEL) * panels_across + x // PANEL
    lx, ly = x % PANEL, y % PANEL
    return panel * PANEL * PANEL + ly * PANEL + (lx if ly % 2 == 0 else PANEL - 1 - lx)


class Controller:
    """Takes blocks from the host, shows frames on the strip, answers every block."""

    def __init__(self, write, strip, width, height):
        self.write = write
        self.strip = strip  # anything with strip[i] = (r, g, b) and strip.write()
        self.width = width
        self.height = height
        self.decoder = ledproto.Decoder()
        self.frames = 0
        self.naks = 0

    def feed(self, data):
        blocks, damaged = self.decoder.feed(data)
        if damaged:
            self.naks += 1
            self.write(ledproto.encode(0, ledproto.NAK))
        for seq, kind, payload in blocks:
            self.handle(seq, kind, payload)

    def idle(self):
        """Called when no byte has come for a while (the owner keeps the time)."""
        if self.decoder.buf:
            blocks, _ = self.decoder.idle()
            self.naks += 1
            self.write(ledproto.encode(0, ledproto.NAK))
            for seq, kind, payload in blocks:
                self.handle(seq, kind, payload)

    def handle(self, seq, kind, payload):
        if kind == ledproto.HELLO:
            reply = bytes((ledproto.VERSION, self.width, self.height)) + NAME
            self.write(ledproto.encode(seq, ledproto.HELLO_REPLY, reply))
            return
        if kind == ledproto.FRAME:
            w, h = payload[0], payload[1]
            if w != self.width or h != self.height or len(payload) != 2 + w * h * 3:
                self.naks += 1
                self.write(ledproto.encode(seq, ledproto.NAK))
                return
            self.show(payload, w, h)
            self.frames += 1
        self.write(ledproto.encode(seq, ledproto.ACK, bytes((seq,))))

    def show(self, payload, w, h):
        strip = self.strip
        i = 2
        for y in range(h):
            for x in range(w):
                strip[led_index(x, y, w)] = (payload[i], payload[i + 1], payload[i + 2])
                i += 3
        strip.write()
