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
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from .config import ConfigError, load_config

TEMPLATE = Path(__file__).parent / "data" / "wiring" / "4-seat.toml"


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
        path = Path(tmp) / "table.toml"
        for data in config_mutants(TEMPLATE.read_bytes(), count, seed):
            path.write_bytes(data)
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
    from firmware_host.catalog import new_match
    from firmware_host.rules.sight import sight_of
    from firmware_host.simulate import make_bots
    from firmware_host.store import Store
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
    from .store import Store

    rng = random.Random(seed)
    root = str(Path(__file__).resolve().parents[1])
    lost: list[str] = []
    stored: dict[int, int] = {}
    resume_failures: list[str] = []
    stuck = 0
    with tempfile.TemporaryDirectory() as tmp:
        db = state_db or Path(tmp) / "table.db"
        for k in range(kills):
            child = subprocess.Popen([sys.executable, "-c", _CHILD, str(db), f"{seed}/{k}"], cwd=root,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
            history = {m["match"]: m for m in store.history(10**6)}
            for mid, rounds in sorted(stored.items()):
                kept = len(history[mid]["rounds"]) if mid in history else 0
                if kept < rounds:
                    lost.append(f"match {mid}: {rounds} rounds stored, {kept} in history")
            set_aside = sum(1 for m in history.values() if m.get("set_aside") not in (None, "aborted"))
        finally:
            store.close()
    return {"kills": kills, "rounds_stored": sum(stored.values()), "rounds_lost": len(lost), "lost": lost[:5],
            "matches": len(stored), "set_aside": set_aside, "stuck": stuck, "failures": resume_failures[:5]}


def bench_faults(kills: int = 100, configs: int = 400, soak_minutes: float = 1.0) -> dict[str, Any]:
    start = time.monotonic()
    figures: dict[str, Any] = {"sigkill": random_kills(kills), "configs": broken_configs(configs)}
    k, c = figures["sigkill"], figures["configs"]
    met = k["rounds_lost"] == 0 and not k["failures"] and c["traceback"] == 0
    if soak_minutes > 0:  # the daemon's memory while bot matches go on (soak.py)
        from .soak import bench_soak

        figures["soak"] = bench_soak(soak_minutes)
        met = met and figures["soak"]["meets_target"]
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
    if "soak" in f:
        from .soak import soak_text

        lines.append(soak_text(f["soak"]))
    lines.append(f"({f['seconds']} s)")
    return "\n".join(lines)
