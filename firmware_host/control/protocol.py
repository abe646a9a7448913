"""The control commands as plain data: the one list the server's access check, the daemon's
dispatch, `tablectl`'s parser, its help and its bash completion are all made from.

A command is declared here once: its name, what it changes, its help, its arguments and what
each becomes in the request (`to`), and its printer (how `tablectl` shows the answer: a name in
cli/show.py's PRINTERS). A service component registers the handler for it (service/registry.py);
a component's own command is declared and registered in that one call (`Commands.register` given
a `Command`). This module imports nothing of the project: `tablectl` loads it, and must start
fast.

    → {"cmd": "config", "action": "get", "key": "arbiter"}
    ← {"ok": true, "key": "arbiter", "value": {...}}      or      {"ok": false, "error": "..."}
"""

# No `from __future__ import annotations` here: typing.NamedTuple compiles each field's annotation
# when it is a string (a ForwardRef), which cost tablectl a sixth of its own start.
import argparse
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

MAX_SEATS = 12
BOT_LEVELS = ("easy", "medium", "hard")
"""The levels a table's bots play at (table/bot_players.py `Level`, without the simulator's instant one;
a test keeps the two together)."""

READS = "reads"  # changes nothing: open to whoever can connect
CHANGES = "changes"  # changes the table: root, the daemon's user or the admin group
LOCAL = "local"  # carried out by tablectl itself, never sent


def bot_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of bots (0 to {MAX_SEATS - 1})") from None
    if not 0 <= count < MAX_SEATS:
        raise argparse.ArgumentTypeError(f"{count} bots: a table has at most {MAX_SEATS} seats, so 0 to "
                                         f"{MAX_SEATS - 1} bots beside one person")
    return count


def positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return n


def seat_list(text: str) -> list[int]:
    try:
        seats = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of seat numbers like 1,3") from None
    if not seats or min(seats) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: seats are numbered from 1")
    return seats


HISTORY_MAX = 100
"""The most matches the daemon gives for one `history` request; `tablectl history --limit N` asks
page after page (`before`: the answer's `next`). Every page is read beside the game, on the
journal's read-only connection (service/journal.py), so its size bounds what one request costs."""


def seat_number(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_SEATS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a seat number (1 to {MAX_SEATS})")
    return n


def match_number(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a match number (from 1)")
    return n


SELFTEST_MAX_TIMEOUT_S = 600.0
"""The longest a self-test waits for one control (service/selftest.py refuses more too)."""


def seconds(text: str) -> float:
    """`selftest --timeout`: above 0 and at most SELFTEST_MAX_TIMEOUT_S."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= SELFTEST_MAX_TIMEOUT_S:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0 and at most "
                                         f"{SELFTEST_MAX_TIMEOUT_S:g}, not {text!r}")
    return value


NONE: Mapping[str, Any] = MappingProxyType({})
"""No options: argparse's `add_argument` keywords, whose values are of as many types as its
keywords (a type, a choice list, a default), so `Any` as its own signature has them."""


class Argument(NamedTuple):
    """One argument of a command's command line: argparse's `add_argument(*flags, **options)`,
    and `to`, the request's key its value is sent as ("": its own name; None: not sent, tablectl
    uses it itself). An argument not given (None) is not sent.
    (Named tuples, not dataclasses: importing dataclasses costs tablectl a tenth of its time.)"""

    flags: tuple[str, ...]
    options: Mapping[str, Any] = NONE
    to: str | None = ""

    @property
    def dest(self) -> str:
        """argparse's name for it (its attribute on the parsed namespace)."""
        if "dest" in self.options:
            return str(self.options["dest"])
        long = next((f for f in self.flags if f.startswith("--")), self.flags[0])
        return long.lstrip("-").replace("-", "_")

    @property
    def key(self) -> str | None:
        """The request's key it is sent as, None when it is not sent."""
        return None if self.to is None else self.to or self.dest


def arg(*flags: str, to: str | None = "", **options: Any) -> Argument:
    return Argument(flags, options, to)


class Command(NamedTuple):
    """One control command. `kind` is READS, CHANGES or LOCAL; a command with `actions` (its
    wire form carries "action") gives each action its own kind, and `default_action` is the one
    an absent "action" means. `cli`: tablectl has a subcommand for it (`debug` is asked by
    `debug-bundle`, not typed); `wire`: the daemon answers it. `beside`: it reads only what is
    stored, so it is answered beside the game, on the socket's handler thread, never queued for
    the game thread (service/registry.py `Commands.beside`)."""

    name: str
    help: str
    kind: str = READS
    arguments: tuple[Argument, ...] = ()
    actions: Mapping[str, str] = NONE
    default_action: str | None = None
    usage: str | None = None
    cli: bool = True
    beside: bool = False
    printer: str = "pairs"
    """How tablectl shows the answer: a name in cli/show.py's PRINTERS (a test checks each)."""

    @property
    def wire(self) -> bool:
        return self.kind != LOCAL or any(kind != LOCAL for kind in self.actions.values())

    def request(self, values: Mapping[str, object]) -> dict[str, object]:
        """The request for these parsed arguments (by `dest`): each sent one under its key."""
        body: dict[str, object] = {"cmd": self.name}
        for argument in self.arguments:
            key, value = argument.key, values.get(argument.dest)
            if key is not None and value is not None:
                body[key] = value
        return body

    def kind_of(self, action: str | None) -> str | None:
        """What one request does: READS, CHANGES, LOCAL, or None for an action it does not have."""
        if not self.actions:
            return self.kind
        chosen = self.default_action if action is None else action
        return self.actions.get(chosen) if chosen is not None else None


COMMANDS: list[Command] = [
    Command("status", "the table's phase, game, seats and totals, its hardware and priority"),
    Command("start", "start the chosen game with the seats that joined (and the bots)", CHANGES),
    Command("abort", "end the match in progress, back to the lobby", CHANGES),
    Command("next", "skip the rest of the round result: the next round counts down", CHANGES),
    Command("scores", "the current match: scores round by round, totals, winners",
            printer="scores"),
    Command("seats", "the seats that joined, how many bots, how many seats are wired",
            printer="seats"),
    Command("inputs", "what reached the engine, with each edge's kernel time", printer="inputs"),
    Command("decisions", "the engine's decisions since a cursor, each once (a bench's reader)", cli=False),
    Command("new", "choose the next game", CHANGES, usage="tablectl new GAME [KEY=VALUE ...]", arguments=(
        arg("game", nargs="?", help="the game (an unknown one is refused, naming the games)"),
        arg("options", nargs="*", metavar="KEY=VALUE", help="the game's options, e.g. rounds=3"))),
    Command("bots", "how many bots join the next match", CHANGES, arguments=(
        arg("count", type=bot_count, help=f"0 to {MAX_SEATS - 1}, at most the free seats"),
        arg("--level", default="medium", choices=BOT_LEVELS,
            help="how well they play: easy, medium (the default) or hard"))),
    Command("seat", "seat a player by name at a seat, in the lobby (no name: a guest)", CHANGES,
            usage="tablectl seat N [NAME]", arguments=(
        arg("seat", type=seat_number, help="the seat, numbered from 1 as on the table"),
        arg("name", nargs="?", help="the player's name (a known one, or a new one: added when the match "
                                    "starts); none: the seat plays as a guest"))),
    Command("players", "the players the table knows: list, add, rename, merge, remove", CHANGES,
            actions={"list": READS, "add": CHANGES, "rename": CHANGES, "merge": CHANGES, "remove": CHANGES},
            default_action="list", beside=True, printer="players",
            usage="tablectl players [list [--removed] | add NAME | rename NAME NEW | merge NAME INTO | "
                  "remove NAME]", arguments=(
                arg("action", nargs="?", choices=("list", "add", "rename", "merge", "remove"), default="list",
                    help="list (the default), add a player, rename one, merge one into another (both "
                         "histories kept), remove one (their past matches kept)"),
                arg("name", nargs="?", help="add, rename, merge, remove: the player's name"),
                arg("other", nargs="?", metavar="NEW|INTO",
                    help="rename: the new name; merge: the player NAME becomes"),
                arg("--removed", action="store_true",
                    help="list: the removed players too"))),
    Command("debug-bundle", "everything useful for a bug report, in one file", LOCAL, printer="bundle",
            arguments=(
        arg("path", nargs="?", default="table-host-debug.tar.gz", metavar="PATH", to=None,
            help="the tar.gz to write (default: table-host-debug.tar.gz here); never through a "
                 "symbolic link"),)),
    Command("backup", "the journal, the configuration and its last good copy in one archive", LOCAL,
            usage="tablectl backup [FILE] [--keep N]", arguments=(
        arg("path", nargs="?", metavar="FILE", to=None,
            help="the tar.gz to write, or a directory for a dated one (default: the backups directory, "
                 "/var/lib/table-host/backups for the service)"),
        arg("--keep", type=positive, metavar="N", to=None,
            help="then remove the oldest dated archives in that directory beyond N (the daily timer's)"))),
    Command("restore", "check a backup, keep the current state aside, restore it, restart the table", LOCAL,
            usage="tablectl restore FILE", arguments=(
        arg("path", metavar="FILE", to=None, help="an archive `tablectl backup` wrote"),)),
    Command("update", "install the configured source's version beside this one, switch, check; back on "
                      "failure", LOCAL, usage="tablectl update [--yes] | update --rollback", arguments=(
        arg("--rollback", action="store_true", to=None, help="return to the version before, by hand"),
        arg("--yes", action="store_true", to=None,
            help="install without asking (a terminal is asked after the changes are shown)"))),
    Command("debug", "what a debug bundle holds from inside the daemon", cli=False),
    Command("history", "the matches played, newest first, with their rounds", beside=True,
            printer="history", arguments=(
        arg("--limit", type=positive, default=20, metavar="N",
            help=f"the newest N matches (default 20; asked {HISTORY_MAX} at a time)"),
        arg("--before", type=match_number, metavar="MATCH",
            help="only matches older than this one (the next page: what the last one says)"))),
    Command("ratings", "the players' ratings per game; rebuild: every statistic and rating made again "
                       "from the journal", READS, actions={"show": READS, "rebuild": CHANGES},
            default_action="show", beside=True, usage="tablectl ratings [rebuild]", printer="ratings",
            arguments=(
                arg("action", nargs="?", choices=("show", "rebuild"), default="show",
                    help="show (the default): each game's rated players, highest first (mu, sigma "
                         "and mu - 3 sigma, the rating shown); rebuild: empty the figures and make "
                         "them again from the journal, beside the game (tablectl ratings says how "
                         "far it has come)"),)),
    Command("config", "check, get, set or reload the configuration", CHANGES, printer="config",
            actions={"check": LOCAL, "get": READS, "set": LOCAL, "reload": CHANGES}, arguments=(
                arg("action", choices=("check", "get", "set", "reload"),
                    help="check a file, get a setting, set one (then reload), reload the file"),
                arg("arg", nargs="?", metavar="KEY|PATH", to="key",
                    help="check: a file to check; get, set: a dotted key (inputs.seats.1.slap)"),
                arg("value", nargs="?", metavar="VALUE", to=None,
                    help="set: the new value, as TOML (4.5, true, \"text\")"),
                arg("--file", to=None, help="check, set: the configuration file (default: the daemon's)"),
                arg("--create", action="store_true", to=None,
                    help="set: no file yet: start one from the built-in 4-seat wiring, emulated"))),
    Command("firmware", "the LED controller's firmware: its version and this table-host's; flash puts "
                        "this one on it", CHANGES,
            actions={"status": READS, "flash": LOCAL, "pause": CHANGES, "resume": CHANGES},
            default_action="status", usage="tablectl firmware [flash [--force]] [--port PATH]",
            printer="firmware", arguments=(
                arg("action", nargs="?", choices=("status", "flash"), default="status",
                    help="status (the default): both versions and whether they match; flash: copy this "
                         "table-host's firmware to the controller (as root: sudo), reset it, check it"),
                arg("--port", metavar="PATH", to=None,
                    help="the controller's serial port (default: [centre] port, /dev/table-led)"),
                arg("--force", action="store_true", to=None,
                    help="flash: copy the firmware even if the controller runs this version already"))),
    Command("selftest", "is the box wired right? probe every part, then walk the seats", CHANGES,
            actions={"start": CHANGES, "abort": CHANGES, "status": READS}, default_action="status",
            printer="selftest",
            arguments=(
                arg("--probe", action="store_true", to="probe_only",
                    help="the parts only, no walk (scripts, CI)"),
                arg("--seats", type=seat_list, help="walk only these seats, e.g. 1,3"),
                arg("--timeout", type=seconds, default=10.0, metavar="S", to="timeout_s",
                    help="seconds to press each control (default 10)"),
                arg("--abort", action="store_true", to=None, help="stop the running self-test"),
                arg("--report", action="store_true", to=None,
                    help="the running or last self-test's report"))),
]
BY_NAME: dict[str, Command] = {c.name: c for c in COMMANDS}


def declare(command: Command) -> None:
    """One more command (a test's, or a component's own): the parser, the completion, the access
    check and the daemon's dispatch all follow."""
    if command.name in BY_NAME:
        raise ValueError(f"command {command.name!r} is declared already")
    COMMANDS.append(command)
    BY_NAME[command.name] = command


def wire() -> list[str]:
    """The commands the daemon answers."""
    return [c.name for c in COMMANDS if c.wire]


def read_only() -> list[str]:
    """Commands that change nothing whatever their arguments: open to every peer that can connect."""
    return [c.name for c in COMMANDS if c.wire and not c.actions and c.kind == READS]


def reads_only(body: Mapping[str, Any]) -> bool:
    """The request changes nothing (anything unknown counts as a change: it needs an admin).
    `body` as a client sent it, not yet checked: its values are `Any`."""
    command = BY_NAME.get(body.get("cmd"))  # type: ignore[arg-type]
    return command is not None and command.kind_of(body.get("action")) == READS


def add_subcommands(sub: "argparse._SubParsersAction[argparse.ArgumentParser]",
                    parents: list[argparse.ArgumentParser]) -> None:
    """tablectl's subcommands, in the order above, each with its help and arguments."""
    for command in COMMANDS:
        if not command.cli:
            continue
        parser = sub.add_parser(command.name, parents=parents, help=command.help,
                                usage=command.usage or None)  # None: argparse's own
        for argument in command.arguments:
            parser.add_argument(*argument.flags, **argument.options)
