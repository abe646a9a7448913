"""`tablectl backup` and `tablectl restore`: the table's state in one archive, and back
(docs/keeping.md).

An archive is a tar.gz holding `table-host-backup/manifest.json` and the files it lists, each with
its SHA-256: `table.db` (the journal: every match, its seats, rounds and actions), copied with
SQLite's online backup API, so that a match played meanwhile leaves a consistent copy (the daemon
writes on; the copy is of one moment), `table.toml` (the configuration) and `last-good.toml` (the
last configuration that loaded, which the table starts on if the file breaks). Restoring checks
the whole archive before it touches anything, keeps the current state in a directory beside it,
and restarts the service on the restored one.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from ..system import paths
from ..system.build import describe
from ..system.errors import TableError

FORMAT = "table-host-backup"
FORMAT_VERSION = 1
TOP = "table-host-backup"
MANIFEST = "manifest.json"
JOURNAL, CONFIG, LAST_GOOD = "table.db", "table.toml", "last-good.toml"
KNOWN = (JOURNAL, CONFIG, LAST_GOOD)
PREFIX = "table-host-backup-"
MAX_MEMBER_BYTES = 2 << 30  # no journal grows near this; a bigger member is no archive of ours
SERVICE = "table-host.service"


class Refused(TableError, RuntimeError):
    """An archive that is not restored, a backup that cannot be written, an update that stopped:
    one line saying why (exit 1, as the commands say it; not a bad command line)."""


def owned_like_state(path: Path) -> None:
    """Run as root, a file or directory made here belongs to the state directory's owner (the
    service's user): the daily backup (run as that user) prunes the directory, the daemon opens its
    lock file."""
    if os.geteuid() != 0:
        return
    with contextlib.suppress(OSError):
        owner = paths.directory("STATE_DIRECTORY").stat()
        os.chown(path, owner.st_uid, owner.st_gid, follow_symlinks=False)


def backups_directory() -> Path:
    """Where the daily timer keeps its archives (and `tablectl backup` without FILE writes)."""
    return paths.directory("STATE_DIRECTORY") / "backups"


def last_good_path() -> Path:
    from ..config.files import last_good_path as where

    return where()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def copy_journal(database: Path, into: Path) -> int:
    """The journal copied page by page by SQLite itself (the online backup API): the daemon keeps
    writing, and the copy is the database as one transaction saw it. Its schema version back."""
    source = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
    target = sqlite3.connect(into)
    try:
        source.backup(target, pages=256)  # in steps: the daemon's writer is never held up for long
        target.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
        return int(target.execute("PRAGMA user_version").fetchone()[0])
    finally:
        target.close()
        source.close()


def backup(target: Path | None, keep: int | None = None) -> dict[str, Any]:
    """Write one archive (at `target`, a file or a directory; default: the backups directory) and,
    with `keep`, remove the oldest of this directory's timestamped archives beyond that many."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    if target is None:
        target = backups_directory()
        try:
            target.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise Refused(f"cannot make {target}: {exc.strerror or exc}") from None
        owned_like_state(target)
    if target.is_dir():
        target = target / f"{PREFIX}{stamp}.tar.gz"
    elif not target.parent.is_dir():
        raise Refused(f"cannot write {target}: there is no directory {target.parent}")
    database = paths.state_database()
    files: dict[str, bytes] = {}
    schema = None
    with tempfile.TemporaryDirectory(prefix=".backup-", dir=target.parent) as work:
        if database.exists():
            copy = Path(work) / JOURNAL
            try:
                schema = copy_journal(database, copy)
            except sqlite3.Error as exc:
                raise Refused(f"cannot copy the journal {database}: {exc}") from None
            files[JOURNAL] = copy.read_bytes()
    for name, path in ((CONFIG, paths.config_file()), (LAST_GOOD, last_good_path())):
        try:
            files[name] = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise Refused(f"cannot read {path}: {exc.strerror or exc}") from None
    if not files:
        raise Refused(f"nothing to back up: no journal at {database}, "
                      f"no configuration at {paths.config_file()}")
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "host": socket.gethostname(),
                "table_host": describe(), "schema": schema,
                "files": {name: {"sha256": _sha256(data), "bytes": len(data)}
                          for name, data in files.items()}}
    members = {MANIFEST: json.dumps(manifest, indent=2).encode() + b"\n", **files}
    from ..system.atomic import replace_whole

    def write(out: Any) -> None:
        with tarfile.open(fileobj=out, mode="w:gz") as tar:
            for name, data in members.items():
                info = tarfile.TarInfo(f"{TOP}/{name}")
                info.size, info.mtime, info.mode = len(data), int(time.time()), 0o600
                tar.addfile(info, io.BytesIO(data))

    try:  # a kill leaves the old archives and no half one under its name
        replace_whole(target, write, 0o600)
    except OSError as exc:
        raise Refused(f"cannot write {target}: {exc.strerror or exc}") from None
    if target.parent == backups_directory():
        owned_like_state(target)
    removed = prune(target.parent, keep) if keep is not None else []
    return {"ok": True, "file": str(target.absolute()), "bytes": target.stat().st_size,
            "matches": _count_matches(files.get(JOURNAL)), "schema": schema,
            "holds": list(files), "removed": [str(p) for p in removed]}


def _count_matches(journal: bytes | None) -> int:
    if journal is None:
        return 0
    with tempfile.NamedTemporaryFile(suffix=".db") as f:
        f.write(journal)
        f.flush()
        with contextlib.closing(sqlite3.connect(f.name)) as db:
            try:
                return int(db.execute("SELECT COUNT(*) FROM matches").fetchone()[0])
            except sqlite3.Error:
                return 0


def prune(directory: Path, keep: int) -> list[Path]:
    """The oldest timestamped archives beyond `keep` (named by `backup`, so the names sort by
    time); any other file in the directory is left alone."""
    ours = sorted(p for p in directory.glob(f"{PREFIX}*.tar.gz") if p.is_file() and not p.is_symlink())
    gone = ours[:-keep] if keep > 0 else ours
    for path in gone:
        path.unlink()
    return gone


# ------------------------------------------------------------------ restore


def read_archive(archive: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The manifest and the files, every one checked against it: anything else is refused with one
    line naming what is wrong, before anything is touched."""
    from ..service.database import SCHEMA_VERSION  # the schema this table-host reads

    try:
        tar = tarfile.open(archive, mode="r:gz")  # noqa: SIM115 - closed by the `with` below
    except FileNotFoundError:
        raise Refused(f"{archive}: no such file") from None
    except (tarfile.TarError, OSError, EOFError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise Refused(f"{archive} is not a table-host backup: not a readable tar.gz ({why})") from None
    members: dict[str, bytes] = {}
    try:
        with tar:
            for info in tar:
                name = info.name.removeprefix(f"{TOP}/")
                if info.name != f"{TOP}/{name}" or name not in (MANIFEST, *KNOWN):
                    raise Refused(f"{archive} is not a table-host backup: it holds {info.name!r}")
                if not info.isfile() or info.size > MAX_MEMBER_BYTES:
                    raise Refused(f"{archive} is not a table-host backup: {info.name!r} is not a plain file")
                handle = tar.extractfile(info)
                members[name] = handle.read() if handle is not None else b""
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise Refused(f"{archive} is damaged: {why}") from None
    if MANIFEST not in members:
        raise Refused(f"{archive} is not a table-host backup: no {TOP}/{MANIFEST}")
    try:
        manifest = json.loads(members.pop(MANIFEST))
    except ValueError:
        raise Refused(f"{archive} is damaged: its manifest is not JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise Refused(f"{archive} is not a table-host backup: its manifest is another program's")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise Refused(f"{archive} is a table-host backup of format {manifest.get('format_version')!r}: this "
                      f"table-host reads format {FORMAT_VERSION}; update the table first")
    listed = manifest.get("files")
    if not isinstance(listed, dict) or set(listed) != set(members):
        raise Refused(f"{archive} is damaged: its manifest lists {sorted(listed or [])}, "
                      f"it holds {sorted(members)}")
    for name, data in members.items():
        if not isinstance(listed[name], dict) or listed[name].get("sha256") != _sha256(data):
            raise Refused(f"{archive} is damaged: {name}'s checksum is not the one its manifest says")
    schema = manifest.get("schema")
    if JOURNAL in members:
        if not isinstance(schema, int) or schema > SCHEMA_VERSION:
            made = manifest.get("table_host", {}).get("version", "?")
            raise Refused(f"{archive} holds a journal of schema {schema} (table-host {made}); this "
                          f"table-host reads schema {SCHEMA_VERSION} and older: update the table first")
        _check_journal(archive, members[JOURNAL], schema)
    for name in (CONFIG, LAST_GOOD):
        if name in members:
            _check_config(archive, name, members[name])
    return manifest, members


def _check_journal(archive: Path, data: bytes, schema: int) -> None:
    with tempfile.NamedTemporaryFile(suffix=".db") as f:
        f.write(data)
        f.flush()
        try:
            with contextlib.closing(sqlite3.connect(f"file:{f.name}?mode=ro", uri=True)) as db:
                check = db.execute("PRAGMA integrity_check").fetchone()[0]
                version = db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.Error as exc:
            raise Refused(f"{archive} is damaged: its journal does not open ({exc})") from None
    if check != "ok":
        raise Refused(f"{archive} is damaged: its journal fails SQLite's integrity check ({check})")
    if version != schema:
        raise Refused(f"{archive} is damaged: its journal is schema {version}, its manifest says {schema}")


def _check_config(archive: Path, name: str, data: bytes) -> None:
    from ..config.load import parse_bytes
    from ..system.errors import ConfigError

    try:
        parse_bytes(data, Path(name))
    except ConfigError as exc:
        raise Refused(f"{archive}: its {name} is not a configuration this table-host runs: "
                      f"{'; '.join(exc.problems)}") from None


def _locked(database: Path) -> int | None:
    """The daemon's own lock (cli/run.py `hold_table`), taken: no table runs on this state while
    it is held, and none can start. None: a table holds it."""
    import fcntl

    database.parent.mkdir(parents=True, exist_ok=True)
    lock = database.with_name(database.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o660)
    owned_like_state(lock)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _systemctl(*args: str) -> subprocess.CompletedProcess[str] | None:
    """systemctl, or None without one. A start waits for READY=1, which a loaded Pi may take long
    to say: a limit passed is an answer (status 124), not a traceback."""
    if shutil.which("systemctl") is None:
        return None
    try:
        return subprocess.run(["systemctl", *args], capture_output=True, text=True, timeout=600, check=False)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(["systemctl", *args], 124, "",
                                           f"systemctl {' '.join(args)} did not finish in 600 s")


def said(done: subprocess.CompletedProcess[str] | None) -> str:
    """What systemctl said, in one line: its "Job for ... failed" comes in two."""
    if done is None:
        return "no systemctl"
    return " ".join((done.stderr or done.stdout).split()) or f"exit {done.returncode}, see journalctl"


def _service_active() -> bool:
    done = _systemctl("is-active", "--quiet", SERVICE)
    return done is not None and done.returncode == 0


def _write(path: Path, data: bytes, like: Path | None, mode: int) -> None:
    """A whole file put in place by a rename (a power cut leaves the old or the new), with the
    owner and mode of the file it replaces (the service's user, the admin group's configuration);
    a new one, as root, belongs to its directory's owner."""
    from ..system.atomic import replace_whole

    there = like is not None and like.exists()
    replace_whole(path, lambda f: f.write(data), mode, like if there else None)
    if not there and os.geteuid() == 0:
        info = path.parent.stat()
        os.chown(path, info.st_uid, info.st_gid, follow_symlinks=False)


def restore(archive: Path, say: Any = print) -> dict[str, Any]:
    """Check the archive; stop the service (a table started by hand is refused: quit it first);
    move the current journal and configuration aside; put the archive's in place; start again."""
    manifest, members = read_archive(archive)
    database = paths.state_database()
    stopped = False
    lock = _locked(database)
    if lock is None:
        if not _service_active():
            raise Refused(f"a table runs on {database}: quit it, then restore (nothing was changed)")
        say(f"stopping {SERVICE}")
        done = _systemctl("stop", SERVICE)
        if done is None or done.returncode != 0:
            raise Refused(f"cannot stop {SERVICE}: {said(done)} (nothing was changed)")
        stopped = True
        lock = _locked(database)
        if lock is None:
            raise Refused(f"{SERVICE} stopped, but a table still holds {database} (nothing was changed)")
    try:
        aside = _set_aside(database)
        say(f"the current state is kept in {aside}")
        config, last_good = paths.config_file(), last_good_path()
        if JOURNAL in members:
            for extra in ("-wal", "-shm"):  # moved aside with it: never applied to the restored file
                with contextlib.suppress(FileNotFoundError):
                    database.with_name(database.name + extra).unlink()
            _write(database, members[JOURNAL], database, 0o600)
        if CONFIG in members:
            config.parent.mkdir(parents=True, exist_ok=True)
            _write(config, members[CONFIG], config, 0o660)
        if LAST_GOOD in members:
            _write(last_good, members[LAST_GOOD], last_good, 0o600)
    finally:
        os.close(lock)
    started = None
    if stopped:
        say(f"starting {SERVICE}")
        done = _systemctl("start", SERVICE)
        started = done is not None and done.returncode == 0
        if not started:
            raise Refused(f"restored from {archive}, but {SERVICE} did not start: {said(done)}; "
                          f"the earlier state is in {aside}")
    return {"ok": True, "file": str(archive), "restored": sorted(members), "schema": manifest.get("schema"),
            "made_by": manifest.get("table_host"), "created": manifest.get("created"),
            "set_aside": str(aside), "restarted": started}


def _set_aside(database: Path) -> Path:
    """Copies of the journal (with its -wal and -shm, as SQLite would open them again) and the
    configuration, in `before-restore-TIME/` beside the journal: restored from as any backup's."""
    aside = database.parent / f"before-restore-{time.strftime('%Y%m%d-%H%M%S')}"
    n = 1
    while aside.exists():
        n += 1
        aside = aside.with_name(f"{aside.name.split('.')[0]}.{n}")
    aside.mkdir(mode=0o700, parents=True)
    for source, name in ((database, JOURNAL), (database.with_name(database.name + "-wal"), JOURNAL + "-wal"),
                         (database.with_name(database.name + "-shm"), JOURNAL + "-shm"),
                         (paths.config_file(), CONFIG), (last_good_path(), LAST_GOOD)):
        if source.exists():
            shutil.copy2(source, aside / name)
    return aside


def the_service_state() -> None:
    """`sudo tablectl backup|restore|update` on an installed table works on the service's state.
    systemd gives the service STATE_DIRECTORY and CONFIGURATION_DIRECTORY; sudo gives tablectl
    neither, and the fallback was root's own XDG state (~/.local/state/table-host): under systemd
    in the virtual Pi a backup held no journal, and a restore put nothing back and stopped
    nothing. Set (unless already set) when root runs the tablectl of /opt/table-host/versions/*."""
    venv = Path(sys.prefix)
    installed = venv.name == "venv" and venv.parent.parent.name == "versions"
    if os.geteuid() == 0 and installed:
        for name, path in paths.DEFAULTS.items():
            os.environ.setdefault(name, path)


def main_backup(target: str | None, keep: int | None, as_json: bool) -> int:
    try:
        report = backup(Path(target) if target else None, keep)
    except Refused as exc:
        return _failed(f"backup: {exc}", as_json)
    if as_json:
        print(json.dumps(report))
    else:
        size = f"{report['bytes'] / 1e3:.0f} kB"
        print(f"wrote {report['file']} ({size}: {', '.join(report['holds'])}; "
              f"{report['matches']} matches, journal schema {report['schema']})")
        for gone in report["removed"]:
            print(f"removed {gone} (kept the newest {keep})")
    return 0


def main_restore(archive: str, as_json: bool) -> int:
    out = sys.stderr if as_json else sys.stdout
    try:
        report = restore(Path(archive), say=lambda line: print(line, file=out, flush=True))
    except Refused as exc:
        return _failed(f"restore: {exc}", as_json)
    except OSError as exc:
        return _failed(f"restore: {exc.strerror or exc} ({getattr(exc, 'filename', '')})", as_json)
    if as_json:
        print(json.dumps(report))
    else:
        made = report.get("made_by") or {}
        print(f"restored {', '.join(report['restored'])} from {report['file']} (made {report['created']} by "
              f"table-host {made.get('version', '?')}); the earlier state is in {report['set_aside']}")
        if report["restarted"] is None:
            print("no table was running: the next start runs on the restored state")
    return 0


def _failed(message: str, as_json: bool) -> int:
    print(f"tablectl: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps({"ok": False, "error": message}))
    return 1
