"""The rules and the game import without any of the table's heavy libraries: a simulation, a
scenario, a test of the rules loads no GPIO, no pydantic, no imaging and no terminal UI."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import pytest

import firmware_host.engine
import firmware_host.table

HEAVY = ("gpiozero", "pydantic", "PIL", "luma", "textual", "rich")


def modules(package: object) -> list[str]:
    return [m.name for m in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]  # type: ignore[attr-defined]


@pytest.mark.parametrize("package", [firmware_host.engine, firmware_host.table], ids=["engine", "game"])
def test_every_module_imports_without_the_heavy_libraries(package: object) -> None:
    names = modules(package)
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
