"""Which build this is: the version, the commit it was built from (and whether the tree differed
from it), the Python. The commit is recorded once, when the table is installed or updated
(install.sh and `tablectl update` run `python -m firmware_host.system.build SOURCE`), in a file
inside the installed package: `table-host --version` must start fast (`bench startup`), so it
reads that file and never runs git.

    python -m firmware_host.system.build SOURCE        record SOURCE's commit in this package
    python -m firmware_host.system.build --commit SHA  record SHA (a version built from git archive)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

BUILD_FILE = Path(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "build.json")
"""Written into the installed package, never into a checkout's tree (it is .gitignored anyway)."""


def python_version() -> str:
    """Not `platform.python_version()`: importing platform costs `--version` a few ms."""
    v = sys.version_info
    return f"{v.major}.{v.minor}.{v.micro}"


def recorded(path: Path = BUILD_FILE) -> dict[str, Any]:
    """The build file's record; {} for a checkout run in place (nothing recorded), or one that
    cannot be read (said as not recorded, never a traceback)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def describe(path: Path = BUILD_FILE) -> dict[str, Any]:
    """The build as data: `tablectl status` and `--version --json` carry it."""
    from .. import __version__

    build = recorded(path)
    commit = build.get("commit")
    return {"version": __version__, "commit": commit if isinstance(commit, str) else None,
            "modified": bool(build.get("modified")), "python": python_version()}


def commit_line(build: dict[str, Any]) -> str:
    """`commit 41aee04c1e2f`, `commit 41aee04c1e2f, modified` (the tree differed from it), or why
    there is none."""
    if not build.get("commit"):
        return "commit not recorded (run from a checkout: install.sh and tablectl update record it)"
    return f"commit {build['commit'][:12]}" + (", modified" if build.get("modified") else "")


def _git(source: Path, *args: str) -> str | None:
    import subprocess  # here, not at the top: `--version` reads the record and never runs git

    try:
        done = subprocess.run(["git", "-C", str(source), *args], capture_output=True, text=True,
                              timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def record(source: Path | None, path: Path = BUILD_FILE, commit: str | None = None) -> dict[str, Any]:
    """Ask git about `source` (the tree this package was installed from) and write the record,
    atomically; or write `commit` as it is (`tablectl update` builds from `git archive` of it). Not a
    git checkout (a tarball): no commit, said so by `commit_line`."""
    if commit is not None:
        build: dict[str, Any] = {"commit": commit, "modified": False}
    else:
        head = _git(source, "rev-parse", "HEAD") if source is not None else None
        changes = _git(source, "status", "--porcelain") if head and source is not None else None
        build = {"commit": head.strip() if head else None, "modified": bool(changes and changes.strip())}
    from .atomic import replace_whole

    replace_whole(path, lambda f: f.write(json.dumps(build).encode() + b"\n"), 0o644)
    return build


def main(argv: list[str] | None = None) -> int:
    import re

    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] == "--commit" and re.fullmatch(r"[0-9a-f]{40}", args[1]):
        source, commit = None, args[1]
    elif len(args) == 1 and not args[0].startswith("-"):
        source, commit = Path(args[0]), None
    else:
        print("usage: python -m firmware_host.system.build SOURCE | --commit SHA", file=sys.stderr)
        return 2
    try:
        build = record(source, commit=commit)
    except OSError as exc:
        print(f"build: cannot write {BUILD_FILE}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(commit_line(build))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
