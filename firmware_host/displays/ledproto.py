# The host <-> LED controller link protocol, version 1 (docs/led-protocol.md).
#
# One file for both ends: the Pi imports it as firmware_host.displays.ledproto,
# the RP2040's MicroPython imports it as ledproto (hardware/led_controller/).
# So: plain Python that MicroPython also runs - no typing, no dataclasses,
# no f-strings with format specs, bytes and bytearray only.
#
# A block on the wire:
#   LEN_HI LEN_LO SEQ TYPE PAYLOAD... CRC_HI CRC_LO 0x7E
# LEN counts the whole block. The CRC is CRC-16/CCITT-FALSE over everything
# before it. 0x7E ends every block, so a receiver that lost its place drops
# bytes up to the next 0x7E and starts again.

VERSION = 1
SYNC = 0x7E
OVERHEAD = 7  # length (2), sequence, type, CRC (2), sync
MAX_BLOCK = 8192

HELLO = 0x01  # host: version, width, height
FRAME = 0x02  # host: width, height, then RGB bytes row by row
HELLO_REPLY = 0x81  # controller: version, width, height, firmware name
ACK = 0x80  # controller: the sequence number it took
NAK = 0x82  # controller: a block arrived damaged; resend

_TABLE = []
for _i in range(256):
    _c = _i << 8
    for _ in range(8):
        _c = ((_c << 1) ^ 0x1021) if _c & 0x8000 else (_c << 1)
    _TABLE.append(_c & 0xFFFF)


def crc16(data, crc=0xFFFF):
    table = _TABLE
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ b) & 0xFF]
    return crc


try:  # CPython computes the same CRC in C; MicroPython keeps the table above
    from binascii import crc_hqx as _crc_hqx

    def crc16(data, crc=0xFFFF):
        return _crc_hqx(data, crc)
except ImportError:
    pass


def encode(seq, kind, payload=b""):
    n = len(payload) + OVERHEAD
    if n > MAX_BLOCK:
        raise ValueError("block too long")
    head = bytes((n >> 8, n & 0xFF, seq & 0xFF, kind))
    crc = crc16(payload, crc16(head))
    return head + bytes(payload) + bytes((crc >> 8, crc & 0xFF, SYNC))


class Decoder:
    """Feed it bytes as they come; it returns the good blocks and counts the bad."""

    def __init__(self):
        self.buf = b""
        self.errors = 0

    def feed(self, data):
        """Returns (blocks, damaged): blocks as (seq, kind, payload); damaged counts the
        blocks dropped for a bad length or CRC in this call."""
        buf = self.buf + bytes(data)
        out = []
        damaged = 0
        while len(buf) >= OVERHEAD:
            n = (buf[0] << 8) | buf[1]
            if OVERHEAD <= n <= MAX_BLOCK:
                if len(buf) < n:
                    break
                crc = (buf[n - 3] << 8) | buf[n - 2]
                if buf[n - 1] == SYNC and crc16(buf[: n - 3]) == crc:
                    out.append((buf[2], buf[3], buf[4 : n - 3]))
                    buf = buf[n:]
                    continue
            damaged += 1
            buf = _after_sync(buf)
        self.buf = buf
        self.errors += damaged
        return out, damaged


    def idle(self):
        """The line went quiet with part of a block buffered: after damage, a bogus
        length may promise bytes that never come. Drop to the next sync and decode
        what follows. Returns (blocks, damaged) like feed."""
        if not self.buf:
            return [], 0
        self.buf = _after_sync(self.buf)
        self.errors += 1
        blocks, damaged = self.feed(b"")
        return blocks, damaged + 1


def _after_sync(buf):
    """What follows the first sync byte, or nothing: where the next block may start.
    (A block never starts with 0x7E: no block is that long.)"""
    for i in range(len(buf)):
        if buf[i] == SYNC:
            return buf[i + 1 :]
    return b""
