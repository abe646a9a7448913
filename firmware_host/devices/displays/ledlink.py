"""The host end of the LED controller link: the newest frame out, its ack in.

`show(image)` only stores the newest frame; a worker thread owns the serial
port. It says hello (and refuses a controller that speaks another protocol
version, naming both), then keeps at most one frame in flight: the next frame
goes when the ack for this one comes, and it is the newest picture the game
drew meanwhile (older ones are dropped, never queued). Acks and NAKs count
only for the sequence number in flight, so a late ack for an old frame
neither releases the next one nor keeps a dead controller looking alive.
If no ack comes within ACK_TIMEOUT_S, or a NAK for the frame in flight does,
the newest frame goes again under a new sequence number. If the port fails
(the cable pulled) it reopens it every 0.2 s and, once the controller answers
hello, sends a full frame: back in sync within 2 s of the cable returning.
"""

from __future__ import annotations

import contextlib
import errno
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PIL import Image, ImageDraw

from ...system.errors import TableError
from ...system.logs import logger
from ...views.centre import cap, seat_colour
from ...views.font import draw_centred
from ..parts import MISSING, NOT_TESTED, OK, UNEXPECTED, Check, Part
from . import ledproto
from .firmware import HANDS_OFF, version_of

if TYPE_CHECKING:
    from ...config import TableConfig

log = logger("ledlink")

# A frame takes the board ~25 ms (docs/led-protocol.md); USB does not lose bytes, so a
# missing ack means a damaged header or a controller that restarted: wait well past a
# frame's time before sending again, or retransmissions pile up behind a busy controller.
PAUSE_MAX_S = 300.0  # a flash that never says it is done: the link takes the port back after this
UPDATE = "sudo tablectl firmware flash"
ACK_TIMEOUT_S = 0.25
LED_HELLO_WAIT_S = 2.0  # the self-test: the link reopens every 0.2 s and waits 0.5 s for a hello
LED_ACK_WAIT_S = 2.0
HELLO_TIMEOUT_S = 0.5
LEGACY_HELLO_TIMEOUT_S = 0.3
REOPEN_EVERY_S = 0.2
SILENT_LIMIT_S = 1.0
IDLE_CHECK_S = 1.0  # no answer this long: the controller is gone, start over


class Paused(TableError, RuntimeError):
    """`pause()` asked the link to let go of the port (tablectl firmware flash)."""


@dataclass
class LinkStats:
    online: bool = False
    controller: str = ""
    firmware: str = ""  # the controller's firmware version, from its hello reply
    firmware_expected: str = ""  # the version this table-host carries (firmware.expected)
    firmware_current: bool = False  # the two are the same
    paused: bool = False  # let go of the port for tablectl firmware flash
    protocol: int = 0  # the controller's, from its hello reply
    data_pin: int = -1  # the RP2040 GPIO the controller drives, from its hello reply
    native: bool = False  # its CRC and pixel copy run as compiled code
    frames_sent: int = 0
    frames_acked: int = 0
    frames_dropped: int = 0  # drawn by the game, replaced by a newer one before they went out
    retransmits: int = 0
    naks: int = 0
    stale_replies: int = 0  # acks or NAKs for a sequence number no longer in flight
    reconnects: int = 0
    bytes_sent: int = 0
    last_error: str = ""
    wrong: bool = False  # the last error came from a controller that answered but does not fit
    since_online: float = field(default=0.0)
    acked_generation: int = 0  # the newest frame `show` handed over that the controller acked


def frame_payload(image: Image.Image) -> bytes:
    rgb = image.convert("RGB")
    return bytes((rgb.width, rgb.height)) + rgb.tobytes()


class LedLink(Part):
    name = "LED controller"

    def __init__(self, path: str, width: int, height: int,
                 open_port: Callable[[str], Any] | None = None, expected: str | None = None) -> None:
        """`expected`: the firmware version this host carries (firmware.expected(), by default)."""
        from .firmware import expected as carried

        self.path = path
        self.width, self.height = width, height
        self.stats = LinkStats(firmware_expected=expected if expected is not None else carried())
        self._open_port = open_port or _pyserial
        self._paused_until = 0.0
        self._newest: bytes | None = None
        self._generation = 0
        self._sent_generation = -1
        self._wake = threading.Condition()
        self._stopping = False
        self._port_open = False
        self._thread = threading.Thread(target=self._run, name="led-link", daemon=True)
        self._thread.start()

    def show(self, image: Image.Image) -> int:
        """Hand over the newest frame; never waits for the wire. Returns the frame's
        generation: `stats.acked_generation` reaches it when the controller acks it."""
        if image.size != (self.width, self.height):
            raise ValueError(f"frame is {image.size}, the matrix is {self.width}x{self.height}")
        with self._wake:
            if self._newest is not None and self._generation != self._sent_generation:
                self.stats.frames_dropped += 1  # never went out: only the newest matters
            self._newest = frame_payload(image)
            self._generation += 1
            self._wake.notify()
            return self._generation

    def missing(self) -> list[str]:
        return [self.name] if not self.stats.online and self.stats.last_error else []

    def probe(self, config: TableConfig) -> list[Check]:
        """The controller's hello, then the test pattern at the configured brightness."""
        return probe_led(self, (self.width, self.height), config.centre.brightness)

    def report(self) -> dict[str, Any]:
        return {"led_link": vars(self.stats)}

    def close(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify()
        self._thread.join(timeout=3)

    def pause(self, seconds: float = PAUSE_MAX_S, wait: bool = True) -> bool:
        """Let go of the port and keep off it for `seconds` at most, or until `resume`: the
        firmware is being replaced (tablectl firmware flash). True once the port is closed
        (`wait`: up to 3 s; the daemon's loop does not wait: `port_open` says when)."""
        with self._wake:
            self._paused_until = time.monotonic() + seconds
            self.stats.paused = True
            self._wake.notify()
        deadline = time.monotonic() + 3.0
        while wait and self._port_open and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self._port_open

    @property
    def port_open(self) -> bool:
        return self._port_open

    def resume(self) -> None:
        with self._wake:
            self._paused_until = 0.0
            self.stats.paused = False
            self._wake.notify()

    def _pausing(self) -> bool:
        return time.monotonic() < self._paused_until

    # ------------------------------------------------------------ the worker

    def _run(self) -> None:
        while not self._stopping:
            with self._wake:
                if self._pausing():  # the firmware is being replaced: keep off the port
                    self._wake.wait(max(0.0, min(self._paused_until - time.monotonic(), IDLE_CHECK_S)))
                    continue
                if self.stats.paused:  # the pause ran out without a resume
                    self.stats.paused = False
            port = None
            try:
                port = self._open_port(self.path)
                self._port_open = True
                self._hello(port)
                self._serve(port)
            except Paused:
                self._offline(f"paused: {HANDS_OFF} has the port")
            except (OSError, ValueError, TimeoutError) as exc:  # SerialException is an OSError
                self._offline(port_problem(exc), wrong=isinstance(exc, ValueError))
            except Exception as exc:  # a bug here must not end the link for good
                self._offline(f"LED link error ({type(exc).__name__}: {exc}); starting over")
            finally:
                if port is not None:
                    with contextlib.suppress(Exception):
                        port.close()
                self._port_open = False
            with self._wake:
                if not self._stopping and not self._pausing():
                    self._wake.wait(REOPEN_EVERY_S)

    def _offline(self, problem: str, wrong: bool = False) -> None:
        """Say it once (not every 0.2 s while it lasts), then the worker reopens and says hello.
        `wrong`: the controller answered, but not as this host needs (see LinkStats.wrong)."""
        if self.stats.online or problem != self.stats.last_error:
            log.warning("The centre's LED controller is not answering (%s): %s", self.path, problem)
        self.stats.online = False
        self.stats.last_error = problem
        self.stats.wrong = wrong

    def _hello(self, port: Any) -> None:
        decoder = ledproto.Decoder()
        port.reset_input_buffer()
        # Padded to a frame's length: if the controller is still waiting for the rest of a
        # block cut short (the host died mid-write), this completes it, the block fails its
        # CRC, and the controller finds this hello inside what it read.
        pad = bytes(2 + self.width * self.height * 3 - 3)
        self._send(port, 0, ledproto.HELLO, bytes((ledproto.VERSION, self.width, self.height)) + pad)
        deadline = time.monotonic() + HELLO_TIMEOUT_S
        while time.monotonic() < deadline:
            blocks, _ = decoder.feed(port.read(port.in_waiting or 1))
            for _, kind, payload in blocks:
                if kind == ledproto.HELLO_REPLY:
                    self._check_reply(payload)
                    return
        legacy = self._legacy_hello(port)
        if legacy is not None:
            version, name = legacy
            raise ValueError(f"controller {name} speaks protocol {version}, this host {ledproto.VERSION}: "
                             f"update the controller's firmware ({UPDATE})")
        raise TimeoutError("no hello from the LED controller")

    def _check_reply(self, payload: bytes) -> None:
        """A malformed reply is a protocol error: ValueError, and the worker starts over."""
        if len(payload) < 5:
            raise ValueError(f"short hello reply from the LED controller: {len(payload)} bytes, "
                             "at least 5 expected (version, width, height, data pin, flags)")
        version = payload[0]
        name = bytes(payload[5:]).decode("ascii", "replace")
        if version != ledproto.VERSION:
            self.stats.firmware, self.stats.firmware_current = version_of(name), False
            raise ValueError(f"controller {name} speaks protocol {version}, this host "
                             f"{ledproto.VERSION}: update the controller's firmware ({UPDATE})")
        w, h, pin, flags = payload[1], payload[2], payload[3], payload[4]
        if (w, h) != (self.width, self.height):
            raise ValueError(f"controller {name} drives {w}x{h}, configured {self.width}x{self.height}")
        self.stats.controller, self.stats.protocol, self.stats.data_pin = name, version, pin
        firmware = version_of(name)
        current = firmware == self.stats.firmware_expected
        if not current and (firmware, current) != (self.stats.firmware, self.stats.firmware_current):
            log.warning("The centre's LED controller runs firmware %s, this table-host carries %s: "
                        "sudo tablectl firmware flash", firmware, self.stats.firmware_expected)
        self.stats.firmware, self.stats.firmware_current = firmware, current
        self.stats.native = bool(flags & ledproto.NATIVE)
        self.stats.reconnects += 1 if self.stats.frames_sent else 0
        back = bool(self.stats.last_error)  # said offline before: now say it is back
        self.stats.online = True
        self.stats.last_error = ""
        self.stats.since_online = time.monotonic()
        log.info("The centre's LED controller %s is %s (protocol %d, %dx%d, data pin GP%d)", name,
                 "back" if back else "online", version, w, h, pin)
        if not self.stats.native:
            log.warning(f"LED controller {name} runs its CRC and pixel copy as Python loops: "
                      "expect far fewer frames a second than with its viper code")

    def _legacy_hello(self, port: Any) -> tuple[int, str] | None:
        """Protocol 1 framed blocks differently (sync last); a controller that old never
        answers our hello, so ask it in its own framing to say what it is."""
        port.write(_v1_hello(self.width, self.height))
        got = b""
        deadline = time.monotonic() + LEGACY_HELLO_TIMEOUT_S
        while time.monotonic() < deadline:
            got += port.read(port.in_waiting or 1)
            for i in range(max(0, len(got) - 7)):
                n = (got[i] << 8) | got[i + 1]
                if (n >= 10 and i + n <= len(got) and got[i + 3] == ledproto.HELLO_REPLY
                        and got[i + n - 1] == 0x7E
                        and ledproto.crc16(got[i : i + n - 3]) == (got[i + n - 3] << 8) | got[i + n - 2]):
                    return got[i + 4], got[i + 7 : i + n - 3].decode("ascii", "replace")
        return None

    def _serve(self, port: Any) -> None:
        decoder = ledproto.Decoder()
        seq = 0
        waiting: int | None = None  # the sequence number in flight: at most one frame
        sent_at = 0.0
        heard = time.monotonic()
        while not self._stopping:
            if self._pausing():
                raise Paused
            with self._wake:
                if waiting is None and (self._newest is None or self._generation == self._sent_generation):
                    # Nothing to send, no ack awaited: sleep until show() or close(), looking
                    # at the port once a second so an unplugged cable is noticed even now.
                    self._wake.wait(IDLE_CHECK_S)
                newest, generation = self._newest, self._generation
                now = time.monotonic()
                resend = waiting is not None and now - sent_at > ACK_TIMEOUT_S
                send = newest is not None and ((waiting is None and generation != self._sent_generation)
                                               or resend)
                if send:
                    self._sent_generation = generation
            if send and newest is not None:
                if waiting is None:
                    heard = now  # a fresh exchange: silence counts from here, not from the last one
                seq = (seq + 1) & 0xFF
                self.stats.frames_sent += 1  # counted before the wire: the far end may answer first
                self.stats.retransmits += 1 if resend else 0
                self._send(port, seq, ledproto.FRAME, newest)
                waiting, sent_at = seq, now
            blocks, _ = decoder.feed(port.read(port.in_waiting) if port.in_waiting else b"")
            if not blocks and waiting is not None:
                blocks, _ = decoder.feed(port.read(1))  # the port's timeout paces this loop
            for reply_seq, kind, _payload in blocks:
                if kind not in (ledproto.ACK, ledproto.NAK):
                    continue
                if reply_seq != waiting:
                    self.stats.stale_replies += 1  # an old frame's: says nothing about this one
                    continue
                heard = time.monotonic()
                if kind == ledproto.ACK:
                    self.stats.frames_acked += 1
                    self.stats.acked_generation = self._sent_generation  # the frame of this seq
                    waiting = None
                else:
                    self.stats.naks += 1
                    sent_at = 0.0  # damaged on the way: the newest frame goes again at once
            if waiting is not None and time.monotonic() - heard > SILENT_LIMIT_S:
                raise TimeoutError("the LED controller stopped answering")

    def _send(self, port: Any, seq: int, kind: int, payload: bytes) -> None:
        block = ledproto.encode(seq, kind, payload)
        port.write(block)
        self.stats.bytes_sent += len(block)


LATE_DRIVER = ("the service's device rules deny the port: systemd made them from "
               "DeviceAllow=char-ttyACM when the service started, before cdc_acm (the port's driver) "
               "was loaded. `sudo systemctl restart table-host` lets it in; cdc_acm in "
               "/etc/modules-load.d/table-host.conf (install.sh writes it) loads it at boot")


def matrix_pattern(size: tuple[int, int], brightness: float, panel: int = 16) -> Image.Image:
    """Each 16x16 panel outlined in its own colour with its number (in chain order: left to
    right, then down, as the controller wires them), and a red pixel at the matrix's top left:
    a panel out of place, turned, or dark is seen at once."""
    img = Image.new("RGB", size, (0, 0, 0))
    draw = ImageDraw.Draw(img)
    across = size[0] // panel
    for y0 in range(0, size[1], panel):
        for x0 in range(0, size[0], panel):
            number = (y0 // panel) * across + x0 // panel
            colour = seat_colour(number + 1)
            draw.rectangle((x0, y0, x0 + panel - 1, y0 + panel - 1), outline=colour)
            draw_centred(img, y0 + (panel - 6) // 2, str(number + 1), fill=(255, 255, 255),
                         x0=x0, x1=x0 + panel)
    img.putpixel((0, 0), (255, 0, 0))
    return cap(img, brightness)


def probe_led(led: Any, size: tuple[int, int], brightness: float) -> list[Check]:
    """The controller's hello (name, protocol, size), then a test pattern it must ack."""
    controller = Check("LED controller", led.path)
    matrix = Check("matrix", f"{size[0]}x{size[1]}")
    until = time.monotonic() + LED_HELLO_WAIT_S
    while not led.stats.online and time.monotonic() < until:
        time.sleep(0.05)
    stats = led.stats
    if not stats.online:
        controller.result = UNEXPECTED if stats.wrong else MISSING
        controller.detail = stats.last_error or "no answer"
        matrix.result, matrix.detail = NOT_TESTED, "no LED controller"
        return [controller, matrix]
    controller.result = OK  # online: its hello said this protocol and the configured size
    controller.detail = (f"{stats.controller}, protocol {stats.protocol}, {size[0]}x{size[1]}, "
                         f"data on GP{stats.data_pin}"
                         + ("" if stats.native else ", CRC and pixel copy as Python loops (slow)"))
    if not stats.firmware_current:  # it plays, but not the firmware this table-host carries
        controller.result = UNEXPECTED
        controller.detail += (f"; its firmware is {stats.firmware}, this table-host carries "
                              f"{stats.firmware_expected}: sudo tablectl firmware flash")
    generation = led.show(matrix_pattern(size, brightness))
    until = time.monotonic() + LED_ACK_WAIT_S
    while led.stats.acked_generation < generation and time.monotonic() < until:
        time.sleep(0.01)
    if led.stats.acked_generation >= generation:
        matrix.result = OK
        matrix.detail = "test pattern acked: panels outlined and numbered, red pixel top left"
    else:
        matrix.result = MISSING
        matrix.detail = (f"the test pattern was not acked in {LED_ACK_WAIT_S:g} s "
                         f"({led.stats.last_error or 'no ack'})")
    return [controller, matrix]


def port_problem(exc: Exception) -> str:
    """The error as the operator reads it. EPERM opening the port is the service's device cgroup,
    not the file's mode (that is EACCES): the unit's DeviceAllow=char-ttyACM is resolved to the
    majors in /proc/devices once, at start, so a port whose driver came later is refused for good.
    A port locked by another program is `tablectl firmware flash` copying new firmware (or
    something else holding it): the link opens it exclusively and stays off it meanwhile."""
    if isinstance(exc, OSError) and exc.errno == errno.EPERM:
        return f"{exc}: {LATE_DRIVER}"
    if "exclusively lock" in str(exc):
        return f"{exc}: another program holds the port ({HANDS_OFF}?); trying again"
    return str(exc)


def _v1_hello(width: int, height: int) -> bytes:
    """A protocol-1 HELLO: LEN_HI LEN_LO SEQ TYPE PAYLOAD CRC_HI CRC_LO 0x7E."""
    body = bytes((0, 10, 0, ledproto.HELLO, 1, width, height))
    crc = ledproto.crc16(body)
    return body + bytes((crc >> 8, crc & 0xFF, 0x7E))


def _pyserial(path: str) -> Any:
    import serial

    # exclusive: flock, which `tablectl firmware flash` holds while it copies new firmware.
    return serial.Serial(path, baudrate=921600, timeout=0.01, write_timeout=0.5, exclusive=True)
