"""The web view as a frontend (service/frontend.py): its server in a thread of its own.

`show` runs on the table's thread and only hands the snapshot over: one slot holds the newest,
and one callback at most waits on the server's loop to take it, so however slow the server is,
the table never waits and nothing piles up. If the server cannot start or dies, the table plays
on: `problem` says why (status: `DEGRADED: web view ...`) and the loop is told (FrontendTrouble).

The socket is taken at once, on the caller's thread (the address goes on the attract screen),
and the web's share of descriptors reckoned (web/gate.py); aiohttp is imported and the server
built on the web thread, so the table is ready to play without waiting for them. Connections are
accepted by the gate (web/gate.py), not by aiohttp: it caps and times them.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from ..engine.game import JsonDict
from ..service.events import FrontendReady, FrontendTrouble
from ..service.frontend import Put, Sight, TableView, ViewMaker
from ..system.logs import logger
from ..views.live import live_state
from .gate import Limits, TooFewDescriptors
from .listen import take_socket, url_of

if TYPE_CHECKING:
    from aiohttp import web

    from ..table.cues import Cue
    from .claim import Claims
    from .gate import Gate
    from .server import Hub

STOP_S = 5.0  # the web thread's start and shutdown, at most, when the table stops

log = logger("web")

NAME = "web view"


def live(sight: Sight) -> JsonDict:
    """The table as data for the page (views/live.py), made fresh on the table's thread."""
    return live_state(sight.table, sight.now, sight.status, sight.address, sight.standings, sight.match_id)


class WebView:
    """Serves the live table to browsers; attach with `daemon.attach(WebView(...))`."""

    NAME = NAME  # its report's key in `tablectl status`: web_view
    VIEWS: ClassVar[dict[str, ViewMaker]] = {"live": live}  # what it asks the service for

    def __init__(self, bind: str = "127.0.0.1", port: int = 0, max_clients: int = 32,
                 database: Path | None = None,
                 routes: Sequence[Callable[[web.Application], None]] = (),
                 names: Sequence[str] = (), url: str = "", sock: socket.socket | None = None,
                 announce: bool = True, port_file: Path | None = None) -> None:
        """`names`: what else browsers may call the table ([web] names); `url`: [web] url; `sock`:
        the listening socket, taken already (the web view's own process is handed the table's:
        web/child.py); `announce`: say in the log where it serves (its process's parent says it);
        `port_file`: where port 0 remembers the port it had, to have it again (listen.py)."""
        self.bind, self.port, self.max_clients = bind, port, max_clients
        self.port_file = port_file
        self.said = ""  # what listening had to say (a remembered port taken), for the log
        self.names, self.url_set = names, url
        self.hub: Hub | None = None  # made on the web thread, with the server
        self.claims: Claims | None = None  # made with the server
        self.gate: Gate | None = None
        self.limits: Limits | None = None
        self.database, self.routes = database, routes
        self.url = ""
        self.problem = ""  # why the web view is not serving, for the status line
        self._put: Put = lambda _event: None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._pending: JsonDict | bytes | None = None
        self._scheduled = False
        self._sock: socket.socket | None = sock
        self.announce = announce
        self._stopping = False
        if sock is not None:
            self._taken(sock)

    # ------------------------------------------------------------ Frontend

    def listen(self) -> str:
        """Take the socket (systemd's, else our own) on the caller's thread, so the address is known
        before the table greets anyone; "" and `problem` set when it cannot be had."""
        if self._sock is not None:
            return self.url
        try:
            sock, self.said = take_socket(self.bind, self.port, self.port_file)
        except OSError as exc:
            self._fail(exc.strerror or str(exc))
            return ""
        if not self._taken(sock):
            sock.close()
            return ""
        self._sock = sock
        return self.url

    def _taken(self, sock: socket.socket) -> bool:
        """The web's share of descriptors reckoned and the address known; False, `problem` set,
        when the share is too small to serve."""
        try:
            self.limits = Limits.of(self.max_clients)
        except TooFewDescriptors as exc:
            self._fail(str(exc))
            return False
        self.url = url_of(sock)
        return True

    def start(self, put: Put) -> None:
        self._put = put
        if self.problem or not self.listen():
            return
        self._thread = threading.Thread(target=self._serve, name="web", daemon=True)
        self._thread.start()

    def show(self, view: TableView) -> None:
        """On the table's thread: keep the newest snapshot, wake the server's loop once."""
        state = view.made.get("live")
        if isinstance(state, dict):  # `live`'s, when asked for
            self.offer(state)

    def offer(self, state: JsonDict | bytes) -> None:
        """The newest frame, as data or as its JSON already made (the table's process makes it
        for the web view's own: web/child.py): kept, and the server's loop woken once."""
        loop = self._loop  # None until the server serves: the first frame it gets is a whole table
        if loop is None or self.problem:
            return
        self._pending = state
        if not self._scheduled:
            self._scheduled = True
            try:
                loop.call_soon_threadsafe(self._deliver)
            except RuntimeError:  # its loop is closed: the server died
                self._scheduled = False

    def ring(self, cue: Cue) -> None:
        """Browsers make no sound."""

    def report(self) -> JsonDict | None:
        """Its limits and what meets them, for `tablectl status` (from any thread: copies only)."""
        gate, hub = self.gate, self.hub
        if gate is None or hub is None:
            return None
        return {"connections": gate.stats(), "browsers": hub.stats()}

    def stop(self) -> None:
        """Its thread ended before the table's process does, even one still starting: it imports
        aiohttp after the table is ready, and an interpreter that ends under a thread's import
        can crash (a SIGTERM 0.5 s after READY ended the daemon with SIGSEGV, once in some 40)."""
        self._stopping = True
        thread = self._thread
        if thread is None:
            return
        deadline = time.monotonic() + STOP_S
        while self._loop is None and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)  # still beginning: it serves once its imports are done
        loop = self._loop
        if loop is not None and thread.is_alive():
            with contextlib.suppress(RuntimeError):  # its loop closed meanwhile: it has ended
                asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
        thread.join(max(0.1, deadline - time.monotonic()))

    # ------------------------------------------------------------ its thread

    def _deliver(self) -> None:
        self._scheduled = False
        state, self._pending = self._pending, None
        if self.hub is None:
            return
        if isinstance(state, bytes):
            self.hub.publish_frame(state)
        elif state is not None:
            self.hub.publish(state)

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._begin())
            self._loop = loop
            if self.announce:
                log.info("web view: %s", self.url)
            self._put(FrontendReady(NAME))  # the table's loop shows it the table now
            loop.run_forever()
            if not self._stopping:
                raise RuntimeError("its loop ended")
        except Exception as exc:  # whatever kills the server, the table plays on
            self._fail(f"stopped: {type(exc).__name__}: {exc}")
        finally:
            self._loop = None
            loop.close()

    async def _begin(self) -> None:
        from aiohttp import web

        from .claim import Claims
        from .gate import Gate
        from .names import OwnNames
        from .server import Hub, build_app

        self.hub = Hub(self.max_clients)
        self.claims = claims = Claims(self._put)  # a phone's claim of a seat: all the web may change
        app = build_app(self.hub, self.database, [*self.routes, claims.add],
                        OwnNames(self.names, self.url_set))
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        assert self._sock is not None and self.limits is not None
        server = self._runner.server
        assert server is not None
        self.gate = Gate(self._sock, server, self.limits)  # no aiohttp site: the gate accepts
        self.gate.start()

    async def _shutdown(self) -> None:
        if self.gate is not None:
            self.gate.stop()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._sock is not None:
            self._sock.close()
        asyncio.get_running_loop().stop()

    def _fail(self, why: str) -> None:
        self.problem = f"{NAME}: {why}"
        log.error("%s (the table plays on without it)", self.problem)
        self._put(FrontendTrouble(NAME, self.problem))
