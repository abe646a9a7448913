"""The LED controller's firmware under the real MicroPython interpreter.

    python -m hil.firmware [--json] [--seconds S]

MicroPython's WebAssembly port (npm `@micropython/micropython-webassembly-pyscript`, pinned
in tests/hil/micropython/package-lock.json, installed with `npm ci` into the cache folder) runs
hardware/led_controller/ unchanged under node. Only `machine`, `rp2` and `neopixel` are
stand-ins (tests/hil/micropython/standins/: the PIO program run as the RP2040 datasheet defines
its instructions, the bytes the chain would receive). The firmware's stdin and stdout are the device side
of a pseudo-terminal; the host's real `LedLink` (pyserial) opens the other side exactly as
it opens /dev/ttyACM0 on the Pi.

Five parts: a scripted exchange on the raw line (hello, frame and ack, a damaged frame and
its NAK, a truncated frame followed by a good one), the host's link sending frames as fast
as the firmware takes them (the rp2 stand-in runs the firmware's PIO program on each frame's
first bytes and measures its waveform), a 16x16 board started with the host's hello (a 0x03
inside) already waiting, `tablectl firmware flash` against a board holding an older version
(the real mpremote; the board's REPL and its reset), and the firmware's own benchmark
(bench.py, which also runs on a board with `mpremote run`). Wasm speed is not RP2040 speed:
the figures compare parts and versions; docs/led-protocol.md has the board's arithmetic.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import select
import shutil
import subprocess
import sys
import threading
import time
import tty
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "tests" / "hil" / "micropython"
RUNNER = NODE_DIR / "runner.mjs"
STANDINS = NODE_DIR / "standins"
FIRMWARE = ROOT / "hardware" / "led_controller"
PACKAGE = "@micropython/micropython-webassembly-pyscript"
CHECKS = ("hello", "frame_acked", "frame_shown", "damaged_naked", "damaged_not_shown", "resync_at_once",
          "resync_shown", "link_online", "pixels_match", "data_pin_as_wired", "early_hello_answered",
          "pio_in_spec", "pio_bits_ok", "flash_reported")


class Missing(RuntimeError):
    """A tool the run needs is not installed (one line says which)."""


def node_modules(cache: Path) -> Path:
    """The folder holding node_modules for the pinned MicroPython, installed once per lock file."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise Missing(f"{'node' if node is None else 'npm'} not found on PATH: install Node.js 20 or "
                      "newer (Debian: apt-get install nodejs npm) to run the firmware under MicroPython")
    files = [NODE_DIR / "package.json", NODE_DIR / "package-lock.json"]
    key = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:12]
    target = Path(cache) / f"micropython-{key}"
    if (target / "node_modules" / PACKAGE / "micropython.mjs").is_file():
        return target
    staging = Path(cache) / f"micropython-{key}.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for f in files:
        shutil.copy(f, staging / f.name)
    done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=staging,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise Missing(f"npm ci in {staging} failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}")
    try:
        staging.rename(target)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(staging, ignore_errors=True)
    return target


class Board:
    """The firmware running under node: a pseudo-terminal for its USB serial, the strip's
    bitstream reported line by line."""

    def __init__(self, modules: Path, code: str = "import main", firmware: tuple[Path, ...] = (FIRMWARE,),
                 waiting: bytes = b"", flash: Path | None = None) -> None:
        """`firmware`: the folders copied to the board, a later one's file over an earlier one's;
        `waiting`: bytes the host sent before the firmware started; `flash`: a folder that is the
        board's own filesystem (what mpremote copies there, kept across resets): with it the
        board goes on as a REPL when its firmware returns, and a reset starts it again."""
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self.path = os.ttyname(slave)
        self.line = slave  # held open all along: the pty lives until close()
        self.master = master
        self.modules, self.code, self.firmware, self.flash = modules, code, firmware, flash
        if waiting:
            self.send(waiting)
        self.shown: bytes | None = None  # the last bytes clocked out to the LEDs
        self.shown_all: list[bytes] = []
        self.pins: set[int] = set()
        self.reports: list[str] = []
        self.boots = 0
        self._changed = threading.Condition()
        self._start()

    def _start(self) -> None:
        libs = [arg for folder in (*self.firmware, STANDINS) for arg in ("--lib", str(folder))]
        flash = ["--flash", str(self.flash), "--repl", "1"] if self.flash is not None else []
        report_r, report_w = os.pipe()
        self.proc = subprocess.Popen(
            [shutil.which("node") or "node", str(RUNNER), "--modules", str(self.modules), "--fd",
             str(self.master), "--report-fd", str(report_w), *libs, *flash, "--exec", self.code],
            pass_fds=(self.master, report_w), stderr=subprocess.PIPE)
        os.close(report_w)
        self.boots += 1
        self._reader = threading.Thread(target=self._read_reports, args=(report_r,), daemon=True)
        self._reader.start()
        if self.flash is not None:
            threading.Thread(target=self._reboot_on_reset, args=(self.proc,), daemon=True).start()

    def _reboot_on_reset(self, proc: subprocess.Popen[bytes]) -> None:
        """machine.reset() ends the interpreter with exit code 3: boot the board again, from its
        flash, on the same line (a Pico's USB comes back under the same name)."""
        if proc.wait() == 3 and self.line >= 0:
            self._start()

    def _read_reports(self, fd: int) -> None:
        with os.fdopen(fd, "r") as lines:
            for line in lines:
                word, _, rest = line.strip().partition(" ")
                with self._changed:
                    if word == "bitstream":
                        pin, _, hexdata = rest.split(" ")
                        self.pins.add(int(pin))
                        self.shown = bytes.fromhex(hexdata)
                        self.shown_all.append(self.shown)
                    else:
                        self.reports.append(line.strip())
                    self._changed.notify_all()

    def wait_for(self, test: Any, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(test, timeout)

    def send(self, data: bytes) -> None:
        os.write(self.line, data)

    def replies(self, decoder: Any, want: int, timeout: float) -> list[tuple[int, int, bytes]]:
        """Blocks the firmware sent back, until `want` of them or `timeout` seconds."""
        got: list[tuple[int, int, bytes]] = []
        deadline = time.monotonic() + timeout
        while len(got) < want and (left := deadline - time.monotonic()) > 0:
            if select.select([self.line], [], [], left)[0]:
                got += decoder.feed(os.read(self.line, 4096))[0]
        return got

    def close(self) -> str:
        """Ends the run (the line closes: the runner sees end of file); returns its stderr."""
        line, self.line = self.line, -1
        with contextlib.suppress(OSError):
            os.close(line)
        with contextlib.suppress(OSError):
            os.close(self.master)
        try:
            _, err = self.proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        self._reader.join(timeout=2)
        return err.decode(errors="replace")


def strip_bytes(frame: bytes, width: int, height: int) -> bytes:
    """What the strip must clock out for an RGB frame, from docs/led-protocol.md ("The
    matrix") and the WS2812's G, R, B order, written out here independently of ledctl."""
    out = bytearray(width * height * 3)
    for y in range(height):
        for x in range(width):
            panel = (y // 16) * (width // 16) + x // 16
            row, col = y % 16, x % 16
            led = panel * 256 + row * 16 + (col if row % 2 == 0 else 15 - col)
            r, g, b = frame[(y * width + x) * 3 : (y * width + x) * 3 + 3]
            out[led * 3 : led * 3 + 3] = bytes((g, r, b))
    return bytes(out)


def _scripted(board: Board, width: int, height: int) -> dict[str, Any]:
    """The raw exchange, block by block: what the firmware answers and shows."""
    from firmware_host.devices.displays import ledproto

    rnd = random.Random(7)
    decoder = ledproto.Decoder()
    out: dict[str, Any] = {}
    hello = ledproto.encode(1, ledproto.HELLO, bytes((ledproto.VERSION, width, height)))
    board.send(hello)
    reply = board.replies(decoder, 1, 10.0)
    out["hello"] = bool(reply) and reply[0][1] == ledproto.HELLO_REPLY
    if out["hello"]:
        payload = reply[0][2]
        out["protocol"] = payload[0]
        out["size"] = f"{payload[1]}x{payload[2]}"
        out["firmware"] = bytes(payload[5:]).decode("ascii", "replace")
        out["firmware_data_pin"] = payload[3]
        out["firmware_native"] = bool(payload[4] & ledproto.NATIVE)

    def frame(seq: int) -> tuple[bytes, bytes]:
        pixels = bytes((ledproto.SYNC,)) * 6 + rnd.randbytes(width * height * 3 - 6)  # sync bytes inside too
        return ledproto.encode(seq, ledproto.FRAME, bytes((width, height)) + pixels), pixels

    block, pixels = frame(5)
    board.send(block)
    got = board.replies(decoder, 1, 5.0)
    out["frame_acked"] = got[:1] == [(5, ledproto.ACK, b"\x05")]
    out["frame_shown"] = board.wait_for(lambda: board.shown == strip_bytes(pixels, width, height), 2.0)

    before = len(board.shown_all)
    block, _ = frame(6)
    damaged = bytearray(block)
    damaged[len(damaged) // 2] ^= 0x5A
    board.send(bytes(damaged))
    got = board.replies(decoder, 1, 2.0)
    out["damaged_naked"] = bool(got) and got[0][1] == ledproto.NAK
    out["damaged_not_shown"] = len(board.shown_all) == before

    # A block cut short, then a good one straight behind it: the good one must be taken
    # as soon as it is in, with no quiet spell and nothing sent again.
    cut, _ = frame(8)
    block, pixels = frame(9)
    board.send(cut[: len(cut) // 2] + block)
    got = board.replies(decoder, 2, 2.0)
    out["resync_at_once"] = (9, ledproto.ACK, b"\x09") in got
    out["resync_shown"] = board.wait_for(lambda: board.shown == strip_bytes(pixels, width, height), 1.0)
    board.replies(decoder, 9, 0.2)  # whatever else it had to say
    return out


MIN_ACKED = 20


def _through_the_link(board: Board, width: int, height: int, seconds: float) -> dict[str, Any]:
    """The host's own LedLink over the pty: frames as fast as the firmware takes them."""
    from PIL import Image

    from firmware_host.devices.displays.ledlink import LedLink
    from firmware_host.system.logs import Collected

    collected = Collected("ledlink")
    log = collected.__enter__()  # what the link says, for the report; let go in `finally`
    link = LedLink(board.path, width, height)
    rnd = random.Random(11)
    expected: set[bytes] = set()
    newest = b""
    try:
        deadline = time.monotonic() + 10
        while not link.stats.online and time.monotonic() < deadline:
            time.sleep(0.01)
        if not link.stats.online:
            return {"link_online": False, "link_log": log}
        shown_before = len(board.shown_all)
        start = time.monotonic()
        acked0, sent0 = link.stats.frames_acked, link.stats.frames_sent
        # `seconds`, and on until MIN_ACKED frames were acked (on a loaded machine a second may
        # hold only a few): what is judged below needs an exchange, not a length of time.
        while (time.monotonic() - start < seconds
               or (link.stats.frames_acked - acked0 < MIN_ACKED and time.monotonic() - start < 60)):
            newest = rnd.randbytes(width * height * 3)
            expected.add(strip_bytes(newest, width, height))
            link.show(Image.frombytes("RGB", (width, height), newest))
            time.sleep(0.004)  # the game draws faster than any controller shows
        elapsed = time.monotonic() - start
        acked = link.stats.frames_acked - acked0
        last = strip_bytes(newest, width, height)
        caught_up = board.wait_for(lambda: board.shown == last, 3.0)
        shown = board.shown_all[shown_before:]
        return {
            "link_online": True,
            "firmware_frames_sent": link.stats.frames_sent - sent0,
            "firmware_frames_acked": acked,
            "frames_per_s": round(acked / elapsed, 1),
            "retransmits": link.stats.retransmits,
            "naks": link.stats.naks,
            "frames_dropped": link.stats.frames_dropped,
            "stale_replies": link.stats.stale_replies,
            "frames_shown": len(shown),
            "pixels_match": caught_up and all(s in expected for s in shown),
            "last_frame_shown": caught_up,
            "link_log": log,
        }
    finally:
        link.close()
        collected.__exit__()


def early_hello(modules: Path, firmware: Path = FIRMWARE, width: int = 16,
                height: int = 16) -> dict[str, Any]:
    """The host's hello already waiting when the firmware starts, as when the Pi opens
    /dev/table-led while main.py is still importing. The hello for a 16x16 matrix carries
    0x03 (its length's high byte): a firmware still taking Ctrl-C then drops to the REPL
    (the runner delivers bytes as the board's USB does: tests/hil/micropython/runner.mjs)."""
    import tempfile

    from firmware_host.devices.displays import ledproto

    pad = bytes(2 + width * height * 3 - 3)  # as LedLink._hello pads it
    hello = ledproto.encode(0, ledproto.HELLO, bytes((ledproto.VERSION, width, height)) + pad)
    with tempfile.TemporaryDirectory(prefix="led-board-") as wiring:
        (Path(wiring) / "board.py").write_text(
            f"WIDTH = {width}\nHEIGHT = {height}\nDATA_PIN = {_board(firmware)['DATA_PIN']}\n")
        board = Board(modules, firmware=(firmware, Path(wiring)), waiting=hello)
        try:
            reply = board.replies(ledproto.Decoder(), 1, 10.0)
        finally:
            err = board.close()
    return {"hello_bytes_0x03_at": [i for i, b in enumerate(hello) if b == 0x03],
            "early_hello_answered": bool(reply) and reply[0][1] == ledproto.HELLO_REPLY,
            "early_hello_size": f"{reply[0][2][1]}x{reply[0][2][2]}" if reply else "",
            "early_hello_interrupted": "KeyboardInterrupt" in err,
            "early_hello_exit": board.proc.returncode}


def pio_timing(board: Board) -> dict[str, Any]:
    """What the rp2 stand-in measured of the firmware's PIO program ("pio" report lines): the
    waveform's times against the WS2812B datasheet's windows, and its bits against the words
    pushed (tests/hil/micropython/standins/rp2.py)."""
    found = [json.loads(r[4:]) for r in board.reports if r.startswith("pio ")]
    if not found:
        return {"pio_in_spec": False, "pio_bits_ok": False, "pio": {}}
    return {"pio_in_spec": all(f["in_spec"] for f in found), "pio_bits_ok": all(f["bits_ok"] for f in found),
            "pio": found[0]}


def flash_check(modules: Path, version: str = "0.0.9+deadbeef") -> dict[str, Any]:
    """`tablectl firmware flash` (firmware_host/devices/displays/firmware.py) against a board
    whose flash holds this firmware marked `version`: it must stop, take the files through the
    real mpremote, reset, and report this table-host's version."""
    import tempfile

    from firmware_host.devices.displays import firmware as fw

    with tempfile.TemporaryDirectory(prefix="led-flash-") as tmp:
        flash = Path(tmp)
        for name, data in fw.files().items():
            (flash / name).write_bytes(data)
        (flash / fw.VERSION_FILE).write_bytes(fw.version_module(version))
        board = Board(modules, flash=flash)
        started = time.monotonic()
        try:
            done = fw.flash(board.path, (_board()["WIDTH"], _board()["HEIGHT"]))
            out = {"flash_before": done.before, "flash_after": done.after, "flash_expected": done.expected,
                   "flash_reported": done.ok and done.before == version, "flash_boots": board.boots}
        except fw.FlashError as exc:
            out = {"flash_reported": False, "flash_error": str(exc)}
        finally:
            board.close()
        out["flash_s"] = round(time.monotonic() - started, 2)
    return out


def _bench(modules: Path) -> dict[str, Any]:
    board = Board(modules, "import bench")
    try:
        board.wait_for(lambda: any(r.startswith("bench ") for r in board.reports), 60.0)
    finally:
        err = board.close()
    for line in board.reports:
        if line.startswith("bench "):
            return json.loads(line[6:])
    return {"bench_error": err.strip()[-300:]}


def run(cache: Path, seconds: float = 3.0) -> dict[str, Any]:
    """Everything above; the keys are stable for `./dev hil`."""
    from firmware_host.devices.displays import ledproto

    modules = node_modules(Path(cache))
    wiring = _board()
    width, height = wiring["WIDTH"], wiring["HEIGHT"]
    board = Board(modules)
    result: dict[str, Any] = {"micropython_version": "", "width": width, "height": height}
    try:
        result.update(_scripted(board, width, height))
        result.update(_through_the_link(board, width, height, seconds))
    finally:
        err = board.close()
    result.update(pio_timing(board))
    result["data_pins_driven"] = sorted(board.pins)
    result["data_pin_as_wired"] = result["data_pins_driven"] == [wiring["DATA_PIN"]]
    if err.strip():
        result["firmware_stderr"] = err.strip()[-500:]
    result.update(early_hello(modules))
    result.update(flash_check(modules))
    result["bench"] = _bench(modules) if (FIRMWARE / "bench.py").exists() else {}
    result["micropython_version"] = result["bench"].get("micropython", "") or _version(modules)
    result["host_protocol"] = ledproto.VERSION
    result["rp2040_estimate"] = board_estimate(width, height)
    result.setdefault("firmware_frames_sent", 0)
    result.setdefault("firmware_frames_acked", 0)
    result["ok"] = all(result.get(k) for k in CHECKS) and result["firmware_frames_acked"] > 0
    return result


def _board(firmware: Path = FIRMWARE) -> dict[str, int]:
    """The firmware's wiring (hardware/led_controller/board.py): WIDTH, HEIGHT, DATA_PIN."""
    values = {}
    for line in (firmware / "board.py").read_text().splitlines():
        name, _, value = line.partition("=")
        if name.strip() in ("WIDTH", "HEIGHT", "DATA_PIN"):
            values[name.strip()] = int(value.split("#")[0])
    return values


def _version(modules: Path) -> str:
    board = Board(modules, "import sys, hil; hil.report('version ' + sys.version)")
    board.wait_for(lambda: bool(board.reports), 30.0)
    board.close()
    return next((r[8:] for r in board.reports if r.startswith("version ")), "")


def board_estimate(width: int, height: int, usb_bytes_per_ms: float = 600.0, cpu_ms: float = 1.7) -> dict:
    """docs/led-protocol.md's arithmetic for an RP2040: the bitstream (24 bits of 1.25 us per
    LED, shaped by the PIO: 10 cycles of 125 ns a bit at 8 MHz, interrupts on), the block on USB
    (CDC at a conservative 600 bytes/ms), and the CPU work with viper (CRC, copy, Python per
    block). Only a board's bench.py calibrates it."""
    bitstream = width * height * 24 * 1.25e-3
    usb = (2 + width * height * 3 + 8) / usb_bytes_per_ms
    frame = bitstream + usb + cpu_ms
    return {"bitstream_ms": round(bitstream, 2), "usb_ms": round(usb, 2), "cpu_ms": cpu_ms,
            "frame_ms": round(frame, 2), "frames_per_s": round(1000 / frame, 1)}


def summary(r: dict[str, Any]) -> str:
    lines = [f"LED firmware under MicroPython {r.get('micropython_version', '?')} (WebAssembly), "
             f"{r['width']}x{r['height']}, protocol {r.get('protocol', '?')} (host {r['host_protocol']})"]
    lines.append("  " + ", ".join(f"{k} {'yes' if r.get(k) else 'NO'}" for k in CHECKS))
    acked, sent = r.get("firmware_frames_acked", 0), r.get("firmware_frames_sent", 0)
    lines.append(f"  link: {acked}/{sent} frames acked, "
                 f"{r.get('frames_per_s', 0)} frames/s, {r.get('retransmits', 0)} retransmits, "
                 f"{r.get('naks', 0)} NAKs, {r.get('frames_dropped', 0)} stale frames dropped, "
                 f"data pin driven {', '.join(f'GP{p}' for p in r.get('data_pins_driven', []))}")
    bench = r.get("bench") or {}
    if "per_frame_ms" in bench:
        parts = ", ".join(f"{k} {v}" for k, v in bench["per_frame_ms"].items())
        lines.append(f"  per frame (wasm, ms): {parts}; CRC and copy as {bench.get('impl')} code, "
                     f"{bench.get('allocated_per_frame_bytes')} bytes allocated a frame")
    pio = r.get("pio") or {}
    if pio:
        lines.append(f"  PIO (rp2 stand-in, WS2812B windows): at {pio.get('freq', 0) / 1e6:g} MHz "
                     f"T0H {pio.get('t0h_ns')} ns, T0L {pio.get('t0l_ns')}, T1H {pio.get('t1h_ns')}, "
                     f"T1L {pio.get('t1l_ns')}, bit {pio.get('bit_ns')} ns; in spec {r.get('pio_in_spec')}, "
                     f"bits as pushed {r.get('pio_bits_ok')}")
    lines.append(f"  tablectl firmware flash: {r.get('flash_before', '?')} -> {r.get('flash_after', '?')} "
                 f"(expected {r.get('flash_expected', '?')}) in {r.get('flash_s', '?')} s"
                 + (f"; {r['flash_error']}" if r.get("flash_error") else ""))
    board = board_estimate(r["width"], r["height"])
    lines.append(f"  RP2040 estimate (docs/led-protocol.md): bitstream {board['bitstream_ms']} ms + USB "
                 f"{board['usb_ms']} ms + CPU {board['cpu_ms']} ms = {board['frame_ms']} ms, "
                 f"{board['frames_per_s']} frames/s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hil.firmware", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--seconds", type=float, default=3.0, help="how long the link sends frames")
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache", help="where npm installs MicroPython")
    args = parser.parse_args(argv)
    try:
        result = run(args.cache, args.seconds)
    except Missing as exc:
        print(f"hil.firmware: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2) if args.json else summary(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
