"""The rails that catch a wrong turn: the import contracts (pyproject's [tool.importlinter]) and
the string imports they cannot see.

The planted experiment (issue 30) is kept here so that it stays true: each kind of wrong import
is written into a temporary copy of the package, one at a time, and the check meant to catch it
must fail on the copy, naming the planted import. A contract that stops catching its kind, or a
new room a contract forgets, fails this file rather than passing quietly.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "firmware_host"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

STRING_IMPORTS = {"import_module", "__import__", "spec_from_file_location", "module_from_spec",
                  "resolve_name", "run_module", "run_path", "exec", "eval"}
"""Calls that load a module named by a string: import-linter reads `import` statements only, so an
edge made by one of these is invisible to every contract."""

ALLOWED_STRING_IMPORTS = {
    ("firmware_host/bench/suite.py", "import_module"):
        "a bench's own module (bench/<name>.py), loaded when that bench runs so that `table-host "
        "--version` loads none; bench is a top room, so the hidden edge is bench -> bench",
    ("firmware_host/bench/attackers.py", "import_module"):
        "an attacker process loads what its attack needs (aiohttp, or a bench module) before it gives "
        "up root, after which the interpreter's files may be out of reach; bench -> bench or aiohttp",
}
"""Each string import the package may make, and why it cannot hide a wrong arrow."""


@dataclass(frozen=True)
class StringImport:
    path: str
    line: int
    call: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.call}(...)"


def string_imports(root: Path) -> Iterator[StringImport]:
    """Every call in the package that imports by a string (literal or computed)."""
    for path in sorted((root / PACKAGE).rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in STRING_IMPORTS:
                yield StringImport(path.relative_to(root).as_posix(), node.lineno, name)


def unexplained(root: Path) -> list[str]:
    return [str(s) for s in string_imports(root) if (s.path, s.call) not in ALLOWED_STRING_IMPORTS]


def test_no_string_import_outside_the_allowlist() -> None:
    assert unexplained(ROOT) == []


def test_every_allowed_string_import_is_still_there() -> None:
    """An allowance whose import went stays no longer than the import."""
    found = {(s.path, s.call) for s in string_imports(ROOT)}
    assert set(ALLOWED_STRING_IMPORTS) <= found


@dataclass(frozen=True)
class Plant:
    """One wrong import: `line` appended to `module` (a path under the package); `caught_by` is the
    contract id that must break, or "string-imports"."""

    kind: str
    module: str
    line: str
    caught_by: str
    shows: str
    """What the failing check's report must name (the planted edge)."""


PLANTS = [
    # what lint-imports caught before
    Plant("the engine imports the table", "engine/match.py", "from ..table import arbiter",
          "engine-alone", "firmware_host.engine.match -> firmware_host.table.arbiter"),
    Plant("the table imports the service", "table/machine.py", "from ..service import loop",
          "layers", "firmware_host.table.machine -> firmware_host.service.loop"),
    Plant("the configuration imports a device", "config/checks.py", "from ..devices import power",
          "layers", "firmware_host.config.checks -> firmware_host.devices.power"),
    Plant("a frontend imports another (sideways)", "ui/plain.py", "from ..web import names",
          "layers", "firmware_host.ui.plain -> firmware_host.web.names"),
    Plant("the control socket imports a device (sideways)", "control/server.py",
          "from ..devices import power", "layers",
          "firmware_host.control.server -> firmware_host.devices.power"),
    Plant("a real driver imports an emulated one", "devices/inputs/pins.py",
          "from ..emulated import mcp23017", "board-chooses",
          "firmware_host.devices.inputs.pins -> firmware_host.devices.emulated.mcp23017"),
    Plant("the service imports a frontend", "service/status.py", "from ..web import names",
          "one-composition-root", "firmware_host.service.status -> firmware_host.web.names"),
    # what the purity test caught (at run time, only in the rooms it loads)
    Plant("the engine imports imaging", "engine/options.py", "import PIL", "engine-alone",
          "firmware_host.engine.options -> PIL"),
    Plant("the table imports a terminal library", "table/cues.py", "import rich", "table-pure",
          "firmware_host.table.cues -> rich"),
    Plant("a game's rules import a terminal UI", "games/dice/rules.py", "import textual", "games-pure",
          "firmware_host.games.dice.rules -> textual"),
    # what passed every check before
    Plant("the engine imports pydantic", "engine/round.py", "import pydantic", "engine-alone",
          "firmware_host.engine.round -> pydantic"),
    Plant("the table imports gpiozero", "table/presses.py", "import gpiozero", "table-pure",
          "firmware_host.table.presses -> gpiozero"),
    Plant("the table imports aiohttp", "table/arbiter.py", "import aiohttp", "table-pure",
          "firmware_host.table.arbiter -> aiohttp"),
    Plant("one game imports another", "games/classic/bot.py", "from ..dice import rules as dice_rules",
          "games-apart", "firmware_host.games.classic.bot -> firmware_host.games.dice.rules"),
    Plant("the service imports an emulated device", "service/keys.py",
          "from ..devices.emulated.keyboard import KeyboardSeats as _K", "board-chooses",
          "firmware_host.service.keys -> firmware_host.devices.emulated.keyboard"),
    Plant("devices/i2cload.py imports an emulated module", "devices/i2cload.py",
          "from .emulated import oled as _oled", "board-chooses",
          "firmware_host.devices.i2cload -> firmware_host.devices.emulated.oled"),
    Plant("tablectl imports the service", "cli/ctl.py", "from ..service import daemon as _daemon",
          "tablectl-light", "firmware_host.cli.ctl -> firmware_host.service.daemon"),
    Plant("a string import (literal name)", "engine/codec.py",
          "import importlib\n_late = importlib.import_module('firmware_host.service.daemon')",
          "string-imports", "firmware_host/engine/codec.py"),
    Plant("a string import (computed name, __import__)", "views/seat.py",
          "_late = __import__('firmware_host.' + 'web.server')", "string-imports",
          "firmware_host/views/seat.py"),
]


def contract_ids() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {c["id"] for c in config["tool"]["importlinter"]["contracts"]}


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package and its contracts, copied: plants go here, never into the tree."""
    where = tmp_path_factory.mktemp("planted")
    shutil.copytree(ROOT / PACKAGE, where / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", where / "pyproject.toml")
    return where


def lint(copy: Path, contract: str) -> subprocess.CompletedProcess[str]:
    """lint-imports on the copy (its package first on the path, so not the installed tree)."""
    env = {**os.environ, "PYTHONPATH": str(copy)}
    return subprocess.run([str(LINT_IMPORTS), "--no-logo", "--cache-dir", str(copy / ".cache"),
                           "--contract", contract], cwd=copy, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_copy_keeps_every_contract(copy: Path) -> None:
    """Unplanted, the copy passes: each failure below is its plant's doing."""
    for contract in sorted(contract_ids()):
        result = lint(copy, contract)
        assert result.returncode == 0, result.stdout + result.stderr
    assert unexplained(copy) == []


def test_every_kind_is_planted_once_and_every_contract_catches_one() -> None:
    assert len({p.kind for p in PLANTS}) == len(PLANTS)
    assert {p.caught_by for p in PLANTS} == contract_ids() | {"string-imports"}


@pytest.mark.parametrize("plant", PLANTS, ids=[p.kind for p in PLANTS])
def test_a_planted_wrong_import_is_caught(copy: Path, plant: Plant) -> None:
    target = copy / PACKAGE / plant.module
    original = target.read_text()
    target.write_text(f"{original}\n{plant.line}  # planted\n")
    try:
        if plant.caught_by == "string-imports":
            assert any(plant.shows in found for found in unexplained(copy))
        else:
            result = lint(copy, plant.caught_by)
            assert result.returncode == 1, result.stdout + result.stderr
            assert "BROKEN" in result.stdout
            assert plant.shows in result.stdout, result.stdout
    finally:
        target.write_text(original)
