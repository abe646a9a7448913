"""`tablectl`: the table's SSH tool. Talks to the daemon's control socket.

    tablectl status                  tablectl new dice [handicap=7,7,5,5 ...]
    tablectl start | abort | next    tablectl bots 2 [--level hard]
    tablectl scores | history | seats

Human output by default, `--json` for scripts (one JSON object). Exit 0 when
the table did it, 1 when it refused or is not running, 2 for a bad command line.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_RUNTIME = "/run/table-host"


def socket_path() -> Path:
    """TABLE_HOST_SOCKET, else $RUNTIME_DIRECTORY/control.sock, else /run/table-host/control.sock."""
    explicit = os.environ.get("TABLE_HOST_SOCKET")
    if explicit:
        return Path(explicit)
    runtime = os.environ.get("RUNTIME_DIRECTORY", DEFAULT_RUNTIME).split(":")[0]
    return Path(runtime) / "control.sock"


class NotRunning(RuntimeError):
    pass


def ask(body: dict[str, Any], path: Path | None = None, timeout: float = 10.0) -> dict[str, Any]:
    path = path or socket_path()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(path))
            sock.sendall(json.dumps(body).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
    except (FileNotFoundError, ConnectionRefusedError):
        raise NotRunning(f"the table daemon is not running (no control socket at {path})") from None
    except PermissionError:
        raise NotRunning(f"permission denied on {path} (are you in the table's admin group?)") from None
    except OSError as exc:
        raise NotRunning(f"cannot reach the daemon at {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        raise NotRunning(f"the daemon at {path} gave no answer") from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tablectl", description="Control the Ligretto table.")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("status", "start", "abort", "next", "scores", "seats"):
        sub.add_parser(name)
    new = sub.add_parser("new", help="choose the next game")
    new.add_argument("game")
    new.add_argument("options", nargs="*", metavar="KEY=VALUE")
    bots = sub.add_parser("bots", help="how many bots join the next match")
    bots.add_argument("count", type=int)
    bots.add_argument("--level", default="medium")
    history = sub.add_parser("history")
    history.add_argument("--limit", type=int, default=20)
    config = sub.add_parser("config", help="check, get or reload the configuration")
    config.add_argument("action", choices=("check", "get", "reload"))
    config.add_argument("arg", nargs="?", help="check: a file to check; get: a dotted key")
    return p


def request_for(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {"cmd": args.cmd}
    if args.cmd == "new":
        options = {}
        for item in args.options:
            key, sep, value = item.partition("=")
            if not sep:
                raise SystemExit(f"tablectl: option {item!r} is not key=value")
            options[key] = value
        body |= {"game": args.game, "options": options}
    elif args.cmd == "bots":
        body |= {"count": args.count, "level": args.level}
    elif args.cmd == "history":
        body["limit"] = args.limit
    elif args.cmd == "config":
        body["action"] = args.action
        if args.arg:
            body["path" if args.action == "check" else "key"] = args.arg
    return body


def human(answer: dict[str, Any]) -> str:
    lines = []
    for key, value in answer.items():
        if key == "ok":
            continue
        if isinstance(value, list | dict):
            value = json.dumps(value)
        lines.append(f"{key.replace('_', ' ')}: {value}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        answer = ask(request_for(args))
    except NotRunning as exc:
        print(f"tablectl: {exc}", file=sys.stderr)
        return 1
    if not answer.get("ok"):
        print(f"tablectl: {answer.get('error', 'refused')}", file=sys.stderr)
        if args.json:
            print(json.dumps(answer))
        return 1
    print(json.dumps(answer) if args.json else human(answer))
    if answer.get("valid") is False or answer.get("reloaded") is False:
        for problem in answer.get("problems", []):
            print(f"tablectl: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
