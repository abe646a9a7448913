"""`tablectl`: the table's SSH tool. Talks to the daemon's control socket.

    tablectl status                  tablectl new dice [handicap=7,7,5,5 ...]
    tablectl start | abort | next    tablectl bots 2 [--level hard]
    tablectl scores | history | seats
    tablectl selftest [--probe] [--seats 1,3] [--timeout S] | selftest --abort | selftest --report
    tablectl inputs                  what reached the engine, with edge and decision times

Human output by default, `--json` for scripts (one JSON object). Exit 0 when
the table did it, 1 when it refused or is not running, 2 for a bad command line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import paths
from .completion import describe_subcommands

socket_path = paths.control_socket


class NotRunning(RuntimeError):
    pass


def ask(body: dict[str, Any], path: Path | None = None, timeout: float = 10.0) -> dict[str, Any]:
    path = path or socket_path()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            connect(sock, path, time.monotonic() + CONNECT_WAIT_S)
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


CONNECT_WAIT_S = 5.0


def connect(sock: socket.socket, path: Path, deadline: float) -> None:
    """A full backlog answers EAGAIN at once (a Unix socket with a timeout does not wait for
    room): wait briefly and try again, until the deadline."""
    pause = 0.01
    while True:
        try:
            sock.connect(str(path))
            return
        except BlockingIOError:
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tablectl", description="Control the Ligretto table.")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name, text in (("status", "the table's phase, game, seats and totals, its hardware and priority"),
                       ("start", "start the chosen game with the seats that joined (and the bots)"),
                       ("abort", "end the match in progress, back to the lobby"),
                       ("next", "skip the rest of the round result: the next round counts down"),
                       ("scores", "the current match: scores round by round, totals, winners"),
                       ("seats", "the seats that joined, how many bots, how many seats are wired"),
                       ("inputs", "what reached the engine, with each edge's kernel time")):
        sub.add_parser(name, help=text)
    new = sub.add_parser("new", help="choose the next game")
    new.add_argument("game")
    new.add_argument("options", nargs="*", metavar="KEY=VALUE")
    bots = sub.add_parser("bots", help="how many bots join the next match")
    bots.add_argument("count", type=int)
    bots.add_argument("--level", default="medium")
    bundle = sub.add_parser("debug-bundle", help="everything useful for a bug report, in one file")
    bundle.add_argument("path", nargs="?", default="table-host-debug.tar.gz")
    history = sub.add_parser("history", help="the matches played, newest first, with their rounds")
    history.add_argument("--limit", type=int, default=20)
    config = sub.add_parser("config", help="check, get or reload the configuration")
    config.add_argument("action", choices=("check", "get", "set", "reload"))
    config.add_argument("arg", nargs="?", help="check: a file to check; get/set: a dotted key")
    config.add_argument("value", nargs="?", help="set: the new value, as TOML (4.5, true, \"text\")")
    config.add_argument("--file", help="check, set: the configuration file (default: the daemon's)")
    test = sub.add_parser("selftest", help="is the box wired right? probe every part, then walk the seats")
    test.add_argument("--probe", action="store_true", help="the parts only, no walk (scripts, CI)")
    test.add_argument("--seats", type=seat_list, help="walk only these seats, e.g. 1,3")
    test.add_argument("--timeout", type=float, default=10.0, metavar="S",
                      help="seconds to press each control (default 10)")
    test.add_argument("--abort", action="store_true", help="stop the running self-test")
    test.add_argument("--report", action="store_true", help="the running or last self-test's report")
    return describe_subcommands(p)


def seat_list(text: str) -> list[int]:
    try:
        seats = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of seat numbers like 1,3") from None
    if not seats or min(seats) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: seats are numbered from 1")
    return seats


POLL_S = 0.2


def selftest(args: argparse.Namespace) -> int:
    """Start (or abort, or look at) the self-test and follow it to its report: progress lines
    as they come (on stderr with --json, whose one object is the report)."""
    if args.abort:
        body: dict[str, Any] = {"cmd": "selftest", "action": "abort"}
    elif args.report:
        body = {"cmd": "selftest", "action": "status"}
    else:
        body = {"cmd": "selftest", "action": "start", "probe_only": args.probe, "timeout_s": args.timeout}
        if args.seats:
            body["seats"] = args.seats
    out = sys.stderr if args.json else sys.stdout
    printed = 0
    aborted = False
    try:
        answer = ask(body)
        while answer.get("ok"):
            report = answer["selftest"]
            for line in report["log"][printed:]:
                print(line, file=out, flush=True)
            printed = len(report["log"])
            if report["state"] not in ("probing", "walking"):
                break
            try:
                time.sleep(POLL_S)
                answer = ask({"cmd": "selftest", "action": "status"})
            except KeyboardInterrupt:  # Ctrl-C stops the test on the table too, then the report
                if aborted:
                    raise
                aborted = True
                print("tablectl: aborting the self-test", file=sys.stderr)
                ask({"cmd": "selftest", "action": "abort"})
    except NotRunning as exc:
        print(f"tablectl: {exc}", file=sys.stderr)
        return 1
    if refused(answer, args.json):
        return 1
    report = answer["selftest"]
    if args.json:
        print(json.dumps(report))
    elif report["problems"]:
        print(f"\n{len(report['problems'])} problem(s):")
        for line in report["problems"]:
            print(f"  {line}")
    return 0 if report["passed"] else 1


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
            body["key"] = args.arg
    return body


def refused(answer: dict[str, Any], as_json: bool) -> bool:
    """The daemon said no: its reason on stderr (and the answer itself with --json)."""
    if answer.get("ok"):
        return False
    print(f"tablectl: {answer.get('error', 'refused')}", file=sys.stderr)
    if as_json:
        print(json.dumps(answer))
    return True


def human(answer: dict[str, Any]) -> str:
    lines = []
    for key, value in answer.items():
        if key == "ok":
            continue
        if isinstance(value, list | dict):
            value = json.dumps(value)
        lines.append(f"{key.replace('_', ' ')}: {value}")
    return "\n".join(lines)


def config_file(explicit: str | None) -> Path:
    return Path(explicit) if explicit else paths.config_file()


def set_config(path: Path, key: str, text: str) -> None:
    """Change one setting, keeping the file's comments; refuse anything the table would
    refuse; replace the file in one step so the daemon never reads half of it."""
    import tempfile
    import tomllib

    import tomlkit

    from .config import ConfigError, parse_config

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
            node = node[int(part)] if part.isdigit() else node[part]
        except (KeyError, IndexError, TypeError):
            raise ConfigError([f"{path}: no setting {key!r}"]) from None
    node[int(parts[-1]) if parts[-1].isdigit() else parts[-1]] = value
    new_text = tomlkit.dumps(doc)
    parse_config(tomllib.loads(new_text), path.name, new_text)  # raises ConfigError, file untouched
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".table.toml.")
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
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def check_config(path: Path, as_json: bool) -> int:
    """Check a file here, with the caller's own rights: the daemon would read any file it can
    (and stall the game on a FIFO or a huge file) and tell what is in it."""
    from .config import ConfigError, load_config

    answer: dict[str, Any] = {"ok": True, "valid": True, "file": str(path)}
    try:
        load_config(path)
    except ConfigError as exc:
        answer |= {"valid": False, "problems": exc.problems}
    print(json.dumps(answer) if as_json else f"{path}: {'valid' if answer['valid'] else 'invalid'}")
    for problem in answer.get("problems", []):
        print(f"tablectl: {problem}", file=sys.stderr)
    return 0 if answer["valid"] else 1


def debug_bundle(path: Path) -> int:
    """A tar.gz with the daemon's own view, the configuration file and the service's log."""
    import io
    import subprocess
    import tarfile
    import time

    files: dict[str, bytes] = {}
    try:
        answer = ask({"cmd": "debug"})
        files["daemon.json"] = json.dumps(answer, indent=2, default=str).encode()
        config_path = answer.get("config_file")
        if config_path and Path(config_path).exists():
            files["table.toml"] = Path(config_path).read_bytes()
    except NotRunning as exc:
        files["daemon.txt"] = str(exc).encode()
    try:
        log = subprocess.run(["journalctl", "-u", "table-host", "-n", "2000", "--no-pager"],
                             capture_output=True, timeout=20).stdout
        files["journal.txt"] = log or b"(no journal entries)"
    except (OSError, subprocess.SubprocessError) as exc:
        files["journal.txt"] = f"journalctl: {exc}".encode()
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"table-host-debug/{name}")
            info.size, info.mtime = len(data), int(time.time())
            tar.addfile(info, io.BytesIO(data))
    print(f"{path}: {', '.join(files)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.cmd == "config" and args.action == "set":
        from .config import ConfigError

        if not args.arg or args.value is None:
            print("tablectl: config set KEY VALUE", file=sys.stderr)
            return 2
        path = config_file(args.file)
        try:
            set_config(path, args.arg, args.value)
        except ConfigError as exc:
            for problem in exc.problems:
                print(f"tablectl: {problem}", file=sys.stderr)
            return 1
        print(f"{path}: {args.arg} = {args.value}")
        try:
            answer = ask({"cmd": "config", "action": "reload"})
        except NotRunning:
            print("saved; the daemon is not running, it reads the file when it starts")
            return 0
        print("reloaded" if answer.get("reloaded") else f"not reloaded: {answer}")
        return 0 if answer.get("reloaded") else 1
    if args.cmd == "config" and args.action == "check":
        return check_config(Path(args.arg) if args.arg else config_file(args.file), args.json)
    if args.cmd == "debug-bundle":
        return debug_bundle(Path(args.path))
    if args.cmd == "selftest":
        return selftest(args)
    try:
        answer = ask(request_for(args))
    except NotRunning as exc:
        print(f"tablectl: {exc}", file=sys.stderr)
        return 1
    if refused(answer, args.json):
        return 1
    print(json.dumps(answer) if args.json else human(answer))
    if answer.get("valid") is False or answer.get("reloaded") is False:
        for problem in answer.get("problems", []):
            print(f"tablectl: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
