"""Bash completion for `table-host` and `tablectl`, generated from their own parsers.

shtab turns an argparse parser into a completion script, so the completion can
never fall behind the commands. install.sh writes one script per program:

    python -m firmware_host.cli.completion tablectl > .../bash-completion/completions/tablectl
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

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


def action_of(parser: argparse.ArgumentParser, sub: str, dest: str) -> argparse.Action | None:
    """The argument `dest` of subcommand `sub` (None when the parser has no such argument)."""
    for action in subcommands(parser).get(sub, argparse.ArgumentParser())._actions:
        if action.dest == dest:
            return action
    return None


def bash_words(name: str, words: Sequence[str]) -> dict[str, Any]:
    """A shtab completion (`action.complete`) offering fixed words."""
    body = f'_table_host_{name}() {{\n  compgen -W "{" ".join(words)}" -- "$1"\n}}'
    return {"bash": f"_table_host_{name}", "preamble": {"bash": body}}


def bash_options(name: str, or_games: bool) -> dict[str, Any]:
    """A game's options as KEY= for the game named earlier on the line (`new GAME`,
    `simulate --game GAME`); before a game is named, the games themselves (or, for
    --option, every game's options)."""
    from ..engine.options import GAMES, SPECS
    from .common import with_games

    with_games()
    cases = "\n".join(f'    {game}) compgen -W "{" ".join(f"{k}=" for k in SPECS[game])}" -- "$1" ;;'
                      for game in GAMES)
    every = sorted({f"{k}=" for game in GAMES for k in SPECS[game]})
    fallback = " ".join(GAMES) if or_games else " ".join(every)
    body = (f'_table_host_{name}() {{\n  local game="" i\n'
            f'  for ((i = 1; i < COMP_CWORD; i++)); do\n'
            f'    case "${{COMP_WORDS[i]}}" in {"|".join(GAMES)}) game="${{COMP_WORDS[i]}}" ;; esac\n'
            f'  done\n  case "$game" in\n{cases}\n    *) compgen -W "{fallback}" -- "$1" ;;\n  esac\n}}')
    return {"bash": f"_table_host_{name}", "preamble": {"bash": body}}


def with_completions(prog: str, parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Game names, their options and bot levels where an argument takes them but has no
    `choices` (its own message for a wrong one is clearer than argparse's)."""
    from ..engine.options import GAMES
    from ..table.bot_players import Level
    from .common import with_games

    with_games()
    wanted: dict[tuple[str, str], dict[str, Any]] = {}
    if prog == "tablectl":
        wanted[("new", "game")] = wanted[("new", "options")] = bash_options("new_words", or_games=True)
    else:
        wanted[("simulate", "game")] = bash_words("games", GAMES)
        wanted[("simulate", "option")] = bash_options("options", or_games=False)
        wanted[("simulate", "bots")] = bash_words("levels", [level.value for level in Level])
    for (sub, dest), complete in wanted.items():
        action = action_of(parser, sub, dest)
        if action is None:
            raise SystemExit(f"completion: {prog} {sub} has no argument {dest!r}")
        action.complete = complete  # type: ignore[attr-defined]
    return parser


def script(prog: str) -> str:
    """The bash completion script for one program."""
    import shtab

    text = shtab.complete(with_completions(prog, parser_of(prog)), shell="bash")
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
