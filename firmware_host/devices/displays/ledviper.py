# The LED controller's per-byte work as native code: MicroPython's viper emitter
# compiles these to machine instructions on the RP2040 (docs: "Maximising MicroPython
# speed", the viper code emitter; ptr8/ptr16 index raw buffers). Its own module because
# a port without viper (the WebAssembly one the test bench runs) raises SyntaxError at
# import: ledproto catches that and uses its plain-Python loops instead.
#
# Viper functions take at most four arguments; integers are machine words, hence the
# explicit masks. tests/test_ledlink.py runs these bodies under CPython against the
# plain loops, so the two cannot drift.

import array

import micropython


def table(values):
    """The CRC table as 16-bit words, for ptr16."""
    return array.array("H", values)


@micropython.viper
def crc16(data: ptr8, n: int, crc: int, tab: ptr16) -> int:  # noqa: F821
    i = 0
    while i < n:
        crc = ((crc << 8) & 0xFFFF) ^ tab[((crc >> 8) ^ data[i]) & 0xFF]
        i += 1
    return crc


@micropython.viper
def scatter(dst: ptr8, src: ptr8, index: ptr16, n: int):  # noqa: F821
    i = 0
    while i < n:
        dst[index[i]] = src[i]
        i += 1
