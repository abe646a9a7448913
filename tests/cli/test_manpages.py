"""The manual pages install.sh writes: generated from the parsers, so every subcommand is in them,
with the sections a parser does not know (examples, exit status, environment, files)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from firmware_host import __version__
from firmware_host.cli.completion import parser_of, subcommands
from tests.plumbing import ROOT


@pytest.mark.parametrize("prog", ["table-host", "tablectl"])
def test_the_manual_page_covers_every_subcommand_and_renders(prog: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "firmware_host.cli.manpages", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table-host.1", "tablectl.1"]
    roff = (tmp_path / f"{prog}.1").read_text()
    assert roff.startswith(".TH ") and f'"table\\-host {__version__}"' in roff
    shown = subprocess.run(["groff", "-man", "-Tutf8", "-P-cbou", str(tmp_path / f"{prog}.1")],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "error" not in shown.stderr, shown.stderr
    text = " ".join(shown.stdout.split())
    for name, sub in subcommands(parser_of(prog)).items():
        assert f"{prog} {name}" in text, name
        for action in sub._actions:  # and every option of it
            for flag in action.option_strings:
                if flag.startswith("--") and flag not in ("--help",):
                    assert flag in text, (name, flag)
    for heading in ("NAME", "SYNOPSIS", "EXAMPLES", "EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"):
        assert f"\n{heading}\n" in shown.stdout, heading
    assert "TABLE_HOST_SOCKET" in text
    if prog == "tablectl":
        assert "2 a bad command line, refused before the table is asked" in text
