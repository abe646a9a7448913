"""Where the table keeps things.

As a service, systemd names the directories (CONFIGURATION_DIRECTORY, STATE_DIRECTORY,
RUNTIME_DIRECTORY, from the unit's ConfigurationDirectory= etc.); those variables come first, so
tests and the virtual Pi set them too. Anywhere else the XDG base directories are used: a table
started by hand is its user's, whichever checkout starts it (a second clone resumes the first's
match, and `tablectl` finds it), and two users never share a match or a socket:

    configuration  $XDG_CONFIG_HOME/table-host   (~/.config/table-host); /etc/table-host when only it
                                                  holds a table.toml
    state          $XDG_STATE_HOME/table-host    (~/.local/state/table-host)
    runtime        $XDG_RUNTIME_DIR/table-host   (else /tmp/table-host-UID, private: 0700, ours, not a link)

`tablectl` looks for the control socket in TABLE_HOST_SOCKET if set, else RUNTIME_DIRECTORY's,
else the user's own (the XDG runtime directory), then the service's (/run/table-host): the first
that exists. So root on the Pi, or a member of the admin group over SSH, reaches the service with no
variables set, and a laptop's own table is found first.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import PathError

SYSTEM = {
    "CONFIGURATION_DIRECTORY": Path("/etc/table-host"),
    "STATE_DIRECTORY": Path("/var/lib/table-host"),
    "RUNTIME_DIRECTORY": Path("/run/table-host"),
}
DEFAULTS = {name: str(path) for name, path in SYSTEM.items()}  # the service's, as the unit sets them
NAME = "table-host"
ADMIN_GROUP = "table-admin"
"""The group whose members may control the table (the control socket's group, docs/daemon.md)."""


def _xdg(variable: str, fallback: str) -> Path:
    """An XDG base directory: relative values are invalid and ignored, as the specification says."""
    value = os.environ.get(variable, "")
    return Path(value) if value and os.path.isabs(value) else Path.home() / fallback


def _service(variable: str) -> Path | None:
    """The first path systemd put in `variable` (it may list several)."""
    value = os.environ.get(variable, "").split(":")[0]
    return Path(value) if value else None


def private_runtime() -> Path:
    return Path(os.environ.get("TMPDIR") or "/tmp") / f"{NAME}-{os.getuid()}"


def user_runtime() -> Path:
    """The user's runtime directory (not created): the XDG one, else the private fallback."""
    value = os.environ.get("XDG_RUNTIME_DIR", "")
    if value and os.path.isabs(value):
        return Path(value) / NAME
    return private_runtime()


def directory(variable: str) -> Path:
    """Where `variable`'s directory is (not created): systemd's, else the XDG one."""
    service = _service(variable)
    if service is not None:
        return service
    if variable == "CONFIGURATION_DIRECTORY":
        return _xdg("XDG_CONFIG_HOME", ".config") / NAME
    if variable == "STATE_DIRECTORY":
        return _xdg("XDG_STATE_HOME", ".local/state") / NAME
    if variable == "RUNTIME_DIRECTORY":
        return user_runtime()
    raise KeyError(variable)


def config_file() -> Path:
    """The configuration: the service's directory, else the user's file, else the system's
    (/etc/table-host/table.toml: a box's one configuration, readable by anyone who runs the table
    by hand), else the user's path, where `table-host run` says it found none."""
    if _service("CONFIGURATION_DIRECTORY") is not None:
        return directory("CONFIGURATION_DIRECTORY") / "table.toml"
    user = directory("CONFIGURATION_DIRECTORY") / "table.toml"
    system = SYSTEM["CONFIGURATION_DIRECTORY"] / "table.toml"
    return system if not _anything_at(user) and _anything_at(system) else user


def _anything_at(path: Path) -> bool:
    """Something is there, or might be: a link to nothing, or a directory that may not be searched,
    is still the operator's file, and what is wrong with it is said when it is read."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return True


def state_database() -> Path:
    return directory("STATE_DIRECTORY") / "table.db"


def runtime_directory() -> Path:
    """The runtime directory, made if missing, for the daemon. The private fallback in /tmp must be
    ours, a real directory and closed to others, or someone else could plant the socket."""
    path = directory("RUNTIME_DIRECTORY")
    private = _service("RUNTIME_DIRECTORY") is None and path == private_runtime()
    try:
        path.mkdir(mode=0o700 if private else 0o777, parents=not private, exist_ok=True)
        info = path.lstat()
    except OSError as exc:
        raise PathError(f"runtime directory {path}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise PathError(f"runtime directory {path} is not a directory (a link or a file?): remove it "
                        "or set XDG_RUNTIME_DIR")
    if private and (info.st_uid != os.getuid() or info.st_mode & 0o077):
        raise PathError(f"runtime directory {path} is not private to uid {os.getuid()} (owner uid "
                        f"{info.st_uid}, mode {stat.S_IMODE(info.st_mode):o}): remove it or set "
                        "XDG_RUNTIME_DIR")
    if not os.access(path, os.W_OK | os.X_OK):
        raise PathError(f"runtime directory {path}: not writable by uid {os.getuid()} "
                        "(set XDG_RUNTIME_DIR or RUNTIME_DIRECTORY)")
    return path


def control_socket() -> Path:
    """Where the daemon makes its socket: TABLE_HOST_SOCKET (tests, emulation), else the runtime
    directory's control.sock."""
    explicit = os.environ.get("TABLE_HOST_SOCKET")
    return Path(explicit) if explicit else directory("RUNTIME_DIRECTORY") / "control.sock"


def socket_candidates() -> list[Path]:
    """Where `tablectl` looks, in order (see the module's docstring)."""
    explicit = os.environ.get("TABLE_HOST_SOCKET")
    if explicit:
        return [Path(explicit)]
    service = _service("RUNTIME_DIRECTORY")
    if service is not None:
        return [service / "control.sock"]
    own = user_runtime() / "control.sock"
    system = SYSTEM["RUNTIME_DIRECTORY"] / "control.sock"
    return [own] if own == system else [own, system]


def _trusted(sock: Path) -> bool:
    """A socket in the /tmp fallback counts only if its directory is ours and private."""
    if sock.parent != private_runtime():
        return True
    try:
        info = sock.parent.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def find_socket() -> Path:
    """The socket `tablectl` talks to: the first candidate that exists, else the first one."""
    candidates = socket_candidates()
    for sock in candidates:
        try:
            if _trusted(sock) and sock.is_socket():
                return sock
        except PermissionError:  # there, but closed to us: tablectl says so (the admin group)
            return sock
    return candidates[0]
