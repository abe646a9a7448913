"""The LED controller link: codec, firmware logic, and the real serial path over a pty."""

from __future__ import annotations

import ast
import fcntl
import sys
import termios
import time
import types
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from plumbing import wait_for

from firmware_host.devices.displays import firmware, ledlink, ledproto
from firmware_host.devices.displays.ledctl import Controller, byte_map, led_index
from firmware_host.devices.displays.ledlink import LedLink
from firmware_host.devices.emulated.led import EmulatedLedController, Strip

ROOT = Path(__file__).resolve().parents[2]


def test_crc_is_ccitt_false() -> None:
    assert ledproto.crc16(b"123456789") == 0x29B1  # the standard check value


def test_a_block_is_sync_length_sequence_type_check_payload_and_crc() -> None:
    block = ledproto.encode(7, ledproto.ACK, b"\x07")
    assert block[:5] == bytes((ledproto.SYNC, 0, 9, 7, ledproto.ACK)) and len(block) == 9
    assert block[5] == ledproto.crc16(block[:5]) >> 8  # the header check
    assert ledproto.crc16(block[:-2]) == int.from_bytes(block[-2:], "big")
    assert ledproto.Decoder().feed(block) == ([(7, ledproto.ACK, b"\x07")], 0)


def read_all(data: bytes, size: int = ledproto.MAX_BLOCK) -> list[tuple[int, int | None, bytes]]:
    """What the controller's Reader makes of `data`, until it asks for more than was sent."""
    where = 0

    def readinto(buf: memoryview) -> int:
        nonlocal where
        k = min(len(buf), len(data) - where)
        if k == 0:
            raise EOFError
        buf[:k] = data[where : where + k]
        where += k
        return k

    reader = ledproto.Reader(readinto, size)
    out: list[tuple[int, int | None, bytes]] = []
    with pytest.raises(EOFError):
        while True:
            seq, kind, n = reader.block()
            out.append((seq, kind, bytes(reader.mv[ledproto.HEADER : n - 2]) if kind else b""))
    return out


def test_a_damaged_block_is_dropped_and_the_next_one_found() -> None:
    good = [ledproto.encode(i, ledproto.FRAME, bytes(range(40))) for i in range(3)]
    damaged = bytearray(good[1])
    damaged[10] ^= 0xFF
    blocks, bad = ledproto.Decoder().feed(good[0] + bytes(damaged) + good[2])
    assert [b[0] for b in blocks] == [0, 2] and bad == 1
    # The controller refuses it by its sequence number, and takes the next one.
    assert [(s, k) for s, k, _ in read_all(good[0] + bytes(damaged) + good[2])] == \
        [(0, ledproto.FRAME), (1, None), (2, ledproto.FRAME)]


def test_after_a_block_cut_short_the_next_one_is_taken_as_soon_as_it_is_in() -> None:
    """No quiet spell, nothing sent again: the good block's own bytes are enough. (Protocol 1
    left it behind the cut block's length until the line had been quiet three times.)"""
    payload = bytes((32, 16)) + bytes(range(256)) * 6
    cut = ledproto.encode(1, ledproto.FRAME, payload)[:700]
    good = ledproto.encode(2, ledproto.FRAME, payload)
    blocks, _ = ledproto.Decoder().feed(cut + good)
    assert [(s, k) for s, k, _ in blocks] == [(2, ledproto.FRAME)]
    assert [(s, k) for s, k, _ in read_all(cut + good)][-1:] == [(2, ledproto.FRAME)]


def test_a_damaged_length_is_caught_by_the_header_check_at_once() -> None:
    good = ledproto.encode(4, ledproto.HELLO, b"\x02\x20\x10")
    bogus = bytearray(ledproto.encode(3, ledproto.FRAME, bytes(100)))
    bogus[1] = 0x1F  # now promises 8000 bytes
    assert ledproto.Decoder().feed(bytes(bogus) + good)[0] == [(4, ledproto.HELLO, b"\x02\x20\x10")]
    assert read_all(bytes(bogus) + good)[-1] == (4, ledproto.HELLO, b"\x02\x20\x10")


@settings(max_examples=150, deadline=None)
@given(payloads=st.lists(st.binary(max_size=300), min_size=1, max_size=8),
       garbage=st.binary(max_size=40), cuts=st.lists(st.integers(1, 50), max_size=40))
def test_any_chunking_after_any_garbage_decodes_the_same_blocks(payloads: list[bytes], garbage: bytes,
                                                                cuts: list[int]) -> None:
    stream = b"".join(ledproto.encode(i, ledproto.FRAME, p) for i, p in enumerate(payloads))
    data = garbage + stream  # no quiet spell, no sync needed after the garbage
    decoder = ledproto.Decoder()
    got = []
    i = 0
    for cut in [*cuts, len(data)]:
        got += decoder.feed(data[i : i + cut])[0]
        i += cut
    got += decoder.feed(data[i:])[0]
    assert [p for _, _, p in got][-len(payloads):] == payloads
    taken = [p for _, k, p in read_all(data) if k == ledproto.FRAME]
    assert taken[-len(payloads):] == payloads


def test_the_matrix_is_16x16_panels_in_serpentine_rows() -> None:
    assert [led_index(x, 0, 32) for x in (0, 15)] == [0, 15]
    assert [led_index(x, 1, 32) for x in (0, 15)] == [31, 16]  # the second row runs back
    assert led_index(16, 0, 32) == 256  # the second panel
    assert led_index(0, 16, 32) == 512  # 32x32: the third panel, below the first
    assert sorted(led_index(x, y, 32) for x in range(32) for y in range(32)) == list(range(1024))


def test_the_controller_answers_hello_and_writes_frames_into_the_strip_buffer_as_grb() -> None:
    sent: list[bytes] = []
    strip = Strip(32 * 16, clocked=False)
    ctl = Controller(sent.append, strip, 32, 16, data_pin=2)
    ctl.take(1, ledproto.HELLO, memoryview(bytes((3, 32, 16))))
    (reply,), _ = ledproto.Decoder().feed(sent[-1])
    assert reply[1] == ledproto.HELLO_REPLY and reply[2][:4] == bytes((3, 32, 16, 2))
    assert reply[2][5:] == b"table-led unversioned"  # no ledversion.py: copied by hand
    frame = Image.new("RGB", (32, 16), (1, 2, 3))
    frame.putpixel((0, 1), (7, 8, 9))  # LED 31: the second row runs back
    ctl.take(2, ledproto.FRAME, memoryview(bytes((32, 16)) + frame.tobytes()))
    assert ledproto.Decoder().feed(sent[-1])[0] == [(2, ledproto.ACK, b"\x02")]
    assert strip.buf[:3] == bytes((2, 1, 3)) and strip.buf[31 * 3 : 32 * 3] == bytes((8, 7, 9))
    assert strip.writes == 1 and strip[31] == (7, 8, 9)
    ctl.take(3, ledproto.FRAME, memoryview(bytes((16, 16)) + bytes(16 * 16 * 3)))
    assert ledproto.Decoder().feed(sent[-1])[0] == [(3, ledproto.NAK, b"\x03")]
    ctl.take(4, None, None)  # arrived damaged
    assert ledproto.Decoder().feed(sent[-1])[0] == [(4, ledproto.NAK, b"\x04")]


def test_the_byte_map_is_the_serpentine_layout_in_neopixel_order() -> None:
    index = byte_map(32, 16, Strip.ORDER)
    for y in range(16):
        for x in range(32):
            led = led_index(x, y, 32)
            i = (y * 32 + x) * 3
            assert list(index[i : i + 3]) == [led * 3 + 1, led * 3, led * 3 + 2]  # R, G, B to G, R, B


def _viper_module() -> dict:
    """ledviper.py's functions under CPython: viper's decorator and pointer casts as no-ops,
    so its bodies can be checked against the plain loops (the wasm port cannot compile them)."""
    fake = types.ModuleType("micropython")
    fake.viper = lambda f: f  # type: ignore[attr-defined]
    saved = sys.modules.get("micropython")
    sys.modules["micropython"] = fake
    try:
        namespace: dict = {"ptr8": object, "ptr16": object, "__name__": "ledviper"}
        source = (ROOT / "firmware_host" / "devices" / "displays" / "ledviper.py").read_text()
        exec(compile(source, "ledviper.py", "exec"), namespace)
    finally:
        if saved is None:
            del sys.modules["micropython"]
        else:
            sys.modules["micropython"] = saved
    return namespace


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=600), start=st.integers(0, 0xFFFF))
def test_the_viper_crc_is_the_table_crc(data: bytes, start: int) -> None:
    viper = _viper_module()
    table = viper["table"](ledproto._TABLE)
    assert viper["crc16"](data, len(data), start, table) == ledproto._crc16_table(data, start) \
        == ledproto.crc16(data, start)


def test_the_viper_copy_is_the_plain_copy() -> None:
    viper = _viper_module()
    index = byte_map(32, 16, Strip.ORDER)
    src = bytes(i * 7 % 256 for i in range(len(index)))
    fast, plain = bytearray(len(index)), bytearray(len(index))
    viper["scatter"](fast, memoryview(src), index, len(index))
    ledproto._scatter_loop(plain, memoryview(src), index, len(index))
    assert fast == plain and sorted(index) == list(range(len(index)))


def test_the_firmware_uses_the_hosts_own_protocol_files() -> None:
    fw = ROOT / "hardware" / "led_controller"
    for name in ("ledproto.py", "ledctl.py", "ledviper.py"):
        assert (fw / name).resolve() == (ROOT / "firmware_host" / "devices" / "displays" / name).resolve()
    assert "import ledctl" in (fw / "main.py").read_text()


@pytest.mark.parametrize("name", ["ledproto.py", "ledctl.py", "ledviper.py"])
def test_shared_files_stay_within_what_micropython_runs(name: str) -> None:
    tree = ast.parse((ROOT / "firmware_host" / "devices" / "displays" / name).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            # binascii exists on MicroPython too (its crc_hqx does not: ImportError, table CRC).
            assert node.module in ("firmware_host.devices.displays", "binascii"), node.module
        if isinstance(node, ast.Import):
            assert all(a.name in ("ledproto", "ledviper", "array", "micropython") for a in node.names)
        assert not isinstance(node, ast.AnnAssign | ast.JoinedStr)  # no annotations, no f-strings
        if isinstance(node, ast.FunctionDef) and name != "ledviper.py":  # viper's types are annotations
            assert node.returns is None and all(a.annotation is None for a in node.args.args)


# ---------------------------------------------------------------- over a pseudo-terminal


@pytest.fixture
def led(tmp_path: Path, said):
    emulator = EmulatedLedController(tmp_path)
    log = said
    link = LedLink(str(emulator.path), 32, 16)
    yield emulator, link, log
    link.close()
    emulator.close()


def picture(seed: int) -> Image.Image:
    img = Image.new("RGB", (32, 16), (seed, 2 * seed % 256, 40))
    img.putpixel((seed % 32, seed % 16), (255, 255, 255))
    return img


def shows(emulator: EmulatedLedController, img: Image.Image, timeout: float = 2.0) -> float:
    """Seconds until the emulated matrix shows `img`; fails after `timeout`."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if emulator.frame_bytes() == img.tobytes():
            return time.monotonic() - start
        time.sleep(0.005)
    raise AssertionError("the matrix never showed the frame")


def test_frames_arrive_over_the_real_serial_path(led) -> None:
    emulator, link, log = led
    for seed in range(5):
        link.show(picture(seed))
        shows(emulator, picture(seed))
    version = firmware.expected()
    assert link.stats.online and link.stats.controller == f"table-led {version}"
    assert link.stats.protocol == 3 and link.stats.data_pin == 2 and link.stats.native
    assert link.stats.firmware == link.stats.firmware_expected == version and link.stats.firmware_current
    online = f"The centre's LED controller table-led {version} is online (protocol 3, 32x16, data pin GP2)"
    wait_for(lambda: online in log, said=lambda: list(log))  # said while the fixture set up, or just after


def test_a_corrupted_frame_is_refused_and_sent_again(led) -> None:
    emulator, link, _ = led
    link.show(picture(1))
    shows(emulator, picture(1))
    emulator.corrupt_next = 1
    link.show(picture(2))
    shows(emulator, picture(2))
    assert emulator.controller.naks >= 1 and link.stats.naks >= 1


def test_a_dropped_frame_is_sent_again_when_its_ack_does_not_come(led) -> None:
    emulator, link, _ = led
    link.show(picture(1))
    shows(emulator, picture(1))
    emulator.drop_next = 1
    link.show(picture(3))
    shows(emulator, picture(3))
    assert emulator.drop_next == 0  # the first copy really was lost
    assert link.stats.retransmits >= 1


def test_unplugged_and_replugged_it_is_back_with_a_full_frame_within_2_s(led) -> None:
    emulator, link, log = led
    link.show(picture(1))
    shows(emulator, picture(1))
    emulator.unplug()
    for _ in range(300):
        if not link.stats.online:
            break
        time.sleep(0.01)
    assert not link.stats.online and any("LED controller is not answering" in line for line in log)
    link.show(picture(4))  # the game goes on meanwhile
    emulator.plug()
    assert shows(emulator, picture(4), timeout=2.0) < 2.0
    assert any(line.startswith(f"The centre's LED controller table-led {firmware.expected()} is back")
               for line in log)


def test_a_controller_with_a_newer_protocol_version_is_refused(tmp_path: Path, said) -> None:
    emulator = EmulatedLedController(tmp_path)
    original = emulator.controller.take

    def newer(seq: int, kind: int | None, payload: memoryview | None) -> None:
        if kind == ledproto.HELLO:
            emulator.controller.write(ledproto.encode(seq, ledproto.HELLO_REPLY,
                                                      bytes((4, 32, 16, 2, 1)) + b"table-led 9.0"))
        else:
            original(seq, kind, payload)

    emulator.controller.take = newer  # type: ignore[method-assign]
    log = said
    link = LedLink(str(emulator.path), 32, 16)
    try:
        link.show(picture(1))
        for _ in range(300):
            if link.stats.last_error:
                break
            time.sleep(0.01)
        assert not link.stats.online and emulator.strip.writes == 0
        assert "table-led 9.0 speaks protocol 4, this host 3: update the controller's firmware" \
            in link.stats.last_error  # what `tablectl status` shows under led_controller
        assert any("speaks protocol 4" in line for line in log)
    finally:
        link.close()
        emulator.close()


class FakePort:
    """A serial port whose far end is a Python object: `write` is the far end's to define; what
    it answers waits in `outgoing`, read as pyserial would."""

    outgoing = b""

    def reset_input_buffer(self) -> None:
        self.outgoing = b""

    @property
    def in_waiting(self) -> int:
        return len(self.outgoing)

    def read(self, n: int = 1) -> bytes:
        if not self.outgoing:
            time.sleep(0.01)
        out, self.outgoing = self.outgoing[:n], self.outgoing[n:]
        return out

    def close(self) -> None:
        pass


class Protocol1Controller(FakePort):
    """A port with the old firmware behind it: protocol 1 framing (LEN LEN SEQ TYPE PAYLOAD
    CRC CRC 0x7E); it answers only a protocol-1 HELLO."""

    def __init__(self) -> None:
        self.incoming = b""
        self.outgoing = b""

    def write(self, data: bytes) -> int:
        self.incoming += data
        hello = bytes((0, 10, 0, ledproto.HELLO, 1, 32, 16))
        if hello in self.incoming:
            self.incoming = b""
            body = bytes((0, 23, 0, ledproto.HELLO_REPLY, 1, 32, 16)) + b"table-led 1.0"
            crc = ledproto.crc16(body)
            self.outgoing += body + bytes((crc >> 8, crc & 0xFF, 0x7E))
        return len(data)



def test_a_controller_with_the_old_protocol_is_named_and_refused() -> None:
    link = LedLink("/dev/table-led", 32, 16, open_port=lambda _p: Protocol1Controller())
    try:
        for _ in range(300):
            if link.stats.last_error:
                break
            time.sleep(0.01)
        assert not link.stats.online
        assert link.stats.last_error == ("controller table-led 1.0 speaks protocol 1, this host 3: update "
                                         "the controller's firmware (sudo tablectl firmware flash)")
    finally:
        link.close()


class StaleAcker(FakePort):
    """A port whose controller says hello, then answers every frame with the ack of the
    frame before it: alive-looking traffic that never acknowledges what is in flight."""

    def __init__(self) -> None:
        self.decoder = ledproto.Decoder()
        self.outgoing = b""
        self.last_seq = 0

    def write(self, data: bytes) -> int:
        for seq, kind, _ in self.decoder.feed(data)[0]:
            if kind == ledproto.HELLO:
                about = bytes((32, 16)) if ledproto.VERSION == 1 else bytes((32, 16, 2, 1))
                self.outgoing += ledproto.encode(seq, ledproto.HELLO_REPLY,
                                                 bytes((ledproto.VERSION,)) + about + b"stale")
            elif kind == ledproto.FRAME:
                old = self.last_seq
                self.outgoing += ledproto.encode(old, ledproto.ACK, bytes((old,)))
                self.last_seq = seq
        return len(data)



def test_acks_for_old_frames_do_not_keep_a_dead_link_looking_alive(said) -> None:
    log = said
    link = LedLink("/dev/table-led", 32, 16, open_port=lambda _p: StaleAcker())
    try:
        link.show(picture(1))
        for _ in range(400):
            if any("stopped answering" in line for line in log):
                break
            time.sleep(0.01)
        assert any("stopped answering" in line for line in log)
        assert link.stats.frames_acked == 0
    finally:
        link.close()


def test_a_slow_controller_gets_only_the_newest_frame_and_never_a_queue(led, monkeypatch) -> None:
    """The game draws every 5 ms; the controller needs 120 ms a frame. The host must keep at
    most one frame in flight (so nothing piles up in the USB buffers while the strip is
    clocked out), skip the frames drawn meanwhile, and end on the game's newest frame. (The ack
    is waited for 5 s here, not 0.25: on a loaded machine a 120 ms frame can take longer, and
    the resend that follows is right, but not what this test is about.)"""
    monkeypatch.setattr(ledlink, "ACK_TIMEOUT_S", 5.0)
    emulator, link, _ = led
    link.show(picture(0))
    shows(emulator, picture(0))
    waiting: list[int] = []
    write = emulator.strip.write

    def slow_write() -> None:
        time.sleep(0.12)  # a busy controller: the bytes that came meanwhile wait in the pty
        size = bytearray(4)
        fcntl.ioctl(emulator._master, termios.FIONREAD, size)
        waiting.append(int.from_bytes(size, sys.byteorder))
        write()

    emulator.strip.write = slow_write  # type: ignore[method-assign]
    for seed in range(1, 120):
        link.show(picture(seed))
        time.sleep(0.005)
    shows(emulator, picture(119), timeout=3.0)
    block = len(ledproto.encode(0, ledproto.FRAME, bytes(2 + 32 * 16 * 3)))
    assert waiting and max(waiting) <= block  # at most the one frame in flight
    assert link.stats.retransmits == 0
    assert link.stats.frames_dropped > 60  # most frames were stale before they could go


def test_a_frame_of_the_wrong_size_is_refused_at_once(led) -> None:
    _, link, _ = led
    with pytest.raises(ValueError, match="the matrix is 32x16"):
        link.show(Image.new("RGB", (32, 32)))


def test_a_quiet_spell_between_frames_is_not_taken_for_a_dead_controller(led) -> None:
    emulator, link, log = led
    link.show(picture(1))
    shows(emulator, picture(1))
    wait_for(lambda: link.stats.frames_acked == 1)
    time.sleep(1.3 * ledlink.SILENT_LIMIT_S)  # the quiet spell itself, from the ack on: nothing to send
    link.show(picture(2))
    shows(emulator, picture(2))
    wait_for(lambda: link.stats.frames_acked == 2)  # the exchange after the quiet is over
    assert link.stats.online and link.stats.reconnects == 0 and link.stats.retransmits == 0
    assert not any("stopped answering" in line for line in log)


def test_only_eperm_names_the_late_driver_a_files_mode_is_eacces() -> None:
    """open(2) fails with EACCES for a file's mode or group (udev rule missing) and with EPERM when
    the device cgroup refuses the device: only the second is the unit's DeviceAllow resolved early."""
    import errno

    from firmware_host.devices.displays.ledlink import port_problem

    mode = PermissionError(errno.EACCES, "Permission denied", "/dev/table-led")
    cgroup = PermissionError(errno.EPERM, "Operation not permitted", "/dev/table-led")
    assert port_problem(mode) == "[Errno 13] Permission denied: '/dev/table-led'"
    assert port_problem(cgroup).startswith("[Errno 1] Operation not permitted: '/dev/table-led': the ")
    assert "cdc_acm" in port_problem(cgroup) and "cdc_acm" not in port_problem(mode)


# ---------------------------------------------------------------- protocol 3: firmware versions, STOP


def test_stop_is_answered_stopping_and_ends_the_controllers_loop() -> None:
    """What `tablectl firmware flash` asks first: the controller says STOPPING for that sequence
    number and returns from serve(), so main.py ends and the board is at its REPL."""
    incoming = (ledproto.encode(1, ledproto.HELLO, bytes((3, 32, 16))) + ledproto.encode(9, ledproto.STOP)
                + ledproto.encode(2, ledproto.FRAME, bytes((32, 16)) + bytes(32 * 16 * 3)))  # never read
    where = [0]

    def readinto(buf: memoryview) -> int:
        n = min(len(buf), len(incoming) - where[0])
        if n == 0:
            raise AssertionError("read past the STOP: the loop did not end")
        buf[:n] = incoming[where[0] : where[0] + n]
        where[0] += n
        return n

    sent: list[bytes] = []
    ctl = Controller(sent.append, Strip(32 * 16, clocked=False), 32, 16, 2, firmware="0.1.0+12345678")
    ctl.serve(readinto)
    replies = ledproto.Decoder().feed(b"".join(sent))[0]
    assert [(seq, kind) for seq, kind, _ in replies] == [(1, ledproto.HELLO_REPLY), (9, ledproto.STOPPING)]
    assert bytes(replies[0][2][5:]) == b"table-led 0.1.0+12345678" and ctl.frames == 0


def test_a_controller_with_other_firmware_plays_and_is_named_in_the_log(tmp_path: Path, said) -> None:
    emulator = EmulatedLedController(tmp_path)
    emulator.controller.name = b"table-led 0.0.9+deadbeef"
    link = LedLink(str(emulator.path), 32, 16)
    try:
        link.show(picture(1))
        shows(emulator, picture(1))  # the protocol is the same: it plays
        assert link.stats.firmware == "0.0.9+deadbeef" and not link.stats.firmware_current
        assert link.stats.firmware_expected == firmware.expected()
        assert list(said).count(f"The centre's LED controller runs firmware 0.0.9+deadbeef, this table-host "
                                f"carries {firmware.expected()}: sudo tablectl firmware flash") == 1
    finally:
        link.close()
        emulator.close()


def test_paused_the_link_lets_go_of_the_port_and_takes_it_back_on_resume(led) -> None:
    emulator, link, _ = led
    link.show(picture(1))
    shows(emulator, picture(1))
    assert link.pause(30) and link.stats.paused and not link.stats.online
    assert link.stats.last_error == "paused: tablectl firmware flash has the port"
    link.show(picture(2))
    time.sleep(0.5)  # three of the link's reopening times: it stays off the port
    assert emulator.frame_bytes() == picture(1).tobytes()
    link.resume()
    shows(emulator, picture(2))
    assert link.stats.online and not link.stats.paused


def test_a_port_locked_by_the_flash_is_left_alone_and_said(tmp_path: Path, said) -> None:
    """The lock the daemon's link honours: `firmware.open_locked` holds flock on the port, the
    link opens it exclusively (pyserial's `exclusive`), fails, says why, and tries again."""
    emulator = EmulatedLedController(tmp_path)
    held = firmware.open_locked(str(emulator.path))
    link = LedLink(str(emulator.path), 32, 16)
    try:
        link.show(picture(1))
        deadline = time.monotonic() + 5
        while not link.stats.last_error and time.monotonic() < deadline:
            time.sleep(0.01)
        told = link.stats.last_error
        assert "another program holds the port (tablectl firmware flash?); trying again" in told
        assert not link.stats.online and emulator.strip.writes == 0
        held.close()
        shows(emulator, picture(1))
    finally:
        link.close()
        emulator.close()
