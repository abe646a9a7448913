"""`table-host bench faults`: what crashes and broken files do to the table, counted.

Two figures (docs/persistence.md, docs/daemon.md):

- SIGKILL at random moments: a child process plays bot matches through the real
  `Store` (journal, rounds, match ends) and says each round it has stored; it is
  killed at a random moment, the state database is opened again, the match in
  progress is resumed by replay, and every round the child had stored must be
  in `history`. Rounds lost: target 0.
- Broken configurations: the wiring template mutated as editors, operators and
  failing cards do (bytes flipped, cut short, invalid UTF-8, arrays and tables
  nested thousands deep, lines lost or doubled), each loaded with `load_config`.
  Anything but a configuration or a ConfigError is a traceback: target 0.
- Garbage on the control socket: random bytes, JSON cut short, lines past the
  limit, nesting thousands deep, wrong types, unknown commands, control
  characters, each on its own connection to a real daemon (`table-host run
  --emulate`): each gets a JSON answer, and the daemon is alive and answering
  afterwards. Unanswered and daemon deaths: target 0.
- 40 simultaneous `tablectl status` (the real client, each its own process)
  against the same daemon: failures, target 0 of 40.
- The state database: a disk that fills during a match, and five kinds of damaged file
  (storage_faults.py): rounds lost, tracebacks and restart loops, target 0.
- Misbehaving clients (slowloris, requests pipelined and never read) with an admin's `status`
  probed throughout, and SIGTERM at random moments of start-up (client_faults.py): probes
  missed and SIGTERMs lost, target 0.
- The configuration file: huge integers, deep nesting, garbage, wrong encodings, a directory
  that may not be searched, a link to nothing, a missing --config, SIGKILL while the last good
  copy is written, reloads while an editor saves in place (config_faults.py): tracebacks, copies
  not whole and files cut short loaded, target 0.
"""

from __future__ import annotations

import contextlib
import json
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from ..config import ConfigError, load_config
from ..system.children import ending_with_me
from .client_faults import client_faults, client_text
from .config_faults import config_faults_text
from .harness import settled_files, stop
from .storage_faults import storage_text

TEMPLATE = Path(__file__).parents[1] / "data" / "wiring" / "4-seat.toml"


def config_mutants(template: bytes, count: int, seed: int | str = 13) -> list[bytes]:
    """`count` broken (or merely odd) versions of `template`, the same for the same seed."""
    rng = random.Random(seed)
    lines = template.split(b"\n")

    def flip(data: bytes) -> bytes:
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
        return bytes(out)

    def cut(data: bytes) -> bytes:
        return data[: rng.randrange(len(data))]

    def bad_utf8(data: bytes) -> bytes:
        at = rng.randrange(len(data))
        invalid = rng.choice([b"\xff", b"\xc3\x28", b"\xe2\x82", b"\xed\xa0\x80", b"\x80"])
        return data[:at] + invalid + data[at:]

    def nested(data: bytes) -> bytes:
        depth = rng.choice([50, 500, 3000, 20000])
        value = rng.choice([b"[" * depth + b"1" + b"]" * depth, b"{a = " * depth + b"1" + b"}" * depth,
                            b"[" * depth])
        i = rng.randrange(len(lines))
        return b"\n".join([*lines[:i], b"deep = " + value, *lines[i:]])

    def nested_value(data: bytes) -> bytes:
        depth = rng.choice([100, 2000, 10000])
        return data.replace(b"= ", b"= " + b"[" * depth, 1).replace(b"\n", b"]" * depth + b"\n", 1)

    def shuffle_lines(data: bytes) -> bytes:
        out = list(lines)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(out))
            if rng.random() < 0.5:
                del out[i]
            else:
                out.insert(rng.randrange(len(out)), out[i])
        return b"\n".join(out)

    def noise(data: bytes) -> bytes:
        at = rng.randrange(len(data))
        return data[:at] + rng.randbytes(rng.randint(1, 40)) + data[at:]

    def retype(data: bytes) -> bytes:
        i = rng.randrange(len(lines))
        key = lines[i].split(b"=", 1)[0]
        if b"=" not in lines[i]:
            return data
        value = rng.choice([b'"5"', b"true", b"-1", b"1e400", b"nan", b"[]", b"{}", b"9" * 400,
                            b"1979-05-27T07:32:00Z", b'"\\u0000"'])
        return b"\n".join([*lines[:i], key + b"= " + value, *lines[i + 1:]])

    kinds = [flip, cut, bad_utf8, nested, nested_value, shuffle_lines, noise, retype]
    return [kinds[n % len(kinds)](template) for n in range(count)]


def broken_configs(count: int = 400, seed: int | str = 13) -> dict[str, Any]:
    """Load `count` mutants of the 4-seat wiring file; count what each gave."""
    outcomes = {"config": 0, "config_error": 0, "traceback": 0}
    examples: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in settled_files(Path(tmp), config_mutants(TEMPLATE.read_bytes(), count, seed)):
            try:
                load_config(path)
            except ConfigError:
                outcomes["config_error"] += 1
            except Exception as exc:
                outcomes["traceback"] += 1
                examples.append(f"{type(exc).__name__}: {str(exc)[:120]}")
            else:
                outcomes["config"] += 1
    return {"tried": count, **outcomes, "tracebacks": examples[:5]}


_CHILD = textwrap.dedent("""
    import random, sys
    import firmware_host.games  # registers the built-in games: this child is a composition root
    from firmware_host.table.matches import new_match
    from firmware_host.engine.game import sight_of
    from firmware_host.play.simulate import make_bots
    from firmware_host.service.journal import Store
    store = Store(sys.argv[1])
    rng = random.Random(sys.argv[2])
    resumed = store.resume()
    n = 0
    while True:
        if resumed is not None:
            mid, match = resumed
            resumed = None
        else:
            game = rng.choice(["classic", "dice", "domino"])
            match = new_match(game, 3, f"{sys.argv[2]}/{n}", {"rounds": 2})
            mid = store.begin_match(match, [0, 1, 2])
        n += 1
        bots = make_bots(match.players, "hard", f"{sys.argv[2]}/{n}")
        # The clock goes on from the journal (a Domino joker's hold is stamped on it), and the
        # round is woken when something is due, as the daemon does.
        now = max((a.ts for a in match.round.journal), default=0)
        tries = 0
        while not match.is_over:
            if match.round.result is not None:
                match.next_round()
            due = match.round.deadline()
            if due is not None and due <= now and match.round.wake(now):
                store.record(mid, match.round_no, match.round.journal[-1])
                if match.round.result is not None:
                    store.round_over(mid, match)
                    print(mid, len(match.results), flush=True)
                continue
            tries += 1
            if tries > 50_000:  # bots that cannot finish it: not what is measured here
                store.abort(mid)
                print("stuck", mid, flush=True)
                break
            seat = rng.randrange(match.players)
            action = bots[seat].choose(sight_of(match.round, seat), now)
            now += 1_000_000
            if action is None or match.apply(action) is not None:
                continue
            store.record(mid, match.round_no, action)
            if match.round.result is not None:
                store.round_over(mid, match)
                print(mid, len(match.results), flush=True)  # stored: it must never be lost
""")


def random_kills(kills: int = 100, seed: int | str = 13, state_db: Path | None = None) -> dict[str, Any]:
    """SIGKILL a child playing matches through the Store at random moments; count the rounds it
    had stored that are not in history afterwards, and the restarts that could not resume."""
    from ..service.journal import Store

    rng = random.Random(seed)
    root = str(Path(__file__).resolve().parents[2])
    lost: list[str] = []
    stored: dict[int, int] = {}
    resume_failures: list[str] = []
    stuck = 0
    with tempfile.TemporaryDirectory() as tmp:
        db = state_db or Path(tmp) / "table.db"
        for k in range(kills):
            child = subprocess.Popen([sys.executable, "-c", _CHILD, str(db), f"{seed}/{k}"], cwd=root,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=ending_with_me())
            time.sleep(rng.uniform(0.2, 2.0))  # start-up, resume and play: a kill can land in any
            child.send_signal(signal.SIGKILL)
            out, err = child.communicate()
            if child.returncode != -signal.SIGKILL:
                resume_failures.append(f"kill {k}: the child ended by itself: {err.strip()[-200:]}")
            for line in out.splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] == "stuck":
                    stuck += 1
                elif len(parts) == 2:  # a line cut by the kill is not a promise
                    stored[int(parts[0])] = max(stored.get(int(parts[0]), 0), int(parts[1]))
        store = Store(db)
        try:
            try:
                store.resume()
            except Exception as exc:
                resume_failures.append(f"final resume: {exc}")
            history = {m["match"]: m for m in store.every_match()}
            for mid, rounds in sorted(stored.items()):
                kept = len(history[mid]["rounds"]) if mid in history else 0
                if kept < rounds:
                    lost.append(f"match {mid}: {rounds} rounds stored, {kept} in history")
            set_aside = sum(1 for m in history.values() if m.get("set_aside") not in (None, "aborted"))
        finally:
            store.close()
    return {"kills": kills, "rounds_stored": sum(stored.values()), "rounds_lost": len(lost), "lost": lost[:5],
            "matches": len(stored), "set_aside": set_aside, "stuck": stuck, "failures": resume_failures[:5]}


def garbage_messages(count: int, seed: int | str = 13) -> list[bytes]:
    """What a confused script, a fuzzer or a cat of the wrong file sends a control socket: random
    bytes, JSON cut short, lines past the limit, nesting thousands deep, wrong types, unknown
    commands, control characters. Each ends in a newline except the over-long ones."""
    from ..control.server import MAX_LINE

    rng = random.Random(seed)
    ok = [b'{"cmd": "status"}', b'{"cmd": "scores"}', b'{"cmd": "history", "limit": 3}']

    def random_bytes() -> bytes:
        return rng.randbytes(rng.randint(1, 300)).replace(b"\n", b"") + b"\n"

    def truncated() -> bytes:
        line = rng.choice([*ok, b'{"cmd": "new", "game": "dice", "options": {"handicap": "7,5"}}'])
        return line[: rng.randrange(1, len(line))] + b"\n"

    def huge() -> bytes:
        return rng.choice([b"x", b"[", b'{"cmd": "status", "pad": "']) * (MAX_LINE + rng.randint(1, 4096))

    def deep() -> bytes:
        depth = rng.choice([1000, 5000, 20000])
        value = rng.choice([b"[" * depth + b"]" * depth, b'{"a": ' * depth + b"1" + b"}" * depth])
        return b'{"cmd": "status", "x": ' + value + b"}\n"

    def wrong_type() -> bytes:
        return rng.choice([b'{"cmd": 7}', b'{"cmd": null}', b'{"cmd": ["status"]}', b"[1, 2]", b'"status"',
                           b'{"cmd": "new", "game": 5}', b'{"cmd": "new", "game": "dice", "options": [1]}',
                           b'{"cmd": "bots", "count": "two"}', b'{"cmd": "bots", "count": 1e308}',
                           b'{"cmd": "history", "limit": -1}', b'{"cmd": "history", "limit": NaN}',
                           b'{"cmd": "history", "limit": "all"}', b'{"cmd": "selftest", "action": 3}',
                           b'{"cmd": "selftest", "action": "status", "seats": "x"}',
                           b'{"cmd": "config", "action": "get", "key": 12}', b"{}", b"null",
                           b"1e999"]) + b"\n"

    def unknown() -> bytes:
        name = rng.choice(["fly", "", "__init__", "STATUS", "status ", "../../etc/passwd", "é" * 40,
                           "reboot", "shutdown"])
        return json.dumps({"cmd": name}).encode() + b"\n"

    def control_chars() -> bytes:
        noise = bytes(rng.choice([*range(0, 10), *range(11, 32), 127]) for _ in range(rng.randint(1, 40)))
        return rng.choice([noise, b'{"cmd": "status' + noise + b'"}',
                           json.dumps({"cmd": "status" + noise.decode("latin-1")}).encode()]) + b"\n"

    kinds = [random_bytes, truncated, huge, deep, wrong_type, unknown, control_chars]
    return [kinds[n % len(kinds)]() for n in range(count)]


def _exchange(path: Path, message: bytes, timeout: float) -> dict[str, Any] | None:
    """One message on a connection of its own: the daemon's JSON reply, or None for none."""
    import socket

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(str(path))
            with contextlib.suppress(OSError):  # a huge line: the daemon may answer and close first
                conn.sendall(message)
            data = b""
            while b"\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    try:
        reply = json.loads(data.split(b"\n", 1)[0])
    except ValueError:
        return None
    return reply if isinstance(reply, dict) else None


def socket_faults(garbage: int = 350, clients: int = 40, seed: int | str = 13) -> dict[str, Any]:
    """Over the real socket to a real daemon: `garbage` malformed messages, each on its own
    connection (each must get a JSON answer), then `clients` simultaneous `tablectl status` (the
    real client, each its own process: each must exit 0); then is the daemon alive and answering?"""
    outcomes = {"answered": 0, "errors": 0, "unanswered": 0}
    unanswered: list[str] = []
    failures: list[str] = []
    from .harness import emulated_daemon

    with tempfile.TemporaryDirectory() as tmp, emulated_daemon(Path(tmp) / "daemon.log", 60.0) as daemon:
        for message in garbage_messages(garbage, seed):
            reply = _exchange(daemon.socket, message, 10.0)
            if reply is None:
                outcomes["unanswered"] += 1
                unanswered.append(repr(message[:60]))
            else:
                outcomes["answered"] += 1
                outcomes["errors"] += reply.get("ok") is False
        alive_after_garbage = daemon.answers()
        root = str(Path(__file__).resolve().parents[2])
        procs = [subprocess.Popen([sys.executable, "-m", "firmware_host.cli.ctl", "status"], cwd=root,
                                  env=daemon.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  preexec_fn=ending_with_me())
                 for _ in range(clients)]
        for proc in procs:
            _out, err = proc.communicate(timeout=120)
            if proc.returncode != 0:
                failures.append(f"exit {proc.returncode}: {err.decode(errors='replace').strip()[-160:]}")
        deaths = 0 if daemon.proc.poll() is None else 1
        answering = deaths == 0 and daemon.answers()
    return {"garbage": {"sent": garbage, **outcomes, "unanswered_examples": unanswered[:5],
                        "alive_after": alive_after_garbage},
            "concurrent": {"clients": clients, "failures": len(failures), "examples": failures[:5]},
            "daemon_deaths": deaths, "answering_after": answering}


_PART = textwrap.dedent("""
    import json, signal, sys
    import firmware_host.games  # registers the built-in games: this child is a composition root

    def stopped(signum, frame):  # in order: its daemons are stopped, its tmpfs unmounted
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stopped)
    module = __import__(f"firmware_host.bench.{sys.argv[1]}", fromlist=[sys.argv[2]])
    print(json.dumps(getattr(module, sys.argv[2])()))
""")
APART = {"storage": ("storage_faults", "storage_faults"), "config_files": ("config_faults", "config_faults")}
"""The parts run beside the others, each in a process of its own: they share nothing with them (their
own directories, daemons, tmpfs, environment) and mostly wait (bots playing a Dice match on a full
disk, an editor's saves, files settling): 5 s of CPU in 30 to 50 s each, run one after another."""


def _apart(module: str, function: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _PART, module, function],
                            cwd=str(Path(__file__).resolve().parents[2]), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=ending_with_me(signal.SIGTERM))


def _result(name: str, proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"bench faults: the {name} part ended with exit status {proc.returncode}: "
                           f"{err.strip()[-400:]}")
    result: dict[str, Any] = json.loads(out)
    return result


def bench_faults(kills: int = 100, configs: int = 400, garbage: int = 350, clients: int = 40,
                 soak_minutes: float = 1.0) -> dict[str, Any]:
    start = time.monotonic()
    # a full disk, damaged databases (storage_faults.py); hostile configuration files (config_faults.py)
    apart = {name: _apart(*where) for name, where in APART.items()}
    try:
        figures: dict[str, Any] = {"sigkill": random_kills(kills), "configs": broken_configs(configs)}
        figures["socket"] = socket_faults(garbage, clients)
        figures["clients"] = client_faults()  # slowloris, unread pipelines, SIGTERM at start-up
        for name, proc in apart.items():
            figures[name] = _result(name, proc)
    finally:  # stopped (SIGTERM) or failed: each part stops its daemons and unmounts its tmpfs
        for proc in apart.values():
            if proc.poll() is None:
                stop(proc)
    k, c, sk = figures["sigkill"], figures["configs"], figures["socket"]
    met = k["rounds_lost"] == 0 and not k["failures"] and c["traceback"] == 0
    met = met and sk["garbage"]["unanswered"] == 0 and sk["daemon_deaths"] == 0 and sk["answering_after"]
    met = met and sk["concurrent"]["failures"] == 0 and figures["storage"]["meets_target"]
    met = met and figures["clients"]["meets_target"]
    met = met and figures["config_files"]["meets_target"]
    if soak_minutes > 0:  # the daemon's memory while bot matches go on (soak.py)
        from .soak import bench_soak

        figures["soak"] = soak = bench_soak(soak_minutes)
        # A soak too short for its warm-up is a smoke run: the daemon must live through it.
        met = met and (soak["meets_target"] if soak["judged"] else soak["daemon_alive"])
    figures["meets_target"] = met
    figures["seconds"] = round(time.monotonic() - start, 1)
    return figures


def faults_text(f: dict[str, Any]) -> str:
    k, c = f["sigkill"], f["configs"]
    lines = [
        f"SIGKILL at random moments: {k['kills']} kills, {k['rounds_stored']} rounds stored in "
        f"{k['matches']} matches, rounds lost {k['rounds_lost']} (target 0), matches set aside "
        f"{k['set_aside']}, matches the bots could not finish {k['stuck']}",
        f"broken configurations: {c['tried']} tried, {c['config_error']} refused with a ConfigError, "
        f"{c['config']} still valid, tracebacks {c['traceback']} (target 0)",
    ]
    lines += [f"  lost: {line}" for line in k["lost"]] + [f"  failure: {line}" for line in k["failures"]]
    lines += [f"  traceback: {line}" for line in c["tracebacks"]]
    if "socket" in f:
        sk = f["socket"]
        g, cc = sk["garbage"], sk["concurrent"]
        lines += [
            f"garbage on the control socket: {g['sent']} messages, {g['answered']} answered ({g['errors']} "
            f"as errors), unanswered {g['unanswered']} (target 0); daemon deaths {sk['daemon_deaths']} "
            f"(target 0), answering afterwards {'yes' if sk['answering_after'] else 'NO'}",
            f"concurrent tablectl status: {cc['clients']} at once, failures {cc['failures']} of "
            f"{cc['clients']} (target 0)",
        ]
        lines += [f"  unanswered: {m}" for m in g["unanswered_examples"]]
        lines += [f"  tablectl failed: {m}" for m in cc["examples"]]
    if "storage" in f:
        lines += storage_text(f["storage"])
    if "clients" in f:
        lines += client_text(f["clients"])
    if "config_files" in f:
        lines += config_faults_text(f["config_files"])
    if "soak" in f:
        from .soak import soak_text

        lines.append(soak_text(f["soak"]))
    lines.append(f"({f['seconds']} s)")
    return "\n".join(lines)
