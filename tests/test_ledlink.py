"""The LED controller link: codec, firmware logic, and the real serial path over a pty."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from firmware_host.displays import ledproto
from firmware_host.displays.emulated_led import EmulatedLedController, Strip
from firmware_host.displays.ledctl import Controller, led_index
from firmware_host.displays.ledlink import LedLink

ROOT = Path(__file__).resolve().parents[1]


def test_crc_is_ccitt_false() -> None:
    assert ledproto.crc16(b"123456789") == 0x29B1  # the standard check value


def test_a_block_is_length_sequence_type_payload_crc_and_sync() -> None:
    block = ledproto.encode(7, ledproto.ACK, b"\x07")
    assert block[:4] == bytes((0, 8, 7, ledproto.ACK)) and block[-1] == ledproto.SYNC
    assert len(block) == 8
    assert ledproto.Decoder().feed(block) == ([(7, ledproto.ACK, b"\x07")], 0)


def test_a_damaged_block_is_dropped_and_the_next_one_found() -> None:
    good = [ledproto.encode(i, ledproto.FRAME, bytes(range(40))) for i in range(3)]
    damaged = bytearray(good[1])
    damaged[10] ^= 0xFF
    blocks, bad = ledproto.Decoder().feed(good[0] + bytes(damaged) + good[2])
    assert [b[0] for b in blocks] == [0, 2] and bad == 1


@settings(max_examples=150, deadline=None)
@given(payloads=st.lists(st.binary(max_size=300), min_size=1, max_size=8),
       garbage=st.binary(max_size=40), cuts=st.lists(st.integers(1, 50), max_size=40))
def test_any_chunking_after_any_garbage_decodes_the_same_blocks(payloads: list[bytes], garbage: bytes,
                                                                cuts: list[int]) -> None:
    stream = b"".join(ledproto.encode(i, ledproto.FRAME, p) for i, p in enumerate(payloads))
    # Garbage ending in a sync byte: whatever it looked like, the receiver is back in step.
    data = garbage + bytes((ledproto.SYNC,)) + stream
    decoder = ledproto.Decoder()
    got = []
    i = 0
    for cut in [*cuts, len(data)]:
        got += decoder.feed(data[i : i + cut])[0]
        i += cut
    got += decoder.feed(data[i:])[0]
    while decoder.buf:  # the line falls quiet: a block still "coming" is given up
        got += decoder.idle()[0]
    assert [p for _, _, p in got][-len(payloads):] == payloads


def test_the_matrix_is_16x16_panels_in_serpentine_rows() -> None:
    assert [led_index(x, 0, 32) for x in (0, 15)] == [0, 15]
    assert [led_index(x, 1, 32) for x in (0, 15)] == [31, 16]  # the second row runs back
    assert led_index(16, 0, 32) == 256  # the second panel
    assert led_index(0, 16, 32) == 512  # 32x32: the third panel, below the first
    assert sorted(led_index(x, y, 32) for x in range(32) for y in range(32)) == list(range(1024))


def test_the_controller_answers_hello_shows_frames_and_refuses_wrong_sizes() -> None:
    sent: list[bytes] = []
    strip = Strip(32 * 16)
    ctl = Controller(sent.append, strip, 32, 16)
    ctl.feed(ledproto.encode(1, ledproto.HELLO, bytes((1, 32, 16))))
    (reply,), _ = ledproto.Decoder().feed(sent[-1])
    assert reply[1] == ledproto.HELLO_REPLY and reply[2][:3] == bytes((1, 32, 16))
    frame = Image.new("RGB", (32, 16), (1, 2, 3))
    ctl.feed(ledproto.encode(2, ledproto.FRAME, bytes((32, 16)) + frame.tobytes()))
    assert ledproto.Decoder().feed(sent[-1])[0] == [(2, ledproto.ACK, b"\x02")]
    assert strip.pixels[0] == (1, 2, 3) and strip.writes == 1
    ctl.feed(ledproto.encode(3, ledproto.FRAME, bytes((16, 16)) + bytes(16 * 16 * 3)))
    assert ledproto.Decoder().feed(sent[-1])[0][0][1] == ledproto.NAK


def test_the_firmware_uses_the_hosts_own_protocol_files() -> None:
    fw = ROOT / "hardware" / "led_controller"
    for name in ("ledproto.py", "ledctl.py"):
        assert (fw / name).resolve() == (ROOT / "firmware_host" / "displays" / name).resolve()
    assert "import ledctl" in (fw / "main.py").read_text()


@pytest.mark.parametrize("name", ["ledproto.py", "ledctl.py"])
def test_shared_files_stay_within_what_micropython_runs(name: str) -> None:
    tree = ast.parse((ROOT / "firmware_host" / "displays" / name).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            # binascii exists on MicroPython too (its crc_hqx does not: ImportError, table CRC).
            assert node.module in ("firmware_host.displays", "binascii"), node.module
        if isinstance(node, ast.Import):
            assert all(a.name == "ledproto" for a in node.names)
        assert not isinstance(node, ast.AnnAssign | ast.JoinedStr)  # no annotations, no f-strings
        if isinstance(node, ast.FunctionDef):
            assert node.returns is None and all(a.annotation is None for a in node.args.args)


# ---------------------------------------------------------------- over a pseudo-terminal


@pytest.fixture
def led(tmp_path: Path):
    emulator = EmulatedLedController(tmp_path)
    log: list[str] = []
    link = LedLink(str(emulator.path), 32, 16, log.append)
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
    assert link.stats.online and link.stats.controller == "table-led 1.0"
    assert "LED controller table-led 1.0 online (protocol 1, 32x16)" in log


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
    assert not link.stats.online and any("offline" in line for line in log)
    link.show(picture(4))  # the game goes on meanwhile
    emulator.plug()
    assert shows(emulator, picture(4), timeout=2.0) < 2.0


def test_a_controller_with_another_protocol_version_is_refused(tmp_path: Path) -> None:
    emulator = EmulatedLedController(tmp_path)
    original = emulator.controller.handle

    def newer(seq: int, kind: int, payload: bytes) -> None:
        if kind == ledproto.HELLO:
            emulator.controller.write(ledproto.encode(seq, ledproto.HELLO_REPLY,
                                                      bytes((2, 32, 16)) + b"table-led 2.0"))
        else:
            original(seq, kind, payload)

    emulator.controller.handle = newer  # type: ignore[method-assign]
    log: list[str] = []
    link = LedLink(str(emulator.path), 32, 16, log.append)
    try:
        link.show(picture(1))
        for _ in range(300):
            if link.stats.last_error:
                break
            time.sleep(0.01)
        assert not link.stats.online and emulator.strip.writes == 0
        assert "speaks protocol 2, this host 1: update the controller's firmware" in link.stats.last_error
    finally:
        link.close()
        emulator.close()


def test_a_frame_of_the_wrong_size_is_refused_at_once(led) -> None:
    _, link, _ = led
    with pytest.raises(ValueError, match="the matrix is 32x16"):
        link.show(Image.new("RGB", (32, 32)))


def test_a_quiet_spell_between_frames_is_not_taken_for_a_dead_controller(led) -> None:
    emulator, link, log = led
    link.show(picture(1))
    shows(emulator, picture(1))
    time.sleep(1.3)  # longer than the silence limit, with nothing to send
    link.show(picture(2))
    shows(emulator, picture(2))
    time.sleep(0.2)
    assert not any("stopped answering" in line for line in log)
