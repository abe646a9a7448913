"""The web view's server: the static page and one WebSocket that pushes the table to every
browser (docs/web.md). Runs on its own asyncio loop (web/frontend.py starts it in a thread).

Bounded everywhere: at most `max_clients` browsers on the network, PER_ADDRESS of them from one
address, and OWN_PLACES more that only the table's own screen may take (the kiosk: a browser on
the Pi itself, web/gate.py's `who`); each has its own queue of QUEUE frames, the oldest dropped first,
so a slow or stalled browser loses frames (every frame is the whole table, so the newest one is
enough) and never holds up the table or another browser. Read-only: a browser may only listen;
anything it sends closes its connection. Only the table's own names and pages (web/names.py):
another Host is answered 421, a WebSocket from another site's page 403. The connections
themselves are let in and timed by web/gate.py.

Other pages add their routes to the app `build_app` makes: `build_app(..., routes=[add, ...])`
calls each `add(app)` (History and replays: web/history.py); `app[DATABASE]` is the state
database they may read.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, hdrs, web

from ..system.logs import logger
from .gate import Gate, Sparing, who
from .names import OwnNames

log = logger("web")

QUEUE = 4  # frames waiting for one browser; the oldest goes first
SEND_TIMEOUT_S = 10.0  # a browser that takes no frame for this long is closed
HEARTBEAT_S = 15.0  # WebSocket pings: a vanished browser is noticed and its place freed
MAX_INCOMING = 1024  # bytes: a browser has nothing to say to the table
PAGES = ("/", "/big")  # the live table; /big is the big-screen layout (also ?screen=big)
PER_ADDRESS = 4  # browsers watching from one address of the network (a phone's tabs)
OWN_PLACES = 1  # browsers on the table itself beyond max_clients: the kiosk is never shut out
OWN = "the table itself"  # its browsers' key among the addresses (the kiosk, a bench)

HUB: web.AppKey[Hub] = web.AppKey("hub")
DATABASE: web.AppKey[Path | None] = web.AppKey("database")
NAMES: web.AppKey[OwnNames] = web.AppKey("names")

SECURITY_HEADERS = {
    # Only our own script, style and socket: a name a player typed can never run as code.
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                               "form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml",
         ".png": "image/png", ".ico": "image/x-icon"}


def static_files() -> dict[str, tuple[bytes, str]]:
    """The page's files, read once from the package (static/): name -> (bytes, type). Only these
    names are ever served, so no path a browser asks for can leave the folder."""
    out = {}
    for entry in resources.files(__package__).joinpath("static").iterdir():
        suffix = Path(entry.name).suffix
        if entry.is_file() and suffix in TYPES:
            out[entry.name] = (entry.read_bytes(), TYPES[suffix])
    return out


class Client:
    """One browser: its own bounded queue, drained by its own task."""

    def __init__(self, ws: web.WebSocketResponse, transport: asyncio.BaseTransport | None) -> None:
        self.ws, self.transport = ws, transport
        self.queue: deque[bytes] = deque(maxlen=QUEUE)
        self.ready = asyncio.Event()
        self.dropped = 0
        self.sent = 0

    def offer(self, frame: bytes) -> None:
        if len(self.queue) == QUEUE:
            self.dropped += 1  # deque(maxlen) drops the oldest
        self.queue.append(frame)
        self.ready.set()

    async def pump(self) -> None:
        try:
            while not self.ws.closed:
                await self.ready.wait()
                self.ready.clear()
                while self.queue and not self.ws.closed:
                    frame = self.queue.popleft()
                    async with asyncio.timeout(SEND_TIMEOUT_S):
                        await self.ws.send_frame(frame, WSMsgType.TEXT)  # encoded once, for all
                    self.sent += 1
        except (TimeoutError, ConnectionError):  # stalled or gone: its place is freed
            if self.transport is not None:
                self.transport.abort()


class Hub:
    """The browsers watching, and the last frame (a newcomer gets it at once)."""

    def __init__(self, max_clients: int) -> None:
        self.max_clients = max_clients
        self.clients: set[Client] = set()
        self.per_address: dict[str, int] = {}
        self.latest: bytes | None = None
        self.published = 0
        self.refused = {"full": 0, "per_address": 0, "host": 0, "origin": 0}
        self.journal = Sparing()

    def publish(self, state: dict[str, Any]) -> None:
        """On the server's loop: serialise once, offer to every browser."""
        state["sent_ns"] = time.monotonic_ns()  # the moment it left the table (bench web)
        self.publish_frame(json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode())

    def publish_frame(self, frame: bytes) -> None:
        """A frame's JSON as the table's process made it (web/child.py): offered as it is."""
        self.latest = frame
        self.published += 1
        for client in self.clients:
            client.offer(frame)

    def refusal(self, key: str, itself: bool) -> tuple[int, str, str] | None:
        """Why one more browser from `key` may not watch (status, reason, words), or None."""
        network = len(self.clients) - self.per_address.get(OWN, 0)
        if (len(self.clients) >= self.max_clients + OWN_PLACES) if itself else network >= self.max_clients:
            return 503, "full", f"the table serves {self.max_clients} browsers at most; try again later"
        if not itself and self.per_address.get(key, 0) >= PER_ADDRESS:
            return 429, "per_address", f"{PER_ADDRESS} browsers from one address at most; close one, reload"
        return None

    def refuse(self, key: str, reason: str, status: int, text: str) -> web.Response:
        self.refused[reason] += 1
        self.journal.say(reason, f"{key}: refused ({status}): {text}")
        return web.Response(status=status, text=text + "\n")

    def stats(self) -> dict[str, Any]:
        """Read from any thread: copies, never an iteration of what the server's loop changes."""
        clients = list(self.clients)
        return {"clients": len(clients), "limit": self.max_clients, "per_address": PER_ADDRESS,
                "kept_for_the_table": OWN_PLACES, "published": self.published,
                "refused": dict(self.refused), "dropped": sum(c.dropped for c in clients)}


async def live(request: web.Request) -> web.StreamResponse:
    """The push channel: one WebSocket a browser, frames from the table, nothing accepted back."""
    hub = request.app[HUB]
    key, itself = who(request.transport)
    key = OWN if itself else key
    origin = request.headers.get(hdrs.ORIGIN)
    if origin is not None and not request.app[NAMES].origin_ok(origin, request.transport):
        return hub.refuse(key, "origin", 403, f"a page of {origin[:100]!r} may not watch the table: only the "
                                              "table's own pages may (its names: docs/web.md, [web] names)")
    refusal = hub.refusal(key, itself)
    if refusal is not None:
        status, reason, text = refusal
        return hub.refuse(key, reason, status, text)
    ws = web.WebSocketResponse(heartbeat=HEARTBEAT_S, max_msg_size=MAX_INCOMING, compress=False)
    await ws.prepare(request)
    client = Client(ws, request.transport)
    hub.clients.add(client)
    hub.per_address[key] = hub.per_address.get(key, 0) + 1
    if hub.latest is not None:
        client.offer(hub.latest)
    pump = asyncio.create_task(client.pump())
    try:
        async for message in ws:
            if message.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                await ws.close(code=1003, message=b"read-only: the table takes no commands here")
                break
    finally:
        hub.clients.discard(client)
        if hub.per_address[key] > 1:
            hub.per_address[key] -= 1
        else:
            del hub.per_address[key]
        pump.cancel()
        await asyncio.gather(pump, return_exceptions=True)
        if not ws.closed:
            await ws.close()
    return ws


@web.middleware
async def admit(request: web.Request, handler: Any) -> web.StreamResponse:
    """Every request: its connection is busy while it is answered (web/gate.py times the rest),
    and its Host must be one of the table's names or addresses (DNS rebinding: refused)."""
    guard = Gate.begun(request.transport)
    try:
        host = request.headers.get(hdrs.HOST)
        if host is not None and not request.app[NAMES].host_ok(host, request.transport):
            hub = request.app[HUB]
            return hub.refuse(who(request.transport)[0], "host", 421,
                              f"this is a table's web view, and {host[:100]!r} is not one of its names or "
                              "addresses (more names: [web] names in its configuration, docs/web.md)")
        return await handler(request)
    finally:
        Gate.ended(guard)


async def secure(_request: web.Request, response: web.StreamResponse) -> None:
    """Every answer carries the headers, the router's own 404 and 405 too; a handler's own
    value for one of them stands."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)


def build_app(hub: Hub, database: Path | None = None,
              routes: Sequence[Callable[[web.Application], None]] = (),
              names: OwnNames | None = None) -> web.Application:
    """The web view's application. `routes`: each adds its pages (History and replays); `names`:
    the table's own names (its hostname, HOSTNAME.local and its addresses when not given)."""
    files = static_files()
    app = web.Application(client_max_size=MAX_INCOMING, middlewares=[admit])
    app[HUB] = hub
    app[DATABASE] = database
    app[NAMES] = names if names is not None else OwnNames()
    app.on_response_prepare.append(secure)

    async def page(_request: web.Request) -> web.Response:
        body, kind = files["index.html"]
        return web.Response(body=body, content_type=kind, charset="utf-8")

    async def static(request: web.Request) -> web.Response:
        found = files.get(request.match_info["name"])
        if found is None:
            raise web.HTTPNotFound()
        body, kind = found
        return web.Response(body=body, content_type=kind)

    async def favicon(_request: web.Request) -> web.Response:
        """Browsers ask for /favicon.ico whatever the page says: the same icon, never a 404."""
        body, kind = files["favicon.svg"]
        return web.Response(body=body, content_type=kind)

    for path in PAGES:
        app.router.add_get(path, page)
    app.router.add_get("/favicon.ico", favicon)
    app.router.add_get("/static/{name}", static)
    app.router.add_get("/live", live)
    for add in routes:
        add(app)
    return app
