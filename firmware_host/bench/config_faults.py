"""`table-host bench faults`, the configuration file's part: what a hostile operator or file
system does to table.toml, tried at every place the table reads it (issue 22, items 4-7).

- Mutants: integers past Python's 4300-digit limit, arrays and tables nested thousands deep,
  binary garbage, text in the wrong encoding. Each is read three ways: `load_config` (as
  `tablectl config check` does), a start (`choose_config`, with a last good copy kept) and a
  reload (`Configuration.reload`). Anything but a configuration or a one-line ConfigError, a
  start that does not run the last good copy, or a reload that changes what runs, is counted.
- A configuration directory that may not be searched (chmod 000), tried by nobody with no
  capability when run as root: a start without a copy is refused in one line, a reload keeps
  what runs, a start with a copy runs it, and `table-host run` exits 2 with one line.
- A table.toml that is a link to nothing, at start (with and without a copy) and at reload;
  `table-host run --config` naming a file that does not exist: exit 2, one line.
- SIGKILL while `remember_good` writes the last good copy again and again: after each kill the
  copy must be one of the two files, byte for byte, and a start must leave no temporary file.
- An editor saving table.toml in place (cut to nothing, then written in pieces a few ms apart)
  and a reload at a random moment of each save: a file cut short that still validates (before
  `[[screens]]`, `[buzzer]`, `[web]`) must be neither loaded nor kept as the last good copy;
  then an editor that never stops writing: the reload is refused, naming the file.

Tracebacks, copies that are not whole, files cut short loaded or kept: target 0.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..config import (
    ConfigError,
    TableConfig,
    choose_config,
    emulated_config,
    last_good_path,
    load_config,
    remember_good,
)
from ..service.configuration import Configuration
from ..service.loop import Loop
from ..system.children import ending_with_me
from ..system.memory import missing
from ..table.machine import Table
from .harness import DAEMON, ROOT, daemon_env, settled_files

TEMPLATE = Path(__file__).parents[1] / "data" / "wiring" / "4-seat.toml"
NOBODY = 65534
FALLBACK = "configuration invalid, running the last good one: "


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Each start and reload tried says what it refused, as it must: hundreds of lines here."""
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


class Quiet:
    """The daemon's sd_notify, for a Configuration outside the daemon."""

    def send(self, *_lines: str) -> None:
        pass


def mutants(template: bytes, seed: int | str = 13) -> dict[str, list[bytes]]:
    """The files tried, by kind; the same for the same seed."""
    rng = random.Random(seed)
    lines = template.split(b"\n")

    def at_random(value: bytes) -> bytes:
        i = rng.randrange(len(lines))
        key = lines[i].split(b"=", 1)[0] if b"=" in lines[i] else b"extra "
        return b"\n".join([*lines[:i], key + b"= " + value, *lines[i + 1:]])

    huge = [at_random(sign + digits) for sign, digits in
            ((b"", b"9" * 4301), (b"-", b"1" * 5000), (b"", b"12_" * 2000 + b"3"), (b"+", b"7" * 100_000),
             (b"", b"[" + b"8" * 6000 + b"]"), (b"", b"{x = " + b"5" * 4400 + b"}"))]
    deep = [at_random(opening * depth + closing) for depth in (1000, 5000, 30_000)
            for opening, closing in ((b"[", b"]"), (b"{a = ", b""))]
    deep.append(b"[inputs]\nseats = " + b"[" * 200_000)
    garbage = [rng.randbytes(size) for size in (1, 64, 4096, 100_000)]
    garbage += [b"\x00" * 512, template[:300] + bytes(range(256)) + template[300:]]
    text = template.decode()
    encodings = [text.encode("utf-16"), text.encode("utf-16-le"), text.encode("utf-32"),
                 ("# café\n" + text).encode("latin-1"), b"\xef\xbb\xbf" + template,
                 ("# naïve ☕\n" + text).encode("cp1252", "replace"), ("# 表\n" + text).encode("shift_jis")]
    return {"huge integers": huge, "deep nesting": deep, "binary garbage": garbage,
            "wrong encodings": encodings}


@contextlib.contextmanager
def state_directory(where: Path) -> Iterator[None]:
    """STATE_DIRECTORY (where the last good copy is) pointed at `where` while the runs read it."""
    before = os.environ.get("STATE_DIRECTORY")
    os.environ["STATE_DIRECTORY"] = str(where)
    try:
        yield
    finally:
        if before is None:
            del os.environ["STATE_DIRECTORY"]
        else:
            os.environ["STATE_DIRECTORY"] = before


OUTCOMES = ("refused", "loaded", "wrong", "traceback")


class Tally:
    """Outcomes by kind, and the first few tracebacks in one line each."""

    def __init__(self) -> None:
        self.kinds: dict[str, dict[str, int]] = {}
        self.tracebacks: list[str] = []

    def count(self, kind: str, outcome: str) -> None:
        counts = self.kinds.setdefault(kind, dict.fromkeys(("tried", *OUTCOMES), 0))
        counts["tried"] += 1
        counts[outcome] += 1

    def attempt(self, kind: str, run: Callable[[], str]) -> None:
        """`run` says refused, loaded or wrong; a ConfigError of more than one line is wrong too."""
        try:
            outcome = run()
        except ConfigError as exc:
            outcome = "refused" if all("\n" not in p for p in exc.problems) else "wrong"
        except Exception as exc:
            outcome = "traceback"
            self.tracebacks.append(f"{kind}: {type(exc).__name__}: {' '.join(str(exc).split())[:120]}")
        self.count(kind, outcome)

    def wrong(self, kind: str, why: str) -> None:
        self.count(kind, "wrong")
        self.tracebacks.append(f"{kind}: {why[:160]}")


def three_ways(tally: Tally, kind: str, path: Path) -> None:
    """`path` read as `config check`, a start and a reload read it; a last good copy is kept."""
    tally.attempt(kind, lambda: (load_config(path), "loaded")[1])

    def start() -> str:
        problem = choose_config(path, True)[1]
        if not problem:
            return "loaded"
        return "refused" if problem.startswith(FALLBACK) else "wrong"

    tally.attempt(f"{kind} (start)", start)
    running = emulated_config(4)

    def reload() -> str:
        configuration = Configuration(Loop(), running, path, Table(4), Quiet(), remember_good)
        answer = configuration.reload()
        if answer["reloaded"]:
            return "loaded"
        return "refused" if configuration.config is running and answer["problems"] else "wrong"

    tally.attempt(f"{kind} (reload)", reload)


def run_mutants(tally: Tally, work: Path, seed: int | str) -> None:
    template = TEMPLATE.read_bytes()
    path = work / "table.toml"
    files = mutants(template, seed)
    written = iter(settled_files(work / "mutants", [data for kind in files.values() for data in kind]))
    with state_directory(work / "state"):
        remember_good(template)
        for kind, datas in files.items():
            for _ in datas:
                three_ways(tally, kind, next(written))
            remember_good(template)  # a mutant that loaded replaced the copy: the next start needs one
        path.symlink_to(work / "card" / "table.toml")
        three_ways(tally, "dangling link", path)
        last_good_path().unlink()

        def no_copy() -> str:
            problem = choose_config(path, True)[1]
            refused = problem.endswith("which does not exist, and there is no last good copy")
            return "refused" if refused else "wrong"

        tally.attempt("dangling link (start, no copy)", no_copy)


NOBODY_CHILD = """
import json, sys
from pathlib import Path
from firmware_host.config import ConfigError, choose_config, emulated_config, last_good_path, remember_good
from firmware_host.table.machine import Table
from firmware_host.service.configuration import Configuration
from firmware_host.service.loop import Loop

class Quiet:
    def send(self, *lines):
        pass

path, out = Path(sys.argv[1]), {}
def start(name):
    try:
        config, problem = choose_config(path, True)
        out[name] = {"problem": problem, "seats": len(config.inputs.seats)}
    except ConfigError as exc:
        out[name] = {"error": str(exc)}

start("start")
running = emulated_config(4)
configuration = Configuration(Loop(), running, path, Table(4), Quiet(), remember_good)
out["reload"] = {**configuration.reload(), "kept": configuration.config is running}
remember_good(Path(sys.argv[2]).read_bytes())
start("start with a copy")
print(json.dumps(out))
"""


def as_nobody(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """As root: nobody, with no capability (CAP_DAC_OVERRIDE searches anything); else oneself,
    whom chmod 000 stops already. The allocator is chosen in `env`: no re-exec."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            raise FileNotFoundError("setpriv (util-linux) is needed to try it as someone other than root")
        prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all",
                  "--bounding-set=-all", "--pdeathsig=KILL"]  # after the change of user, which clears it
    return subprocess.run([*prefix, sys.executable, *argv], cwd=ROOT, env={**env, **missing(env)},
                          capture_output=True, text=True, timeout=120, preexec_fn=ending_with_me())


@contextlib.contextmanager
def closed_directory() -> Iterator[Path]:
    """A directory holding etc/table.toml with etc chmod 000, and state and run directories,
    all reachable by nobody."""
    top = Path(tempfile.mkdtemp(prefix="table-closed-"))
    try:
        top.chmod(0o755)
        for name in ("etc", "state", "run"):
            (top / name).mkdir()
            if os.geteuid() == 0:
                os.chown(top / name, NOBODY, NOBODY)
        shutil.copyfile(TEMPLATE, top / "etc" / "table.toml")
        (top / "etc").chmod(0)
        yield top
    finally:
        with contextlib.suppress(OSError):
            (top / "etc").chmod(0o755)
        shutil.rmtree(top, ignore_errors=True)


def one_line_exit_2(tally: Tally, kind: str, result: subprocess.CompletedProcess[str], said: str) -> None:
    lines = result.stderr.strip().splitlines()
    if "Traceback" in result.stderr:
        tally.count(kind, "traceback")
        tally.tracebacks.append(f"{kind}: {lines[-1] if lines else ''}"[:160])
    elif result.returncode != 2 or len(lines) != 1 or said not in lines[0]:
        tally.wrong(kind, f"exit {result.returncode}: {' | '.join(lines)[:160]}")
    else:
        tally.count(kind, "refused")


def unsearchable(tally: Tally) -> str:
    """The closed directory, as nobody; '' when run, else why not."""
    kind = "unsearchable directory"
    try:
        with closed_directory() as top:
            env = daemon_env(top)
            path = top / "etc" / "table.toml"
            said = f"{path}: cannot look for it: {top / 'etc'} may not be searched (permission denied)"
            run = as_nobody(DAEMON[1:], env)
            one_line_exit_2(tally, f"{kind} (table-host run)", run, said)
            child = as_nobody(["-c", NOBODY_CHILD, str(path), str(TEMPLATE)], env)
            if child.returncode != 0 or "Traceback" in child.stderr:
                tally.count(kind, "traceback")
                tally.tracebacks.append(f"{kind}: {' | '.join(child.stderr.strip().splitlines()[-2:])[:160]}")
                return ""
            out = json.loads(child.stdout)
            expected = {"start": {"error": said},
                        "reload": {"reloaded": False, "problems": [said], "kept": True},
                        "start with a copy": {"problem": f"{FALLBACK}{said}",
                                              "seats": len(load_config(TEMPLATE).inputs.seats)}}
            for step, answer in expected.items():
                if out.get(step) == answer:
                    tally.count(f"{kind} ({step})", "refused")
                else:
                    tally.wrong(f"{kind} ({step})", json.dumps(out.get(step)))
    except FileNotFoundError as exc:
        return str(exc)
    return ""


def missing_config(tally: Tally, work: Path) -> None:
    env = daemon_env(work)
    named = work / "no" / "such.toml"
    run = subprocess.run([*DAEMON, "--config", str(named)], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120, preexec_fn=ending_with_me())
    one_line_exit_2(tally, "missing --config", run, f"{named}: no such file (named by --config)")


REMEMBER_CHILD = """
import sys
from pathlib import Path
from firmware_host.config import remember_good
files = [Path(sys.argv[1]).read_bytes(), Path(sys.argv[1]).read_bytes() + b"# the other one\\n" * 200]
print("ready", flush=True)
n = 0
while True:
    remember_good(files[n % 2])
    n += 1
"""


def kills_in_remember_good(work: Path, kills: int, seed: int | str) -> dict[str, Any]:
    """SIGKILL a process writing the last good copy over and over; after each kill the copy must be
    one of its two files, whole, and a start must leave no temporary file behind."""
    rng = random.Random(f"{seed}/remember")
    template = TEMPLATE.read_bytes()
    whole = {template, template + b"# the other one\n" * 200}
    state = work / "kill-state"
    env = {**daemon_env(work), "STATE_DIRECTORY": str(state)}
    config = work / "kill-table.toml"
    config.write_bytes(template)
    broken: list[str] = []
    stale_seen = stale_left = 0
    for k in range(kills):
        child = subprocess.Popen([sys.executable, "-c", REMEMBER_CHILD, str(TEMPLATE)], cwd=ROOT, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=ending_with_me())
        assert child.stdout is not None
        child.stdout.readline()
        time.sleep(rng.uniform(0.0, 0.05))
        child.send_signal(signal.SIGKILL)
        child.communicate()
        copy = state / "last-good.toml"
        if copy.read_bytes() not in whole:
            broken.append(f"kill {k}: {len(copy.read_bytes())} bytes, not a copy that was written")
        stale_seen += sum(1 for _ in state.glob(".last-good.toml.*"))
        with state_directory(state):
            choose_config(config, True)
        stale_left += sum(1 for _ in state.glob(".last-good.toml.*"))
    return {"kills": kills, "broken": len(broken), "examples": broken[:3], "stale_seen": stale_seen,
            "stale_left": stale_left}


EDITOR_CHILD = """
import random, sys, time
path, rng = sys.argv[1], random.Random(sys.argv[2])
versions = [open(sys.argv[3], "rb").read()]
versions.append(versions[0].replace(b"window_ms = ", b"window_ms = 1", 1))
print("ready", flush=True)
n = 0
for line in sys.stdin:  # "save": once; "forever": again and again, never leaving it alone
    forever, said = line.strip() == "forever", False
    while True:
        data = versions[n % 2]
        n += 1
        with open(path, "wb") as f:  # in place: cut to nothing, then written in pieces
            for i in range(0, len(data), 256):
                f.write(data[i:i + 256])
                f.flush()
                if not said:
                    print("saving", flush=True)  # under way: the file is cut short now
                    said = True
                time.sleep(rng.uniform(0.001, 0.004))
        if not forever:
            break
    print("saved", flush=True)
"""
EDITOR_PIECES_S = 0.04  # a save takes about this long: 14 pieces of 256 bytes, 1 to 4 ms apart


def reloaded(path: Path) -> tuple[Configuration, TableConfig, dict[str, Any]]:
    """A reload of `path` by a table running the emulated 4-seat build: the configuration after
    it, the one that ran before, the answer."""
    running = emulated_config(4)
    configuration = Configuration(Loop(), running, path, Table(4), Quiet(), remember_good)
    return configuration, running, configuration.reload()


def editor_race(work: Path, reloads: int, seed: int | str) -> dict[str, Any]:
    """An editor that saves table.toml in place (cut to nothing, then written in pieces), and a
    reload at a random moment of each save: a reload may keep a whole file or refuse, never load
    one cut short (one cut before `[[screens]]` still validates) nor keep it as the last good
    copy. Then an editor that never stops writing: the reload is refused, naming the file."""
    rng = random.Random(f"{seed}/editor")
    state, path = work / "editor-state", work / "editor" / "table.toml"
    path.parent.mkdir()
    template = TEMPLATE.read_bytes()
    whole = {template, template.replace(b"window_ms = ", b"window_ms = 1", 1)}
    path.write_bytes(template)
    counts = {"reloads": reloads, "loaded_whole": 0, "cut_short_loaded": 0, "cut_short_kept": 0, "refused": 0}
    examples: list[str] = []
    refusals: list[str] = []
    editor = subprocess.Popen([sys.executable, "-c", EDITOR_CHILD, str(path), str(seed), str(TEMPLATE)],
                              cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              preexec_fn=ending_with_me())
    assert editor.stdin is not None and editor.stdout is not None
    try:
        editor.stdout.readline()
        with state_directory(state):
            remember_good(template)
            for k in range(reloads):
                editor.stdin.write("save\n")
                editor.stdin.flush()
                editor.stdout.readline()
                time.sleep(rng.uniform(0.0, EDITOR_PIECES_S))  # somewhere in the rest of the save
                configuration, running, answer = reloaded(path)
                kept = last_good_path().read_bytes()
                if not answer["reloaded"]:
                    counts["refused"] += 1
                    refusals.append(f"reload {k}: {answer['problems'][0][:160]}")
                elif configuration.config.screens != running.screens or kept not in whole:
                    counts["cut_short_loaded"] += 1
                    examples.append(f"reload {k}: loaded {len(kept)} of {len(template)} bytes, "
                                    f"{len(configuration.config.screens)} screens")
                else:
                    counts["loaded_whole"] += 1
                if kept not in whole:
                    counts["cut_short_kept"] += 1
                    remember_good(template)  # each reload on its own
                editor.stdout.readline()  # the save is over before the next one
            editor.stdin.write("forever\n")
            editor.stdin.flush()
            editor.stdout.readline()
            began = time.monotonic()
            configuration, running, answer = reloaded(path)
            never = {"seconds": round(time.monotonic() - began, 1), "reloaded": answer["reloaded"],
                     "said": answer.get("problems", [""])[0] if not answer["reloaded"] else "",
                     "kept": configuration.config is running}
    finally:
        editor.kill()
        editor.wait()
    never["refused"] = (not never["reloaded"] and never["kept"]
                        and never["said"].startswith(f"{path}: still being written"))
    return {**counts, "examples": examples[:3], "refusals": refusals[:3], "never_settles": never}


def config_faults(kills: int = 20, seed: int | str = 13, editor_reloads: int = 60) -> dict[str, Any]:
    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with quiet():
            run_mutants(tally, work, seed)
            not_run = unsearchable(tally)
            missing_config(tally, work)
            remembering = kills_in_remember_good(work, kills, seed)
            editor = editor_race(work, editor_reloads, seed)
    totals = {key: sum(k[key] for k in tally.kinds.values()) for key in ("tried", *OUTCOMES)}
    met = totals["traceback"] == 0 and totals["wrong"] == 0 and remembering["broken"] == 0
    met = met and remembering["stale_left"] == 0 and not not_run
    met = met and editor["cut_short_loaded"] == 0 and editor["cut_short_kept"] == 0
    met = met and editor["never_settles"]["refused"]
    kinds = sorted({name.split(" (")[0] for name in tally.kinds})
    return {"kinds": kinds, "checks": tally.kinds, **totals, "tracebacks": tally.tracebacks[:8],
            "unsearchable_not_run": not_run, "remember_kills": remembering, "editor": editor,
            "meets_target": met}


def config_faults_text(f: dict[str, Any]) -> list[str]:
    r = f["remember_kills"]
    lines = [f"configuration files: {len(f['kinds'])} kinds ({', '.join(f['kinds'])}), {f['tried']} reads, "
             f"{f['refused']} refused in one line (the last good copy or the running one kept), "
             f"{f['loaded']} still valid, wrong {f['wrong']}, tracebacks {f['traceback']} "
             "(target 0)"]
    lines += [f"  {kind}: {k['tried']} tried, {k['refused']} refused, {k['loaded']} valid, {k['wrong']} "
              f"wrong, {k['traceback']} tracebacks" for kind, k in f["checks"].items()]
    if f["unsearchable_not_run"]:
        lines.append(f"  unsearchable directory NOT RUN: {f['unsearchable_not_run']}")
    lines.append(f"SIGKILL while the last good copy is written: {r['kills']} kills, copies not whole "
                 f"{r['broken']} (target 0), temporary files left by the kills {r['stale_seen']}, left after "
                 f"a start {r['stale_left']} (target 0)")
    e = f["editor"]
    n = e["never_settles"]
    lines.append(f"an editor saving table.toml in place (cut to nothing, written in pieces) during each of "
                 f"{e['reloads']} reloads: {e['loaded_whole']} loaded whole, {e['refused']} refused, cut "
                 f"short and loaded {e['cut_short_loaded']}, kept as the last good copy "
                 f"{e['cut_short_kept']} (target 0)")
    lines.append(f"  an editor that never stops writing: "
                 f"{'refused' if n['refused'] else 'NOT REFUSED'} after {n['seconds']:g} s: {n['said']}")
    lines += [f"  traceback: {line}" for line in f["tracebacks"]]
    lines += [f"  broken copy: {line}" for line in r["examples"]]
    lines += [f"  cut short: {line}" for line in e["examples"]]
    lines += [f"  refused: {line}" for line in e["refusals"]]
    return lines
