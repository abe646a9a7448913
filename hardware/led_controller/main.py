# MicroPython firmware for the centre LED matrix: an RP2040 board on USB serial
# driving WS2812 panels. Copy main.py, board.py, ledproto.py, ledctl.py and ledviper.py
# to the board (see README.md here). The protocol and the controller logic are the
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
import machine
import neopixel


def main():
    strip = neopixel.NeoPixel(machine.Pin(board.DATA_PIN), board.WIDTH * board.HEIGHT)
    strip.write()  # all dark until the host's first frame
    controller = ledctl.Controller(sys.stdout.buffer.write, strip, board.WIDTH, board.HEIGHT,
                                   board.DATA_PIN)
    controller.serve(sys.stdin.buffer.readinto)


main()
