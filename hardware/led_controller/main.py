# MicroPython firmware for the centre LED matrix: an RP2040 board on USB serial
# driving WS2812 panels. Copy main.py, board.py, ledproto.py, ledctl.py and ledviper.py
# to the board (see README.md here). The protocol and the controller logic are the
# host's own files (ledproto.py, ledctl.py and ledviper.py are links into
# firmware_host/devices/displays/); board.py holds the wiring.

import sys

import board
import ledctl
import machine
import micropython
import neopixel


def main():
    strip = neopixel.NeoPixel(machine.Pin(board.DATA_PIN), board.WIDTH * board.HEIGHT)
    strip.write()  # all dark until the host's first frame
    micropython.kbd_intr(-1)  # frames may contain 0x03: not a Ctrl-C here
    controller = ledctl.Controller(sys.stdout.buffer.write, strip, board.WIDTH, board.HEIGHT,
                                   board.DATA_PIN)
    controller.serve(sys.stdin.buffer.readinto)


main()
