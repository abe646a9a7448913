"""Two checkouts of one user run one table (docs/persistence.md): a table started by hand keeps its
matches, socket and configuration per user, never per checkout, so a second clone resumes the
first's match and `tablectl` from either finds it (issue 33, item 8: the documents said "never
share a match" while the code shared it; the code is right, the documents now say so)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WHERE = ("import json; from firmware_host.system import paths; "
         "print(json.dumps([str(paths.state_database()), str(paths.control_socket()), "
         "str(paths.directory('CONFIGURATION_DIRECTORY')), paths.__file__]))")


def where(checkout: Path, env: dict[str, str]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", WHERE], cwd=checkout, capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(checkout)}, timeout=60, check=True)
    return json.loads(done.stdout)


def test_a_second_checkout_of_one_user_finds_the_same_table(tmp_path: Path) -> None:
    second = tmp_path / "second"
    shutil.copytree(ROOT / "firmware_host", second / "firmware_host",
                    ignore=shutil.ignore_patterns("__pycache__"))
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("XDG_") and k not in ("CONFIGURATION_DIRECTORY", "STATE_DIRECTORY",
                                                    "RUNTIME_DIRECTORY", "TABLE_HOST_SOCKET")}
    env |= {"HOME": str(home), "XDG_RUNTIME_DIR": str(tmp_path / "run")}
    first_says, second_says = where(ROOT, env), where(second, env)
    assert first_says[3].startswith(str(ROOT)) and second_says[3].startswith(str(second))  # two packages
    assert first_says[:3] == second_says[:3] == [
        str(home / ".local/state/table-host/table.db"), str(tmp_path / "run/table-host/control.sock"),
        str(home / ".config/table-host")]
    other = {**env, "HOME": str(tmp_path / "another")}  # another user (another home): another table
    assert where(second, other)[0] == str(tmp_path / "another/.local/state/table-host/table.db")
