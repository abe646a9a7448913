"""What operators, files and cables throw at the daemon: it neither dies, nor refuses to
start, nor loses a completed round (issue 13, items 1-6)."""

from __future__ import annotations

import os
import select
import sqlite3
import threading
import time
import tty
from pathlib import Path

import pytest
from helpers import play_recorded

from firmware_host.config import ConfigError, emulated_config, load_config
from firmware_host.devices.displays import ledproto
from firmware_host.devices.displays.ledlink import LedLink
from firmware_host.engine.match import Match
from firmware_host.service.journal import Store
from firmware_host.table.matches import new_match

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = (ROOT / "systemd" / "table.toml.example").read_bytes()


# ---------------------------------------------------------------- 1. any bytes in table.toml


def mutants(template: bytes, count: int, seed: int = 13) -> list[bytes]:
    """Broken configurations as an operator, an editor or a failing card makes them."""
    from firmware_host.bench.faults import config_mutants

    return config_mutants(template, count, seed)


def test_any_bytes_in_the_configuration_give_a_config_error(tmp_path: Path) -> None:
    from firmware_host.bench.harness import settled_files

    tracebacks = []
    fixed = [b"\xff\xfe" + TEMPLATE, TEMPLATE[:200] + b"\xc3\x28" + TEMPLATE[200:],
             b"x = " + b"[" * 5000 + b"]" * 5000, b"x = " + b"{a = " * 3000 + b"1" + b"}" * 3000,
             b"[inputs]\nseats = " + b"[" * 100_000, b"\x00" * 64]
    tried = fixed + mutants(TEMPLATE, 200)
    # each in a file of its own, written first: one wait for them to settle (config/load.py), not 206
    for path, data in zip(settled_files(tmp_path, tried), tried, strict=True):
        try:
            load_config(path)
        except ConfigError as exc:
            assert exc.problems and all(p.startswith("table.toml") or str(path) in p for p in exc.problems)
        except Exception as exc:
            tracebacks.append((data[:60], repr(exc)[:200]))
    assert tracebacks == []


def test_an_undecodable_file_at_start_runs_on_the_last_good_copy(dirs: Path) -> None:
    from firmware_host.config import choose_config

    path = dirs / "table.toml"
    path.write_bytes(TEMPLATE)
    choose_config(path, True)  # keeps the last good copy
    path.write_bytes(TEMPLATE.replace(b"seats", b"s\xffeats", 1))
    config, problem = choose_config(path, True)
    assert config.inputs.seats and "UTF-8" in problem and "last good one" in problem


def test_the_last_good_copy_is_replaced_whole_never_written_in_place(dirs: Path) -> None:
    from firmware_host.config import last_good_path, remember_good

    remember_good(TEMPLATE)
    before = dirs / "old-copy"
    os.link(last_good_path(), before)  # a reader holding the old file sees it whole
    remember_good(TEMPLATE + b"\n# changed\n")
    assert before.read_bytes() == TEMPLATE
    assert last_good_path().read_bytes().endswith(b"# changed\n")
    assert [p.name for p in last_good_path().parent.iterdir() if p.name.startswith(".")] == []


# ---------------------------------------------------------------- 2. fewer seats than the match


def test_a_match_for_more_seats_than_are_wired_is_set_aside_not_a_crash(dirs: Path) -> None:
    from firmware_host.service.daemon import Daemon
    from firmware_host.table.machine import Phase

    db = dirs / "table.db"
    store = Store(db)
    match = new_match("dice", 4, 3, {"rounds": 3})
    mid = store.begin_match(match, [0, 1, 2, 3])
    play_recorded(store, mid, match, 20)
    store.close()
    daemon = Daemon(emulated_config(2), state_db=db)  # the wiring file now has 2 seats
    try:
        assert daemon.table.match is None and daemon.table.phase is Phase.ATTRACT
        assert daemon.store.resume(2) is None
        reason = daemon.store.history()[0]["set_aside"]
        assert "4 players" in reason and "2 seats" in reason
        assert any(f"match {mid}" in n for n in daemon.set_aside)  # tablectl status says it
    finally:
        daemon.close()


# ---------------------------------------------------------------- 3. a bad journal row


def dice_match_stored(db: Path, rounds: int) -> tuple[int, Match]:
    """A two-seat Dice match of 3 rounds with its first `rounds` played and stored, the store closed."""
    store = Store(db)
    match = new_match("dice", 2, 3, {"rounds": 3})
    mid = store.begin_match(match, [0, 1])
    play_recorded(store, mid, match, 10**6, rounds=rounds)
    store.close()
    return mid, match


@pytest.mark.parametrize("row", ['{"do": "fly", "seat": 0}', "{not json", '{"do": "place"}', "[]",
                                 '{"do": "place", "seat": 99, "die": 1, "pile": 0}'])
def test_a_journal_that_does_not_replay_is_set_aside_and_kept(tmp_path: Path, row: str) -> None:
    db = tmp_path / "table.db"
    mid, _ = dice_match_stored(db, rounds=1)
    with sqlite3.connect(db) as raw:
        n = raw.execute("SELECT MAX(n) FROM journal").fetchone()[0]
        raw.execute("INSERT INTO journal VALUES (?,?,?,?)", (mid, n + 1, 1, row))
    store = Store(db)
    assert store.resume(2) is None  # the table starts clean
    assert store.set_aside_notes and f"match {mid}" in store.set_aside_notes[0]
    history = store.history()[0]
    assert history["match"] == mid and history["set_aside"] and len(history["rounds"]) == 1  # kept
    store.close()
    again = Store(db)
    assert again.resume(2) is None and not again.set_aside_notes  # set aside once, for good
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT COUNT(*) FROM journal WHERE match_id=?", (mid,)).fetchone()[0] > 1
    again.close()


def test_a_set_aside_match_is_in_tablectl_status(dirs: Path) -> None:
    from firmware_host.service.daemon import Daemon

    db = dirs / "table.db"
    store = Store(db)
    mid = store.begin_match(new_match("dice", 2, 3, {"rounds": 3}), [0, 1])
    store.close()
    with sqlite3.connect(db) as raw:
        raw.execute("INSERT INTO journal VALUES (?,?,?,?)", (mid, 0, 0, "{not json"))
    daemon = Daemon(emulated_config(2), state_db=db)
    try:
        status = daemon.status_extra()
        assert status["set_aside"] and f"match {mid}" in status["set_aside"][0]
    finally:
        daemon.close()


# ---------------------------------------------------------------- 4. malformed LED replies


class HostileController:
    """A pty answering the host's blocks with every malformed reply in turn, then correctly."""

    def __init__(self, hellos: list[bytes], acks: list[bytes]) -> None:
        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.path = os.ttyname(slave)
        self._slave = slave
        self.hellos, self.acks = list(hellos), list(acks)
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        decoder = ledproto.Decoder()
        while not self.stop:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            for seq, kind, _payload in decoder.feed(data)[0]:
                if kind == ledproto.HELLO:
                    reply = self.hellos.pop(0) if self.hellos else None
                    if reply is None:
                        good = bytes((ledproto.VERSION, 32, 16, 2, 1)) + b"good"  # this host's protocol
                        reply = ledproto.encode(0, ledproto.HELLO_REPLY, good)
                    os.write(self.master, reply)
                elif kind == ledproto.FRAME:
                    if self.acks:
                        os.write(self.master, self.acks.pop(0).replace(b"SEQ", bytes((seq,))))
                    os.write(self.master, ledproto.encode(seq, ledproto.ACK, bytes((seq,))))

    def close(self) -> None:
        self.stop = True
        self.thread.join(2)
        os.close(self.master)
        os.close(self._slave)


def test_every_malformed_reply_resyncs_and_the_link_thread_never_dies(said) -> None:
    reply = ledproto.HELLO_REPLY
    hellos = [ledproto.encode(0, reply, p) for p in
              (b"", b"\x02", b"\x02\x20", b"\x02\x20\x10", b"\x02\x20\x10\x02",  # short
               bytes((9, 32, 16, 2, 1)) + b"future", bytes((2, 8, 8, 2, 1)) + b"small",  # wrong
               bytes((7, 32, 16, 2, 1)) + b"\xff\xfe\x00")]  # a name that is not ASCII
    hellos[-1:-1] = [ledproto.encode(0, ledproto.ACK, b""),  # not a hello reply at all
                     ledproto.encode(0, ledproto.NAK, b"") + b"\x7e\x00",  # and a torn block
                     bytes(range(256)),  # garbage
                     ledproto.encode(0, reply, b"\x02")[:-1] + b"\x00"]  # a bad CRC
    acks = [ledproto.encode(0, ledproto.ACK, b""), ledproto.encode(0, ledproto.NAK, b""),
            b"\x7eSEQ" + bytes(20), ledproto.encode(1, reply, b""), ledproto.encode(1, reply, b"\x02")]
    controller = HostileController(hellos, acks)
    log = said
    link = LedLink(controller.path, 32, 16)
    from PIL import Image

    try:
        end = time.monotonic() + 30
        while time.monotonic() < end and (controller.hellos or not link.stats.online):
            assert link._thread.is_alive(), log
            time.sleep(0.02)
        assert link.stats.online and link.stats.controller == "good", log
        for i in range(8):
            link.show(Image.new("RGB", (32, 16), (i, 0, 0)))
            time.sleep(0.05)
        end = time.monotonic() + 10
        while time.monotonic() < end and link.stats.frames_acked < 2:
            time.sleep(0.02)
        assert link._thread.is_alive() and link.stats.online and link.stats.frames_acked >= 2, log
        assert any("hello reply" in line and "short" in line for line in log), log
    finally:
        link.close()
        controller.close()


# ---------------------------------------------------------------- 5. nothing lost


def test_a_round_and_its_journal_are_one_transaction(tmp_path: Path) -> None:
    store = Store(tmp_path / "table.db")
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    match = new_match("dice", 2, 3, {"rounds": 1})
    mid = store.begin_match(match, [0, 1])
    play_recorded(store, mid, match, 10**6, rounds=1)
    assert match.is_over
    store.close()
    begin = max(i for i, s in enumerate(statements) if s == "BEGIN" and
                any("INSERT OR REPLACE INTO rounds" in t for t in statements[i:]))
    commit = next(i for i, s in enumerate(statements) if i > begin and s == "COMMIT")
    inside = statements[begin:commit]
    assert any("INTO journal" in s for s in inside) and any("INTO rounds" in s for s in inside)
    assert any("UPDATE matches SET ended" in s for s in inside)  # the match's end with its last round


def test_a_round_journaled_but_not_stored_comes_back_into_history(tmp_path: Path) -> None:
    """What the old two commits could leave: the journal of a whole round, no round row."""
    db = tmp_path / "table.db"
    _, match = dice_match_stored(db, rounds=2)
    with sqlite3.connect(db) as raw:
        raw.execute("DELETE FROM rounds WHERE round_no=1")
    store = Store(db)
    _, resumed = store.resume(2)
    assert len(resumed.results) == 2
    assert [r["scores"] for r in store.history()[0]["rounds"]] == [list(r.scores) for r in match.results]
    store.close()


def test_a_match_whose_last_round_is_stored_but_not_its_end_ends(tmp_path: Path) -> None:
    db = tmp_path / "table.db"
    store = Store(db)
    match = new_match("dice", 2, 3, {"rounds": 1})
    mid = store.begin_match(match, [0, 1])
    play_recorded(store, mid, match, 10**6)
    assert match.is_over
    store.close()
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE matches SET ended=NULL, winners=NULL")
    store = Store(db)
    assert store.resume(2) is None
    assert store.history()[0]["ended"] is not None and store.history()[0]["winners"] == [
        p + 1 for p in match.winners]
    store.close()


# ---------------------------------------------------------------- 6. an aborted match stays aborted


def test_an_aborted_match_does_not_come_back_after_a_restart(dirs: Path) -> None:
    from firmware_host.service.daemon import Daemon
    from firmware_host.table.machine import Phase

    db = dirs / "table.db"
    daemon = Daemon(emulated_config(2), state_db=db)
    try:
        now = time.monotonic_ns()
        daemon.table.new("dice", {}, now)
        daemon.table._join(0)
        daemon.table.set_bots(1)
        daemon.table.start(now)
        daemon.loop.settle(now)
        assert daemon.match_id is not None
        daemon.table.abort(now)
        daemon.loop.settle(now)
    finally:
        daemon.close()
    again = Daemon(emulated_config(2), state_db=db)
    try:
        assert again.table.match is None and again.table.phase is not Phase.COUNTDOWN
        assert again.store.history()[0]["set_aside"] == "aborted"
    finally:
        again.close()


def test_a_new_game_between_rounds_is_refused_so_the_match_is_not_left_unfinished(dirs: Path) -> None:
    """It was: `tablectl new` at a round's result went to the lobby and left the match unfinished in
    the store, for ever: a restart brought it back, at its round result, in a game nobody had chosen."""
    from firmware_host.engine.round import RulesError
    from firmware_host.service.daemon import Daemon
    from firmware_host.table.machine import Phase

    db = dirs / "table.db"
    daemon = Daemon(emulated_config(2), state_db=db)
    try:
        now = time.monotonic_ns()
        daemon.table.new("dice", {"rounds": 2}, now)
        daemon.table._join(0)
        daemon.table.set_bots(1)
        daemon.table.start(now)
        daemon.loop.settle(now)
        assert daemon.match_id is not None
        now += 4_000_000_000  # after the countdown
        daemon.loop.settle(now)
        play_recorded(daemon.store, daemon.match_id, daemon.table.match, 10_000, rounds=1)
        daemon.loop.settle(now)
        assert daemon.table.phase is Phase.ROUND_RESULT and not daemon.table.match.is_over
        with pytest.raises(RulesError, match="a match is running: abort it first"):
            daemon.table.new("classic", {}, now)
        assert daemon.table.phase is Phase.ROUND_RESULT and daemon.table.game == "dice"
        daemon.table.abort(now)  # what the refusal asks for: then a new game may be chosen
        daemon.loop.settle(now)
        daemon.table.new("classic", {}, now)
        assert daemon.table.phase is Phase.LOBBY
    finally:
        daemon.close()
    assert Store(db).resume(2) is None  # nothing left to come back


# ---------------------------------------------------------------- the figures


def test_bench_faults_prints_kills_rounds_lost_configs_and_tracebacks() -> None:
    import json

    from plumbing import bench_faults_run

    result = bench_faults_run()  # --kills 6 --configs 60: one run shared with tests/bench
    f = json.loads(result.stdout)["faults"]
    assert result.returncode == (0 if f["meets_target"] else 1), result.stderr
    assert f["sigkill"]["kills"] == 6 and f["sigkill"]["rounds_lost"] == 0 and not f["sigkill"]["failures"]
    assert f["sigkill"]["rounds_stored"] > 0
    assert f["configs"]["tried"] == 60 and f["configs"]["traceback"] == 0
    assert f["configs"]["config_error"] > 30
    d = f["storage"]["damaged"]
    assert d["kinds"] == 8 and d["tracebacks"] == 0 and d["restart_loops"] == 0
    assert list(d["outcomes"].values()).count("moved aside, new database") == 7  # a directory named
    # table.db, no match id left and a trigger too; the garbage scores row is kept and left out
    full = f["storage"]["full_disk"]
    if full["ran"]:  # root mounts the tmpfs; else the report says why it did not run
        assert full["rounds_lost"] == 0 and full["unanswered"] == 0 and full["warned_while_full"] > 0
        assert full["rounds_played"] >= 3 and full["written_after_space_returns"]
    else:
        assert "root" in full["why"]
    start = f["storage"]["full_at_start"]
    if start["ran"]:  # a disk full before the start: up, DEGRADED, playing, and written afterwards
        for run in start["runs"].values():
            assert run["started"] and run["rounds_played"] >= 1 and run["rounds_lost"] == 0
            assert run["warned_while_full"] > 0 and run["written_after_space_returns"]
            assert run["tracebacks"] == 0
    else:
        assert "root" in start["why"]


def test_sighup_with_undecodable_and_deeply_nested_files_leaves_the_daemon_running(tmp_path: Path) -> None:
    import signal

    from plumbing import DaemonProcess

    config = tmp_path / "table.toml"
    config.write_bytes(TEMPLATE)
    daemon = DaemonProcess(tmp_path)
    daemon.env["CONFIGURATION_DIRECTORY"] = str(tmp_path)
    try:
        daemon.start()
        for broken in (TEMPLATE.replace(b"seats", b"s\xffeats", 1), b"x = " + b"[" * 50_000):
            config.write_bytes(broken)
            daemon.proc.send_signal(signal.SIGHUP)
            daemon.wait_for("READY=1")
            status = daemon.ctl("status")
            assert status["ok"] and "the running one stays" in status["warning"], status
        assert daemon.proc.poll() is None
        daemon.proc.send_signal(signal.SIGTERM)
        daemon.proc.wait(timeout=10)
        daemon.start()  # and a start on the broken file runs on the last good copy
        assert "last good one" in daemon.ctl("status")["warning"]
    finally:
        daemon.close()
