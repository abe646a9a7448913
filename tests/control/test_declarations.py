"""A command's declaration (control/protocol.py) carries how tablectl's arguments become the
request and how the answer is shown. It was: forgetting cli/ctl.py's `request_for` branch made
`tablectl echo hi --json` answer {"ok": true, "echo": null}, and nothing caught it."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware_host.cli import ctl, show
from firmware_host.config import emulated_config
from firmware_host.control.protocol import BY_NAME, COMMANDS, Command, arg
from firmware_host.service.daemon import Daemon
from firmware_host.service.registry import Call, CommandHandler, Commands

SAMPLES = [
    ["new", "dice", "rounds=3"],
    ["bots", "2", "--level", "hard"],
    ["history", "--limit", "5", "--before", "9"],
    ["config", "get", "arbiter.window_ms"],
    ["selftest", "--probe", "--seats", "1,3", "--timeout", "4"],
    ["seat", "2", "Ann"],
    ["players", "rename", "Ann", "Anna"],
    ["players", "list", "--removed"],
]
"""A command line for every command whose arguments the daemon is sent (a test below checks that
every argument sent is in one of them: a new argument needs its line here)."""


def request(words: list[str]) -> tuple[dict[str, Any], str | None]:
    """What tablectl sends for this command line, and the action its handler answers."""
    args = ctl.build_parser().parse_args(words)
    body = ctl.request_for(args)
    command = BY_NAME[args.cmd]
    if args.cmd == "selftest":
        body["action"] = "start"  # as `tablectl selftest` (without --abort or --report) asks
    action = body.get("action", command.default_action) if command.actions else None
    return body, action


def not_read(handler: CommandHandler, keys: list[str]) -> list[str]:
    """The request keys a handler's code never names (so it never reads them)."""
    source = inspect.getsource(handler)
    return [key for key in keys if f'"{key}"' not in source]


@pytest.fixture
def daemon(dirs: Path) -> Iterator[Daemon]:
    made = Daemon(emulated_config(4))
    yield made
    made.close()


def test_every_command_has_a_printer() -> None:
    assert {c.name: c.printer for c in COMMANDS if c.printer not in show.PRINTERS} == {}


def test_every_sent_argument_has_a_sample_line() -> None:
    sent = {(c.name, a.key) for c in COMMANDS if c.cli and c.wire for a in c.arguments
            if a.key not in (None, "action")}
    assert ("selftest", "timeout_s") in sent and ("config", "key") in sent
    sampled = {(words[0], key) for words in SAMPLES for key in request(words)[0]
               if key not in ("cmd", "action")}
    assert sent - sampled == set()


@pytest.mark.parametrize("words", SAMPLES, ids=[w[0] for w in SAMPLES])
def test_every_declared_argument_reaches_its_handler(daemon: Daemon, words: list[str]) -> None:
    body, action = request(words)
    command = BY_NAME[words[0]]
    keys = [a.key for a in command.arguments if a.key is not None and a.key != "action"]
    given = [k for k in keys if k in body]
    assert given, body
    handler = daemon.commands.handler(command.name, action)
    assert handler is not None
    assert not_read(handler, given) == []
    # ...and the Call its handler gets carries them, as tablectl parsed them.
    seen: list[dict[str, Any]] = []
    commands = Commands()
    commands.register(command.name, lambda call: seen.append(call.body) or {}, action=action)
    commands.answer(Call(body, 0))
    assert {k: seen[0][k] for k in given} == {k: body[k] for k in given}


def test_the_sample_values_are_the_ones_typed() -> None:
    assert request(SAMPLES[0])[0] == {"cmd": "new", "game": "dice", "options": {"rounds": 3}}
    assert request(SAMPLES[1])[0] == {"cmd": "bots", "count": 2, "level": "hard"}
    assert request(SAMPLES[2])[0] == {"cmd": "history", "limit": 5, "before": 9}
    assert request(SAMPLES[3])[0] == {"cmd": "config", "action": "get", "key": "arbiter.window_ms"}
    assert request(SAMPLES[4])[0] == {"cmd": "selftest", "probe_only": True, "seats": [1, 3],
                                      "timeout_s": 4.0, "action": "start"}
    assert request(["history"])[0] == {"cmd": "history", "limit": 20}  # --before not given: not sent


def test_echo_is_declared_and_registered_in_one_call_and_answers_what_was_typed(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case, end to end in this process: one call declares `echo` and registers its
    handler; tablectl's parser has it, its request carries the text, the handler answers it, the
    printer shows it; and a declaration whose argument is sent under another name than the one
    its handler reads is caught."""
    echo = Command("echo", "say it back", arguments=(arg("text", to="echo", help="what to say"),))
    commands = Commands()

    def answer(call: Call) -> dict[str, Any]:
        return {"echo": call.get("echo")}

    commands.register(echo, answer)
    try:
        body, _ = request(["echo", "hi", "--json"])
        assert body == {"cmd": "echo", "echo": "hi"}
        assert commands.answer(Call(body, 0)) == {"echo": "hi"}
        assert show.as_text(*show.answer_shown({"ok": True, "echo": "hi"}, "echo")).split() == ["echo", "hi"]
        assert not_read(answer, ["echo"]) == []
        forgotten = Command("echo2", "say it back", arguments=(arg("text", help="what to say"),))
        assert not_read(answer, [a.key for a in forgotten.arguments if a.key]) == ["text"]
    finally:
        COMMANDS.remove(echo)
        del BY_NAME["echo"]
