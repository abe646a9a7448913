"""Where the table keeps things: systemd's directory variables, or the usual paths."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULTS = {
    "CONFIGURATION_DIRECTORY": "/etc/table-host",
    "STATE_DIRECTORY": "/var/lib/table-host",
    "RUNTIME_DIRECTORY": "/run/table-host",
}


def directory(variable: str) -> Path:
    """The first path systemd put in `variable` (it may list several), or the default."""
    return Path(os.environ.get(variable, "").split(":")[0] or DEFAULTS[variable])


def config_file() -> Path:
    return directory("CONFIGURATION_DIRECTORY") / "table.toml"


def state_database() -> Path:
    return directory("STATE_DIRECTORY") / "table.db"


def control_socket() -> Path:
    """TABLE_HOST_SOCKET overrides the runtime directory's control.sock (tests, emulation)."""
    explicit = os.environ.get("TABLE_HOST_SOCKET")
    return Path(explicit) if explicit else directory("RUNTIME_DIRECTORY") / "control.sock"
