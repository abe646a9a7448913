"""install.sh's package and group checks under `set -euo pipefail`, as the script runs them, with
stand-ins for apt-cache, dpkg-query and getent on PATH. The apt-cache stand-in writes as apt 3.0
does (trixie): the candidate line first, then the version table, which goes into a pipe a
`grep -q` has already closed: SIGPIPE, and under pipefail the whole check failed although the
line was there (`install.sh --screen` then said "apt offers neither chromium nor chromium-browser")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from plumbing import ROOT

INSTALL = ROOT / "systemd" / "install.sh"
CHECKS = ROOT / "systemd" / "install-checks.sh"

APT_CACHE = """#!/bin/bash
# apt-cache policy PACKAGE as apt 3.0 writes it: the candidate, then a long version table.
case "$2" in {offered}) candidate=1:142.0.7444.59-1~deb13u1 ;; *) candidate="(none)" ;; esac
echo "$2:"
echo "  Installed: (none)"
echo "  Candidate: $candidate"
sleep 0.2  # the reader has seen the candidate line and gone by now
echo "  Version table:"
for i in $(seq 1 2000); do
    echo "     1:142.0.$i-1 500"
    echo "        500 http://deb.debian.org/debian trixie/main arm64 Packages"
done
"""
DPKG_QUERY = "#!/bin/bash\nexit 1\n"  # nothing installed
GETENT = """#!/bin/bash
# getent group NAME: the groups in $GROUPS_HERE exist.
for g in $GROUPS_HERE; do [ "$2" = "$g" ] && { echo "$g:x:100:"; exit 0; }; done
exit 2
"""


def stand_ins(tmp_path: Path, offered: str, groups: str = "video render input") -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, text in (("apt-cache", APT_CACHE.format(offered=offered or "__none__")),
                       ("dpkg-query", DPKG_QUERY), ("getent", GETENT)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "GROUPS_HERE": groups}


def sourced(script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`script` run after install.sh's checks (install-checks.sh), with the options install.sh sets."""
    return subprocess.run(["bash", "-c", f"set -euo pipefail\nsource {CHECKS}\n{script}"],
                          capture_output=True, text=True, env=env, timeout=60)


def test_the_stand_in_makes_the_old_pipe_fail_as_apt_3_did(tmp_path: Path) -> None:
    """The check can fail: install.sh's old test, `apt-cache policy | grep -q`, fails here
    although apt offers chromium, and succeeds without pipefail."""
    env = stand_ins(tmp_path, "chromium")
    old = "apt-cache policy chromium 2>/dev/null | grep -q 'Candidate: [0-9]'"
    assert subprocess.run(["bash", "-c", f"set -o pipefail; {old}"], env=env).returncode == 141
    assert subprocess.run(["bash", "-c", old], env=env).returncode == 0


def test_chromium_is_found_under_pipefail(tmp_path: Path) -> None:
    got = sourced("pick_browser", stand_ins(tmp_path, "chromium|chromium-browser"))
    assert (got.returncode, got.stdout) == (0, "chromium\n"), got.stderr


def test_chromium_browser_when_apt_offers_only_that(tmp_path: Path) -> None:
    got = sourced("pick_browser", stand_ins(tmp_path, "chromium-browser"))
    assert (got.returncode, got.stdout) == (0, "chromium-browser\n"), got.stderr


def test_no_browser_is_a_failure_the_caller_sees(tmp_path: Path) -> None:
    got = sourced("pick_browser || echo none", stand_ins(tmp_path, ""))
    assert (got.returncode, got.stdout) == (0, "none\n"), got.stderr


def test_a_missing_input_group_is_named_not_a_silent_exit(tmp_path: Path) -> None:
    """The old loop's last `getent group input && printf` failed the command substitution, and
    `set -e` ended install.sh without a word."""
    got = sourced('echo "missing: $(missing_groups video render input)"; echo done',
                  stand_ins(tmp_path, "chromium", groups="video render"))
    assert (got.returncode, got.stdout) == (0, "missing: input\ndone\n"), got.stderr
    old_loop = ('groups=$(for g in video render input; do '
                'getent group "$g" >/dev/null && printf "%s," "$g"; done)')
    old = sourced(f"{old_loop}; echo done", stand_ins(tmp_path, "chromium", groups="video render"))
    assert (old.returncode, old.stdout, old.stderr) == (2, "", "")  # getent's status, not a word


def test_install_screen_under_apt_3_lays_out_the_kiosk_with_chromium(tmp_path: Path) -> None:
    env = stand_ins(tmp_path, "chromium")
    env["TABLE_HOST"] = str(Path(sys.executable).parent / "table-host")
    staged = tmp_path / "root"
    run = subprocess.run(["bash", str(INSTALL), "--root", str(staged), "--no-pip", "--screen"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    kiosk = (staged / "etc/systemd/system/table-screen.service").read_text()
    assert "ExecStart=/usr/bin/cage -d -s -- /usr/bin/chromium --kiosk" in kiosk


def test_install_sh_sourced_as_the_virtual_pi_traces_it_still_installs(tmp_path: Path) -> None:
    """The systemd guests run install.sh sourced (`bash -c '. "$0" "$@"'`, to trace it with set -x):
    a guard that returned from a sourced install.sh made it do nothing there, exit 0, in 0.2 s."""
    env = stand_ins(tmp_path, "chromium")
    env["TABLE_HOST"] = str(Path(sys.executable).parent / "table-host")
    staged = tmp_path / "root"
    run = subprocess.run(["bash", "-c", '. "$0" "$@"', str(INSTALL), "--root", str(staged), "--no-pip"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    assert (staged / "etc/systemd/system/table-host.service").exists()
    assert run.stdout.strip().endswith(f"table-host laid out under {staged}")
