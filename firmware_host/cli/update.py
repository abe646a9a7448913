"""`tablectl update` and `tablectl update --rollback`: a new version installed beside the running
one, switched to by a symbolic link, and switched back by itself when it fails (docs/keeping.md).

The layout install.sh makes and this keeps:

    /opt/table-host/versions/COMMIT12/src     the source of one version (git archive of its commit)
    /opt/table-host/versions/COMMIT12/venv    its environment; `complete` beside them once it is whole
    /opt/table-host/current -> versions/...   the version that runs; `previous`: the one before
    /opt/table-host/venv -> current/venv      what the unit's ExecStart and /usr/local/bin/tablectl name
    /opt/table-host/source.git                the configured remote, fetched
    /opt/table-host/update-pending            while a switch is not yet checked: the version to return to

The work runs here, in tablectl as root, not in the daemon: the update restarts the daemon. Up to
the switch nothing the table runs is touched, so a kill (or a power cut) leaves the running version
and at most a half-built directory, removed by the next update. The switch is one rename of a link
(atomic); before it, `update-pending` names the version to return to, and until the new one passed
its health check a boot finds it there: `table-update-recover.service` (systemd/update-recover.sh,
before the table starts) puts the old version back. A dropped SSH session does not stop it
(SIGHUP ignored); its progress lines then go nowhere, and the journal of the table says the rest.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..system import paths
from .keeping import Refused

SERVICE = "table-host.service"
KEEP_NOTE = "journal, players and configuration are kept"
Say = Callable[[str], None]
MIGRATE = ("import sys; from pathlib import Path; from firmware_host.service.database import _open_checked; "
           "_open_checked(Path(sys.argv[1])).close()")
"""The new version opens a copy of the journal as it will at its start, without moving a damaged
one aside (open_database would, and start on a new one): a journal it refuses is said."""


def home() -> Path:
    """The installed table's directory, from where this tablectl runs (versions/NAME/venv)."""
    venv = Path(sys.prefix)
    if venv.name == "venv" and venv.parent.parent.name == "versions":
        return venv.parent.parent.parent
    raise Refused(f"this tablectl runs from {venv}, not from an installed table's versions "
                  "(/opt/table-host/versions/*/venv): an update replaces an installed table; in a checkout, "
                  "git pull. A table installed before updates in place: run systemd/install.sh once more")


def run(*command: str | Path, env: dict[str, str] | None = None,
        timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    """From /: `python -m` puts the working directory first on the path, and `sudo tablectl update`
    typed in a checkout would have the new version import the checkout's package. A program that is
    not there (git on a table installed from a copied tree) is said in one line, not a traceback."""
    try:
        return subprocess.run([str(c) for c in command], cwd="/", env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except FileNotFoundError:
        hint = {"git": ": sudo apt-get install git"}.get(str(command[0]), "")
        raise Refused(f"{command[0]} is not installed here{hint}") from None
    except subprocess.TimeoutExpired:
        raise Refused(f"{Path(str(command[0])).name} {' '.join(str(c) for c in command[1:3])} did not "
                      f"finish in {timeout:.0f} s") from None


def checked(what: str, done: subprocess.CompletedProcess[str]) -> str:
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-3:]
        raise Refused(f"{what} failed (exit {done.returncode}): {' / '.join(last) or 'no output'}")
    return done.stdout


def git(*args: str | Path) -> list[str | Path]:
    """git with no transport that runs a command (`ext::`), whatever the configuration says."""
    return ["git", "-c", "protocol.ext.allow=never", *args]


def version_of(init_py: str) -> str:
    found = re.search(r'^__version__ = "([^"]+)"', init_py, re.M)
    return found[1] if found else "?"


def link(at: Path, target: str) -> None:
    """`at` now points at `target`, by one rename (a power cut leaves the old link or the new)."""
    from ..system.atomic import replace_link

    replace_link(at, target)


def version_name(place: Path) -> Path | None:
    """Which versions/NAME a link names (None: no link)."""
    try:
        return place.parent / os.readlink(place) if place.is_symlink() else None
    except OSError:
        return None


class Update:
    def __init__(self, say: Say, yes: bool) -> None:
        from ..config import load_config
        from ..system.build import describe

        self.say, self.yes = say, yes
        self.home = home()
        self.config_path = paths.config_file()
        try:
            self.config = load_config(self.config_path).update
        except (ValueError, OSError) as exc:  # ConfigError is a ValueError: said in one line
            raise Refused(f"cannot read {self.config_path}: {exc}") from None
        self.build = describe()
        self.current = version_name(self.home / "current")
        self.previous = version_name(self.home / "previous")
        self.pending = self.home / "update-pending"

    # -------------------------------------------------------------- steps before the switch

    def fetch(self) -> str:
        if not self.config.source:
            raise Refused(f"no [update] source in {self.config_path}: set one, e.g. "
                          "tablectl config set update.source '\"https://github.com/OWNER/table-host.git\"'")
        repo = self.home / "source.git"
        if not repo.exists():
            checked("git init", run(*git("init", "--quiet", "--bare", repo)))
        self.say(f"fetch: {self.config.source} {self.config.ref}")
        checked(f"fetching {self.config.ref} from {self.config.source}",
                run(*git("-C", repo, "fetch", "--quiet", "--force", "--no-tags", self.config.source,
                         f"{self.config.ref}:refs/update/target"), timeout=600))
        head = run(*git("-C", repo, "rev-parse", "refs/update/target^{commit}"))
        return checked("git rev-parse", head).strip()

    def show(self, commit: str) -> dict[str, Any]:
        repo = self.home / "source.git"
        new_init = run(*git("-C", repo, "show", f"{commit}:firmware_host/__init__.py")).stdout
        new_log = run(*git("-C", repo, "show", f"{commit}:CHANGELOG.md")).stdout.splitlines()
        old_log: list[str] = []
        if self.current is not None and (self.current / "src" / "CHANGELOG.md").exists():
            old_log = (self.current / "src" / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
        added = [line[1:] for line in difflib.unified_diff(old_log, new_log, lineterm="", n=0)
                 if line.startswith("+") and not line.startswith("+++") and line[1:].strip()]
        change = {"from": {"version": self.build["version"], "commit": self.build["commit"]},
                  "to": {"version": version_of(new_init), "commit": commit}, "changelog": added}
        self.say(f"from table-host {self.build['version']} ({(self.build['commit'] or 'no commit')[:12]}) "
                 f"to {change['to']['version']} ({commit[:12]})")
        for line in added[:60]:
            self.say(f"  {line}")
        if len(added) > 60:
            self.say(f"  ... {len(added) - 60} more lines: CHANGELOG.md")
        return change

    def build_version(self, commit: str) -> Path:
        """versions/COMMIT12, whole: its source and its environment, the commit recorded in it."""
        target = self.home / "versions" / commit[:12]
        if (target / "complete").exists():
            self.say(f"install: {target} is there already")
            return target
        if target.exists():
            shutil.rmtree(target)  # half built by an update that was cut short
        (target / "src").mkdir(parents=True)
        self.say(f"install: {target}")
        archive = run(*git("-C", self.home / "source.git", "archive", "--format=tar", "-o",
                           target / "src.tar", commit))
        checked("git archive", archive)
        checked("unpacking the source", run("tar", "-xf", target / "src.tar", "-C", target / "src"))
        (target / "src.tar").unlink()
        checked("making the environment", run(self.config.python, "-m", "venv", target / "venv"))
        pip = run(target / "venv" / "bin" / "python", "-m", "pip", "install", "--quiet",
                  "--disable-pip-version-check", f"{target / 'src'}[pi]")
        checked("pip install of the new version", pip)
        checked("recording the build", run(target / "venv" / "bin" / "python", "-m",
                                           "firmware_host.system.build", "--commit", commit))
        (target / "complete").write_text(f"{commit}\n")
        return target

    def check(self, target: Path) -> None:
        """The new version reads the configuration, and opens (migrates) a copy of the journal."""
        python = target / "venv" / "bin" / "python"
        self.say("check: the configuration, with the new version")
        checked(f"the new version's check of {self.config_path}",
                run(target / "venv" / "bin" / "tablectl", "config", "check", self.config_path))
        database = paths.state_database()
        if not database.exists():
            return
        self.say("check: the journal, migrated on a copy by the new version")
        from .keeping import copy_journal

        with tempfile.TemporaryDirectory(prefix=".update-", dir=database.parent) as work:
            copy = Path(work) / "table.db"
            copy_journal(database, copy)
            checked("the new version's migration of the journal",
                    run(python, "-c", MIGRATE, copy))

    # -------------------------------------------------------------- the switch and the health check

    def table(self, *args: str) -> dict[str, Any]:
        done = run(self.home / "venv" / "bin" / "tablectl", "--json", *args, timeout=120)
        try:
            answer = json.loads(done.stdout.splitlines()[-1]) if done.stdout.strip() else {}
        except ValueError:
            answer = {}
        return answer if isinstance(answer, dict) else {}

    def restart(self) -> None:
        from .keeping import said

        done = run("systemctl", "restart", SERVICE, timeout=600)  # Type=notify: returns at READY=1
        if done.returncode != 0:
            raise Refused(f"{SERVICE} did not start (no READY=1): {said(done)}")

    def healthy(self, commit: str, probe_before: bool | None) -> None:
        self.say("health: the table's status and a quick self-test")
        status = self.table("status")
        if not status.get("ok"):
            raise Refused(f"the restarted table does not answer: {status.get('error', 'no answer')}")
        running = (status.get("version") or {}).get("commit")
        if running != commit:
            raise Refused(f"the restarted table runs commit {running}, not {commit[:12]}")
        if probe_before:  # a box that passed its probe before must pass it after
            probe = self.table("selftest", "--probe")
            if not probe.get("passed"):
                raise Refused("the quick self-test (tablectl selftest --probe) passed before the update "
                              "and fails after it")

    def probe(self) -> bool | None:
        answer = self.table("selftest", "--probe")
        return bool(answer.get("passed")) if "passed" in answer else None

    def switch(self, target: Path, commit: str, back_to: Path | None) -> None:
        """current -> target (previous -> what ran), restart, check; on any failure back by itself."""
        from .keeping import backup

        database = paths.state_database()
        schema = _schema(database)
        saved = None
        if database.exists() or self.config_path.exists():
            saved = Path(backup(None, keep=None)["file"])  # the way back if the journal's schema moves
            self.say(f"backup: {saved}")
        probe_before = self.probe()
        old = back_to or self.current
        if old is None:
            raise Refused(f"{self.home / 'current'} names no version: run systemd/install.sh once more")
        self.pending.write_text(f"{old.name}\n")
        _sync(self.pending)
        link(self.home / "previous", f"versions/{old.name}")
        link(self.home / "current", f"versions/{target.name}")
        self.say(f"switch: current -> versions/{target.name}; restart {SERVICE}")
        try:
            self.restart()
            self.healthy(commit, probe_before)
        except (Refused, OSError, subprocess.SubprocessError) as exc:
            self.say(f"FAILED: {exc}")
            run("systemctl", "stop", SERVICE, timeout=600)  # systemd restarts a failed one: not meanwhile
            self.say(f"rollback: current -> versions/{old.name}")
            link(self.home / "current", f"versions/{old.name}")
            link(self.home / "previous", f"versions/{target.name}")
            if saved is not None and _schema(database) != schema:
                self.say(f"rollback: the journal's schema moved: the journal from {saved} comes back")
                _put_journal_back(saved, database)
            self.pending.unlink()
            try:
                self.restart()
            except Refused as again:
                raise Refused(f"{exc}; rolled back to {old.name}, but that did not start either: {again}") \
                    from None
            raise Refused(f"{exc}; rolled back to {old.name}, which runs") from None
        self.pending.unlink()
        _sync(self.home / "current")

    def journal_readable_by(self, version: Path) -> None:
        """Refuse to go back to a version that cannot read the journal as it is now: one whose
        schema is older sets a newer journal aside at its start as damaged and plays on an empty
        one, which would pass the health check with every match and player out of sight."""
        journal = _schema(paths.state_database())
        done = run(version / "venv" / "bin" / "python", "-c",
                   "from firmware_host.service.database import SCHEMA_VERSION; print(SCHEMA_VERSION)",
                   timeout=120)
        if done.returncode != 0 or not done.stdout.strip().isdigit():
            raise Refused(f"cannot ask versions/{version.name} which journal it reads: "
                          f"{(done.stderr.strip().splitlines() or ['no answer'])[-1]}")
        reads = int(done.stdout.strip())
        if journal is not None and journal > reads:
            raise Refused(f"the journal is at schema {journal} since the update, and versions/{version.name} "
                          f"reads up to {reads}: going back would set it aside and start empty. The update's "
                          f"backup (tablectl backup's directory) holds the journal as it was before")

    def firmware(self) -> None:
        """The LED controller's firmware, when the new version carries another."""
        answer = self.table("firmware")
        if not answer.get("online") or answer.get("current", True):
            return
        self.say(f"firmware: the controller runs {answer.get('controller')}, this version carries "
                 f"{answer.get('expected')}: flashing")
        done = run(self.home / "venv" / "bin" / "tablectl", "firmware", "flash", timeout=600)
        if done.returncode != 0:
            self.say(f"firmware: flash failed ({done.stderr.strip()}): the table plays; "
                     "sudo tablectl firmware flash again")

    def tidy(self) -> None:
        keep = {p.name for p in (version_name(self.home / "current"),
                                 version_name(self.home / "previous")) if p is not None}
        for version in (self.home / "versions").iterdir():
            if version.name not in keep:
                shutil.rmtree(version, ignore_errors=True)


def _schema(database: Path) -> int | None:
    import sqlite3

    if not database.exists():
        return None
    with contextlib.closing(sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def _put_journal_back(archive: Path, database: Path) -> None:
    from .keeping import JOURNAL, _write, read_archive

    _manifest, members = read_archive(archive)
    for extra in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            database.with_name(database.name + extra).unlink()
    _write(database, members[JOURNAL], database, 0o600)


def _sync(path: Path) -> None:
    from ..system.atomic import sync_directory

    sync_directory(path.parent)


def _locked(place: Path) -> int:
    import fcntl

    fd = os.open(place / "update.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise Refused("another tablectl update runs") from None
    return fd


def update(say: Say, yes: bool, rollback: bool) -> dict[str, Any]:
    job = Update(say, yes)
    lock = _locked(job.home)
    try:
        status = job.table("status")
        if status.get("phase") in ("countdown", "playing", "round_result"):
            raise Refused("a match is being played: let it end (or tablectl abort), then update")
        if rollback:
            if job.previous is None or not (job.previous / "complete").exists():
                raise Refused("no previous version to return to")
            commit = (job.previous / "complete").read_text().strip()
            job.journal_readable_by(job.previous)
            say(f"rollback: from {job.current.name if job.current else '?'} to {job.previous.name}")
            job.switch(job.previous, commit, None)
            return {"ok": True, "rolled_back": True, "running": commit, "note": KEEP_NOTE}
        commit = job.fetch()
        if commit == job.build["commit"] and not job.build["modified"]:
            say(f"already at {commit[:12]} ({job.config.ref})")
            return {"ok": True, "running": commit, "changed": False}
        change = job.show(commit)
        if not yes and sys.stdin.isatty():
            print("Install it? [y/N] ", end="", flush=True)
            if sys.stdin.readline().strip().lower() not in ("y", "yes"):
                raise Refused("not installed (answered no)")
        target = job.build_version(commit)
        job.check(target)
        job.switch(target, commit, None)
        job.firmware()
        job.tidy()
        say(f"done: table-host {change['to']['version']} ({commit[:12]}) runs; {KEEP_NOTE}")
        return {"ok": True, "changed": True, "running": commit, **change}
    finally:
        os.close(lock)


def main(args: Any) -> int:
    """`tablectl update [--rollback] [--yes]`: progress on the terminal (stderr with --json)."""
    out = sys.stderr if args.json else sys.stdout
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # a dropped SSH session must not cut a switch short

    def say(line: str) -> None:
        with contextlib.suppress(OSError):  # the terminal went away: the update goes on
            print(f"update: {line}", file=out, flush=True)

    started = time.monotonic()
    try:
        report = update(say, args.yes, args.rollback)
    except Refused as exc:
        from .keeping import _failed

        return _failed(f"update: {exc}", args.json)
    report["seconds"] = round(time.monotonic() - started, 1)
    if args.json:
        print(json.dumps(report))
    return 0
