"""Manual pages for `table-host` and `tablectl`, generated from their own parsers (argparse-manpage),
so that `man tablectl` can never fall behind the commands; the sections a parser does not know
(examples, exit status, environment, files) are written here. install.sh writes both:

    python -m firmware_host.cli.manpages DIR      DIR/table-host.1 and DIR/tablectl.1
"""

from __future__ import annotations

import sys
from pathlib import Path

from .completion import PROGRAMS, parser_of

EXAMPLES = {
    "table-host": [
        ("table-host --version", "the version, the commit it was installed from, the Python, the LED "
                                 "controller's firmware"),
        ("table-host run --emulate --ui textual", "the table on a laptop, drawn in the terminal"),
        ("table-host simulate --game {game} --players 3 --rounds 5 --seed 1", "bots play five rounds"),
        ("table-host scenario deal.toml", "a scenario file played and checked against what it "
                                          "expects (docs/scenarios.md)"),
        ("table-host bench startup", "how fast the commands start, against their targets"),
    ],
    "tablectl": [
        ("tablectl status", "the table's phase, game, seats, version and hardware"),
        ("tablectl new {game} rounds=3", "choose the next game, with an option"),
        ("tablectl bots 2 --level hard", "two bots join the next match"),
        ("tablectl --json history --limit 5", "the newest five matches, as one JSON object"),
        ("sudo tablectl backup", "the journal and configuration in /var/lib/table-host/backups"),
        ("sudo tablectl restore /var/lib/table-host/backups/table-host-backup-20261127-040000.tar.gz",
         "back to that day's state (the current one is kept aside)"),
        ("sudo tablectl update", "the configured source's newest version, switched back on any failure"),
        ("sudo tablectl update --rollback", "back to the version before"),
        ("sudo tablectl firmware flash", "put this table-host's firmware on the LED controller"),
    ],
}

EXIT_STATUS = {
    "table-host": [("0", "done; a bench met its targets"),
                   ("1", "a bench missed a target, or a scenario's expectation failed"),
                   ("2", "bad input: an unknown game or option, a broken file (one line names it)"),
                   ("69", "run: the hardware the configuration names cannot be opened")],
    "tablectl": [("0", "the table did it"),
                 ("1", "the table refused, is not running, or the backup, restore or update failed "
                       "(one line says why)"),
                 ("2", "a bad command line, refused before the table is asked")],
}

ENVIRONMENT = {
    "table-host": [
        ("CONFIGURATION_DIRECTORY, STATE_DIRECTORY, RUNTIME_DIRECTORY",
         "the service's directories (systemd sets them); else the XDG ones below"),
        ("XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_RUNTIME_DIR",
         "a table started by hand keeps its configuration, matches and socket there"),
        ("TABLE_HOST_SOCKET", "the control socket's path"),
        ("NOTIFY_SOCKET, WATCHDOG_USEC", "sd_notify and the watchdog, set by systemd"),
    ],
    "tablectl": [
        ("TABLE_HOST_SOCKET", "the socket to talk to; else RUNTIME_DIRECTORY's, else your own table's, "
                              "else the service's /run/table-host/control.sock"),
        ("CONFIGURATION_DIRECTORY, STATE_DIRECTORY",
         "where config, backup and restore find the configuration and the journal"),
    ],
}

FILES = [
    ("/etc/table-host/table.toml", "the configuration (tablectl config)"),
    ("/var/lib/table-host/table.db", "the journal: every match, its seats, rounds and actions"),
    ("/var/lib/table-host/last-good.toml", "the last configuration that loaded"),
    ("/var/lib/table-host/backups/", "the daily backups (table-backup.timer)"),
    ("/opt/table-host/", "the installed versions and the documentation (doc/docs/keeping.md)"),
]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("-", "\\-")


def _items(rows: list[tuple[str, str]], bold: bool = True) -> str:
    out = []
    for term, text in rows:
        out += [".TP", f"\\fB{_escape(term)}\\fR" if bold else _escape(term), _escape(text)]
    return "\n".join(out)


def page(prog: str) -> str:
    """One manual page, in roff."""
    from argparse_manpage.manpage import Manpage

    from .. import __version__
    from ..engine.game import names
    from .common import with_games

    with_games()
    parser = parser_of(prog)
    manpage = Manpage(parser, {"project_name": "table-host", "version": __version__,
                               "description": (parser.description or "").rstrip("."),
                               "manual_title": "table-host manual", "manual_section": 1},
                      format="single-commands-section")
    game = next(iter(names()))  # the first in the menu: shared code names no game of its own
    examples = "\n".join(f".TP\n.B {_escape(cmd.format(game=game))}\n{_escape(what)}"
                         for cmd, what in EXAMPLES[prog])
    manpage.add_section("examples", ">", examples)
    manpage.add_section("exit status", ">", _items(EXIT_STATUS[prog]))
    manpage.add_section("environment", ">", _items(ENVIRONMENT[prog]))
    manpage.add_section("files", ">", _items(FILES))
    other = "tablectl(1)" if prog == "table-host" else "table-host(1)"
    manpage.add_section("see also", ">", _escape(f"{other}, /opt/table-host/doc/README.md, "
                                                 "/opt/table-host/doc/docs/keeping.md"))
    return str(manpage)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m firmware_host.cli.manpages DIR", file=sys.stderr)
        return 2
    directory = Path(args[0])
    directory.mkdir(parents=True, exist_ok=True)
    for prog in PROGRAMS:
        (directory / f"{prog}.1").write_text(page(prog), encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
