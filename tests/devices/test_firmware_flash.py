"""`tablectl firmware flash`'s steps against controllers that answer each way, without a board:
a fake port (what the controller answers) and a fake mpremote (what it is asked to do). The
whole flash against MicroPython itself: tests/devices/test_firmware_micropython.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from firmware_host.devices.displays import firmware, ledproto

ROOT = Path(__file__).resolve().parents[2]


class Port:
    """A controller on a serial port: its hello reply (None: silent, a board at its REPL), and
    whether it obeys STOP."""

    def __init__(self, hello: bytes | None, stops: bool = True) -> None:
        self.hello, self.stops = hello, stops
        self.outgoing = b""
        self.closed = False

    def reset_input_buffer(self) -> None:
        self.outgoing = b""

    @property
    def in_waiting(self) -> int:
        return len(self.outgoing)

    def read(self, n: int = 1) -> bytes:
        out, self.outgoing = self.outgoing[:n], self.outgoing[n:]
        return out

    def write(self, data: bytes) -> int:
        for seq, kind, _ in ledproto.Decoder().feed(data)[0]:
            if kind == ledproto.HELLO and self.hello is not None:
                self.outgoing += ledproto.encode(seq, ledproto.HELLO_REPLY, self.hello)
            if kind == ledproto.STOP and self.stops:
                self.outgoing += ledproto.encode(seq, ledproto.STOPPING, bytes((seq,)))
        return len(data)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def ports(monkeypatch: pytest.MonkeyPatch) -> list[Port]:
    """Each open of the port gives the next controller in the list."""
    queue: list[Port] = []
    monkeypatch.setattr(firmware, "open_locked", lambda _port, wait_s=3.0: queue.pop(0))
    monkeypatch.setattr(firmware, "BACK_WAIT_S", 1.0)
    return queue


def reply(protocol: int, name: str) -> bytes:
    return bytes((protocol, 32, 16, 2, 1)) + name.encode()


def mpremote(asked: list[list[str]], code: int = 0, stderr: str = "") -> Any:
    def run(cmd: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        asked.append(cmd)
        return subprocess.CompletedProcess(cmd, code, "", stderr)

    return run


def test_the_controller_is_stopped_the_files_copied_and_the_new_version_heard(ports: list[Port]) -> None:
    ports += [Port(reply(3, "table-led 0.0.9+deadbeef")), Port(reply(3, f"table-led {firmware.expected()}"))]
    asked: list[list[str]] = []
    done = firmware.flash("/dev/table-led", (32, 16), run=mpremote(asked))
    assert done.ok and (done.before, done.after) == ("0.0.9+deadbeef", firmware.expected())
    (cmd,) = asked
    assert cmd[:6] == [sys.executable, "-m", "mpremote", "connect", "/dev/table-led", "resume"]
    copies = cmd[6:-1]
    names = [*firmware.files(), firmware.VERSION_FILE]
    assert [copies[i * 4] for i in range(len(names))] == ["cp"] * len(names)
    assert [copies[i * 4 + 2] for i in range(len(names))] == [f":{n}" for n in names]
    assert cmd[-1] == "reset" and copies[-1] == "+"


def test_a_protocol_2_controller_cannot_be_stopped_and_the_builder_is_told_the_one_way(
        ports: list[Port]) -> None:
    ports.append(Port(reply(2, "table-led 2.0")))
    asked: list[list[str]] = []
    with pytest.raises(firmware.FlashError) as err:
        firmware.flash("/dev/table-led", (32, 16), run=mpremote(asked))
    assert str(err.value).startswith("the controller runs table-led 2.0, protocol 2, which has no STOP and "
                                     "keeps Ctrl-C off: it cannot be stopped from here. Once, by hand:")
    assert asked == []  # mpremote was not let loose on a running firmware


def test_a_board_that_does_not_answer_hello_is_taken_for_one_at_its_repl(ports: list[Port]) -> None:
    ports += [Port(None), Port(reply(3, f"table-led {firmware.expected()}"))]
    said: list[str] = []
    done = firmware.flash("/dev/table-led", (32, 16), say=said.append, run=mpremote([]))
    assert done.ok and done.before == "nothing answered"
    assert said[1] == "no hello answered: taken for a board at its REPL (MicroPython without this firmware)"


def test_mpremote_missing_from_the_environment_says_how_to_get_it(ports: list[Port]) -> None:
    ports.append(Port(reply(3, "table-led 0.0.9+deadbeef")))
    with pytest.raises(firmware.FlashError) as err:
        firmware.flash("/dev/table-led", (32, 16),
                       run=mpremote([], 1, "/opt/table-host/venv/bin/python: No module named mpremote"))
    assert str(err.value) == ("mpremote is not in the table's environment: sudo systemd/install.sh "
                              "(the pi extra brings it)")


def test_a_daemons_link_is_paused_before_and_resumed_after_even_when_the_flash_fails(
        ports: list[Port]) -> None:
    ports.append(Port(reply(3, "table-led 0.0.9+deadbeef"), stops=False))
    calls: list[str] = []
    with pytest.raises(firmware.FlashError, match="did not answer STOP"):
        firmware.flash("/dev/table-led", (32, 16), pause=lambda: calls.append("pause"),
                       resume=lambda: calls.append("resume"), reported=lambda: None, run=mpremote([]))
    assert calls == ["pause", "resume"]


def test_the_firmware_version_follows_its_files() -> None:
    version = firmware.expected()
    assert version.startswith("0.1.0+") and len(version.split("+")[1]) == 8
    assert set(firmware.files()) == {"main.py", "board.py", "ws2812.py", "ledproto.py", "ledctl.py",
                                     "ledviper.py"}
    assert firmware.version_of("table-led 0.1.0+1a2b3c4d") == "0.1.0+1a2b3c4d"
    namespace: dict[str, Any] = {}
    exec(firmware.version_module(version).decode(), namespace)
    assert namespace["FIRMWARE"] == version


def test_the_pi_extra_brings_mpremote_into_the_tables_environment() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(r.startswith("mpremote") for r in extras["pi"])


def test_a_controller_that_runs_this_version_is_left_alone_unless_forced(ports: list[Port]) -> None:
    current = reply(3, f"table-led {firmware.expected()}")
    ports.append(Port(current))
    asked: list[list[str]] = []
    calls: list[str] = []
    done = firmware.flash("/dev/table-led", (32, 16), run=mpremote(asked),
                          pause=lambda: calls.append("pause"), resume=lambda: calls.append("resume"),
                          reported=lambda: None)
    assert done.ok and done.before == done.after == firmware.expected() and asked == []
    assert done.steps[-1] == (f"the controller runs {firmware.expected()} already: nothing copied "
                              "(--force copies it again)")
    assert calls == ["pause", "resume"]  # the daemon's link is given the port back all the same
    ports += [Port(current), Port(current)]
    forced = firmware.flash("/dev/table-led", (32, 16), run=mpremote(asked), force=True)
    assert forced.ok and len(asked) == 1 and asked[0][-1] == "reset"
