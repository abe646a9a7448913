# The host <-> LED controller link protocol, version 3 (docs/led-protocol.md).
#
# One file for both ends: the Pi imports it as firmware_host.devices.displays.ledproto,
# the RP2040's MicroPython imports it as ledproto (hardware/led_controller/).
# So: plain Python that MicroPython also runs - no typing, no dataclasses,
# no f-strings with format specs, bytes and bytearray only.
#
# A block on the wire:
#   0x7E LEN_HI LEN_LO SEQ TYPE HCHK PAYLOAD... CRC_HI CRC_LO
# The sync byte starts every block; LEN counts the whole block; HCHK, the high
# byte of the CRC over the five bytes before it, vouches for the length before
# anyone waits for that many bytes; the CRC is CRC-16/CCITT-FALSE over
# everything before it. A receiver that meets a bad header or a bad CRC reads on
# from the next 0x7E after the block's start, at once: no quiet spell needed.

VERSION = 3  # 3: STOP and STOPPING; the hello reply's name carries the firmware's version
SYNC = 0x7E
HEADER = 6  # sync, length (2), sequence, type, header check
OVERHEAD = 8  # the header and the CRC (2)
MAX_BLOCK = 8192

HELLO = 0x01  # host: version, width, height, then padding (see Controller.hello)
FRAME = 0x02  # host: width, height, then RGB bytes row by row
STOP = 0x03  # host (protocol 3): stop serving and return to the REPL, to be given new firmware
HELLO_REPLY = 0x81  # controller: version, width, height, data pin, flags, "table-led FIRMWARE"
ACK = 0x80  # controller: the sequence number of the frame it took
NAK = 0x82  # controller: the sequence number of a block that arrived damaged
STOPPING = 0x83  # controller (protocol 3): the sequence number of the STOP it obeys, then it stops
KINDS = (HELLO, FRAME, STOP, HELLO_REPLY, ACK, NAK, STOPPING)
NAME = "table-led"  # the hello reply's name: "table-led " and the firmware's version
NATIVE = 0x01  # HELLO_REPLY flag: the CRC and pixel copy run as compiled code, not Python loops

_TABLE = []
for _i in range(256):
    _c = _i << 8
    for _ in range(8):
        _c = ((_c << 1) ^ 0x1021) if _c & 0x8000 else (_c << 1)
    _TABLE.append(_c & 0xFFFF)


def _crc16_table(data, crc=0xFFFF):
    table = _TABLE
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ b) & 0xFF]
    return crc


def _scatter_loop(dst, src, index, n):
    """dst[index[i]] = src[i] for i < n: the frame's RGB bytes to their places on the chain."""
    for i in range(n):
        dst[index[i]] = src[i]


# The CRC and the pixel copy are the firmware's per-byte work: each picks the fastest
# implementation this interpreter has, once, at import. CPython has the CRC in C; an
# RP2040 compiles ledviper.py to machine code; anything else (MicroPython's WebAssembly
# port cannot compile viper) runs the plain loops above. IMPL says which, and the
# controller reports it in its hello reply: nothing falls back silently.
scatter = _scatter_loop
try:
    from binascii import crc_hqx as _crc_hqx

    def crc16(data, crc=0xFFFF):
        return _crc_hqx(data, crc)

    IMPL = "binascii"
except ImportError:
    try:
        import ledviper as _viper

        _TABLE16 = _viper.table(_TABLE)

        def crc16(data, crc=0xFFFF):
            return _viper.crc16(data, len(data), crc, _TABLE16)

        scatter = _viper.scatter
        IMPL = "viper"
    except (ImportError, SyntaxError):
        crc16 = _crc16_table
        IMPL = "python"


def encode(seq, kind, payload=b""):
    n = len(payload) + OVERHEAD
    if n > MAX_BLOCK:
        raise ValueError("block too long")
    head = bytearray((SYNC, n >> 8, n & 0xFF, seq & 0xFF, kind, 0))
    head[5] = crc16(memoryview(head)[:5]) >> 8
    crc = crc16(payload, crc16(head))
    return bytes(head) + bytes(payload) + bytes((crc >> 8, crc & 0xFF))


def header_ok(buf, size=MAX_BLOCK):
    """buf[0:HEADER] starts a block this receiver can take: sync, a known type, a length
    that fits, and the header check vouching for them."""
    n = (buf[1] << 8) | buf[2]
    return (buf[0] == SYNC and OVERHEAD <= n <= size and buf[4] in KINDS
            and buf[5] == crc16(memoryview(buf)[:5]) >> 8)


class Reader:
    """The controller's receiver, over a blocking `readinto`: the header, then the rest of
    the block in one read, straight into a buffer allocated once. After a damaged block it
    looks for the next sync byte in what it already read before reading more."""

    def __init__(self, readinto, size=MAX_BLOCK):
        self.readinto = readinto
        self.buf = bytearray(size)
        self.mv = memoryview(self.buf)
        self.have = 0  # bytes at the front of buf, read and not yet used
        self.taken = 0  # the length of the block handed out last: dropped on the next call
        self.damaged = 0

    def _fill(self, n):
        mv = self.mv
        while self.have < n:
            got = self.readinto(mv[self.have : n])
            if got is None:
                continue  # a non-blocking stream with nothing yet (a board's stdin blocks)
            if got == 0:
                raise EOFError("the line closed")
            self.have += got

    def _drop(self, k):
        if k < self.have:
            self.buf[0 : self.have - k] = self.mv[k : self.have]
        self.have = max(0, self.have - k)

    def block(self):
        """The next block: (seq, kind, n), its payload at mv[HEADER : n - 2]; a block whose
        header was good and CRC bad comes back as (seq, None, 0) so it can be refused."""
        buf = self.buf
        self._drop(self.taken)
        self.taken = 0
        while True:
            if not self.have:
                self._fill(1)
            if buf[0] != SYNC:
                i = 1
                while i < self.have and buf[i] != SYNC:
                    i += 1
                self._drop(i)
                continue
            self._fill(HEADER)
            if not header_ok(buf, len(buf)):
                self._drop(1)
                continue
            n = (buf[1] << 8) | buf[2]
            self._fill(n)
            if crc16(self.mv[: n - 2]) != (buf[n - 2] << 8) | buf[n - 1]:
                self.damaged += 1
                seq = buf[3]
                self._drop(1)  # the next block may start inside this one
                return seq, None, 0
            self.taken = n
            return buf[3], buf[4], n


class Decoder:
    """The host's receiver: feed it bytes as they come; it returns the good blocks."""

    def __init__(self):
        self.buf = b""
        self.errors = 0

    def feed(self, data):
        """Returns (blocks, damaged): blocks as (seq, kind, payload); damaged counts the
        blocks dropped for a bad header or CRC in this call."""
        buf = self.buf + bytes(data)
        out = []
        damaged = 0
        while buf:
            if buf[0] != SYNC:
                i = buf.find(bytes((SYNC,)))
                buf = buf[i:] if i >= 0 else b""
                continue
            if len(buf) < HEADER:
                break
            if not header_ok(buf):
                damaged += 1
                buf = buf[1:]
                continue
            n = (buf[1] << 8) | buf[2]
            if len(buf) < n:
                break
            if crc16(buf[: n - 2]) == (buf[n - 2] << 8) | buf[n - 1]:
                out.append((buf[3], buf[4], buf[HEADER : n - 2]))
                buf = buf[n:]
            else:
                damaged += 1
                buf = buf[1:]
        self.buf = buf
        self.errors += damaged
        return out, damaged
