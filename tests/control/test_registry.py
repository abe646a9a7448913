"""One command registry: a command declared once (control/protocol.py) is in tablectl's parser,
its help and its completion, in the server's read-only set or not, and the daemon refuses to
start while a declared command has no handler or a handler has no declaration."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from firmware_host.cli import ctl
from firmware_host.cli.completion import script, subcommands
from firmware_host.control import protocol
from firmware_host.control.protocol import CHANGES, READS, Command, arg, declare, read_only, reads_only
from firmware_host.control.server import Access, Peer
from firmware_host.service.commands import TableCommands
from firmware_host.service.registry import Call, CommandError, Commands
from firmware_host.table.bot_players import Level


@pytest.fixture
def declared() -> Iterator[None]:
    """Two commands more, for one test: `greet` (reads) and `paint` (changes)."""
    before = list(protocol.COMMANDS)
    declare(Command("greet", "say hello to the table", arguments=(arg("--loud", action="store_true"),)))
    declare(Command("paint", "paint the centre a colour", CHANGES, arguments=(arg("colour"),)))
    yield
    protocol.COMMANDS[:] = before
    for name in ("greet", "paint"):
        protocol.BY_NAME.pop(name)


def test_a_command_declared_once_is_everywhere(declared: None) -> None:
    parser = ctl.build_parser()
    assert {"greet", "paint"} <= set(subcommands(parser))
    assert "say hello to the table" in parser.format_help() and "paint the centre" in parser.format_help()
    assert ctl.build_parser().parse_args(["paint", "red"]).colour == "red"
    completion = script("tablectl")
    assert "greet" in completion and "paint" in completion and "--loud" in completion
    assert "greet" in read_only() and "paint" not in read_only()
    stranger = Peer(pid=1, uid=12345, gid=12345)
    access = Access("no-such-group-here", owner_uid=0)
    assert access.refusal(stranger, {"cmd": "greet"}) is None
    assert "needs root or group" in (access.refusal(stranger, {"cmd": "paint"}) or "")


def test_the_daemon_answers_a_declared_command_once_a_component_registers_it(declared: None) -> None:
    commands = Commands()
    commands.register("greet", lambda call: {"hello": "loud" if call.get("loud") else "quiet"})
    assert commands.answer(Call({"cmd": "greet", "loud": True}, 0)) == {"hello": "loud"}
    with pytest.raises(CommandError, match=r"declared but not handled: .*paint"):
        commands.check()
    with pytest.raises(CommandError, match="has a handler already"):
        commands.register("greet", lambda call: {})
    with pytest.raises(CommandError, match="not a command the daemon answers"):
        commands.register("fly", lambda call: {})
    with pytest.raises(CommandError, match="runs in tablectl"):
        commands.register("config", lambda call: {}, action="check")


def test_what_reads_and_what_changes() -> None:
    assert set(read_only()) == {"status", "scores", "history", "seats", "inputs", "decisions", "debug"}
    assert reads_only({"cmd": "config", "action": "get"})
    assert not reads_only({"cmd": "config", "action": "reload"})
    assert reads_only({"cmd": "selftest"}) and reads_only({"cmd": "selftest", "action": "status"})
    assert not reads_only({"cmd": "selftest", "action": "start"}) and not reads_only({"cmd": "fly"})
    assert [c.kind for c in protocol.COMMANDS if c.name in ("start", "new", "bots")] == [CHANGES] * 3
    assert protocol.BY_NAME["status"].kind == READS


def test_the_table_commands_answer_and_unknown_ones_are_named() -> None:
    from firmware_host.table.machine import Table

    commands = Commands()
    TableCommands(Table(2), None).register(commands)
    assert commands.answer(Call({"cmd": "seats"}, 0)) == {"joined": [], "bots": 0, "seats_wired": 2,
                                                                "bot_seats": [], "names": []}
    with pytest.raises(ValueError, match="unknown command 'fly'"):
        commands.answer(Call({"cmd": "fly"}, 0))
    commands.refuse_while(("start",), lambda: "busy")
    with pytest.raises(ValueError, match="busy"):
        commands.answer(Call({"cmd": "start"}, 0))


def test_the_bot_levels_tablectl_offers_are_the_table_s() -> None:
    assert tuple(lv.value for lv in Level if lv is not Level.INSTANT) == protocol.BOT_LEVELS
