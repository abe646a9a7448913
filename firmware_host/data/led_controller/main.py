# MicroPython firmware for the centre LED matrix: an RP2040 board on USB serial
# driving WS2812 panels through a PIO state machine (ws2812.py). `sudo tablectl firmware flash`
# copies main.py, board.py, ws2812.py, ledproto.py, ledctl.py, ledviper.py and the ledversion.py
# it writes (hardware/led_controller/README.md). The protocol and the controller logic are the
# host's own files (ledproto.py, ledctl.py and ledviper.py are links into
# firmware_host/devices/displays/); board.py holds the wiring.
#
# Ctrl-C goes first. MicroPython runs main.py with 0x03 as its interrupt character, and
# the USB receive callback takes bytes whenever they arrive, imports or not: a 0x03 before
# kbd_intr(-1) (the host's hello for a 16x16 matrix has one in its length) raises
# KeyboardInterrupt and leaves the board at the REPL. `micropython` is built in: importing
# it reads no file.
import micropython

micropython.kbd_intr(-1)  # blocks may contain 0x03: not a Ctrl-C here

import sys

import board
import ledctl
import ws2812

try:
    import ledversion  # written by `tablectl firmware flash`: which firmware this is

    FIRMWARE = ledversion.FIRMWARE
except ImportError:
    FIRMWARE = ledctl.UNVERSIONED


def main():
    strip = ws2812.Strip(board.DATA_PIN, board.WIDTH * board.HEIGHT)
    strip.write()  # all dark until the host's first frame
    controller = ledctl.Controller(sys.stdout.buffer.write, strip, board.WIDTH, board.HEIGHT,
                                   board.DATA_PIN, FIRMWARE)
    controller.serve(sys.stdin.buffer.readinto)
    # The host said STOP (tablectl firmware flash): back to the REPL, Ctrl-C as MicroPython has
    # it there, so mpremote can copy the new files and reset the board.


main()
