# MicroPython firmware for the centre LED matrix: an RP2040 board on USB serial
# driving WS2812 panels. Copy main.py, ledproto.py and ledctl.py to the board
# (see README.md here). The protocol and the controller logic are the host's
# own files (ledproto.py, ledctl.py are links into firmware_host/displays/).

import sys

import machine
import micropython
import neopixel
import select

import ledctl

WIDTH = 32  # must match [centre] width/height in the table's configuration
HEIGHT = 16
DATA_PIN = 0  # the GPIO wired (through a level shifter) to the panels' DIN


def main():
    strip = neopixel.NeoPixel(machine.Pin(DATA_PIN), WIDTH * HEIGHT)
    strip.fill((0, 0, 0))
    strip.write()
    micropython.kbd_intr(-1)  # frames may contain 0x03: not a Ctrl-C here
    usb_in = sys.stdin.buffer
    usb_out = sys.stdout.buffer
    controller = ledctl.Controller(usb_out.write, strip, WIDTH, HEIGHT)
    poll = select.poll()
    poll.register(usb_in, select.POLLIN)
    chunk = bytearray()
    while True:
        # Gather what has arrived (one byte at a time is all stdin offers), then decode.
        while poll.poll(0 if chunk else 20) and len(chunk) < 512:
            chunk.extend(usb_in.read(1))
        if chunk:
            controller.feed(bytes(chunk))
            chunk = bytearray()
        else:
            controller.idle()  # 20 ms of silence mid-block: that block is not coming


main()
