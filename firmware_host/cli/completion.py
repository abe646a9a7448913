"""Bash completion for `table-host` and `tablectl`, generated from their own parsers.

shtab turns an argparse parser into a completion script, so the completion can
never fall behind the commands. install.sh writes one script per program:

    python -m firmware_host.cli.completion tablectl > .../bash-completion/completions/tablectl
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

PROGRAMS = ("table-host", "tablectl")


def parser_of(prog: str) -> argparse.ArgumentParser:
    from . import ctl
    from . import host as cli

    builders: dict[str, Callable[[], argparse.ArgumentParser]] = {
        "table-host": cli.build_parser, "tablectl": ctl.build_parser}
    if prog not in builders:
        raise SystemExit(f"completion: no program {prog!r} (choose {', '.join(PROGRAMS)})")
    return builders[prog]()


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name (empty when it has none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def describe_subcommands(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """`PROG SUB --help` opens with the line `PROG --help` lists for SUB, when SUB has no
    description of its own."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if not sub.description and helps.get(name):
                    sub.description = helps[name][:1].upper() + helps[name][1:] + "."
    return parser


def script(prog: str) -> str:
    """The bash completion script for one program."""
    import shtab

    text = shtab.complete(parser_of(prog), shell="bash")
    return text if text.endswith("\n") else text + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print(f"usage: python -m firmware_host.cli.completion {{{','.join(PROGRAMS)}}}", file=sys.stderr)
        return 2
    sys.stdout.write(script(args[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
