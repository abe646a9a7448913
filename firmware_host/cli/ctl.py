"""`tablectl`: the table's SSH tool. Talks to the daemon's control socket.

    tablectl status                  tablectl new dice [handicap=7,7,5,5 ...]
    tablectl start | abort | next    tablectl bots 2 [--level hard]
    tablectl scores | history | seats
    tablectl selftest [--probe] [--seats 1,3] [--timeout S] | selftest --abort | selftest --report
    tablectl inputs                  what reached the engine, with edge and decision times
    tablectl firmware [flash]        the LED controller's firmware; flash puts this table-host's on it
    tablectl backup [FILE] | restore FILE   the journal and configuration in one archive, and back
    tablectl update [--rollback]     a new version beside this one, switched to, and back on failure

Human output by default, `--json` (before or after the command) for scripts: one JSON object.
Seats are numbered from 1 in both. Exit 0 when the table did it, 1 when it refused or is not
running, 2 for a bad command line (checked here, before the table is asked).

The socket: TABLE_HOST_SOCKET, else $RUNTIME_DIRECTORY/control.sock, else the first that exists of
your own table's ($XDG_RUNTIME_DIR/table-host/control.sock) and the service's
(/run/table-host/control.sock); see firmware_host/system/paths.py.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from ..control.client import NotRunning, ask
from ..control.protocol import BY_NAME, HISTORY_MAX, add_subcommands
from ..system import paths
from .common import WORDS, add_version, one_line_errors, quiet_broken_pipe, refuse, with_games
from .completion import describe_subcommands

__all__ = ["NotRunning", "ask", "build_parser", "main"]


class Parser(argparse.ArgumentParser):
    """argparse's refusal (usage and one line on stderr, exit 2), and with --json anywhere on the
    line the same line as the JSON error object scripts read."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise SystemExit(refuse(self.prog, message))


def build_parser() -> argparse.ArgumentParser:
    """Made from the commands' declarations (control/protocol.py), as the completion is."""
    p = Parser(prog="tablectl", description="Control the Ligretto table.")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    add_version(p, "tablectl")
    # --json after the command too: the subcommand's own flag, which leaves the main one alone
    # when not given (SUPPRESS), so `tablectl --json status` and `tablectl status --json` agree.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="one JSON object on stdout")
    add_subcommands(p.add_subparsers(dest="cmd", required=True), [common])
    return describe_subcommands(p)


def game_options(game: str | None, items: list[str]) -> dict[str, Any]:
    """`new`'s game and KEY=VALUE options, checked here against the game's option list: a typo is
    refused now, naming what is allowed, not when the match starts."""
    from ..engine.options import GAMES, SPECS, check_options
    from ..engine.round import RulesError

    with_games()
    if game is None:
        raise ValueError(f"new needs a game: {', '.join(GAMES)} (its options may follow, e.g. rounds=3)")
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r} (choose {', '.join(GAMES)})")
    specs = SPECS[game]
    options: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"option {item!r} is not KEY=VALUE (e.g. rounds=3)")
        spec = specs.get(key)
        if spec is None:
            raise ValueError(f"unknown option {key!r} for {game} (known: {', '.join(sorted(specs))})")
        try:
            options[key] = spec.parse(value)  # sent as its type: the status shows rounds 3, not "3"
        except ValueError as exc:  # the option's help, unless the problem gives its example already
            said = str(exc)
            raise ValueError(f"option {key}={value}: {said}" + ("" if "e.g." in said else f" ({spec.help})")
                             ) from None
    try:  # what no player count makes right; the table checks the rest for its players
        check_options(game, options, None)
    except RulesError as exc:
        raise ValueError(str(exc)) from None
    return options



POLL_S = 0.2


def selftest(args: argparse.Namespace) -> int:
    """Start (or abort, or look at) the self-test and follow it to its report: progress lines
    as they come (on stderr with --json, whose one object is the report)."""
    if args.abort:
        body: dict[str, Any] = {"cmd": "selftest", "action": "abort"}
    elif args.report:
        body = {"cmd": "selftest", "action": "status"}
    else:
        body = {**request_for(args), "action": "start"}
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
        return failed(str(exc), args.json)
    if refused(answer, args.json):
        return 1
    report = answer["selftest"]
    passed = bool(report["passed"])
    if args.json:
        problems = report.get("problems") or ([] if passed else [f"the self-test is {report['state']}"])
        print(json.dumps({"ok": passed, **report, **({} if passed else {"error": "; ".join(problems)})}))
    else:
        from . import show

        if not printed:  # no log to follow (an old report): its table
            show.print_all(*show.answer_shown({"selftest": report}, "selftest"))
        elif not passed:  # the log said each part once; its problems again, together
            print()
            show.print_all(*show.selftest_verdict(report))
    return 0 if passed else 1


def firmware(args: argparse.Namespace) -> int:
    """`tablectl firmware [flash]`: the LED controller's firmware version as its hello says it,
    this table-host's, and whether they match; `flash` puts this table-host's on it
    (devices/displays/firmware.py). Through the running daemon's link when one runs (it is
    paused for the flash), else on the port itself (as root: the port is the dialout group's)."""
    from ..devices.displays import firmware as fw

    try:
        daemon = ask({"cmd": "firmware", "action": "status"}, timeout=5.0)
    except NotRunning:
        daemon = None
    if daemon is not None and refused(daemon, args.json):
        return 1
    known = daemon["firmware"] if daemon is not None else None
    port, size = firmware_port(args, known)
    out = sys.stderr if args.json else sys.stdout
    if args.action == "flash":
        hooks: dict[str, Any] = {}
        if daemon is not None:
            def pause() -> None:
                answer = ask({"cmd": "firmware", "action": "pause", "seconds": 300})
                if not answer.get("ok"):
                    raise fw.FlashError(f"the daemon would not pause its LED link: {answer.get('error')}")

            def resume() -> None:
                with contextlib.suppress(NotRunning):
                    ask({"cmd": "firmware", "action": "resume"})

            def reported() -> str | None:
                with contextlib.suppress(NotRunning):
                    now = ask({"cmd": "firmware", "action": "status"})["firmware"]
                    return now["controller"] if now["online"] else None
                return None

            hooks = {"pause": pause, "resume": resume, "reported": reported}
        try:
            done = fw.flash(port, size, say=lambda line: print(line, file=out, flush=True), force=args.force,
                            **hooks)
        except fw.FlashError as exc:
            return failed(f"firmware flash: {exc}", args.json)
        report = done.as_dict() | {"controller": done.after}
    elif known is not None:
        report = known
    else:  # no daemon: ask the controller itself
        try:
            locked = fw.open_locked(port, wait_s=0)
        except fw.FlashError as exc:
            return failed(f"no table runs to ask, and {exc}", args.json)
        try:
            heard = fw.hello(locked, *size)
        finally:
            locked.close()
        controller = "" if heard is None else fw.version_of(heard[1]) if heard[0] >= 3 else \
            f"{heard[1]} (protocol {heard[0]})"
        report = {"controller": controller, "expected": fw.expected(), "current": controller == fw.expected(),
                  "port": port, "online": heard is not None}
    if args.json:
        print(json.dumps({"ok": True, **report}))
    else:
        from . import show

        # A flash's steps went out as they came: not again.
        for line in show.answer_shown({**report, "steps": []}, "firmware"):
            print(line)
    return 0 if report["current"] else 1  # a script can tell: 1 while the controller needs flashing


def firmware_port(args: argparse.Namespace, known: dict[str, Any] | None) -> tuple[str, tuple[int, int]]:
    """The controller's port and matrix size: --port, else the running daemon's, else the
    configuration's [centre] (the built-in defaults without a file)."""
    if known is not None:
        size = (int(known["size"][0]), int(known["size"][1]))
        return args.port or known["port"], size
    from ..config import CentreConfig, ConfigError, load_config

    try:
        centre = load_config(paths.config_file()).centre if paths.config_file().exists() else CentreConfig()
    except (ConfigError, OSError):
        centre = CentreConfig()
    return args.port or centre.port, (centre.width, centre.height)


def request_for(args: argparse.Namespace) -> dict[str, Any]:
    """The request its declaration makes of the parsed arguments (control/protocol.py: each
    argument's `to`); a game's options are checked here, before the table is asked."""
    body = BY_NAME[args.cmd].request(vars(args))
    if "options" in body:
        body["options"] = game_options(body.get("game"), body["options"])
    return body


def history(body: dict[str, Any]) -> dict[str, Any]:
    """`--limit` matches, asked HISTORY_MAX at a time (the daemon answers no more at once), each
    page older than the last (`before`: its `next`); one answer, as if asked at once, whose `next`
    is the page after it."""
    limit, matches = body["limit"], []
    while True:
        answer = ask({**body, "limit": min(limit - len(matches), HISTORY_MAX)})
        if not answer.get("ok"):
            return answer
        matches += answer["matches"]
        if answer.get("next") is None or len(matches) >= limit:
            return {**answer, "matches": matches}
        body = {**body, "before": answer["next"]}


def failed(message: str, as_json: bool, status: int = 1, **more: Any) -> int:
    """A command that did not do it: one line on stderr, and with --json the object scripts read
    ({"ok": false, "error": ...}), so that `tablectl --json status` says no table runs in JSON too."""
    print(f"tablectl: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps({"ok": False, "error": message, **more}))
    return status


def refused(answer: dict[str, Any], as_json: bool) -> bool:
    """The daemon said no: its reason on stderr (and the answer itself with --json)."""
    if answer.get("ok"):
        return False
    print(f"tablectl: {answer.get('error', 'refused')}", file=sys.stderr)
    if as_json:
        print(json.dumps(answer))
    return True


def human(answer: dict[str, Any], cmd: str = "", action: str | None = None) -> str:
    """The answer as a person reads it (show.py), as text."""
    from . import show

    return show.as_text(*show.answer_shown(answer, cmd, action))


def history_text(matches: list[dict[str, Any]]) -> str:
    from . import show

    return show.as_text(show.history_table(matches))


def config_file(explicit: str | None) -> Path:
    return Path(explicit) if explicit else paths.config_file()


def running_config() -> Path | None:
    """The file the running table loaded, if one runs, we may ask it, and it loaded a file."""
    try:
        answer = ask({"cmd": "debug"}, timeout=3.0)
    except NotRunning:
        return None
    loaded = Path(answer["config_file"]) if answer.get("ok") and answer.get("config_file") else None
    try:
        return loaded if loaded is not None and loaded.exists() else None
    except OSError:  # a directory you may not search: checking it says so
        return loaded


def check_config(path: Path | None, as_json: bool) -> int:
    """Check a file here, with the caller's own rights: the daemon would read any file it can
    (and stall the game on a FIFO or a huge file) and tell what is in it. No file given and none
    where the table looks: check what `table-host run` then runs, the built-in 4-seat wiring.
    Each problem is said once: in the JSON, or on stderr."""
    from ..config import ConfigError, build_file, default_config, find_config, load_config

    answer: dict[str, Any] = {"ok": True, "valid": True}
    if path is None:
        path = running_config()
    try:
        if path is None and not find_config(paths.config_file()):
            built_in = build_file(4)
            answer |= {"file": None, "built_in": built_in.name,
                       "note": f"no configuration file at {paths.config_file()}: table-host run plays the "
                               f"built-in 4-seat wiring ({built_in.name}), emulated; the service needs "
                               "a file"}
            default_config(4)
        else:
            path = path or paths.config_file()
            answer["file"] = str(path)
            load_config(path)
    except ConfigError as exc:
        answer |= {"ok": False, "valid": False, "problems": exc.problems}
        answer.setdefault("file", str(path or paths.config_file()))
    if as_json:
        print(json.dumps(answer))
    else:
        print(answer.get("note") or f"{answer['file']}: {'valid' if answer['valid'] else 'invalid'}")
        for problem in answer.get("problems", []):
            print(f"tablectl: {problem}", file=sys.stderr)
    return 0 if answer["valid"] else 1


def debug_bundle(path: Path, as_json: bool = False) -> int:
    """A tar.gz with the daemon's own view, the configuration file and the service's log. It holds
    the configuration and the journal: mode 0600. Run as root where others may write, nothing it
    reads or writes goes through a link they planted: the configuration is read from where tablectl
    looks for it, never from a path the socket names, only as a regular file that is no link (else
    a note says why it is missing), and the bundle is written from a
    descriptor of its directory reached without following anyone else's link, never through a
    link at `path` itself (system/nofollow.py)."""
    import io
    import secrets
    import stat
    import tarfile
    import time

    from ..system.errors import PathError
    from ..system.nofollow import open_directory

    try:
        directory = open_directory(path.parent)
    except PathError as exc:
        return failed(str(exc), as_json)
    except OSError as exc:
        return failed(f"cannot write in {path.parent}: {exc.strerror or exc}", as_json)
    try:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISLNK(os.stat(path.name, dir_fd=directory, follow_symlinks=False).st_mode):
                return failed(f"{path} is a symbolic link: not following it; give another path",
                              as_json)
        files = _bundle_files()
        # A new file of our own (O_EXCL, 0600) in that directory, renamed over the name: a rename
        # never follows a link.
        temporary = f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(temporary, flags, 0o600, dir_fd=directory)
        except OSError as exc:
            return failed(f"cannot write in {path.parent}: {exc.strerror or exc}", as_json)
        try:
            with os.fdopen(fd, "wb") as out, tarfile.open(fileobj=out, mode="w:gz") as tar:
                for name, data in files.items():
                    info = tarfile.TarInfo(f"table-host-debug/{name}")
                    info.size, info.mtime = len(data), int(time.time())
                    tar.addfile(info, io.BytesIO(data))
            os.replace(temporary, path.name, src_dir_fd=directory, dst_dir_fd=directory)
        except OSError as exc:
            return failed(f"cannot write {path}: {exc.strerror or exc}", as_json)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary, dir_fd=directory)
    finally:
        os.close(directory)
    if as_json:
        print(json.dumps({"ok": True, "file": str(path.absolute()), "holds": list(files),
                          "daemon_running": "daemon.json" in files}))
    else:
        from . import show

        # where it wrote, whole: it was only the name given, "table-host-debug.tar.gz"
        for line in show.answer_shown({"file": str(path.absolute()), "holds": list(files)}, "debug-bundle"):
            print(line)
    return 0


def _bundle_files() -> dict[str, bytes]:
    """What goes in the bundle; `notes.txt` says what was left out and why. Files come only from
    the paths tablectl knows itself (system/paths.py), never from one the socket sends: the
    daemon's own user can put another socket in its place, and one naming /etc/shadow as its
    configuration would have had root read it into the bundle. What the daemon says is kept as
    it said it (daemon.json), and a file it names that is not the one known is said, not read."""
    import subprocess

    from ..config import MAX_CONFIG_BYTES
    from ..system.children import ending_with_me
    from ..system.nofollow import read_regular

    files: dict[str, bytes] = {}
    notes: list[str] = []
    known = paths.config_file()
    try:
        answer = ask({"cmd": "debug"})
        stored = ask({"cmd": "history", "limit": 10})  # answered beside the game, not with `debug`
        answer["history"] = stored.get("matches", stored.get("error"))
        files["daemon.json"] = json.dumps(answer, indent=2, default=str).encode()
        named = answer.get("config_file")
        if named and named != "None" and str(named) != str(known):
            notes.append(f"the daemon says it runs {str(named)[:200]!r}: not read (the bundle reads only "
                         f"{known}, never a path the socket sends)")
    except NotRunning as exc:
        files["daemon.txt"] = str(exc).encode()
    data = read_regular(known, MAX_CONFIG_BYTES)
    if isinstance(data, bytes):
        files["table.toml"] = data
    else:
        notes.append(f"table.toml not collected: {data}")
    try:
        log = subprocess.run(["journalctl", "-u", "table-host", "-n", "2000", "--no-pager"],
                             capture_output=True, timeout=20, preexec_fn=ending_with_me()).stdout
        files["journal.txt"] = log or b"(no journal entries)"
    except (OSError, subprocess.SubprocessError) as exc:
        files["journal.txt"] = f"journalctl: {exc}".encode()
    if notes:
        files["notes.txt"] = "".join(f"{note}\n" for note in notes).encode()
    return files


def config_set(args: argparse.Namespace) -> int:
    """Change one setting in the file, then ask the running table to reload it. A value the
    table would refuse is a bad command line (exit 2); a file that cannot be written, or a
    table that refuses the reload, exit 1."""
    from ..config import ConfigError, set_config

    if not args.arg or args.value is None:
        return failed("config set needs KEY VALUE, e.g. config set arbiter.window_ms 4.5", args.json, 2)
    path = config_file(args.file)
    try:
        missing = not path.exists()
    except OSError as exc:  # a directory this user may not search
        return failed(f"cannot look for {path}: {exc.strerror or exc}", args.json)
    if missing:
        status = create_config(path, args)
        if status is not None:
            return status
    try:
        set_config(path, args.arg, args.value)
    except ConfigError as exc:
        for problem in exc.problems[:-1]:
            print(f"tablectl: {problem}", file=sys.stderr)
        # The file could not be read or written (1), or the key or value is one the table refuses (2).
        trouble = [p for p in exc.problems
                   if p.startswith(("cannot ", f"{path}: ")) and "no setting" not in p]
        return failed(exc.problems[-1], args.json, 1 if trouble else 2, problems=exc.problems)
    result: dict[str, Any] = {"ok": True, "file": str(path), "key": args.arg, "value": args.value}
    if not args.json:
        print(f"{path}: {args.arg} = {args.value}")
    try:
        answer = ask({"cmd": "config", "action": "reload"})
    except NotRunning:
        result["reloaded"] = None
        result["note"] = "saved; the daemon is not running, it reads the file when it starts"
        print(json.dumps(result) if args.json else result["note"])
        return 0
    result["reloaded"] = bool(answer.get("reloaded"))
    if result["reloaded"]:
        print(json.dumps(result) if args.json else "reloaded")
        return 0
    reasons = [str(r) for r in answer.get("problems") or [answer.get("error", "no reason given")]]
    return failed(f"saved, not reloaded: {'; '.join(reasons)}", args.json, 1, **result)


def create_config(path: Path, args: argparse.Namespace) -> int | None:
    """`config set` with no file where the table looks (a laptop): with --create, or asked on a
    terminal, start one from the built-in 4-seat wiring, emulated (what the table plays without a
    file); else say how. None: the file is there now."""
    from ..config import build_file

    built_in = build_file(4)
    if not args.create:
        asked = sys.stdin.isatty() and sys.stderr.isatty() and not args.json
        if asked:
            print(f"tablectl: there is no configuration file at {path}. Create it from the built-in "
                  f"4-seat wiring ({built_in.name}), emulated? [y/N] ", end="", file=sys.stderr, flush=True)
        if not asked or sys.stdin.readline().strip().lower() not in ("y", "yes"):
            return failed(f"no configuration file at {path}: `tablectl config set KEY VALUE --create` "
                          f"starts one from the built-in 4-seat wiring ({built_in.name}), emulated",
                          args.json)
    text = built_in.read_text(encoding="utf-8").replace('backend = "pi"', 'backend = "emulated"', 1)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        return failed(f"cannot create {path}: {exc.strerror or exc}", args.json)
    print(f"tablectl: created {path} from {built_in.name} (backend emulated)", file=sys.stderr)
    return None


@quiet_broken_pipe
@one_line_errors("tablectl")
def main(argv: Sequence[str] | None = None) -> int:
    WORDS[:] = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(WORDS)
    if args.cmd == "config" and args.action == "set":
        return config_set(args)
    if args.cmd == "config" and args.action == "check":
        explicit = args.arg or args.file
        return check_config(Path(explicit) if explicit else None, args.json)
    if args.cmd == "debug-bundle":
        return debug_bundle(Path(args.path), args.json)
    if args.cmd in ("update", "backup", "restore"):
        from . import keeping, update

        keeping.the_service_state()  # sudo on an installed table: the service's state, not root's
        if args.cmd == "update":
            return update.main(args)
        if args.cmd == "backup":
            return keeping.main_backup(args.path, args.keep, args.json)
        return keeping.main_restore(args.path, args.json)
    if args.cmd == "selftest":
        return selftest(args)
    if args.cmd == "firmware":
        return firmware(args)
    try:
        body = request_for(args)
    except ValueError as exc:
        return failed(str(exc), args.json, 2)
    try:
        answer = history(body) if args.cmd == "history" else ask(body)
    except NotRunning as exc:
        return failed(str(exc), args.json)
    if refused(answer, args.json):  # a key no configuration has is a bad value, as for config set
        unknown = args.cmd == "config" and str(answer.get("error", "")).startswith("no setting")
        return 2 if unknown or answer.get("bad_request") is True else 1
    not_done = answer.get("valid") is False or answer.get("reloaded") is False
    if not_done:  # answered, but not done: `ok` false, as the exit status, naming why
        problems = answer.get("problems") or [answer.get("note") or "the configuration was not reloaded"]
        answer = {**answer, "ok": False, "error": "; ".join(str(p) for p in problems)}
    if args.json:
        print(json.dumps(answer))
    else:
        from . import show

        show.print_all(*show.answer_shown(answer, args.cmd, getattr(args, "action", None)))
    if not_done:
        for problem in answer.get("problems") or [answer["error"]]:
            print(f"tablectl: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
