"""The engine, the table's core and the games' registry import without any of the table's heavy
libraries: a simulation, a scenario, a test of the rules loads no GPIO, no pydantic, no imaging
and no terminal UI (a game's screens and words load only when first drawn)."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from typing import Any

import pytest

import firmware_host.engine
import firmware_host.games
import firmware_host.table

HEAVY = ("gpiozero", "pydantic", "PIL", "luma", "textual", "rich")


def modules(package: object) -> list[str]:
    return [m.name for m in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]  # type: ignore[attr-defined]


def pure(package: object) -> list[str]:
    """The games' registry (each game's entry, rules and sight, as `import firmware_host.games`
    loads them)."""
    return [f"{package.__name__}.{m.name}{part}" for m in pkgutil.iter_modules(package.__path__)  # type: ignore[attr-defined]
            for part in ("", ".rules", ".sight")]


WHOLE = [(firmware_host.engine, modules), (firmware_host.table, modules), (firmware_host.games, pure)]


@pytest.mark.parametrize(("package", "listed"), WHOLE, ids=["engine", "table", "games"])
def test_every_module_imports_without_the_heavy_libraries(package: object, listed: Any) -> None:
    names = listed(package)
    assert len(names) >= 5  # the walk found the package's modules
    code = ("import importlib, json, sys\n"
            f"for name in {names!r}:\n    importlib.import_module(name)\n"
            f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({list(HEAVY)!r}))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_the_check_sees_a_heavy_library_when_one_is_loaded() -> None:
    """The same check on a module that does load one: it must say so."""
    code = ("import json, sys\nimport firmware_host.config\n"
            f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({list(HEAVY)!r}))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "pydantic" in json.loads(result.stdout)
