"""`tablectl`, the SSH tool for the table daemon.

The daemon and its control API come with the appliance work (issue 5). Until
then this finds the control socket the way the daemon will place it and says
plainly when no daemon is listening there.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

DEFAULT_RUNTIME = "/run/table-host"


def socket_path() -> Path:
    """TABLE_HOST_SOCKET, else $RUNTIME_DIRECTORY/control.sock, else /run/table-host/control.sock."""
    explicit = os.environ.get("TABLE_HOST_SOCKET")
    if explicit:
        return Path(explicit)
    runtime = os.environ.get("RUNTIME_DIRECTORY", DEFAULT_RUNTIME).split(":")[0]
    return Path(runtime) / "control.sock"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tablectl", description="Control the table daemon.")
    parser.add_argument("command", nargs="?", default="status")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    path = socket_path()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(2.0)
            sock.connect(str(path))
    except FileNotFoundError:
        print(f"tablectl: the table daemon is not running (no control socket at {path})",
              file=sys.stderr)
        return 1
    except PermissionError:
        print(f"tablectl: permission denied on {path} (are you in the table's admin group?)",
              file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"tablectl: cannot reach the daemon at {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"tablectl: a daemon listens at {path}, but this tablectl cannot speak its "
          f"control protocol yet ('{args.command}' not sent)", file=sys.stderr)
    return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
