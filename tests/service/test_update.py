"""`tablectl update` in a staging root (docs/keeping.md, "Updates"): versions of this project in a
local bare repository, a good one and one that fails its health check, the right one running
after each, `--rollback` by hand, and a SIGKILL at every step of an update leaving a table that
starts (after the boot's update-recover.sh, as table-update-recover.service runs it).

What is real: git (fetch, archive), the layout and its links, the configuration check and the
journal's migration by the new version, the backup, the switch, the health check (the real
daemon, its status and `selftest --probe`), the rollback, the recovery script. Two stand-ins,
since a staging root has neither systemd nor an index for pip: `systemctl` starts and stops the
real daemon from the root's /opt/table-host/venv and waits for its status; `[update] python` makes
each version's environment see this test's installed dependencies, and its `pip` puts the
version's own source on the path (what `pip install SRC` would install, without building a wheel).
install.sh's pip path is the virtual Pi's (`./dev hil`)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.plumbing import ROOT

FAKE_SYSTEMCTL = r"""#!/bin/bash
# systemctl for a staging root: table-host.service is the real daemon, run from the root's venv.
verb=$1
if [ "$verb" = is-active ]; then
    [ -f "$STAND_IN/pid" ] && kill -0 "$(cat "$STAND_IN/pid")" 2>/dev/null; exit $?
fi
stop() {
    [ -f "$STAND_IN/pid" ] || return 0
    pid=$(cat "$STAND_IN/pid"); kill -KILL "$pid" 2>/dev/null
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    rm -f "$STAND_IN/pid"
}
failed() {  # what systemd 252 says, in its two lines, when a start job fails
    echo "Job for table-host.service failed because the control process exited with error code." >&2
    echo 'See "systemctl status table-host.service" and "journalctl -xeu table-host.service" for details.' >&2
}
case "$verb" in
    stop) stop ;;
    start|restart)
        stop
        setsid "$TABLE_HOME/venv/bin/table-host" run --emulate --ui none >>"$STAND_IN/daemon.log" 2>&1 &
        echo $! > "$STAND_IN/pid"
        for _ in $(seq 600); do
            kill -0 "$(cat "$STAND_IN/pid")" 2>/dev/null || { failed; exit 1; }
            "$TABLE_HOME/venv/bin/tablectl" --json status 2>/dev/null | grep -q '"ok": true' && exit 0
            sleep 0.1
        done
        echo "table-host.service: no READY=1" >&2; exit 1 ;;
    *) echo "systemctl stand-in: $*" >&2; exit 1 ;;
esac
"""

VENV_PYTHON = """#!{python}
# [update] python for a staging root: `-m venv DIR` makes DIR with this test's dependencies on its
# path and a pip that puts the source it is given on the path, with the two commands.
import os, subprocess, sys
assert sys.argv[1:3] == ["-m", "venv"], sys.argv
venv = sys.argv[3]
subprocess.run([{python!r}, "-m", "venv", "--without-pip", venv], check=True)
site = os.path.join(venv, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
open(os.path.join(site, "deps.pth"), "w").write({deps!r} + "\\n")
os.makedirs(os.path.join(site, "pip"))
open(os.path.join(site, "pip", "__init__.py"), "w").write("")
open(os.path.join(site, "pip", "__main__.py"), "w").write('''
import os, sys
source = [a for a in sys.argv[1:] if not a.startswith("-") and a != "install"][0].removesuffix("[pi]")
site = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
open(os.path.join(site, "aaa-table-host.pth"), "w").write(source + "\\\\n")
bin = os.path.dirname(sys.executable)
for name, module in (("table-host", "host"), ("tablectl", "ctl")):
    path = os.path.join(bin, name)
    # As pip's own scripts: guarded, so a process spawned from the table (the statistics' pool,
    # multiprocessing's spawn) that runs this file again as its main does not run a second table.
    open(path, "w").write("#!" + sys.executable + "\\\\nimport sys\\\\n"
                          "from firmware_host.cli.%s import main\\\\n"
                          "if __name__ == '__main__':\\\\n    sys.exit(main())\\\\n" % module)
    os.chmod(path, 0o755)
''')
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


class Staged:
    """A root laid out as install.sh lays out a table, with an [update] source of our own."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.work = tmp / "work"  # a checkout of this project, committed version by version
        files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
                               capture_output=True, text=True, check=True).stdout.split("\0")
        for name in filter(None, files):
            if (ROOT / name).is_file():
                (self.work / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, self.work / name)
        git(self.work, "init", "-q", "-b", "main")
        git(self.work, "add", "-A")
        git(self.work, "commit", "-qm", "one")
        self.remote = tmp / "remote.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(self.work), str(self.remote)], check=True)
        git(self.work, "remote", "add", "origin", str(self.remote))
        self.home = tmp / "root" / "opt" / "table-host"
        self.stand_in = tmp / "stand-in"
        (self.stand_in / "bin").mkdir(parents=True)
        (self.stand_in / "bin" / "systemctl").write_text(FAKE_SYSTEMCTL)
        (self.stand_in / "bin" / "systemctl").chmod(0o755)
        deps = next(p for p in sys.path if p.endswith("site-packages"))
        python = self.stand_in / "bin" / "python-for-versions"
        python.write_text(VENV_PYTHON.format(python=sys.executable, deps=deps))
        python.chmod(0o755)
        (tmp / "etc").mkdir()
        wiring = (ROOT / "firmware_host/data/wiring/4-seat.toml").read_text().split("\n[update]")[0]
        (tmp / "etc" / "table.toml").write_text(
            wiring.replace('backend = "pi"', 'backend = "emulated"', 1)
            + f'\n[update]\nsource = "{self.remote}"\nref = "main"\npython = "{python}"\n')
        self.env = {**os.environ, "PATH": f"{self.stand_in / 'bin'}:{os.environ['PATH']}",
                    "STAND_IN": str(self.stand_in), "TABLE_HOME": str(self.home),
                    "CONFIGURATION_DIRECTORY": str(tmp / "etc"), "STATE_DIRECTORY": str(tmp / "state"),
                    "RUNTIME_DIRECTORY": str(tmp / "run"),
                    "TABLE_HOST_SOCKET": str(tmp / "run" / "control.sock")}
        self.env.pop("NOTIFY_SOCKET", None)
        self.install(git(self.work, "rev-parse", "HEAD"))

    def install(self, commit: str) -> None:
        """What install.sh does: versions/COMMIT12 (source, environment, the commit recorded), then
        current and venv pointing at it."""
        version = self.home / "versions" / commit[:12]
        (version / "src").mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(self.remote), "archive", commit], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(version / "src")], input=archive, check=True)
        python = self.stand_in / "bin" / "python-for-versions"
        subprocess.run([str(python), "-m", "venv", str(version / "venv")], check=True)
        subprocess.run([str(version / "venv/bin/python"), "-m", "pip", "install", f"{version / 'src'}[pi]"],
                       check=True, cwd="/")
        subprocess.run([str(version / "venv/bin/python"), "-m", "firmware_host.system.build", "--commit",
                        commit], check=True, capture_output=True, cwd="/")
        (version / "complete").write_text(commit + "\n")
        os.symlink(f"versions/{commit[:12]}", self.home / "current")
        os.symlink("current/venv", self.home / "venv")

    def commit(self, message: str, change: callable) -> str:
        change(self.work)
        git(self.work, "commit", "-qam", message)
        git(self.work, "push", "-q", "origin", "main")
        return git(self.work, "rev-parse", "HEAD")

    def systemctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["systemctl", *args], env=self.env, capture_output=True, text=True, timeout=120)

    def tablectl(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.home / "venv/bin/tablectl"), *args], env=self.env,
                              capture_output=True, text=True, timeout=timeout)

    def running(self) -> str | None:
        """The commit the running table says it runs (None: no table answers)."""
        done = self.tablectl("--json", "status", timeout=60)
        answer = json.loads(done.stdout) if done.stdout.strip() else {}
        return answer.get("version", {}).get("commit") if answer.get("ok") else None

    def close(self) -> None:
        self.systemctl("stop")


@pytest.fixture
def staged(tmp_path: Path):
    table = Staged(tmp_path)
    try:
        yield table
    finally:
        table.close()


def changelog_line(text: str):
    def change(work: Path) -> None:
        log = work / "CHANGELOG.md"
        log.write_text(log.read_text().replace("## [Unreleased]\n", f"## [Unreleased]\n\n- {text}\n", 1))
    return change


def broken(work: Path) -> None:
    """A version whose daemon never says READY: it ends as it starts."""
    run = work / "firmware_host/cli/run.py"
    run.write_text(run.read_text().replace('    with_games()\n    path = config_path(config_file)\n',
                                           '    raise SystemExit(70)  # broken on purpose\n', 1))
    changelog_line("a broken version")(work)


def a_stored_match(state: Path) -> None:
    from firmware_host.service.journal import Store
    from firmware_host.table.matches import new_match
    from tests.helpers import play_recorded

    store = Store(state / "table.db")
    try:
        match = new_match("dice", 2, 3, {"rounds": 1})
        play_recorded(store, store.begin_match(match, [0, 1]), match, 10**6)
    finally:
        store.close()


def stored(staged: Staged) -> list[tuple[int, str]]:
    answer = json.loads(staged.tablectl("--json", "history", timeout=60).stdout)
    return [(m["match"], m["game"]) for m in answer["matches"]]


def test_an_update_to_a_good_version_then_a_broken_one_then_back_by_hand(staged: Staged) -> None:
    one = git(staged.work, "rev-parse", "HEAD")
    a_stored_match(staged.tmp / "state")
    config = (staged.tmp / "etc" / "table.toml").read_bytes()
    assert staged.systemctl("start").returncode == 0
    assert stored(staged) == [(1, "dice")]
    assert staged.running() == one
    same = json.loads(staged.tablectl("--json", "update", "--yes").stdout)
    assert same["ok"] and same["changed"] is False and same["running"] == one

    two = staged.commit("two", changelog_line("Dice: a new option nobody asked for."))
    done = staged.tablectl("update", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    shown = done.stdout.splitlines()
    assert f"update: from table-host 0.1.0 ({one[:12]}) to 0.1.0 ({two[:12]})" in shown
    assert "update:   - Dice: a new option nobody asked for." in shown
    assert shown[-1] == (f"update: done: table-host 0.1.0 ({two[:12]}) runs; journal, players and "
                         "configuration are kept")
    assert staged.running() == two
    assert os.readlink(staged.home / "current") == f"versions/{two[:12]}"
    assert os.readlink(staged.home / "previous") == f"versions/{one[:12]}"
    assert sorted(p.name for p in (staged.home / "versions").iterdir()) == sorted([one[:12], two[:12]])
    assert stored(staged) == [(1, "dice")]  # the journal and the configuration are kept
    assert (staged.tmp / "etc" / "table.toml").read_bytes() == config

    three = staged.commit("three", broken)
    done = staged.tablectl("update", "--yes")
    assert done.returncode == 1
    assert done.stderr.startswith("tablectl: update: table-host.service did not start (no READY=1): Job for "
                                  "table-host.service failed because the control process exited with error "
                                  "code. See ")
    assert len(done.stderr.splitlines()) == 1  # systemctl's two lines in one
    assert done.stderr.rstrip().endswith(f"rolled back to {two[:12]}, which runs")
    assert f"update: rollback: current -> versions/{two[:12]}" in done.stdout
    assert staged.running() == two
    assert os.readlink(staged.home / "current") == f"versions/{two[:12]}"
    assert not (staged.home / "update-pending").exists()
    assert three

    # The previous version is the broken one now; --rollback by hand goes to it and comes back.
    (staged.home / "previous").unlink()
    os.symlink(f"versions/{one[:12]}", staged.home / "previous")
    done = staged.tablectl("update", "--rollback")
    assert done.returncode == 0, done.stdout + done.stderr
    assert staged.running() == one

    # A version whose journal schema is older would set the journal aside and start empty (its
    # health check passing): going back by hand is refused while the journal is newer than it reads.
    from firmware_host.service.database import SCHEMA_VERSION

    with contextlib.closing(sqlite3.connect(staged.tmp / "state" / "table.db")) as db:
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")  # as a newer version would leave it
    done = staged.tablectl("update", "--rollback")
    assert done.returncode == 1
    assert done.stderr == (f"tablectl: update: the journal is at schema {SCHEMA_VERSION + 1} since the "
                           f"update, and versions/{two[:12]} reads up to {SCHEMA_VERSION}: going back would "
                           "set it aside and start empty. The update's backup (tablectl backup's directory) "
                           "holds the journal as it was before\n")
    assert staged.running() == one and os.readlink(staged.home / "current") == f"versions/{one[:12]}"


def power_cut(tmp: Path) -> None:
    """Every process of this staged table ends at once: tablectl, what it runs (git, pip, the
    systemctl stand-in) and the table itself, each found by the staging root in its command line
    (the stand-in's table runs in a session of its own, so a process group would miss it)."""
    for _ in range(3):  # a child forked as its parent died is caught by the next round
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(tmp) in line and int(pid) != os.getpid():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
        time.sleep(0.3)
    with contextlib.suppress(FileNotFoundError):
        (tmp / "stand-in" / "pid").unlink()


STEPS = ("fetch", "from table-host", "install", "check", "backup", "switch", "health")


@pytest.mark.parametrize("step", STEPS)
def test_a_power_cut_at_any_step_leaves_a_table_that_starts(staged: Staged, step: str) -> None:
    one = git(staged.work, "rev-parse", "HEAD")
    two = staged.commit("two", changelog_line("two"))
    assert staged.systemctl("start").returncode == 0
    update = subprocess.Popen([str(staged.home / "venv/bin/tablectl"), "update", "--yes"], env=staged.env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    for line in update.stdout:
        seen.append(line)
        if line.startswith(f"update: {step}"):
            power_cut(staged.tmp)
            break
    update.wait(60)
    assert update.returncode == -signal.SIGKILL, seen
    # The boot: table-update-recover.service, then the table.
    recover = subprocess.run(["bash", str(ROOT / "systemd/update-recover.sh"), str(staged.home)],
                             capture_output=True, text=True, timeout=60)
    assert recover.returncode == 0, recover.stderr
    assert staged.systemctl("start").returncode == 0, (staged.stand_in / "daemon.log").read_text()[-2000:]
    assert staged.running() == one  # never checked, so never kept
    if step in ("switch", "health"):
        assert recover.stdout == (f"update-recover: an update was cut short before its health check: back to "
                                  f"{one[:12]}\n")
    # and the next update finishes the job
    done = staged.tablectl("update", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert staged.running() == two


def test_no_source_configured_and_a_checkout_are_refused_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", "update"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TABLE_HOST_SOCKET": str(tmp_path / "none.sock")})
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1
    assert "not from an installed table's versions" in done.stderr


def test_a_restore_stops_the_service_and_starts_it_on_the_restored_state(staged: Staged) -> None:
    a_stored_match(staged.tmp / "state")
    assert staged.systemctl("start").returncode == 0
    archive = staged.tmp / "before.tar.gz"
    assert staged.tablectl("backup", str(archive)).returncode == 0
    assert staged.tablectl("new", "classic").returncode == 0
    staged.systemctl("stop")
    (staged.tmp / "state" / "table.db").unlink()  # lost, say: the table starts on a new journal
    assert staged.systemctl("start").returncode == 0
    assert stored(staged) == []
    done = staged.tablectl("--json", "restore", str(archive))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["restarted"] is True and report["restored"] == ["last-good.toml", "table.db", "table.toml"]
    assert "stopping table-host.service" in done.stderr and "starting table-host.service" in done.stderr
    assert stored(staged) == [(1, "dice")]


def test_a_missing_program_is_one_line_naming_its_package(tmp_path: Path, monkeypatch) -> None:
    """A table installed from a copied tree may have no git (the virtual Pi's had none): the update
    says so in one line, where it ended in a FileNotFoundError traceback."""
    from firmware_host.cli import update
    from firmware_host.cli.keeping import Refused

    monkeypatch.setenv("PATH", str(tmp_path))  # nothing to run here
    with pytest.raises(Refused) as caught:
        update.run(*update.git("--version"))
    assert str(caught.value) == "git is not installed here: sudo apt-get install git"
    with pytest.raises(Refused) as caught:
        update.run(sys.executable, "-c", "import time; time.sleep(30)", timeout=1)
    python = Path(sys.executable).name
    assert str(caught.value) == f"{python} -c import time; time.sleep(30) did not finish in 1 s"


@pytest.mark.parametrize("answer, flashed, said", [
    ({"online": True, "current": False, "controller": "led-fw 3", "expected": "led-fw 4"}, True,
     ["firmware: the controller runs led-fw 3, this version carries led-fw 4: flashing"]),
    ({"online": True, "current": True, "controller": "led-fw 4", "expected": "led-fw 4"}, False, []),
    ({"online": False}, False, []),  # no controller answering: nothing to flash, the table plays on
])
def test_the_firmware_is_flashed_only_when_the_new_version_carries_another(
        tmp_path: Path, monkeypatch, answer: dict, flashed: bool, said: list[str]) -> None:
    from firmware_host.cli import update

    job = object.__new__(update.Update)  # the step alone: no staged root needed
    lines: list[str] = []
    job.say, job.home = lines.append, tmp_path
    job.table = lambda *args: answer if args == ("firmware",) else pytest.fail(f"asked {args}")
    ran: list[tuple[str, ...]] = []

    def run(*command, timeout: float = 0):
        ran.append(tuple(str(c) for c in command))
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(update, "run", run)
    job.firmware()
    assert ran == ([(str(tmp_path / "venv/bin/tablectl"), "firmware", "flash")] if flashed else [])
    assert lines == said


def test_a_failed_flash_is_said_and_the_update_goes_on(tmp_path: Path, monkeypatch) -> None:
    from firmware_host.cli import update

    job = object.__new__(update.Update)
    lines: list[str] = []
    job.say, job.home = lines.append, tmp_path
    job.table = lambda *args: {"online": True, "current": False, "controller": "a", "expected": "b"}
    monkeypatch.setattr(update, "run", lambda *command, timeout=0: subprocess.CompletedProcess(
        command, 1, "", "no answer from /dev/ttyACM0\n"))
    job.firmware()  # no exception: the table plays on its old firmware
    assert lines[-1] == ("firmware: flash failed (no answer from /dev/ttyACM0): the table plays; "
                         "sudo tablectl firmware flash again")
