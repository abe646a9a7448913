"""Who the web view lets in, and for how long (docs/web.md, "Limits"): its own accept loop on
the listening socket (systemd's or its own), so a connection past a limit is closed as it is
accepted, before aiohttp reads a byte of it, and every one it keeps holds a descriptor of the
web's share only.

- Descriptors: the table keeps TABLE_FDS of the process's limit (RLIMIT_NOFILE, `LimitNOFILE=`
  in the unit) for itself; the web holds at most the rest, and no more than it needs
  (`Limits.of`).
- Connections: at most `connections` in all; the network may hold all but OWN_RESERVE of them,
  and one address PER_ADDRESS. The table itself (a browser on the Pi: its peer address is the
  address it connected to, as the kiosk's is) is held to neither share.
- Time: a request's head must come whole within HEAD_S of its first byte; a connection that asks
  nothing (or leaves its answer unread) for IDLE_S is closed.
- Out of descriptors anyway (EMFILE, ENFILE): nothing is accepted for BACKOFF_S, and the journal
  hears of it once a minute at most, with a count; never a traceback per connection (asyncio's
  own accept loop logged one for every try, tens of thousands a minute).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import resource
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..system.logs import logger
from .listen import on_our_network

log = logger("web")

HEAD_S = 10.0  # a request's line and headers, from its first byte (slowloris: closed)
IDLE_S = 30.0  # nothing asked (or an answer left unread) this long: closed
PER_ADDRESS = 16  # connections at once from one address of the network (a browser opens 6 at most)
OWN_RESERVE = 16  # connections only the table itself may take (the kiosk on the Pi's HDMI port)
BESIDE_BROWSERS = 128  # connections beside the browsers' WebSockets: pages, files, the history
TABLE_FDS = 384  # descriptors kept for the table: the control socket's 256 connections, 128 more
FEWEST = 8  # a share smaller than this serves nobody well: the web view says so and does not start
BACKOFF_S = 1.0  # out of descriptors: accept nothing for this long, then try again
ACCEPT_BATCH = 32  # connections taken at one wake of the loop, then the loop's other work
SAY_EVERY_S = 60.0  # one kind of trouble: into the journal once a minute at most
SWEEP_S = 1.0  # how often the deadlines are looked at (they are seconds long)
OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
REFUSED_ANSWER = "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n" \
                 "Content-Length: {length}\r\nConnection: close\r\n\r\n{text}"
BUSY, FORBIDDEN = "503 Service Unavailable", "403 Forbidden"
NOT_OUR_NETWORK = "the table's web view answers its own network only"


class TooFewDescriptors(Exception):
    """The process's descriptor limit leaves the web no share it could serve with."""


@dataclass(frozen=True)
class Limits:
    """The web's share: how many connections it may hold, of how many descriptors."""

    connections: int
    descriptors: int  # the process's limit (RLIMIT_NOFILE, soft)

    @classmethod
    def of(cls, browsers: int, descriptors: int | None = None) -> Limits:
        """What `browsers` WebSockets need beside the pages, within what the table leaves."""
        if descriptors is None:
            descriptors = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        share = descriptors - TABLE_FDS
        if share < FEWEST:
            raise TooFewDescriptors(
                f"{descriptors} descriptors (LimitNOFILE) leave the web {max(share, 0)} once the table "
                f"has its {TABLE_FDS}: at least {TABLE_FDS + FEWEST} are needed")
        wanted = browsers + BESIDE_BROWSERS
        if share < wanted:
            log.warning("the web view may hold %d connections, not the %d that %d browsers need: %d "
                        "descriptors (LimitNOFILE), %d kept for the table", share, wanted, browsers,
                        descriptors, TABLE_FDS)
        return cls(min(wanted, share), descriptors)


def address(host: str) -> str:
    """An address as one client's key: an IPv4 address mapped into IPv6 (a dual-stack socket,
    as systemd's is) is the IPv4 address it carries."""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def who(transport: Any) -> tuple[str, bool]:
    """A connection's client address, and whether it is the table itself: a connection from this
    machine to itself has its own address at both ends (127.0.0.1 to 127.0.0.1, ::1 to ::1, or
    the Pi's own address to itself), as the kiosk's does."""
    peer = transport.get_extra_info("peername") if transport is not None else None
    own = transport.get_extra_info("sockname") if transport is not None else None
    if not peer or not own:
        return "?", False
    key = address(str(peer[0]))
    return key, key == address(str(own[0]))


class Guard(asyncio.Protocol):
    """One connection, between the transport and aiohttp's protocol for it: every call passed on,
    its deadlines kept. The app's middleware says when a request begins (its head is whole) and
    ends (`Gate.begun`, `Gate.ended`)."""

    def __init__(self, gate: Gate, key: str, itself: bool, inner: asyncio.Protocol) -> None:
        self.gate, self.key, self.itself, self.inner = gate, key, itself, inner
        self.transport: asyncio.Transport | None = None
        self.busy = 0  # requests being answered (a WebSocket is one as long as it is open)
        self.head_since: float | None = None  # the first byte of a request not yet whole
        self.quiet_since = time.monotonic()
        self.unsent = 0  # bytes of an answer not yet taken by the peer, at the last sweep
        self.counted = True  # in the gate's counts until it is gone

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.gate.guards.add(self)
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if not self.busy and self.head_since is None:
            self.head_since = time.monotonic()
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.gate.gone(self)
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def deadline(self, now: float) -> tuple[float, str] | None:
        """When it must have done something by, and what it will have failed to do then."""
        if self.busy:
            return None
        if self.head_since is not None:
            return self.head_since + HEAD_S, "head"
        unsent = self.transport.get_write_buffer_size() if self.transport is not None else 0
        if unsent and unsent != self.unsent:  # its peer is taking the answer: not idle
            self.quiet_since = now
        self.unsent = unsent
        return self.quiet_since + IDLE_S, "unread" if unsent else "idle"


class Gate:
    """The web's accept loop on `sock`, on the running loop: `factory()` makes aiohttp's protocol
    for each connection let in."""

    def __init__(self, sock: socket.socket, factory: Callable[[], asyncio.Protocol], limits: Limits) -> None:
        self.sock, self.factory, self.limits = sock, factory, limits
        self.guards: set[Guard] = set()
        self.open = 0
        self.per_address: dict[str, int] = {}
        self.refused = {"full": 0, "per_address": 0, "network": 0}
        self.closed = {"head": 0, "idle": 0, "unread": 0}
        self.out_of_descriptors = 0  # accepts that failed for want of a descriptor
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sweeper: asyncio.TimerHandle | None = None
        self._paused: asyncio.TimerHandle | None = None
        self.journal = Sparing()
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.sock.setblocking(False)
        self._loop.add_reader(self.sock.fileno(), self._accept)

    def stop(self) -> None:
        """Accept nothing more (the connections open are aiohttp's to close)."""
        if self._loop is not None:
            self._loop.remove_reader(self.sock.fileno())
        for handle in (self._paused, self._sweeper):
            if handle is not None:
                handle.cancel()

    def stats(self) -> dict[str, Any]:
        """What a bench or `tablectl status` reads: the limits, what is open, what was refused."""
        return {"open": self.open, "limit": self.limits.connections, "per_address": PER_ADDRESS,
                "kept_for_the_table": OWN_RESERVE, "addresses": len(self.per_address),
                "descriptors": {"limit": self.limits.descriptors, "kept_for_the_table": TABLE_FDS},
                "timeouts_s": {"head": HEAD_S, "idle": IDLE_S},
                "refused": dict(self.refused), "closed": dict(self.closed),
                "out_of_descriptors": self.out_of_descriptors}

    # ------------------------------------------------------------ requests (the app's middleware)

    @staticmethod
    def begun(transport: Any) -> Guard | None:
        guard = transport.get_protocol() if transport is not None else None
        if not isinstance(guard, Guard):
            return None  # served without a gate (aiohttp's own sites, in tests)
        guard.busy += 1
        guard.head_since = None
        return guard

    @staticmethod
    def ended(guard: Guard | None) -> None:
        if guard is not None:
            guard.busy -= 1
            guard.quiet_since = time.monotonic()
            guard.head_since = None

    # ------------------------------------------------------------ accepting

    def _accept(self) -> None:
        for _ in range(ACCEPT_BATCH):
            try:
                conn, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue  # gone before it was taken
            except OSError as exc:
                self._pause(exc)
                return
            self._admit(conn)

    def _pause(self, exc: OSError) -> None:
        """Nothing can be accepted now: stop trying for BACKOFF_S (the socket stays readable, so
        trying again at once would spin), and say so once a minute at most."""
        assert self._loop is not None
        if exc.errno in OUT_OF_DESCRIPTORS:
            self.out_of_descriptors += 1
            why = f"out of descriptors ({exc.strerror}; the limit is {self.limits.descriptors})"
        else:
            why = f"cannot accept a connection: {exc.strerror or exc}"
        self.journal.say("accept", f"{why}: accepting nothing for {BACKOFF_S:g} s")
        self._loop.remove_reader(self.sock.fileno())
        self._paused = self._loop.call_later(BACKOFF_S, self._resume)

    def _resume(self) -> None:
        self._paused = None
        if self._loop is not None:
            self._loop.add_reader(self.sock.fileno(), self._accept)

    def _admit(self, conn: socket.socket) -> None:
        try:
            peer, own = conn.getpeername(), conn.getsockname()
        except OSError:  # gone already
            conn.close()
            return
        key = address(str(peer[0]))
        itself = key == address(str(own[0]))
        limit = self.limits.connections
        refusal = None
        if not on_our_network(str(peer[0]), str(own[0])):  # global IPv6 from outside the table's /64
            refusal = "network", NOT_OUR_NETWORK, FORBIDDEN
        elif self.open >= (limit if itself else limit - OWN_RESERVE):
            refusal = "full", f"the table serves {self.open} connections, its most: try again later", BUSY
        elif not itself and self.per_address.get(key, 0) >= PER_ADDRESS:
            refusal = "per_address", f"{PER_ADDRESS} connections from one address at most", BUSY
        if refusal is not None:
            self._refuse(conn, key, *refusal)
            return
        assert self._loop is not None
        conn.setblocking(False)
        with contextlib.suppress(OSError):
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        guard = Guard(self, key, itself, self.factory())
        self.open += 1
        self.per_address[key] = self.per_address.get(key, 0) + 1
        task = self._loop.create_task(self._connect(conn, guard))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if self._sweeper is None:
            self._sweeper = self._loop.call_later(SWEEP_S, self._sweep)

    def _refuse(self, conn: socket.socket, key: str, reason: str, text: str, status: str = BUSY) -> None:
        """Closed at once, nothing read: a browser is told why in one short answer, if its socket
        takes it without waiting."""
        self.refused[reason] += 1
        self.journal.say(reason, f"{key}: connection refused: {text}")
        body = text + "\n"
        with contextlib.suppress(OSError):
            conn.send(REFUSED_ANSWER.format(status=status, length=len(body.encode()), text=body).encode(),
                      socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL)
        conn.close()

    async def _connect(self, conn: socket.socket, guard: Guard) -> None:
        assert self._loop is not None
        try:
            await self._loop.connect_accepted_socket(lambda: guard, conn)
        except OSError:  # gone before its transport was made
            conn.close()
            self.gone(guard)

    def gone(self, guard: Guard) -> None:
        if not guard.counted:
            return
        guard.counted = False
        self.guards.discard(guard)
        self.open -= 1
        left = self.per_address.get(guard.key, 1) - 1
        if left > 0:
            self.per_address[guard.key] = left
        else:
            self.per_address.pop(guard.key, None)

    # ------------------------------------------------------------ deadlines

    def _sweep(self) -> None:
        assert self._loop is not None
        now = time.monotonic()
        for guard in list(self.guards):
            due = guard.deadline(now)
            if due is None or due[0] > now or guard.transport is None:
                continue
            what = due[1]
            self.closed[what] += 1
            if what == "idle":
                guard.transport.close()
                continue
            text = f"sent no whole request in {HEAD_S:g} s" if what == "head" \
                else f"left its answer unread for {IDLE_S:g} s"
            self.journal.say(what, f"{guard.key}: closed: it {text}")
            guard.transport.abort()  # owed nothing: its descriptor is free at once
        self._sweeper = self._loop.call_later(SWEEP_S, self._sweep) if self.guards or self._tasks else None


class Sparing:
    """Into the journal once a minute at most for one kind of trouble, however many addresses it
    comes from (an attacker must not fill the journal, with many addresses or one), with how
    many were not said since."""

    def __init__(self) -> None:
        self._said: dict[str, tuple[float, int]] = {}

    def say(self, what: str, text: str) -> None:
        now = time.monotonic()
        last, unsaid = self._said.get(what, (-SAY_EVERY_S, 0))
        if now - last < SAY_EVERY_S:
            self._said[what] = (last, unsaid + 1)
            return
        more = f" ({unsaid} more like it in the last {SAY_EVERY_S:g} s)" if unsaid else ""
        log.warning("web view: %s%s", text, more)
        self._said[what] = (now, 0)
