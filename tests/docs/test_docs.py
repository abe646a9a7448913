"""The documentation stands alone and keeps up: every option, every command, completion, licence."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from firmware_host.cli import completion, ctl
from firmware_host.cli import host as cli
from firmware_host.engine.options import SPECS

ROOT = Path(__file__).resolve().parents[2]
RULES = (ROOT / "docs" / "rules.md").read_text()
README = (ROOT / "README.md").read_text()
PARSERS = {"table-host": cli.build_parser, "tablectl": ctl.build_parser}


def _shown(default: object) -> str | None:
    """A default as the options table writes it; None where the table says it in words."""
    if isinstance(default, bool):
        return "yes" if default else "no"
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    if isinstance(default, int | float):
        return str(default)
    if isinstance(default, str):
        return f"`{default}`"
    return None


def _options_table() -> dict[tuple[str, str], str]:
    rows = re.findall(r"^\| (\w+) \| `(\w+)` \| ([^|]+) \|", RULES, flags=re.M)
    return {(game, name): default.strip() for game, name, default in rows}


def test_docs_rules_lists_every_option_of_every_game_with_its_default() -> None:
    table = _options_table()
    expected = {(game, name) for game, specs in SPECS.items() for name in specs}
    assert set(table) == expected, f"docs/rules.md options table: missing {expected - set(table)}, " \
                                   f"unknown {set(table) - expected}"
    for (game, name), cell in table.items():
        shown = _shown(SPECS[game][name].default)
        if shown is not None:
            assert cell == shown, f"docs/rules.md: {game} {name} defaults to {shown}, the table says {cell}"


def test_docs_rules_describes_each_option_in_its_games_section() -> None:
    sections = {"classic": "## Ligretto\n", "dice": "## Dice Ligretto", "domino": "## Ligretto Domino",
                "crazy": "## Ligretto Crazy"}
    for game, heading in sections.items():
        body = RULES.split(heading, 1)[1].split("\n## ", 1)[0]
        for name in SPECS[game]:
            assert f"`{name}" in body, f"docs/rules.md, {heading.strip()}: option {name} is not explained"


def _subparsers(parser: argparse.ArgumentParser) -> tuple[dict[str, argparse.ArgumentParser], dict[str, str]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return dict(action.choices), helps
    return {}, {}


@pytest.mark.parametrize("prog", list(PARSERS))
def test_every_subcommand_has_a_help_line_and_a_description(prog: str) -> None:
    subs, helps = _subparsers(PARSERS[prog]())
    assert subs
    for name, sub in subs.items():
        assert helps.get(name, "").strip(), f"{prog} {name}: no help= (it is missing from {prog} --help)"
        assert (sub.description or "").strip(), f"{prog} {name}: no description for {prog} {name} --help"


@pytest.mark.parametrize("prog", list(PARSERS))
def test_the_readme_command_table_names_every_subcommand(prog: str) -> None:
    table = "\n".join(line for line in README.splitlines() if line.startswith("| `"))
    subs, _ = _subparsers(PARSERS[prog]())
    rows = [line for line in table.splitlines() if f"`{prog}" in line.split("|")[1]]
    for name in subs:
        mentioned = any(re.search(rf"(`{prog} |[{{,]){re.escape(name)}[ ,}}`\]]", row) for row in rows)
        assert mentioned, f"README.md command table: no row names `{prog} {name}`"


def _complete(prog: str, words: list[str]) -> list[str]:
    """What bash offers after `words` (the last one being completed), from the generated script."""
    func = "_shtab_" + prog.replace("-", "_")
    array = " ".join(f"'{w}'" for w in words)
    shell = (f"source /dev/stdin; COMP_WORDS=({array}); COMP_CWORD={len(words) - 1}; "
             f"{func}; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    out = subprocess.run(["bash", "-c", shell], input=completion.script(prog), capture_output=True,
                         text=True, timeout=30, check=True)
    return out.stdout.split()


@pytest.mark.parametrize("prog", list(PARSERS))
def test_bash_completion_offers_every_subcommand_and_its_options(prog: str) -> None:
    subs, _ = _subparsers(PARSERS[prog]())
    assert set(_complete(prog, [prog, ""])) >= set(subs)
    for name, sub in subs.items():
        options = {s for a in sub._actions for s in a.option_strings if s.startswith("--")}
        assert set(_complete(prog, [prog, name, "--"])) >= options, f"{prog} {name}"


def test_bash_completion_offers_an_arguments_choices() -> None:
    assert _complete("tablectl", ["tablectl", "config", ""]) == ["check", "get", "set", "reload"]
    assert "arbitration" in _complete("table-host", ["table-host", "bench", "a"])


def test_bash_completion_offers_games_their_options_and_bot_levels() -> None:
    games = ["classic", "dice", "domino", "crazy"]
    assert _complete("tablectl", ["tablectl", "new", ""]) == games
    assert _complete("tablectl", ["tablectl", "new", "d"]) == ["dice", "domino"]
    assert _complete("tablectl", ["tablectl", "new", "dice", ""]) == [f"{k}=" for k in SPECS["dice"]]
    assert _complete("tablectl", ["tablectl", "new", "classic", "rounds=3", "p"]) == ["pro_row="]
    assert _complete("tablectl", ["tablectl", "bots", "2", "--level", ""]) == ["easy", "medium", "hard"]
    assert _complete("table-host", ["table-host", "simulate", "--game", ""]) == games
    assert _complete("table-host", ["table-host", "simulate", "--game", "domino", "--option", ""]) == [
        f"{k}=" for k in SPECS["domino"]]
    assert _complete("table-host", ["table-host", "simulate", "--bots", ""]) == [
        "instant", "easy", "medium", "hard"]
    assert _complete("table-host", ["table-host", "watch", "--bots", ""]) == ["easy", "medium", "hard"]
    assert _complete("table-host", ["table-host", "watch", "--game", "c"]) == ["classic", "crazy"]


@pytest.mark.parametrize("prog", list(PARSERS))
def test_every_argument_says_what_it_is_for(prog: str) -> None:
    subs, _ = _subparsers(PARSERS[prog]())
    for name, sub in subs.items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            what = action.option_strings[0] if action.option_strings else action.dest
            assert (action.help or "").strip(), f"{prog} {name} {what}: no help= (--help says nothing of it)"


def test_the_help_names_what_a_command_does() -> None:
    subs, helps = _subparsers(ctl.build_parser())
    assert "set" in helps["config"] and "set" in subs["config"].format_help().split("positional")[0]
    assert "--create" in subs["config"].format_help()
    assert "newest N matches" in " ".join(subs["history"].format_help().split())
    bundle = subs["debug-bundle"].format_help()
    assert "PATH" in bundle and "symbolic link" in bundle


def test_completion_module_writes_the_script_for_a_program() -> None:
    out = subprocess.run([sys.executable, "-m", "firmware_host.cli.completion", "tablectl"],
                         capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0
    assert out.stdout.endswith("complete -o bashdefault -F _shtab_tablectl tablectl\n")
    bad = subprocess.run([sys.executable, "-m", "firmware_host.cli.completion", "nope"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode != 0 and "no program 'nope'" in bad.stderr


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard"], capture_output=True, text=True, check=True)
    return [ROOT / f for f in out.stdout.split("\0") if f and (ROOT / f).is_file()]


def test_nothing_in_the_repository_points_outside_it() -> None:
    outside = re.compile(r"\.\./shared|shared/(RULES|DESIGN|seeds|virtual-pi-notes)"
                         r"|\b(RULES|DESIGN)\.md|seeds/0")
    found = []
    for path in _tracked():
        if path.suffix in {".png", ".net", ".gz"} or path == Path(__file__):
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        found += [f"{path.relative_to(ROOT)}:{i}" for i, line in enumerate(text.splitlines(), 1)
                  if outside.search(line)]
    assert not found, f"references to files outside the repository: {found}"


def test_the_documents_the_readme_lists_exist() -> None:
    section = README.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^- `([^`]+)`", section, flags=re.M)
    assert "docs/rules.md" in listed
    for name in listed:
        assert (ROOT / name).exists(), f"README.md lists {name}, which is not there"
    for doc in (ROOT / "docs").glob("*.md"):
        assert f"docs/{doc.name}" in listed, f"README.md's documentation list lacks docs/{doc.name}"


def test_the_readme_layout_names_every_top_level_directory() -> None:
    section = README.split("## Layout", 1)[1].split("\n## ", 1)[0]
    assert "(to come)" not in section
    tops = {p.relative_to(ROOT).parts[0] for p in _tracked() if len(p.relative_to(ROOT).parts) > 1}
    for top in sorted(tops - {".ci"}):
        assert re.search(rf"^    {re.escape(top)}/", section, flags=re.M), f"README.md layout lacks {top}/"


def test_the_readme_layout_names_every_room_of_the_package() -> None:
    """After a room is moved or renamed, the layout says so (it listed rules/ and game/ after
    they had become engine/ and table/)."""
    section = README.split("## Layout", 1)[1].split("\n## ", 1)[0]
    package = section.split("\n    firmware_host/", 1)[1]
    package = re.split(r"^    \S", package, maxsplit=1, flags=re.M)[0]
    named = set(re.findall(r"^      (\w+)/", package, flags=re.M))
    rooms = {p.name for p in (ROOT / "firmware_host").iterdir() if (p / "__init__.py").exists()}
    assert named == rooms | {"data"}, f"README.md's layout names {sorted(named)}; the rooms: {sorted(rooms)}"


CITED_ELSEWHERE = {  # other projects' files, cited
    "homeassistant/components/recorder/util.py",  # Home Assistant's (docs/persistence.md)
    "examples/rp2/pio_ws2812.py",  # MicroPython's (docs/led-protocol.md)
}


def test_every_file_the_documents_name_is_there() -> None:
    """A path in backticks (`service/journal.py`, `tests/docs/test_docs.py`) names a file of the
    repository: from the document's folder, the top, the package or the tests. A move that forgets
    a document fails here, not with a reader."""
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted((ROOT / "hardware").glob("**/README.md"))]
    missing = []
    for doc in docs:
        for name in re.findall(r"`([\w./-]+/[\w.-]+\.(?:py|js|toml|css|html|md))`", doc.read_text()):
            if name.startswith("/") or name in CITED_ELSEWHERE:
                continue
            if not any((base / name).is_file() for base in (doc.parent, ROOT, ROOT / "firmware_host",
                                                            ROOT / "tests")):
                missing.append(f"{doc.relative_to(ROOT)}: {name}")
    assert not missing, f"documents name files that are not there: {missing}"


def test_the_license_file_is_the_one_the_package_declares() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]["text"]
    assert declared == "MIT"
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n") and "Permission is hereby granted, free of charge" in text


def test_the_unit_documents_itself_with_the_projects_docs() -> None:
    unit = (ROOT / "systemd" / "table-host.service").read_text()
    uris = re.search(r"^Documentation=(.+)$", unit, flags=re.M)
    assert uris
    for uri in uris[1].split():
        assert uri.startswith("file:/opt/table-host/doc/"), uri
        assert (ROOT / uri.removeprefix("file:/opt/table-host/doc/")).is_file(), uri


def test_the_schematic_code_writes_no_skidl_files(tmp_path: Path) -> None:
    """SKiDL opens skidl_REPL.log and .erc (or <script>.*) wherever it is imported; only an ERC
    run in the same directory used to delete them again."""
    code = ("import os, sys; sys.path[:0] = [sys.argv[1]]; import parts, table; print(os.listdir()); "
            "from firmware_host.config import load_config; "
            "c, _, _ = table.build(load_config(table.BUILDS['4-seat'])); table.netlist(c); "
            "print(os.listdir())")
    run = subprocess.run([sys.executable, "-c", code, str(ROOT / "schematics")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines()[-2:] == ["[]", "[]"]  # after the import, after a build
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert not [p for p in _tracked() if p.suffix in {".erc", ".log"} and "skidl" in p.name.lower()]


def test_the_architecture_lists_every_bench_in_the_order_all_runs_them() -> None:
    """It was: docs/architecture.md's list had no `web` and no `history` (issue 33, item 8)."""
    from firmware_host.bench.suite import BENCHES

    text = (ROOT / "docs" / "architecture.md").read_text()
    listed = re.search(r"`suite\.py` lists the benches \(([^)]*)\)", text)
    assert listed is not None
    assert re.findall(r"`(\w+)`", listed[1]) == list(BENCHES)
