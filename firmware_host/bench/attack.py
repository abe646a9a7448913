"""`table-host bench attack`: the table under clients on its network and local users that mean
it harm, beside a baseline taken in the same run (docs/web.md, "Limits"; docs/daemon.md).

The real daemon (emulated, headless, its web view on, with `bench history`'s 200 matches
stored) runs under the unit's descriptor limit (RLIMIT_NOFILE 1024, `LimitNOFILE=`) as the
12-seat build (its wiring file as the daemon's table.toml), and SEATS hard bots play whole
Ligretto matches (a round's result is skipped, as an impatient table does): some 40 decisions
a second here, so a phase has several hundred and its p99 is not its largest value (four bots
gave about 100 a phase). For `seconds` in all nobody attacks (the baseline), and for `seconds` all of these at
once, in TURNS turns each (without, under, SETTLE_S not counted, without, under), so that the
shared machine's ups and downs fall on both alike (attackers.py; each a process of its own at
normal priority, started and ready before the first turn):

- HALF_OPEN connections to the web port, more than the daemon's descriptors, from
  HALF_OPEN_ADDRESSES addresses of the loopback network, each a request's head that never ends;
- WEBSOCKETS WebSockets from one address;
- READERS read-only users (each a uid of its own: root is needed) asking `tablectl history`
  without pause, and WEB_READERS addresses asking the history's pages without pause;
- SLOWLORIS connections to the control socket as `nobody`, a byte every 2 s.

The attackers are clients of the table's network, not the table: the web view takes a
connection whose peer is its own address (127.0.0.1 to 127.0.0.1) for the table's own screen,
so they come from 127.0.0.2 and up (all of 127/8 is the loopback network) and only the kiosk's
probe from 127.0.0.1. Throughout both phases, as an admin (root): `status` every STATUS_EVERY_S
(its time; a round's result skipped, a match over started again), a kiosk every KIOSK_EVERY_S
(`/big` and a WebSocket to `/live` from 127.0.0.1, its first frame within KIOSK_WAIT_S: served),
and the engine's decisions read every POLL_EVERY_S (`decisions`, a cursor: each once). Each
phase's figures: decision lateness (decided - stamp - window, every decision decided in it)
p50/p99/max, the admin's `status` times, the kiosk's tries served, the daemon's log lines (the
journal, under systemd) and its tracebacks, its descriptors at most, and the cycle collector's
collections (and its longest pauses so far: a longer one in the attack would show).

Targets: lateness p99 under attack within TARGET_ADDED_MS of the baseline's; every `status`
in the attack answered within STATUS_LIMIT_S; every kiosk try in the attack served; at most
TARGET_JOURNAL_LINES more log lines in the attack than in the baseline. Exit 1 when one is missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .harness import ROOT, EmulatedDaemon, emulated_daemon
from .history import FIRST_UID, MATCHES, _store_history

DESCRIPTORS = 1024  # the unit's LimitNOFILE
HALF_OPEN = 1_100  # half-open requests at once: more than the daemon has descriptors
HALF_OPEN_NETWORK, HALF_OPEN_ADDRESSES = "127.0.1.", 250  # 127.0.1.1 to 127.0.1.250
WEBSOCKETS, WEBSOCKET_FROM = 100, "127.0.0.2"
READERS = 8  # read-only users asking `tablectl history` without pause
WEB_READERS, WEB_READERS_FROM = 8, 3  # addresses asking the history's pages: 127.0.0.3 to 127.0.0.10
SEATS = 12  # hard bots at every seat of the 12-seat build: the most decisions a second
SLOWLORIS = 16  # connections of `nobody` trickling a request to the control socket
NOBODY = 65534
STATUS_EVERY_S, STATUS_LIMIT_S = 0.2, 1.0
KIOSK_EVERY_S, KIOSK_WAIT_S = 1.0, 5.0
POLL_EVERY_S = 1.0
SAID = 8  # log lines a phase shows (the first ones; a traceback by its last line)
TURNS = 2  # baseline and attack in turns, each turn half of each phase
SETTLE_S = 2.0  # after an attack's turn, before the next baseline: not counted
TARGET_ADDED_MS = 1.0  # lateness p99 under attack at most this above the baseline's
TARGET_JOURNAL_LINES = 100  # more log lines in the attack than in the baseline, at most
PHASES = ("baseline", "attack")


# ---------------------------------------------------------------- the attackers


def _attackers(daemon: EmulatedDaemon, web: str) -> dict[str, dict[str, Any]]:
    """Each attacker process's kind and spec, by name."""
    port = int(web.rstrip("/").rsplit(":", 1)[1])
    sock = str(daemon.socket)
    out: dict[str, dict[str, Any]] = {
        "half-open": {"kind": "half-open", "port": port, "count": HALF_OPEN, "network": HALF_OPEN_NETWORK,
                      "addresses": HALF_OPEN_ADDRESSES, "descriptors": HALF_OPEN + 256},
        "websockets": {"kind": "websockets", "url": web, "count": WEBSOCKETS, "source": WEBSOCKET_FROM,
                       "descriptors": WEBSOCKETS + 256},
        "web-history": {"kind": "web-history", "url": web, "users": WEB_READERS, "network": "127.0.0.",
                        "first": WEB_READERS_FROM, "matches": MATCHES},
    }
    as_others = os.geteuid() == 0
    for n in range(READERS):
        out[f"history-{n + 1}"] = {"kind": "history", "socket": sock,
                                   "uid": FIRST_UID + n if as_others else None}
    if as_others:
        out["slowloris"] = {"kind": "slowloris", "socket": sock, "peers": SLOWLORIS, "uid": NOBODY}
    return out


class Attackers:
    """The attacker processes: started and ready before the baseline, let go for the attack."""

    def __init__(self, specs: dict[str, dict[str, Any]]) -> None:
        self.procs: dict[str, subprocess.Popen[str]] = {}
        for name, spec in specs.items():
            kind = spec["kind"]
            self.procs[name] = subprocess.Popen(
                [sys.executable, "-m", f"{__package__}.attackers", kind, json.dumps(spec)], cwd=ROOT,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def ready(self, within_s: float = 60.0) -> None:
        deadline = time.monotonic() + within_s
        for name, proc in self.procs.items():
            assert proc.stdout is not None
            line = _line_within(proc, deadline)
            if line.strip() != "ready":
                said = proc.stderr.read() if proc.poll() is not None and proc.stderr else ""
                raise RuntimeError(f"the {name} attacker did not start: {line.strip()} {said[-300:]}")

    def go(self, seconds: float) -> None:
        for proc in self.procs.values():
            assert proc.stdin is not None
            if proc.poll() is None:  # one that failed says so in its counts
                with contextlib.suppress(BrokenPipeError):
                    proc.stdin.write(f"go {seconds}\n")
                    proc.stdin.flush()

    def counts(self, within_s: float) -> dict[str, dict[str, int]]:
        """What each did (an attacker that said nothing: its last words, as `failed`)."""
        out: dict[str, dict[str, Any]] = {}
        deadline = time.monotonic() + within_s
        for name, proc in self.procs.items():
            line = _line_within(proc, deadline)
            try:
                out[name] = json.loads(line)
            except ValueError:
                proc.kill()
                said = proc.stderr.read() if proc.stderr is not None else ""
                out[name] = {"failed": 1, "said": (line + said).strip()[-300:]}  # type: ignore[dict-item]
        return out

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()


def _line_within(proc: subprocess.Popen[str], deadline: float) -> str:
    """One line of an attacker's stdout, or "" when none came by `deadline`."""
    import select

    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
    return proc.stdout.readline() if ready else ""


# ---------------------------------------------------------------- what is watched throughout


@dataclass
class Watch:
    """What the bench's own threads see, each sample stamped (time.monotonic_ns)."""

    status: list[tuple[int, float | None]] = field(default_factory=list)  # its time in s, None: unanswered
    kiosk: list[tuple[int, bool, float]] = field(default_factory=list)  # served, in s
    decisions: list[dict[str, Any]] = field(default_factory=list)
    descriptors: list[tuple[int, int]] = field(default_factory=list)
    missed: int = 0  # trace entries gone before they were read
    window_ns: int = 0
    refusals: list[str] = field(default_factory=list)  # a command the bench gave that was refused
    stop: threading.Event = field(default_factory=threading.Event)


def _admin(daemon: EmulatedDaemon, watch: Watch) -> None:
    """`status` every STATUS_EVERY_S, timed; the match kept going (a round's result skipped, a
    match over started again); the daemon's descriptors counted."""
    from ..control.client import ask

    while not watch.stop.is_set():
        began = time.monotonic()
        try:
            answer = ask({"cmd": "status"}, daemon.socket, timeout=10.0)
        except Exception:  # not reached: unanswered, as a person at tablectl would see it
            answer = {}
        took = time.monotonic() - began
        stamp = time.monotonic_ns()
        watch.status.append((stamp, took if answer.get("ok") is True else None))
        with contextlib.suppress(OSError):
            watch.descriptors.append((stamp, len(os.listdir(f"/proc/{daemon.proc.pid}/fd"))))
        phase = answer.get("phase")
        if phase == "round_result":
            _do(daemon, {"cmd": "next"}, watch)
        elif phase in ("lobby", "match_result", "attract"):
            _begin(daemon, watch)
        watch.stop.wait(max(0.0, STATUS_EVERY_S - took))


def _do(daemon: EmulatedDaemon, body: dict[str, Any], watch: Watch) -> dict[str, Any]:
    answer = daemon.ask(body)
    if not answer.get("ok"):
        watch.refusals.append(f"{body['cmd']}: {answer.get('error')}")
        del watch.refusals[:-10]
    return answer


def _begin(daemon: EmulatedDaemon, watch: Watch) -> None:
    """A whole Ligretto match, a hard bot at every seat."""
    _do(daemon, {"cmd": "new", "game": "classic", "options": {}}, watch)
    _do(daemon, {"cmd": "bots", "count": SEATS, "level": "hard"}, watch)
    _do(daemon, {"cmd": "start"}, watch)


def _reader(daemon: EmulatedDaemon, watch: Watch) -> None:
    """The engine's decisions as they come, each once (`decisions` from a cursor)."""
    cursor = 0
    while True:
        stopping = watch.stop.is_set()
        answer = daemon.ask({"cmd": "decisions", "since": cursor})
        if answer.get("ok"):
            cursor = answer["next"]
            watch.missed += answer["missed"]
            watch.window_ns = answer["window_ns"]
            watch.decisions += answer["decisions"]
        if stopping:
            return
        watch.stop.wait(POLL_EVERY_S)


def _kiosk(web: str, watch: Watch) -> None:
    """The table's own screen, from 127.0.0.1 to 127.0.0.1: its page and its WebSocket's first
    frame, tried every KIOSK_EVERY_S."""
    import aiohttp

    async def tries() -> None:
        while not watch.stop.is_set():
            began = time.monotonic()
            served = False
            with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
                connector = aiohttp.TCPConnector(local_addr=("127.0.0.1", 0), force_close=True)
                async with asyncio.timeout(KIOSK_WAIT_S), aiohttp.ClientSession(connector=connector) as s:
                    async with s.get(web + "big") as page:
                        await page.read()
                    if page.status == 200:
                        async with s.ws_connect(web + "live", heartbeat=None, origin=web.rstrip("/")) as ws:
                            served = (await ws.receive()).type == aiohttp.WSMsgType.TEXT
            took = time.monotonic() - began
            watch.kiosk.append((time.monotonic_ns(), served, took))
            await asyncio.sleep(max(0.0, KIOSK_EVERY_S - took))

    asyncio.run(tries())


# ---------------------------------------------------------------- figures


def _percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def lateness(decisions: list[dict[str, Any]], window_ns: int, since: int, until: int) -> dict[str, Any]:
    """Each decision's lateness in ms (decided - stamp - window: 0 is on time) decided in
    [since, until): how many, p50, p99, max."""
    late = sorted((d["decided_ns"] - d["ts_ns"] - window_ns) / 1e6 for d in decisions
                  if since <= d["decided_ns"] < until)
    if not late:
        return {"decisions": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}
    return {"decisions": len(late), "p50_ms": round(_percentile(late, 50), 3),
            "p99_ms": round(_percentile(late, 99), 3), "max_ms": round(late[-1], 3)}


def _within(samples: list[Any], since: int, until: int) -> list[Any]:
    return [s for s in samples if since <= s[0] < until]


@dataclass
class Mark:
    """A phase's edge: when, the daemon's log lines so far, its collector's figures."""

    ns: int
    lines: int
    tracebacks: int
    collector: dict[str, Any]
    text: str = ""  # the daemon's log so far


def _mark(daemon: EmulatedDaemon, log: Path) -> Mark:
    text = log.read_text(errors="replace")
    collector = daemon.ask({"cmd": "status"}).get("memory", {}).get("collector", {})
    return Mark(time.monotonic_ns(), text.count("\n"), text.count("Traceback"), collector, text)


def said(turns: list[tuple[Mark, Mark]], most: int = SAID) -> list[str]:
    """What the daemon logged in a phase: its first lines, and each traceback's last line."""
    lines = [line for b, e in turns for line in e.text[len(b.text):].splitlines()]
    shown = [line for line in lines if not line.startswith((" ", "Traceback"))]
    return [line[:240] for line in shown[:most]]


def phase_figures(watch: Watch, turns: list[tuple[Mark, Mark]]) -> dict[str, Any]:
    """One phase's figures over its turns (each its first and last mark)."""
    def within(samples: list[Any]) -> list[Any]:
        return [s for b, e in turns for s in _within(samples, b.ns, e.ns)]

    status = [t for _, t in within(watch.status)]
    answered = sorted(t for t in status if t is not None)
    kiosk = within(watch.kiosk)
    late = [d for b, e in turns for d in watch.decisions if b.ns <= d["decided_ns"] < e.ns]
    first, last = turns[0][0].collector, turns[-1][1].collector
    collections = [0, 0, 0]
    for b, e in turns:
        ran = zip(e.collector.get("collections", [0, 0, 0]), b.collector.get("collections", [0, 0, 0]),
                  strict=True)
        collections = [c + after - before for c, (after, before) in zip(collections, ran, strict=True)]
    return {
        "seconds": round(sum(e.ns - b.ns for b, e in turns) / 1e9, 1),
        "lateness": lateness(late, watch.window_ns, 0, 1 << 63),
        "status": {"asked": len(status), "unanswered": len(status) - len(answered),
                   "over_limit": sum(t > STATUS_LIMIT_S for t in answered),
                   "p50_ms": round(statistics.median(answered) * 1000, 1) if answered else None,
                   "worst_ms": round(answered[-1] * 1000, 1) if answered else None},
        "kiosk": {"tries": len(kiosk), "served": sum(served for _, served, _ in kiosk),
                  "worst_ms": round(max((t for _, _, t in kiosk), default=0.0) * 1000, 1)},
        "journal_lines": sum(e.lines - b.lines for b, e in turns),
        "journal_said": said(turns),
        "tracebacks": sum(e.tracebacks - b.tracebacks for b, e in turns),
        "descriptors_most": max((n for _, n in within(watch.descriptors)), default=0),
        "collector": {"collections": collections,
                      "longest_pause_ms_before": first.get("longest_pause_ms"),
                      "longest_pause_ms_after": last.get("longest_pause_ms")},
    }


def judge(figures: dict[str, Any]) -> dict[str, bool]:
    """Each target, met or not, from the figures alone."""
    base, attack = figures["phases"]["baseline"], figures["phases"]["attack"]
    p99, base_p99 = attack["lateness"]["p99_ms"], base["lateness"]["p99_ms"]
    return {
        "lateness": p99 is not None and base_p99 is not None and figures["missed"] == 0
        and p99 <= base_p99 + figures["targets"]["added_p99_ms"],
        "admin": attack["status"]["asked"] > 0 and attack["status"]["unanswered"] == 0
        and attack["status"]["over_limit"] == 0,
        "kiosk": attack["kiosk"]["tries"] > 0 and attack["kiosk"]["served"] == attack["kiosk"]["tries"],
        "journal": attack["journal_lines"] - base["journal_lines"] <= figures["targets"]["journal_lines"],
    }


def bench_attack(seconds: float = 30.0) -> dict[str, Any]:
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-attack-") as tmp:
        log = Path(tmp) / "daemon.log"
        from ..config.load import WIRING

        wiring = (WIRING / f"{SEATS}-seat.toml").read_text(encoding="utf-8")
        with emulated_daemon(log, 60.0, prepare=_store_history, descriptors=DESCRIPTORS,
                             config=wiring) as daemon:
            figures = _attacked(daemon, log, seconds)
    figures["load_average"] = [round(x, 2) for x in load]
    figures["met"] = met = judge(figures)
    figures["meets_target"] = all(met.values())
    return figures


def _attacked(daemon: EmulatedDaemon, log: Path, seconds: float) -> dict[str, Any]:
    status = daemon.ask({"cmd": "status"})
    web = status.get("web")
    if not web:
        raise RuntimeError("the daemon serves no web view (status names no address)")
    for where in (daemon.socket.parent.parent, daemon.socket.parent):  # anyone may reach it:
        where.chmod(0o755)                                                # the daemon decides
    daemon.socket.chmod(0o666)
    specs = _attackers(daemon, web)
    attackers = Attackers(specs)
    watch = Watch()
    threads = [threading.Thread(target=t, args=a, name=f"bench-{t.__name__.strip('_')}", daemon=True)
               for t, a in ((_admin, (daemon, watch)), (_reader, (daemon, watch)), (_kiosk, (web, watch)))]
    turns: dict[str, list[tuple[Mark, Mark]]] = {name: [] for name in PHASES}
    counts: list[dict[str, dict[str, Any]]] = []
    part = seconds / TURNS
    try:
        attackers.ready()
        _begin(daemon, watch)
        _until(lambda: daemon.ask({"cmd": "status"}).get("phase") == "playing", 30.0)
        for thread in threads:
            thread.start()
        for _ in range(TURNS):  # without, then under the attack, in turns: the machine's ups and
            begin = _mark(daemon, log)  # downs fall on both alike
            time.sleep(part)
            turns["baseline"].append((begin, _mark(daemon, log)))
            attackers.go(part)
            begin = _mark(daemon, log)
            time.sleep(part)
            turns["attack"].append((begin, _mark(daemon, log)))
            counts.append(attackers.counts(30.0))  # every attacker done: its connections let go
            if len(counts) < TURNS:
                time.sleep(SETTLE_S)
    finally:
        watch.stop.set()
        for thread in threads:
            if thread.is_alive():
                thread.join(30.0)
        attackers.stop()
    after = daemon.ask({"cmd": "status"})
    figures: dict[str, Any] = {
        "seconds": seconds, "descriptors": DESCRIPTORS, "seats": SEATS,
        "attack": {"half_open": HALF_OPEN, "half_open_addresses": HALF_OPEN_ADDRESSES,
                   "websockets": WEBSOCKETS, "websocket_from": WEBSOCKET_FROM, "readers": READERS,
                   "readers_as_others": os.geteuid() == 0, "web_readers": WEB_READERS,
                   "slowloris": SLOWLORIS if os.geteuid() == 0 else 0},
        "turns": TURNS,
        "phases": {name: phase_figures(watch, turns[name]) for name in PHASES},
        "attackers": _summed(counts),
        "missed": watch.missed,
        "web_view": after.get("web_view"),
        "answering_after": after.get("ok") is True,
        "refusals": watch.refusals,
        "targets": {"added_p99_ms": TARGET_ADDED_MS, "status_s": STATUS_LIMIT_S,
                    "journal_lines": TARGET_JOURNAL_LINES},
    }
    return figures


def _summed(turns: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """What the attackers did over every turn, the readers as one (history-1 ... history-8:
    history); the most at once is the most of any turn."""
    out: dict[str, dict[str, Any]] = {}
    for counts in turns:
        for name, c in counts.items():
            into = out.setdefault("history" if name.startswith("history-") else name, {})
            for k, v in c.items():
                if not isinstance(v, int):
                    into[k] = v
                elif k.endswith("_most"):
                    into[k] = max(into.get(k, 0), v)
                else:
                    into[k] = into.get(k, 0) + v
    return out


def _until(done: Callable[[], bool], within_s: float) -> None:
    deadline = time.monotonic() + within_s
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError("the bots' match did not start")
        time.sleep(0.2)


# ---------------------------------------------------------------- text


def attack_text(f: dict[str, Any]) -> str:
    a, base, att = f["attack"], f["phases"]["baseline"], f["phases"]["attack"]
    readers = "each a uid of its own" if a["readers_as_others"] else "as this user (not root: no other uid)"
    slow = f"{a['slowloris']} slowloris connections to the control socket as nobody" if a["slowloris"] \
        else "no slowloris (a read-only peer needs another uid: run as root)"
    lines = [
        f"attack: the real daemon (LimitNOFILE {f['descriptors']}, web view on, "
        f"{f.get('seats', 4)} hard bots), "
        f"{f['seconds']:g} s without, then {f['seconds']:g} s under: {a['half_open']} half-open requests "
        f"from {a['half_open_addresses']} addresses, {a['websockets']} WebSockets from "
        f"{a['websocket_from']}, "
        f"{a['readers']} users asking `tablectl history` without pause ({readers}) and {a['web_readers']} "
        f"addresses the history's pages, {slow} (load average {f['load_average'][0]:g} at the start)",
        f"  {'':28}{'baseline':>26}  {'attack':>26}"]

    def row(what: str, show: Callable[[dict[str, Any]], str]) -> None:
        lines.append(f"  {what:28}{show(base):>26}  {show(att):>26}")

    def late(p: dict[str, Any]) -> str:
        x = p["lateness"]
        return f"{x['p50_ms']} / {x['p99_ms']} / {x['max_ms']} ms"

    row("lateness p50 / p99 / max", late)
    row("decisions", lambda p: str(p["lateness"]["decisions"]))
    row("admin status p50 / worst", lambda p: f"{p['status']['p50_ms']} / {p['status']['worst_ms']} ms")
    row(f"status over {STATUS_LIMIT_S:g} s, unanswered",
        lambda p: f"{p['status']['over_limit']}, {p['status']['unanswered']} of {p['status']['asked']}")
    row("kiosk served", lambda p: f"{p['kiosk']['served']} of {p['kiosk']['tries']} "
                                  f"(worst {p['kiosk']['worst_ms']} ms)")
    row("log lines (tracebacks)", lambda p: f"{p['journal_lines']} ({p['tracebacks']})")
    row("daemon's descriptors, most", lambda p: f"{p['descriptors_most']} of {f['descriptors']}")
    row("collections gen 0 / 1 / 2", lambda p: " / ".join(map(str, p["collector"]["collections"])))
    row("longest pauses so far", lambda p: " / ".join(
        f"{x:g}" for x in p["collector"]["longest_pause_ms_after"] or ()) + " ms")
    c = f["attackers"]

    def n(kind: str, what: str) -> int:
        return int(c.get(kind, {}).get(what, 0))

    lines.append(f"  the attackers: half-open {n('half-open', 'connections')} connections made, "
                 f"{n('half-open', 'open_most')} open at once, {n('half-open', 'refused_503')} refused, "
                 f"{n('half-open', 'closed_by_the_table')} closed by the table; WebSockets "
                 f"{n('websockets', 'opened')} opened, {n('websockets', 'open_most')} at once, "
                 f"{n('websockets', 'refused')} refused; history pages {n('web-history', 'answered')} "
                 f"answered, {n('web-history', 'refused')} refused; `tablectl history` "
                 f"{n('history', 'answered')} answered, {n('history', 'refused')} refused; slowloris "
                 f"{n('slowloris', 'connections')} connections")
    lines += [f"  logged in the attack: {line}" for line in att["journal_said"]]
    failed = [f"{k}: {v.get('said', '')}" for k, v in c.items() if v.get("failed")]
    lines += [f"  attacker failed: {x}" for x in failed]
    if f["missed"]:
        lines.append(f"  {f['missed']} entries of the trace were gone before they were read")
    met, t = f["met"], f["targets"]
    verdict = {True: "meets", False: "MISSES"}
    lines.append(f"  targets: lateness p99 under attack <= baseline + {t['added_p99_ms']:g} ms: "
                 f"{verdict[met['lateness']]}; every status within {t['status_s']:g} s: "
                 f"{verdict[met['admin']]}; the kiosk served every try: {verdict[met['kiosk']]}; at most "
                 f"{t['journal_lines']} more log lines: {verdict[met['journal']]}")
    return "\n".join(lines)
