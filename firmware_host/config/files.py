"""The configuration file on disk: which one to run, the last good copy kept beside the state,
and changing one setting in place (`tablectl config set`) without ever leaving half a file."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any

from ..system import paths
from ..system.atomic import replace_whole
from ..system.errors import ConfigError
from ..system.logs import logger
from ..system.systemd import under_systemd
from .load import as_emulated, emulated_config, load_config, one_line, parse_config, read_config
from .schema import TableConfig

config_log = logger("config")


def config_path(explicit: str | None) -> Path:
    return Path(explicit).absolute() if explicit else paths.config_file()


def last_good_path() -> Path:
    return paths.directory("STATE_DIRECTORY") / "last-good.toml"


_remembering = threading.Lock()  # two reloads at once must not write the same temporary file


def remember_good(data: bytes) -> None:
    """Keep the bytes of a configuration that loaded, to start on if the file breaks later: the
    bytes that were checked, never the file read again (it may have changed since)."""
    target = last_good_path()
    with _remembering:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            replace_whole(target, lambda f: f.write(data))  # the old copy or the new, never a part
        except OSError as exc:
            config_log.warning("cannot keep the last good configuration in %s: %s", target,
                               exc.strerror or exc)


def clean_stale_copies() -> list[Path]:
    """A kill between writing the temporary copy and renaming it leaves `.last-good.toml.<pid>`:
    at start (one daemon to a state directory, its lock held) none of them is anyone's."""
    target = last_good_path()
    removed = []
    with contextlib.suppress(OSError):
        for stale in target.parent.glob(f".{target.name}.*"):
            with contextlib.suppress(OSError):
                stale.unlink()
                removed.append(stale)
    if removed:
        config_log.info("removed %s left by a process that was killed while keeping the last good "
                        "configuration", ", ".join(p.name for p in removed))
    return removed


class DanglingLink(ConfigError):
    """table.toml is a symbolic link to nothing (a card not mounted, a file renamed)."""


def _unsearchable(path: Path) -> Path:
    """The directory on the way to `path` that this process may not search."""
    for directory in reversed(path.parents):
        if not os.access(directory, os.X_OK):
            return directory
    return path.parent


def find_config(path: Path) -> bool:
    """Is there a configuration file at `path`? False only when nothing is there at all; a
    ConfigError when something is there that cannot be used, or cannot even be looked at."""
    try:
        os.stat(path)
        return True
    except FileNotFoundError:
        pass
    except PermissionError:
        raise ConfigError([f"{path}: cannot look for it: {_unsearchable(path)} may not be searched "
                           f"(permission denied)"]) from None
    except OSError as exc:  # ELOOP, ENOTDIR, EIO, ...
        raise ConfigError([f"{path}: cannot look for it: {exc.strerror or exc}"]) from None
    try:
        target = os.readlink(path)
    except OSError:
        return False
    raise DanglingLink([f"{path} is a symbolic link to {target}, which does not exist"])


def choose_config(path: Path, emulate: bool, named: bool = False) -> tuple[TableConfig, str]:
    """The configuration to run and any problem to keep saying. Which hardware it drives is
    the file's `[hardware]` (or `--emulate`), never a guess. No file: the 4-seat build,
    emulated, said loudly; as a service that is an error, since a service must drive hardware.
    A file the operator `named` (--config) must be there."""
    clean_stale_copies()
    problem = ""
    broken: ConfigError | None = None
    config: TableConfig | None = None
    try:
        there = find_config(path)
    except DanglingLink as exc:
        if named:
            raise
        broken, there = exc, False
    except ConfigError as exc:  # a directory that may not be searched: the last good copy runs
        broken, there = exc, False
    if not there and broken is None and named:
        raise ConfigError([f"{path}: no such file (named by --config)"])
    if there:
        try:
            config, raw = read_config(path)
            remember_good(raw)
        except ConfigError as exc:
            broken = exc
    if broken is not None and _there(last_good_path()):
        try:
            config = load_config(last_good_path())
        except ConfigError as copy:
            raise ConfigError([*broken.problems, f"and the last good copy is unusable: {copy}"]) from None
        problem = f"configuration invalid, running the last good one: {broken}"
        config_log.error("%s", problem)
    elif broken is not None and not isinstance(broken, DanglingLink):
        raise broken
    elif broken is not None:
        problem = f"{broken}, and there is no last good copy"
    if config is None:
        if under_systemd() and not emulate:
            raise ConfigError([f"{problem or f'{path}: no configuration file'}; the service drives the "
                               "hardware that file names (systemd/install.sh puts the 4-seat build there)"])
        config = emulated_config(4)
        config_log.warning("%s: running the 4-seat build (hardware/wiring/4-seat.toml), emulated",
                           problem or f"no configuration file at {path}")
    if emulate and config.hardware.backend != "emulated":
        config = as_emulated(config)
        config_log.warning("--emulate: every part emulated, whatever the configuration's [hardware] says")
    return config, problem


def _there(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def _index(part: str) -> int:
    """`inputs.seats.1` is the first [[inputs.seats]], as `config get` and the checks count."""
    if int(part) < 1:
        raise IndexError(part)
    return int(part) - 1


def set_config(path: Path, key: str, text: str) -> None:
    """Change one setting, keeping the file's comments; refuse anything the table would
    refuse; replace the file in one step so the daemon never reads half of it."""
    import tomllib

    import tomlkit

    try:
        doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError([f"{path}: cannot read: {exc.strerror or exc}"]) from None
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError([f"{path}: {exc}"]) from None
    except (ValueError, RecursionError) as exc:  # whatever else the parser may raise
        raise ConfigError([f"{path}: {one_line(exc)}"]) from None
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text  # a bare word is text
    except (ValueError, RecursionError) as exc:  # an integer past Python's limit, nesting too deep
        raise ConfigError([f"{key}: {text[:40]!r}: {one_line(exc)}"]) from None
    node: Any = doc
    parts = key.split(".")
    for part in parts[:-1]:
        try:
            node = node[_index(part)] if part.isdigit() else node[part]
        except (KeyError, IndexError, TypeError):
            raise ConfigError([f"{path}: no setting {key!r}"]) from None
    try:
        node[_index(parts[-1]) if parts[-1].isdigit() else parts[-1]] = value
    except (IndexError, TypeError):
        raise ConfigError([f"{path}: no setting {key!r}"]) from None
    new_text = tomlkit.dumps(doc)
    try:
        parse_config(tomllib.loads(new_text), path.name, new_text)  # raises ConfigError, file untouched
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError([f"{path}: {one_line(exc)}"]) from None
    try:  # its mode and group kept; the old file or the new, never a part
        replace_whole(path, lambda f: f.write(new_text.encode()), like=path)
    except PermissionError:  # the directory: a file of its own beside table.toml is refused
        raise ConfigError([f"cannot write {path.parent}: permission denied (config set needs root or "
                           f"the {paths.ADMIN_GROUP} group, which install.sh gives {path.parent}: "
                           "log in again after joining it)"]) from None
    except OSError as exc:
        raise ConfigError([f"cannot write {path}: {exc.strerror or exc}"]) from None
