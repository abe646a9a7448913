"""The configuration file on disk: which one to run, the last good copy kept beside the state,
and changing one setting in place (`tablectl config set`) without ever leaving half a file."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from ..system import paths
from ..system.errors import ConfigError
from ..system.logs import logger
from ..system.systemd import under_systemd
from .load import as_emulated, emulated_config, load_config, parse_config
from .schema import TableConfig

config_log = logger("config")


def config_path(explicit: str | None) -> Path:
    return Path(explicit).absolute() if explicit else paths.config_file()


def last_good_path() -> Path:
    return paths.directory("STATE_DIRECTORY") / "last-good.toml"


def remember_good(path: Path) -> None:
    """Keep a copy of a configuration that loaded, to start on if the file breaks later."""
    target = last_good_path()
    temporary = target.with_name(f".{target.name}.{os.getpid()}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        data = path.read_bytes()
        with open(temporary, "wb") as f:  # written whole beside it, then put in its place:
            f.write(data)                 # a kill or a power cut leaves the old copy or the new
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, target)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()


def choose_config(path: Path, emulate: bool) -> tuple[TableConfig, str]:
    """The configuration to run and any problem to keep saying. Which hardware it drives is
    the file's `[hardware]` (or `--emulate`), never a guess. No file: the 4-seat build,
    emulated, said loudly; as a service that is an error, since a service must drive hardware."""
    problem = ""
    if path.exists():
        try:
            config = load_config(path)
            remember_good(path)
        except ConfigError as exc:
            if not last_good_path().exists():
                raise
            config = load_config(last_good_path())
            problem = f"configuration invalid, running the last good one: {exc}"
            config_log.error("%s", problem)
    elif under_systemd() and not emulate:
        raise ConfigError([f"{path}: no configuration file; the service drives the hardware that "
                           "file names (systemd/install.sh puts the 4-seat build there)"])
    else:
        config = emulated_config(4)
        config_log.warning("no configuration file at %s: running the 4-seat build "
                           "(hardware/wiring/4-seat.toml), emulated", path)
    if emulate and config.hardware.backend != "emulated":
        config = as_emulated(config)
        config_log.warning("--emulate: every part emulated, whatever the configuration's [hardware] says")
    return config, problem


def _index(part: str) -> int:
    """`inputs.seats.1` is the first [[inputs.seats]], as `config get` and the checks count."""
    if int(part) < 1:
        raise IndexError(part)
    return int(part) - 1


def set_config(path: Path, key: str, text: str) -> None:
    """Change one setting, keeping the file's comments; refuse anything the table would
    refuse; replace the file in one step so the daemon never reads half of it."""
    import tempfile
    import tomllib

    import tomlkit

    try:
        doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError([f"{path}: cannot read: {exc.strerror or exc}"]) from None
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError([f"{path}: {exc}"]) from None
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text  # a bare word is text
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
    parse_config(tomllib.loads(new_text), path.name, new_text)  # raises ConfigError, file untouched
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".table.toml.")
    except PermissionError:
        raise ConfigError([f"cannot write {path.parent}: permission denied (config set needs root or "
                           f"the {paths.ADMIN_GROUP} group, which install.sh gives {path.parent}: "
                           "log in again after joining it)"]) from None
    except OSError as exc:
        raise ConfigError([f"cannot write {path.parent}: {exc.strerror or exc}"]) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(new_text)
            f.flush()
            os.fsync(f.fileno())
        st = path.stat()
        os.chmod(tmp, st.st_mode & 0o777)
        with contextlib.suppress(PermissionError):
            os.chown(tmp, st.st_uid, st.st_gid)
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError([f"cannot write {path}: {exc.strerror or exc}"]) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
