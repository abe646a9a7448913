"""Shared code names no game: outside `firmware_host/games/` (and the benches, whose targets are
set per game, docs/benchmarks.md), no module imports a game's own modules, and no name, string
or page script names a registered game. Docstrings and comments may give a game as an example.
"""

from __future__ import annotations

import ast
import re
from itertools import pairwise
from pathlib import Path

import pytest

from firmware_host.engine.game import names

PACKAGE = Path(__file__).resolve().parents[2] / "firmware_host"
APART = ("games", "bench")
"""The rooms that may name games: the games themselves, and the benches."""


def shared_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] not in APART)


def words(identifier: str) -> list[str]:
    """`crazy_deck`, `DominoCard`, `BOARDS` into their words, lower case."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", identifier)]


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
        # an attribute's docstring: a string statement right after an assignment
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                for before, after in pairwise(stmts):
                    if (isinstance(before, ast.Assign | ast.AnnAssign) and isinstance(after, ast.Expr)
                            and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
                        out.add(id(after.value))
    return out


def naming(source: str, games: tuple[str, ...]) -> list[str]:
    """Where Python source names one of `games`: its imports of their modules, its identifiers,
    its strings (docstrings and comments left out)."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, games)) + r")\b", re.IGNORECASE)
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.ImportFrom):
            module = ("." * node.level) + (node.module or "")
            targets = [module] + [f"{module}.{a.name}" for a in node.names]
            if any(re.search(r"(^|\.)games\.", t) for t in targets):
                found.append(f"line {line}: imports {module}")
        elif isinstance(node, ast.Import):
            found += [f"line {line}: imports {a.name}" for a in node.names if ".games." in a.name]
        idents: list[str] = []
        if isinstance(node, ast.Name):
            idents = [node.id]
        elif isinstance(node, ast.Attribute):
            idents = [node.attr]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            idents = [node.name]
        elif isinstance(node, ast.arg) or (isinstance(node, ast.keyword) and node.arg):
            idents = [node.arg]
        for ident in idents:
            if set(words(ident)) & set(games):
                found.append(f"line {line}: {ident}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            match = pattern.search(node.value)
            if match:
                found.append(f"line {line}: {node.value[:60]!r}")
    return found


def script_naming(text: str, games: tuple[str, ...]) -> list[str]:
    """Where a page's script or style names a game, comments left out."""
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, games)) + r")\b", re.IGNORECASE)
    found = []
    for n, line in enumerate(code.splitlines(), 1):
        line = re.sub(r"(^|\s)//.*$", "", line)
        if pattern.search(line):
            found.append(f"line {n}: {line.strip()[:80]}")
    return found


@pytest.mark.parametrize("path", shared_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_shared_module_names_no_game(path: Path) -> None:
    assert naming(path.read_text(), names()) == []


@pytest.mark.parametrize("path", sorted((PACKAGE / "web" / "static").iterdir()), ids=lambda p: p.name)
def test_the_page_names_no_game(path: Path) -> None:
    assert script_naming(path.read_text(), names()) == []


def test_the_check_finds_a_game_named_in_code() -> None:
    """Planted names are found; the same words in a docstring or a comment are not."""
    planted = ('"""Dice and Domino, as examples."""\n'
               "from ..games.domino.rules import DominoCard  # a comment: crazy\n"
               "from ..games import dice\n"
               "def crazy_deck(classic_round):\n"
               "    return {'classic': 1, 'kind': 'the dice game'}\n"
               "x = 1\n"
               '"""the crazy rounds (an attribute\'s docstring)"""\n')
    assert naming(planted, ("classic", "dice", "domino", "crazy")) == [
        "line 2: imports ..games.domino.rules", "line 3: imports ..games", "line 4: crazy_deck",
        "line 4: classic_round", "line 5: 'classic'", "line 5: 'the dice game'"]
    script = 'const GAME_NAMES = { classic: "Ligretto" };  // dice\n/* domino */ x.kind === "crazy"'
    assert script_naming(script, ("classic", "dice", "domino", "crazy")) == [
        'line 1: const GAME_NAMES = { classic: "Ligretto" };',
        'line 2: x.kind === "crazy"']
