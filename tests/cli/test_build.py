"""Which build this is: `--version` and `tablectl status` name the version, the commit recorded at
install (or that the tree differed from it), the Python and the LED controller's firmware."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from firmware_host.system import build
from tests.plumbing import ROOT, DaemonProcess


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True).stdout


def test_the_build_records_its_commit_and_whether_the_tree_differed(tmp_path: Path) -> None:
    repo = tmp_path / "src"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.py").write_text("x = 1\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "-qm", "one")
    head = git(repo, "rev-parse", "HEAD").strip()
    record = tmp_path / "build.json"
    assert build.record(repo, record) == {"commit": head, "modified": False}
    assert build.describe(record)["commit"] == head
    assert build.commit_line(build.describe(record)) == f"commit {head[:12]}"
    (repo / "a.py").write_text("x = 2\n")
    build.record(repo, record)
    assert build.commit_line(build.describe(record)) == f"commit {head[:12]}, modified"
    build.record(tmp_path / "not-a-checkout", record)
    assert build.describe(record)["commit"] is None
    assert build.commit_line(build.describe(tmp_path / "nothing.json")).startswith("commit not recorded")
    (tmp_path / "bad.json").write_text("[1")
    assert build.describe(tmp_path / "bad.json") == {**build.describe(tmp_path / "nothing.json")}
    assert build.describe(record)["python"] == ".".join(map(str, sys.version_info[:3]))


@pytest.mark.parametrize("prog", ["table-host", "tablectl"])
def test_version_names_the_commit_and_the_python(prog: str, tmp_path: Path) -> None:
    module = "firmware_host" if prog == "table-host" else "firmware_host.cli.ctl"
    env = {**os.environ, "TABLE_HOST_SOCKET": str(tmp_path / "none.sock")}
    out = subprocess.run([sys.executable, "-m", module, "--version"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60).stdout.splitlines()
    info = build.describe()
    assert out[:3] == [f"{prog} {info['version']}", build.commit_line(info), f"Python {info['python']}"]


def test_status_names_the_build_and_the_led_firmware(tmp_path: Path) -> None:
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.start()
        status = daemon.ctl("status")
        shown = subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", "status"], cwd=ROOT,
                               env=daemon.env, capture_output=True, text=True, timeout=60).stdout
    finally:
        daemon.close()
    info = build.describe()
    version = status["version"]
    assert {k: version[k] for k in info} == info
    assert "led_firmware" in version
    words = " ".join(shown.replace("│", " ").split())  # the table wraps the cell's lines
    assert (f"version table-host {info['version']}, {build.commit_line(info)}, Python {info['python']}, "
            f"LED controller firmware {version['led_firmware'] or 'not heard from yet'}") in words, shown
