"""Keeping a table: `tablectl backup` and `restore` (docs/keeping.md), and the build each names."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from firmware_host.engine.match import Match
from firmware_host.service.database import SCHEMA_VERSION
from firmware_host.service.journal import read_match, replay_arguments
from firmware_host.system import build
from tests.plumbing import ROOT, DaemonProcess, journaled

CONFIG = (ROOT / "firmware_host" / "data" / "wiring" / "4-seat.toml").read_bytes().replace(
    b'backend = "pi"', b'backend = "emulated"', 1)


def ctl(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def place(tmp: Path, name: str) -> dict[str, str]:
    """The environment of a table whose state and configuration are under tmp/name."""
    return {**os.environ, "STATE_DIRECTORY": str(tmp / name / "state"),
            "CONFIGURATION_DIRECTORY": str(tmp / name / "etc"),
            "RUNTIME_DIRECTORY": str(tmp / name / "run"),
            "TABLE_HOST_SOCKET": str(tmp / name / "run" / "control.sock")}


def replayed(db_path: Path) -> dict[int, dict]:
    """Every stored match rebuilt from its journal, with the rounds the table stored as it played."""
    out = {}
    with contextlib.closing(sqlite3.connect(db_path)) as db:
        for (mid,) in db.execute("SELECT id FROM matches ORDER BY id").fetchall():
            row, rounds, journal, _races = read_match(db, mid)
            game, players, seed, options, boards = row[1:6]
            match = Match.replay(**replay_arguments(game, players, seed, options, boards,
                                                    [(r, a) for _n, r, a in journal]))
            out[mid] = {"replayed": [list(r.scores) for r in match.results],
                        "stored": [json.loads(r[3]) for r in rounds],
                        "journal": [tuple(j) for j in journal]}
    return out


def everything(tmp: Path, name: str) -> dict[str, bytes]:
    """Every file of a place, by path: what must be the same after a refused restore."""
    top = tmp / name
    return {str(p.relative_to(top)): p.read_bytes() for p in sorted(top.rglob("*"))
            if p.is_file() and p.suffix != ".sock"}


def test_a_backup_while_bots_play_restores_and_every_match_replays_the_same(tmp_path: Path) -> None:
    daemon = DaemonProcess(tmp_path)
    env = {**daemon.env, "CONFIGURATION_DIRECTORY": str(tmp_path / "etc")}
    daemon.env = env
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "table.toml").write_bytes(CONFIG)
    archive = tmp_path / "while-playing.tar.gz"
    try:
        daemon.start()
        assert daemon.ctl("new", "dice", "rounds=2")["ok"]
        assert daemon.ctl("bots", "3", "--level", "hard")["ok"]
        assert daemon.ctl("start")["ok"]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and journaled(tmp_path / "state" / "table.db") < 20:
            time.sleep(0.2)
        assert journaled(tmp_path / "state" / "table.db") >= 20
        done = ctl(env, "--json", "backup", str(archive))  # the bots play on meanwhile
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["ok"] and report["file"] == str(archive) and report["matches"] == 1
        assert report["schema"] == SCHEMA_VERSION
        assert sorted(report["holds"]) == ["last-good.toml", "table.db", "table.toml"]
        time.sleep(1.0)
        assert daemon.ctl("status")["ok"]  # still playing
    finally:
        daemon.close()
    original = replayed(tmp_path / "state" / "table.db")

    with tarfile.open(archive) as tar:
        assert tar.getnames() == ["table-host-backup/manifest.json", "table-host-backup/table.db",
                                  "table-host-backup/table.toml", "table-host-backup/last-good.toml"]
        manifest = json.load(tar.extractfile("table-host-backup/manifest.json"))
        config = tar.extractfile("table-host-backup/table.toml").read()
    assert manifest["format"] == "table-host-backup" and manifest["schema"] == SCHEMA_VERSION
    assert manifest["table_host"]["version"] == build.describe()["version"]
    assert config == CONFIG
    assert oct(archive.stat().st_mode & 0o777) == "0o600"  # it holds the configuration

    # Restored on another table (nothing there yet): no table runs, the next start runs on it.
    env2 = place(tmp_path, "other")
    done = ctl(env2, "restore", str(archive))
    assert done.returncode == 0, done.stderr
    assert "no table was running: the next start runs on the restored state" in done.stdout
    assert (tmp_path / "other" / "etc" / "table.toml").read_bytes() == CONFIG
    restored = replayed(tmp_path / "other" / "state" / "table.db")
    assert list(restored) == [1]
    for mid, match in restored.items():
        # Consistent: the rounds stored are the rounds the journal replays to, and the journal is
        # what the table had written by then (it wrote on after).
        assert match["stored"] == match["replayed"][:len(match["stored"])]
        assert match["journal"] == original[mid]["journal"][:len(match["journal"])]
        assert len(match["journal"]) >= 20
        assert original[mid]["stored"][:len(match["stored"])] == match["stored"]

    # And a table started on it finds the match the backup held.
    other = DaemonProcess(tmp_path / "other")
    other.env.update({k: env2[k] for k in ("STATE_DIRECTORY", "CONFIGURATION_DIRECTORY")})
    try:
        other.start()
        history = other.ctl("history")
    finally:
        other.close()
    assert history["ok"] and [m["match"] for m in history["matches"]] == [1]
    assert history["matches"][0]["game"] == "dice"


def a_state(tmp: Path, name: str) -> dict[str, str]:
    """A place with a journal of one stored match and a configuration, as a table leaves them."""
    from firmware_host.service.journal import Store
    from firmware_host.table.matches import new_match
    from tests.helpers import play_recorded

    env = place(tmp, name)
    (tmp / name / "etc").mkdir(parents=True)
    (tmp / name / "etc" / "table.toml").write_bytes(CONFIG)
    store = Store(tmp / name / "state" / "table.db")
    try:
        match = new_match("dice", 2, 3, {"rounds": 1})
        play_recorded(store, store.begin_match(match, [0, 1]), match, 10**6)
    finally:
        store.close()
    return env


def tar_of(members: dict[str, bytes], path: Path) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def members_of(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar}


def test_damaged_and_foreign_archives_are_refused_and_nothing_is_lost(tmp_path: Path) -> None:
    env = a_state(tmp_path, "here")
    good = tmp_path / "good.tar.gz"
    assert ctl(env, "backup", str(good)).returncode == 0
    members = members_of(good)
    manifest = json.loads(members["table-host-backup/manifest.json"])

    flipped = dict(members)
    db = bytearray(members["table-host-backup/table.db"])
    db[5000] ^= 0xFF
    flipped["table-host-backup/table.db"] = bytes(db)

    newer_db = tmp_path / "newer.db"
    newer_db.write_bytes(members["table-host-backup/table.db"])
    with contextlib.closing(sqlite3.connect(newer_db)) as conn:
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    newer_bytes = newer_db.read_bytes()
    newer_manifest = {**manifest, "schema": SCHEMA_VERSION + 1,
                      "files": {**manifest["files"], "table.db": {
                          "sha256": hashlib.sha256(newer_bytes).hexdigest(), "bytes": len(newer_bytes)}}}

    bad_config = b"[arbiter]\nwindow_ms = -3\n"
    bad_config_manifest = {**manifest, "files": {**manifest["files"], "table.toml": {
        "sha256": hashlib.sha256(bad_config).hexdigest(), "bytes": len(bad_config)}}}

    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    zipped = tmp_path / "backup.zip"
    import zipfile
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("manifest.json", "{}")
    cases = {
        truncated: "is damaged",
        tar_of(flipped, tmp_path / "flipped.tar.gz"): "is damaged: table.db's checksum is not the one its "
                                                       "manifest says",
        tar_of({"README.md": b"hello"}, tmp_path / "foreign.tar.gz"): "is not a table-host backup: it holds "
                                                                       "'README.md'",
        tar_of({"table-host-backup/manifest.json": b'{"format": "other"}'}, tmp_path / "other.tar.gz"):
            "is not a table-host backup: its manifest is another program's",
        zipped: "is not a table-host backup: not a readable tar.gz (not a gzip file)",
        tar_of({**members, "table-host-backup/table.db": newer_bytes,
                "table-host-backup/manifest.json": json.dumps(newer_manifest).encode()},
               tmp_path / "newer.tar.gz"):
            f"holds a journal of schema {SCHEMA_VERSION + 1}",
        tar_of({**members, "table-host-backup/table.toml": bad_config,
                "table-host-backup/manifest.json": json.dumps(bad_config_manifest).encode()},
               tmp_path / "bad-config.tar.gz"):
            "its table.toml is not a configuration this table-host runs",
        tmp_path / "missing.tar.gz": "missing.tar.gz: no such file",
    }
    before = everything(tmp_path, "here")
    for archive, said in cases.items():
        done = ctl(env, "restore", str(archive))
        assert done.returncode == 1, (archive, done.stderr)
        assert done.stdout == ""
        assert len(done.stderr.splitlines()) == 1 and said in done.stderr, (archive, done.stderr)
        assert done.stderr.startswith(f"tablectl: restore: {archive}")
        assert "Traceback" not in done.stderr
        assert everything(tmp_path, "here") == before, archive  # nothing touched, nothing set aside
    as_json = ctl(env, "--json", "restore", str(truncated))
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["ok"] is False


def test_a_restore_keeps_the_state_it_replaces(tmp_path: Path) -> None:
    env = a_state(tmp_path, "here")
    archive = tmp_path / "one.tar.gz"
    assert ctl(env, "backup", str(archive)).returncode == 0
    before = everything(tmp_path, "here")
    config = tmp_path / "here" / "etc" / "table.toml"
    config.write_bytes(CONFIG + b"# changed since\n")
    done = ctl(env, "--json", "restore", str(archive))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    aside = Path(report["set_aside"])
    assert aside.parent == tmp_path / "here" / "state" and aside.name.startswith("before-restore-")
    assert (aside / "table.toml").read_bytes() == CONFIG + b"# changed since\n"
    assert (aside / "table.db").read_bytes() == before["state/table.db"]
    assert config.read_bytes() == CONFIG
    assert report["restored"] == ["table.db", "table.toml"] and report["restarted"] is None


def test_a_table_that_runs_is_not_restored_under_it(tmp_path: Path) -> None:
    env = a_state(tmp_path, "here")
    archive = tmp_path / "one.tar.gz"
    assert ctl(env, "backup", str(archive)).returncode == 0
    daemon = DaemonProcess(tmp_path / "here")
    daemon.env.update({k: env[k] for k in ("STATE_DIRECTORY", "CONFIGURATION_DIRECTORY")})
    try:
        daemon.start()
        before = everything(tmp_path, "here")
        done = ctl(env, "restore", str(archive))
        assert done.returncode == 1
        db = tmp_path / "here" / "state" / "table.db"
        assert done.stderr == (f"tablectl: restore: a table runs on {db}: quit it, then restore "
                               "(nothing was changed)\n")
        after = everything(tmp_path, "here")
        assert after["state/table.db"] == before["state/table.db"]
        assert not [p for p in (tmp_path / "here" / "state").iterdir() if p.name.startswith("before-restore")]
        assert daemon.ctl("status")["ok"]
    finally:
        daemon.close()


def test_the_daily_backups_keep_the_newest(tmp_path: Path) -> None:
    env = a_state(tmp_path, "here")
    backups = tmp_path / "here" / "state" / "backups"
    backups.mkdir()
    old = ["table-host-backup-20260101-000000.tar.gz", "table-host-backup-20260102-000000.tar.gz",
           "table-host-backup-20260103-000000.tar.gz"]
    for name in [*old, "mine.tar.gz"]:
        (backups / name).write_bytes(b"x")
    done = ctl(env, "--json", "backup", "--keep", "2")  # the timer's command: the backups directory
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    written = Path(report["file"])
    assert written.parent == backups and written.name.startswith("table-host-backup-")
    assert sorted(p.name for p in backups.iterdir()) == sorted([old[2], written.name, "mine.tar.gz"])
    assert report["removed"] == [str(backups / old[0]), str(backups / old[1])]
    refused = ctl(env, "backup", "--keep", "0")
    assert refused.returncode == 2 and "'0' is not a positive whole number" in refused.stderr


def test_a_backup_with_nothing_to_keep_says_so(tmp_path: Path) -> None:
    env = place(tmp_path, "empty")
    done = ctl(env, "backup", str(tmp_path / "x.tar.gz"))
    assert done.returncode == 1
    assert done.stderr.startswith("tablectl: backup: nothing to back up: no journal at")
    assert not (tmp_path / "x.tar.gz").exists()
    done = ctl(a_state(tmp_path, "here"), "backup", str(tmp_path / "no" / "such" / "x.tar.gz"))
    assert done.returncode == 1
    assert done.stderr == f"tablectl: backup: cannot write {tmp_path}/no/such/x.tar.gz: there is no " \
                          f"directory {tmp_path}/no/such\n"


@pytest.mark.parametrize(("prefix", "root", "service"), [
    ("opt/table-host/versions/0123456789ab/venv", True, True),  # sudo tablectl on an installed table
    ("checkout/.venv", True, False),  # root in a checkout: its own state, as before
    ("opt/table-host/versions/0123456789ab/venv", False, False),  # not root: never the service's
])
def test_sudo_tablectl_on_an_installed_table_works_on_the_services_state(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: str, root: bool, service: bool) -> None:
    """Under systemd (the virtual Pi's update part) `sudo tablectl backup` wrote an archive with no
    journal and `restore` put none back: sudo gives no STATE_DIRECTORY, and root's XDG state was used."""
    import os
    import sys

    from firmware_host.cli import keeping
    from firmware_host.system import paths

    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items()
                                        if k not in paths.DEFAULTS and not k.startswith("XDG_")})
    monkeypatch.setattr(sys, "prefix", str(tmp_path / prefix))
    monkeypatch.setattr(os, "geteuid", lambda: 0 if root else 1000)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    keeping.the_service_state()
    if service:
        assert paths.state_database() == Path("/var/lib/table-host/table.db")
        assert keeping.backups_directory() == Path("/var/lib/table-host/backups")
        assert paths.directory("RUNTIME_DIRECTORY") == Path("/run/table-host")
    else:
        assert paths.state_database() == tmp_path / "home/.local/state/table-host/table.db"
