"""The host end of the LED controller link: newest frame out, acks in, always in sync.

`show(image)` only stores the newest frame; a worker thread owns the serial
port. It says hello (and refuses to go on with a controller that speaks
another protocol version), sends the newest frame, waits for its ack and sends
again when the ack does not come or a NAK does. Only the newest picture
matters, so a retransmission is the newest frame under a new sequence number.
If the port fails — the cable pulled — it reopens it every 0.2 s and, once
the controller answers hello, sends a full frame: back in sync within 2 s of
the cable returning.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from . import ledproto

ACK_TIMEOUT_S = 0.05
HELLO_TIMEOUT_S = 0.5
REOPEN_EVERY_S = 0.2
SILENT_LIMIT_S = 1.0
IDLE_CHECK_S = 1.0  # no answer this long: the controller is gone, start over


@dataclass
class LinkStats:
    online: bool = False
    controller: str = ""
    frames_sent: int = 0
    frames_acked: int = 0
    retransmits: int = 0
    naks: int = 0
    reconnects: int = 0
    bytes_sent: int = 0
    last_error: str = ""
    wrong: bool = False  # the last error came from a controller that answered but does not fit
    since_online: float = field(default=0.0)
    acked_generation: int = 0  # the newest frame `show` handed over that the controller acked


def frame_payload(image: Image.Image) -> bytes:
    rgb = image.convert("RGB")
    return bytes((rgb.width, rgb.height)) + rgb.tobytes()


class LedLink:
    def __init__(self, path: str, width: int, height: int,
                 log: Callable[[str], None] = lambda _m: None,
                 open_port: Callable[[str], Any] | None = None) -> None:
        self.path = path
        self.width, self.height = width, height
        self.stats = LinkStats()
        self._log = log
        self._open_port = open_port or _pyserial
        self._newest: bytes | None = None
        self._generation = 0
        self._wake = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="led-link", daemon=True)
        self._thread.start()

    def show(self, image: Image.Image) -> int:
        """Hand over the newest frame; never waits for the wire. Returns the frame's
        generation: `stats.acked_generation` reaches it when the controller acks it."""
        if image.size != (self.width, self.height):
            raise ValueError(f"frame is {image.size}, the matrix is {self.width}x{self.height}")
        with self._wake:
            self._newest = frame_payload(image)
            self._generation += 1
            self._wake.notify()
            return self._generation

    def close(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify()
        self._thread.join(timeout=3)

    # ------------------------------------------------------------ the worker

    def _run(self) -> None:
        while not self._stopping:
            port = None
            try:
                port = self._open_port(self.path)
                self._hello(port)
                self._serve(port)
            except (OSError, ValueError, TimeoutError) as exc:  # SerialException is an OSError
                if self.stats.online or not self.stats.last_error:
                    self._log(f"LED controller offline: {exc}")
                self.stats.online = False
                self.stats.last_error = str(exc)
                self.stats.wrong = isinstance(exc, ValueError)
            finally:
                if port is not None:
                    with contextlib.suppress(Exception):
                        port.close()
            with self._wake:
                if not self._stopping:
                    self._wake.wait(REOPEN_EVERY_S)

    def _hello(self, port: Any) -> None:
        decoder = ledproto.Decoder()
        port.reset_input_buffer()
        self._send(port, 0, ledproto.HELLO, bytes((ledproto.VERSION, self.width, self.height)))
        deadline = time.monotonic() + HELLO_TIMEOUT_S
        while time.monotonic() < deadline:
            blocks, _ = decoder.feed(port.read(port.in_waiting or 1))
            for _, kind, payload in blocks:
                if kind != ledproto.HELLO_REPLY:
                    continue
                version, w, h = payload[0], payload[1], payload[2]
                name = bytes(payload[3:]).decode("ascii", "replace")
                if version != ledproto.VERSION:
                    raise ValueError(f"controller {name} speaks protocol {version}, this host "
                                     f"{ledproto.VERSION}: update the controller's firmware")
                if (w, h) != (self.width, self.height):
                    raise ValueError(f"controller {name} drives {w}x{h}, "
                                     f"configured {self.width}x{self.height}")
                self.stats.controller = name
                self.stats.reconnects += 1 if self.stats.frames_sent else 0
                self.stats.online = True
                self.stats.since_online = time.monotonic()
                self._log(f"LED controller {name} online (protocol {version}, {w}x{h})")
                return
        raise TimeoutError("no hello from the LED controller")

    def _serve(self, port: Any) -> None:
        decoder = ledproto.Decoder()
        seq = 0
        sent_generation = -1
        waiting: int | None = None  # sequence number awaiting its ack
        sent_at = 0.0
        heard = time.monotonic()
        while not self._stopping:
            with self._wake:
                if waiting is None and (self._newest is None or self._generation == sent_generation):
                    # Nothing to send, no ack awaited: sleep until show() or close(), looking
                    # at the port once a second so an unplugged cable is noticed even now.
                    self._wake.wait(IDLE_CHECK_S)
                newest, generation = self._newest, self._generation
            now = time.monotonic()
            resend = waiting is not None and now - sent_at > ACK_TIMEOUT_S
            if newest is not None and ((waiting is None and generation != sent_generation) or resend):
                if waiting is None:
                    heard = now  # a fresh exchange: silence counts from here, not from the last one
                seq = (seq + 1) & 0xFF
                self.stats.frames_sent += 1  # counted before the wire: the far end may answer first
                self.stats.retransmits += 1 if resend else 0
                self._send(port, seq, ledproto.FRAME, newest)
                waiting, sent_at, sent_generation = seq, now, generation
            blocks, _ = decoder.feed(port.read(port.in_waiting or 0) if port.in_waiting else b"")
            if not blocks and waiting is not None:
                blocks, _ = decoder.feed(port.read(1))  # the port's timeout paces this loop
                if not blocks and decoder.buf and time.monotonic() - sent_at > ACK_TIMEOUT_S:
                    blocks, _ = decoder.idle()
            for _, kind, payload in blocks:
                heard = time.monotonic()
                if kind == ledproto.ACK and waiting is not None and payload[:1] == bytes((waiting,)):
                    self.stats.frames_acked += 1
                    self.stats.acked_generation = sent_generation
                    waiting = None
                elif kind == ledproto.NAK:
                    self.stats.naks += 1
                    sent_at = 0.0  # resend at once
            if waiting is not None and time.monotonic() - heard > SILENT_LIMIT_S:
                raise TimeoutError("the LED controller stopped answering")

    def _send(self, port: Any, seq: int, kind: int, payload: bytes) -> None:
        block = ledproto.encode(seq, kind, payload)
        port.write(block)
        self.stats.bytes_sent += len(block)


def _pyserial(path: str) -> Any:
    import serial

    return serial.Serial(path, baudrate=921600, timeout=0.01, write_timeout=0.5)
