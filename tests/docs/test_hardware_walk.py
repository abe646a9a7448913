"""Every command hardware/README.md gives works as a builder types it, in order, starting from what
a fresh Raspberry Pi OS Lite has: the walk "From a fresh card to the first match" first, then the
file's other commands in their order, all in one shell session on this machine.

What a fresh Lite has. Raspberry Pi's image builder, pi-gen, makes Lite from its stages 0-2 (stage2's
EXPORT_IMAGE has the suffix -lite). Its stage2 package list (stage2/01-sys-tweaks/00-packages, on the
branches bookworm-arm64 and arm64, the trixie one) names curl, sudo, python3-venv, ca-certificates and
build-essential, and neither git nor i2c-tools nor wget; stage0 bootstraps Debian's required and
important packages, and wget is of priority standard, git and i2c-tools optional (apt-cache show on
bookworm). Read there, checked; that nothing Lite installs pulls them in as a dependency is inferred,
not checked package by package. So the session's PATH is this machine's programs minus LITE_LACKS,
and only the walk's `apt install` puts them back.

The stand-ins, each for what needs a Pi or would change this machine:
- sudo: runs the command as this user, with the stand-ins below on the PATH.
- apt, apt-get: `update` does nothing; `install` checks that each package is in this machine's
  Debian archive (apt-cache show) and makes its programs available: git is this machine's own, and
  i2c-tools brings the i2cdetect below. Installing for real would change this machine.
- systemd/install.sh: the real script, staged under a scratch root (--root, --no-pip). A real run
  creates users and groups, installs packages and a virtual environment from PyPI, and starts units
  here; `./dev hil` runs it for real in bookworm and trixie machines (docs/virtual-pi.md).
- /etc, /boot, /sys, /opt, /var, /dev and /run in a command: the scratch root's.
- reboot: starts the table as the service does after a boot (`table-host run --emulate` with the
  installed table.toml and the service's directories), and lays out what the kernel makes of
  config.txt's i2c-mux overlays: /sys/bus/i2c/devices/1-00XX with channel-N links to the channels'
  buses (numbered from 22, as on a Pi 4) and idle_state (-2 with disconnect_on_idle, else -1).
- systemctl: restart or enable --now table-host starts that table again; anything else is printed.
- usermod: does nothing (this machine's accounts).
- i2cdetect: the table the installed build's devices fill (bus 1: its expanders, UU at each
  multiplexer; a channel's bus: its OLED at 3c), `-l` their list; there is no I2C bus here.
- tablectl: the real one, talking to that table (`tablectl firmware` too: the emulated table's
  controller runs this checkout's firmware, so `flash` leaves it as it is).
- the address `read` asks for: a snapshot of this checkout's working tree (a bare repository), which
  the real git clones.
- a command still running after BUDGET_S that waits for a person (`tablectl selftest` walks the
  seats, waiting for presses) gets Ctrl-C, as the README says, and passes if it printed no traceback.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "hardware" / "README.md"
WALK = "## From a fresh card to the first match"
LITE_LACKS = {"git", "git-receive-pack", "git-upload-pack", "git-upload-archive", "git-shell", "gitk",
              "i2cdetect", "i2cget", "i2cset", "i2cdump", "i2ctransfer", "wget", "mpremote"}
COMMANDS = {"sudo", "git", "cd", "cat", "ls", "i2cdetect", "tablectl", "read", "curl", "tar", "echo"}
WAITS_FOR_A_PERSON = re.compile(r"^(sudo )?tablectl selftest(?!.*--(probe|report|abort))")
BUDGET_S = 8.0
SYSTEM_PATH = re.compile(r"(?<![\w.~/$-])/(etc|boot|sys|opt|var|dev|run)(?=/)")


def code_lines(text: str) -> list[str]:
    """The command lines of a stretch of the README: code-block lines (indented 4 or more, or
    fenced) whose first word is a program the README runs; comments and `$ ` prompts taken off."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not (fenced or line.startswith("    ")):
            continue
        command = re.sub(r"\s+#.*$", "", line.strip()).removeprefix("$ ").strip()
        if command and command.split()[0] in COMMANDS:
            out.append(command)
    return out


def walk_then_the_rest() -> tuple[list[str], list[str]]:
    text = README.read_text(encoding="utf-8")
    start = text.index(WALK)
    end = text.find("\n## ", start + len(WALK))
    end = len(text) if end < 0 else end
    return code_lines(text[start:end]), code_lines(text[:start] + text[end:])


def test_the_walk_starts_from_a_fresh_lite_and_installs_what_lite_lacks_first() -> None:
    walk, rest = walk_then_the_rest()
    assert walk[:2] == ["sudo apt update", "sudo apt install -y git i2c-tools"]
    first_git = next(i for i, c in enumerate(walk) if c.split()[0] == "git")
    first_i2c = next(i for i, c in enumerate(walk) if "i2cdetect" in c)
    assert first_git > 1 and first_i2c > 1
    assert "sudo reboot" in walk and "tablectl selftest" in walk and "sudo tablectl firmware flash" in walk
    assert not any("pip install" in c for c in walk + rest)  # Pi OS refuses it system-wide
    assert any(c.startswith("sudo systemd/install.sh --screen") for c in rest)


# ------------------------------------------------------------------ the stand-ins


def _script(path: Path, body: str) -> None:
    path.write_text(body)
    path.chmod(0o755)


def _lite_path(lite: Path) -> None:
    """This machine's programs, without the ones a fresh Lite lacks."""
    lite.mkdir()
    for folder in ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            target = Path(folder) / name
            if name in LITE_LACKS or (lite / name).exists() or not os.access(target, os.X_OK):
                continue
            (lite / name).symlink_to(target)


STANDINS = {
    "sudo": r"""#!/bin/bash
        # stand-in: run as this user; install.sh staged under the scratch root
        case "$1" in
            systemd/install.sh|./systemd/install.sh)
                script=$1; shift; exec bash "$script" --root "$TABLE_ROOT" --no-pip "$@" ;;
        esac
        exec "$@"
        """,
    "apt": r"""#!/bin/bash
        # stand-in for apt and apt-get: update does nothing, install makes the programs available
        action=""; packages=()
        for word in "$@"; do
            case "$word" in -*) ;; update|install) action=$word ;; *) packages+=("$word") ;; esac
        done
        case "$action" in
            update) echo "(apt update: stand-in)"; exit 0 ;;
            install) ;;
            *) echo "apt stand-in: only update and install, not: $*" >&2; exit 100 ;;
        esac
        for p in "${packages[@]}"; do
            apt-cache show "$p" >/dev/null 2>&1 || { echo "E: Unable to locate package $p" >&2; exit 100; }
            case "$p" in
                git) ln -sf "$REAL_GIT" "$SANDBOX/bin/git" ;;
                i2c-tools) cp "$SANDBOX/tools/i2cdetect" "$SANDBOX/bin/i2cdetect" ;;
                *) echo "apt stand-in: none for $p yet (tests/docs/test_hardware_walk.py)" >&2; exit 100 ;;
            esac
            echo "(apt install $p: stand-in)"
        done
        """,
    "usermod": """#!/bin/bash
        echo "(usermod $*: stand-in)"
        """,
    "tablectl": """#!/bin/bash
        PYTHONPATH="$CHECKOUT" exec "$PY" -m firmware_host.cli.ctl "$@"
        """,
    "reboot": """#!/bin/bash
        exec "$PY" "$SANDBOX/tools/pi.py" reboot
        """,
    "systemctl": """#!/bin/bash
        exec "$PY" "$SANDBOX/tools/pi.py" systemctl "$@"
        """,
}

PI = r'''
"""The Pi's side of the stand-ins: the service's table, the kernel's I2C buses."""
import os, re, signal, subprocess, sys, time, tomllib
from pathlib import Path

sandbox, root = Path(os.environ["SANDBOX"]), Path(os.environ["TABLE_ROOT"])
devices = root / "sys/bus/i2c/devices"


def overlays():
    config = root / "boot/firmware/config.txt"
    text = config.read_text() if config.exists() else ""
    return re.findall(r"^dtoverlay=i2c-mux,pca9548,addr=0x([0-9a-f]{2})(,disconnect_on_idle)?$", text, re.M)


def lay_out_buses():
    for old in devices.glob("1-00*"):
        for link in old.iterdir():
            link.unlink()
        old.rmdir()
    devices.mkdir(parents=True, exist_ok=True)
    for k, (address, disconnect) in enumerate(overlays()):
        mux = devices / f"1-00{address}"
        mux.mkdir()
        (mux / "idle_state").write_text("-2\n" if disconnect else "-1\n")
        for channel in range(8):
            bus = 22 + 8 * k + channel
            (devices / f"i2c-{bus}").mkdir(exist_ok=True)
            (mux / f"channel-{channel}").symlink_to(f"../i2c-{bus}")


def stop():
    pid_file = sandbox / "service.pid"
    if pid_file.exists():
        try:
            os.killpg(int(pid_file.read_text()), signal.SIGTERM)
        except ProcessLookupError:
            pass
        pid_file.unlink()
        time.sleep(1)


def start():
    stop()
    run = Path(os.environ["RUNTIME_DIRECTORY"])
    (run / "control.sock").unlink(missing_ok=True)
    env = dict(os.environ, PYTHONPATH=os.environ["CHECKOUT"])
    log = open(sandbox / "service.log", "a")
    proc = subprocess.Popen([sys.executable, "-m", "firmware_host", "run", "--emulate", "--ui", "none",
                             "--config", str(root / "etc/table-host/table.toml")], env=env,
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    (sandbox / "service.pid").write_text(str(proc.pid))
    end = time.monotonic() + 90
    while not (run / "control.sock").exists():
        if proc.poll() is not None or time.monotonic() > end:
            sys.exit(f"the table did not start: {(sandbox / 'service.log').read_text()[-1500:]}")
        time.sleep(0.2)
    print("(the table-host service is running: stand-in)")


def i2cdetect(args):
    config = tomllib.loads((root / "etc/table-host/table.toml").read_text())
    if args == ["-l"]:
        buses = ["i2c-1\ti2c\tbcm2835 (i2c@7e804000)"]
        for k, (address, _) in enumerate(overlays()):
            buses += [f"i2c-{22 + 8 * k + c}\ti2c\ti2c-1-mux (chan_id {c})" for c in range(8)]
        print("\n".join(buses))
        return 0
    if len(args) != 2 or args[0] != "-y" or not args[1].isdigit():
        print("Usage: i2cdetect [-y] I2CBUS (stand-in: -y N or -l)", file=sys.stderr)
        return 1
    bus, found = int(args[1]), {}
    if bus == 1:
        found = {e["address"]: f"{e['address']:02x}" for e in config["inputs"]["expanders"]}
        found |= {int(a, 16): "UU" for a, _ in overlays()}
    else:
        for k, (address, _) in enumerate(overlays()):
            channel = bus - 22 - 8 * k
            if 0 <= channel < 8 and any(s.get("mux") == int(address, 16) and s.get("channel") == channel
                                        for s in config.get("screens", [])):
                found = {0x3C: "3c"}
    if bus != 1 and not (devices / f"i2c-{bus}").exists():
        print(f"Error: Could not open file `/dev/i2c-{bus}': No such file or directory", file=sys.stderr)
        return 1
    print("     " + " ".join(f"{c:2x}" for c in range(16)))
    for row in range(0, 0x80, 16):
        cells = [found.get(row + c, "--") if 0x03 <= row + c <= 0x77 else "  " for c in range(16)]
        print(f"{row:02x}: " + " ".join(cells))
    return 0


if __name__ == "__main__":
    what, args = sys.argv[1], sys.argv[2:]
    if what == "reboot":
        lay_out_buses()
        start()
    elif what == "systemctl":
        if args in (["restart", "table-host"], ["enable", "--now", "table-host"]):
            start()
        else:
            print(f"(systemctl {' '.join(args)}: stand-in)")
    elif what == "i2cdetect":
        sys.exit(i2cdetect(args))
'''


def snapshot(where: Path) -> Path:
    """This checkout's working tree as a bare repository with one commit on main: what `git clone`
    fetches. No ref of the checkout changes (stash create and commit-tree only write objects)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    work = git("stash", "create") or "HEAD"
    commit = git("commit-tree", f"{work}^{{tree}}", "-m", "the checkout under test")
    bare = where / "table-host.git"
    subprocess.run(["git", "init", "--bare", "--quiet", str(bare)], check=True)
    subprocess.run(["git", "-C", str(ROOT), "push", "--quiet", str(bare), f"{commit}:refs/heads/main"],
                   check=True, capture_output=True)
    subprocess.run(["git", "--git-dir", str(bare), "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    return bare


def sandbox(tmp: Path) -> dict[str, str]:
    """The builder's session: a home, the Lite PATH with the stand-ins first, the scratch root."""
    real_git = shutil.which("git")
    assert real_git, "git is needed here to stand in for the one apt installs"
    for folder in ("bin", "tools", "home", "root/etc", "root/boot/firmware", "root/opt", "root/var/lib",
                   "root/run/table-host", "state"):
        (tmp / folder).mkdir(parents=True, exist_ok=True)
    _lite_path(tmp / "lite")
    for name, body in STANDINS.items():
        _script(tmp / "bin" / name, textwrap.dedent(body).lstrip())
    _script(tmp / "bin" / "apt-get", (tmp / "bin" / "apt").read_text())
    (tmp / "tools" / "pi.py").write_text(PI)
    _script(tmp / "tools" / "i2cdetect", '#!/bin/bash\nexec "$PY" "$SANDBOX/tools/pi.py" i2cdetect "$@"\n')
    # install.sh (staged) runs the checkout's own table-host and its python for boot-config and completion
    _script(tmp / "tools" / "table-host",
            '#!/bin/bash\nPYTHONPATH="$CHECKOUT" exec "$PY" -m firmware_host "$@"\n')
    _script(tmp / "tools" / "python", '#!/bin/bash\nPYTHONPATH="$CHECKOUT" exec "$PY" "$@"\n')
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TERM", "TMPDIR")}
    return keep | {
        "HOME": str(tmp / "home"), "USER": "builder", "PATH": f"{tmp / 'bin'}:{tmp / 'lite'}",
        "SANDBOX": str(tmp), "TABLE_ROOT": str(tmp / "root"), "PY": sys.executable, "REAL_GIT": real_git,
        "CHECKOUT": str(tmp / "home" / "table-host"), "TABLE_HOST": str(tmp / "tools" / "table-host"),
        "CONFIGURATION_DIRECTORY": str(tmp / "root/etc/table-host"), "STATE_DIRECTORY": str(tmp / "state"),
        "RUNTIME_DIRECTORY": str(tmp / "root/run/table-host"), "COLUMNS": "120",
    }


class Session:
    """One builder's shell: its working folder and variables carry from one command to the next."""

    def __init__(self, env: dict[str, str], address: str) -> None:
        self.env, self.cwd, self.address = env, env["HOME"], address

    def run(self, command: str) -> None:
        typed = command
        command = SYSTEM_PATH.sub(lambda m: self.env["TABLE_ROOT"] + m[0], command)
        words = shlex.split(command)
        if words[0] == "read":  # the builder types the repository's address
            self.env[words[-1]] = self.address
            return
        if words[0] == "cd":
            moved = subprocess.run(["bash", "-c", f"{command} && pwd"], cwd=self.cwd, env=self.env,
                                   capture_output=True, text=True)
            assert moved.returncode == 0, f"{typed}: {moved.stderr.strip()}"
            self.cwd = moved.stdout.strip()
            return
        proc = subprocess.Popen(["bash", "-c", command], cwd=self.cwd, env=self.env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        waits = bool(WAITS_FOR_A_PERSON.match(typed))
        try:
            out, err = proc.communicate(timeout=BUDGET_S if waits else 600)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGINT if waits else signal.SIGKILL)  # Ctrl-C, as the README says
            out, err = proc.communicate(timeout=60)
            print(f"$ {typed}   (Ctrl-C after {BUDGET_S:g} s)\n{out[-800:]}{err[-800:]}")
            assert waits, f"{typed}: still running after 600 s"
            assert "Traceback" not in err + out, f"{typed}:\n{err[-2000:]}"
            return
        print(f"$ {typed}\n{out[-800:]}{err[-800:]}")  # shown when the test fails (pytest -s: always)
        assert proc.returncode == 0, f"{typed}: exit {proc.returncode}\n{out[-1500:]}\n{err[-1500:]}"
        assert "Traceback" not in err, f"{typed}:\n{err[-2000:]}"


def test_every_command_of_the_hardware_readme_works_in_order_on_a_fresh_lite(tmp_path: Path) -> None:
    env = sandbox(tmp_path)
    session = Session(env, str(snapshot(tmp_path)))
    walk, rest = walk_then_the_rest()
    try:
        for command in walk + rest:
            session.run(command)
        root = Path(env["TABLE_ROOT"])
        config_txt = (root / "boot/firmware/config.txt").read_text()
        assert "dtoverlay=i2c-mux,pca9548,addr=0x71,disconnect_on_idle" in config_txt
        assert (root / "etc/systemd/system/table-screen.service").exists()  # install.sh --screen
    finally:
        pid = tmp_path / "service.pid"
        if pid.exists():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(pid.read_text()), signal.SIGTERM)


def test_a_program_lite_lacks_is_not_found_until_the_walk_installs_it(tmp_path: Path) -> None:
    """The check can fail: `git` or `i2cdetect` typed before `apt install` is not found (exit 127)."""
    session = Session(sandbox(tmp_path), str(tmp_path))
    for command in ("git --version", "sudo i2cdetect -y 1"):
        with pytest.raises(AssertionError, match="exit 127"):  # bash: command not found
            session.run(command)
    session.run("sudo apt install -y git i2c-tools")
    session.run("git --version")
    with pytest.raises(AssertionError, match="E: Unable to locate package no-such-package"):
        session.run("sudo apt install -y no-such-package")
