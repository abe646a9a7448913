"""Clients that misbehave on the control socket: issue 22, items 8 and 9 (a request's whole
deadline, connections per user, a handler kept for admins; a peer gone or not reading, requests
waiting on one connection bounded)."""

from __future__ import annotations

import errno
import json
import logging
import os
import queue
import select
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from plumbing import request_owner, served_table, wait_for

from firmware_host.control import server as control
from firmware_host.control.client import ask
from firmware_host.control.server import ControlServer, Request
from firmware_host.table.machine import Table

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="a read-only peer needs root to become nobody")


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory anyone may reach: the daemon's own checks are what is tested."""
    where = Path(tempfile.mkdtemp(prefix="table-clients-"))
    where.chmod(0o755)
    yield where
    shutil.rmtree(where)


def as_nobody(work: Callable[[], Any]) -> Any:
    """`work()` in a forked child that is nobody with no groups (a read-only peer); its result
    (JSON) comes back through a pipe."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.setgroups([])
            os.setresgid(NOBODY, NOBODY, NOBODY)
            os.setresuid(NOBODY, NOBODY, NOBODY)
            os.write(write, json.dumps(work()).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        said = f.read()
    os.waitpid(pid, 0)
    return json.loads(said)


def lines_until_closed(conn: socket.socket, timeout: float = 10.0) -> list[dict]:
    conn.settimeout(timeout)
    data = b""
    try:
        while chunk := conn.recv(65536):
            data += chunk
    except ConnectionResetError:  # closed with requests of ours unread: after what it sent
        pass
    return [json.loads(line) for line in data.splitlines() if line]


def test_a_request_has_a_whole_deadline_however_its_bytes_trickle(open_dir: Path, monkeypatch) -> None:
    """Slowloris: the idle limit was per receive, so a byte every 2 s held a handler for good."""
    monkeypatch.setattr(control, "REQUEST_S", 0.6)
    with served_table(open_dir / "control.sock", Table(4)):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(str(open_dir / "control.sock"))
            start = time.monotonic()
            conn.settimeout(0.1)
            closed = False
            for byte in b'{"cmd": "status", "pad": "' + b"x" * 100:  # a byte every 0.1 s, never a newline
                try:
                    conn.sendall(bytes([byte]))
                    conn.recv(4096)  # an error line or the end: either way, closed
                except TimeoutError:
                    continue
                except OSError:
                    pass
                closed = True
                break
            took = time.monotonic() - start
        assert closed and 0.5 < took < 2.0, took
        assert ask({"cmd": "status"}, open_dir / "control.sock")["ok"]


def test_a_request_that_arrives_whole_in_time_is_answered_however_it_was_cut(open_dir: Path) -> None:
    with served_table(open_dir / "control.sock", Table(4)), \
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(open_dir / "control.sock"))
        for part in (b'{"cmd": ', b'"status"}\n{"cmd": "st', b'atus"}\n'):
            conn.sendall(part)
            time.sleep(0.05)
        conn.shutdown(socket.SHUT_WR)  # said all it will say: still answered
        first, second = lines_until_closed(conn)
    assert first["ok"] and first["phase"] == "attract" and second == first


@as_root
def test_a_read_only_user_has_a_few_connections_and_root_is_not_counted(open_dir: Path) -> None:
    sock = open_dir / "control.sock"
    with served_table(sock, Table(4)):
        sock.chmod(0o666)

        def crowd() -> list[Any]:
            conns = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(control.PER_PEER + 2)]
            said = []
            for conn in conns:
                conn.connect(str(sock))
                conn.settimeout(0.5)
                try:
                    said.append(json.loads(conn.recv(4096) or b"null"))
                except TimeoutError:
                    said.append("open")
            statuses = [ask({"cmd": "status"}, sock)["ok"] for _ in range(2)]  # a fifth: refused
            for conn in conns:
                conn.close()
            return [said, statuses, ask({"cmd": "status"}, sock)["ok"]]

        said, refused_meanwhile, after = as_nobody(crowd)
        roots = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(control.PER_PEER + 2)]
        for conn in roots:
            conn.connect(str(sock))
        assert all(ask({"cmd": "status"}, sock)["ok"] for _ in range(3))  # root: no share to exceed
        for conn in roots:
            conn.close()
    refusal = {"ok": False, "error": f"{control.PER_PEER} connections from one user at once at most"}
    assert said == ["open"] * control.PER_PEER + [refusal, refusal]
    assert refused_meanwhile == [False, False] and after is True


@as_root
def test_an_admin_is_answered_while_read_only_peers_hold_every_other_handler(
        open_dir: Path, monkeypatch) -> None:
    """A table that takes its time over the read-only peers' requests (none is answered while the
    test runs: each handler would wait a minute): the handler kept for admins still serves root,
    well before any other handler could be free."""
    monkeypatch.setattr(control, "PER_PEER", 3 * control.HANDLERS)
    monkeypatch.setattr(control, "REPLY_TIMEOUT_S", 60.0)
    requests: queue.SimpleQueue[Request] = queue.SimpleQueue()
    sock = open_dir / "control.sock"
    server = ControlServer(sock, requests)
    sock.chmod(0o666)
    held: list[Request] = []
    done_r, done_w = os.pipe()  # root was answered: the attacker may let go

    def table(request: Request) -> None:
        if "uid 0 " in request.peer:
            request.reply({"ok": True, "phase": "attract"})
        else:
            held.append(request)  # not answered until root was

    def attack() -> int:
        conns = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(2 * control.HANDLERS)]
        for conn in conns:
            conn.connect(str(sock))
            conn.sendall(b'{"cmd": "status"}\n')
        select.select([done_r], [], [], 120)  # held until root has been answered
        for conn in conns:
            conn.close()
        return len(conns)

    with request_owner(requests, table):
        attacker = threading.Thread(target=as_nobody, args=(attack,))
        try:
            attacker.start()
            wait_for(lambda: len(held) >= control.HANDLERS - control.ADMIN_HANDLERS, timeout=60, every=0.01)
            assert len(held) == control.HANDLERS - control.ADMIN_HANDLERS  # every other handler is waiting
            # Each of them waits REPLY_TIMEOUT_S: an answer within half of it came from the admins' own.
            assert ask({"cmd": "status"}, sock, timeout=30.0)["ok"]
            assert len(held) == control.HANDLERS - control.ADMIN_HANDLERS  # still held meanwhile
        finally:
            os.write(done_w, b"x")
            for request in held:
                request.reply({"ok": True})
            attacker.join(60)
            server.close()
            os.close(done_r)
            os.close(done_w)
    assert not attacker.is_alive()


def test_requests_of_a_peer_that_has_gone_are_not_worked_on(open_dir: Path) -> None:
    """Eight clients pipelined requests and left: the table served them for minutes after."""
    served: list[float] = []
    requests: queue.SimpleQueue[Request] = queue.SimpleQueue()
    sock = open_dir / "control.sock"
    server = ControlServer(sock, requests)

    def slow_table(request: Request) -> None:
        time.sleep(0.2)
        served.append(time.monotonic())
        request.reply({"ok": True})

    with request_owner(requests, slow_table):
        try:
            for _ in range(4):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                    conn.connect(str(sock))
                    conn.sendall(b'{"cmd": "status"}\n' * control.PIPELINE)
            time.sleep(1.5)  # all 32 served would take 6.4 s
            # What was being answered when each left may finish; nothing more of theirs.
            assert len(served) <= 4, len(served)
            start = time.monotonic()
            assert ask({"cmd": "status"}, sock, timeout=5.0)["ok"]
            assert time.monotonic() - start < 1.0
        finally:
            server.close()


def test_requests_piled_on_one_connection_close_it_with_an_error_said_once(open_dir: Path, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="table_host.control")
    sock = open_dir / "control.sock"
    too_many = control.PIPELINE + 20
    with served_table(sock, Table(4)):
        for _ in range(3):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.connect(str(sock))
                conn.sendall(b'{"cmd": "status"}\n' * too_many)
                answers = lines_until_closed(conn)
            assert len(answers) < too_many
            error = (f"more than {control.PIPELINE} requests or {control.MAX_LINE} bytes waiting on this "
                     "connection")
            assert answers[-1] == {"ok": False, "error": error}
            assert all(a["ok"] for a in answers[:-1])
        assert ask({"cmd": "status"}, sock)["ok"]
    said = [r.getMessage() for r in caplog.records if "bytes waiting on one connection" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("pid ") and "uid 0" in said[0]


def test_an_answer_not_read_in_time_ends_the_connection() -> None:
    """The send deadline: what a connection owes is due from the moment its answer is ready."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with a, b:
        conn = control._Connection(a, None, False, 100.0)
        assert conn.deadline() == (100.0 + control.IDLE_S, "")  # nothing asked: the idle limit
        conn.out, conn.sending_since = b'{"ok": true}\n', 200.0
        assert conn.deadline() == (200.0 + control.SEND_S, "did not read its answer")
        conn.partial, conn.started = b'{"cmd"', 201.0
        assert conn.deadline() == (200.0 + control.SEND_S, "did not read its answer")
        conn.out = b""
        slow = f"sent no whole request in {control.REQUEST_S:g} s"
        assert conn.deadline() == (201.0 + control.REQUEST_S, slow)


@as_root
def test_bench_faults_probes_an_admin_through_both_attacks_and_stops_the_table_while_it_starts() -> None:
    from firmware_host.bench.client_faults import ATTACKS, client_attacks, client_text, sigterm_at_start

    attacks = client_attacks(2.0)
    for kind in ATTACKS:
        k = attacks[kind]
        assert k["probes"] >= 20 and k["missed"] == 0 and k["answered"] == k["probes"], (kind, k)
        assert k["attacker"]["connections"] > 0 and k["alive_after"]
    assert attacks["meets_target"]
    starting = sigterm_at_start(3, seed="test")
    assert starting["runs"] == 3 and starting["lost"] == 0 and starting["failed"] == 0, starting["examples"]
    assert starting["stopped"] + starting["killed_by_signal"] == 3 and starting["meets_target"]
    text = "\n".join(client_text({"attacks": attacks, "sigterm": starting}))
    made = attacks["slowloris"]["attacker"]["connections"]
    assert f"slowloris (16 read-only peers, 2 s, {made} connections made)" in text
    assert "missed 0 (target 0)" in text and "answering afterwards yes" in text
    assert "SIGTERM at random moments of start-up" in text
    assert "lost 0 (target 0), failed 0 (target 0)" in text


class _Exhausting(socket.socket):
    """The control socket, whose accept fails as the process's do when no descriptor is left, while
    `exhausted` is set."""

    exhausted = False
    tries = 0

    def accept(self) -> tuple[socket.socket, Any]:
        if _Exhausting.exhausted:
            _Exhausting.tries += 1
            raise OSError(errno.EMFILE, "Too many open files")
        return super().accept()


def test_out_of_descriptors_the_server_rests_says_so_once_and_answers_after(
        open_dir: Path, monkeypatch, caplog: pytest.LogCaptureFixture) -> None:
    """It was: accept failed with EMFILE and returned at once, the socket still readable, so the
    server's thread spun on a core and nobody was answered."""
    caplog.set_level(logging.WARNING, "table_host.control")
    monkeypatch.setattr(control.socket, "socket", _Exhausting)
    _Exhausting.exhausted, _Exhausting.tries = True, 0
    with served_table(open_dir / "control.sock", Table(4)) as server:
        monkeypatch.undo()  # only the server's own socket is one
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as waiting:
            waiting.connect(str(open_dir / "control.sock"))  # in the backlog: the socket is readable
            waiting.sendall(b'{"cmd": "status"}\n')
            time.sleep(2.5)
            assert 1 <= _Exhausting.tries <= 4  # once a second (ACCEPT_BACKOFF_S), never a spin
            assert server.out_of_descriptors == _Exhausting.tries
            _Exhausting.exhausted = False  # descriptors free again: it is taken, and answered
            waiting.settimeout(5)
            assert json.loads(waiting.recv(65536))["ok"] is True
    said = [r.getMessage() for r in caplog.records if "descriptors" in r.getMessage()]
    assert said == ["cannot accept a connection: out of descriptors (Too many open files); accepting "
                    "nothing for 1 s"]


@pytest.mark.parametrize("admin", [False, True])
def test_a_request_wakes_one_handler_not_all(admin: bool) -> None:
    """Under a flood of `tablectl history` every handler woke for every request and took the
    interpreter lock to find nothing (7 wake-ups of 8 wasted, each a wait for the game thread):
    a request wakes one handler that may take it (an admin's: one of each kind, at most)."""
    work = control._Work()
    woken: list[str] = []
    for ready, kind in ((work._anyone_ready, "anyone"), (work._admin_ready, "reserved")):
        def counted(timeout: float | None = None, _wait: Any = ready.wait, _kind: str = kind) -> bool:
            entered.append(_kind)
            got = _wait(timeout)
            woken.append(_kind)
            return got
        ready.wait = counted  # type: ignore[method-assign]
    entered: list[str] = []
    taken: list[Any] = []
    handlers = [threading.Thread(target=lambda r=reserved: taken.append(work.take(r)), daemon=True)
                for reserved in [False] * (control.HANDLERS - control.ADMIN_HANDLERS)
                + [True] * control.ADMIN_HANDLERS]
    for handler in handlers:
        handler.start()
    wait_for(lambda: len(entered) == control.HANDLERS, timeout=30, every=0.01)  # every one asleep
    item: Any = ("connection", b'{"cmd": "history"}')
    work.put(item, admin)
    wait_for(lambda: taken == [item], timeout=30, every=0.01)
    time.sleep(0.2)  # a handler woken for nothing would have counted itself by now
    assert sorted(woken) == (["anyone", "reserved"] if admin else ["anyone"])
    work.close()
    for handler in handlers:
        handler.join(10)
    assert taken == [item] + [None] * (control.HANDLERS - 1)  # closed: every other one ends with nothing


@as_root
def test_a_read_only_user_asking_without_pause_waits_its_turn_and_is_answered(
        open_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """8 read-only users asking `tablectl history` without pause kept the control socket's threads
    busy for most of a core, each request an accept, a read and a hand-over in the table's own
    process: past a burst, a read-only user's requests wait their turn (unread), an admin's never."""
    monkeypatch.setattr(control, "PACE_PER_S", 4.0)
    monkeypatch.setattr(control, "PACE_BURST", 3)
    requests: queue.SimpleQueue[Request] = queue.SimpleQueue()
    sock = open_dir / "control.sock"
    server = ControlServer(sock, requests)
    sock.chmod(0o666)

    def asking(times: int) -> list[float]:
        """`status` on a connection of its own each time, as `tablectl` asks: when each was answered."""
        began, answered = time.monotonic(), []
        for _ in range(times):
            assert ask({"cmd": "status"}, sock, timeout=30.0)["ok"]
            answered.append(time.monotonic() - began)
        return answered

    with request_owner(requests, lambda request: request.reply({"ok": True, "phase": "attract"})):
        try:
            asking(10)  # root: never paced
            assert server.paced == 0
            answered = as_nobody(lambda: asking(7))
            assert server.paced == 7 - 3  # the burst went at once; each after it waited
        finally:
            server.close()
    # Four past the burst at 4 a second: the last answered a second after the burst at the least
    # (a busy machine makes it later, never sooner).
    assert len(answered) == 7 and answered[-1] - answered[2] >= 4 / 4.0 - 0.05
