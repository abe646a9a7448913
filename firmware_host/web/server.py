"""The web view's server: the static page and one WebSocket that pushes the table to every
browser (docs/web.md). Runs on its own asyncio loop (web/frontend.py starts it in a thread).

Bounded everywhere: at most `max_clients` browsers; each has its own queue of QUEUE frames, the
oldest dropped first, so a slow or stalled browser loses frames (every frame is the whole table,
so the newest one is enough) and never holds up the table or another browser. Read-only: a
browser may only listen; anything it sends closes its connection.

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

from aiohttp import WSMsgType, web

from ..system.logs import logger

log = logger("web")

QUEUE = 4  # frames waiting for one browser; the oldest goes first
SEND_TIMEOUT_S = 10.0  # a browser that takes no frame for this long is closed
HEARTBEAT_S = 15.0  # WebSocket pings: a vanished browser is noticed and its place freed
MAX_INCOMING = 1024  # bytes: a browser has nothing to say to the table
PAGES = ("/", "/big")  # the live table; /big is the big-screen layout (also ?screen=big)

HUB: web.AppKey[Hub] = web.AppKey("hub")
DATABASE: web.AppKey[Path | None] = web.AppKey("database")

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
        self.latest: bytes | None = None
        self.published = 0
        self.refused = 0

    def publish(self, state: dict[str, Any]) -> None:
        """On the server's loop: serialise once, offer to every browser."""
        state["sent_ns"] = time.monotonic_ns()  # the moment it left the table (bench web)
        frame = json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode()
        self.latest = frame
        self.published += 1
        for client in self.clients:
            client.offer(frame)

    def stats(self) -> dict[str, int]:
        return {"clients": len(self.clients), "published": self.published, "refused": self.refused,
                "dropped": sum(c.dropped for c in self.clients)}


async def live(request: web.Request) -> web.StreamResponse:
    """The push channel: one WebSocket a browser, frames from the table, nothing accepted back."""
    hub = request.app[HUB]
    if len(hub.clients) >= hub.max_clients:
        hub.refused += 1
        return web.Response(status=503, text=f"the table serves {hub.max_clients} browsers at most; "
                                               "try again later\n")
    ws = web.WebSocketResponse(heartbeat=HEARTBEAT_S, max_msg_size=MAX_INCOMING, compress=False)
    await ws.prepare(request)
    client = Client(ws, request.transport)
    hub.clients.add(client)
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
        pump.cancel()
        await asyncio.gather(pump, return_exceptions=True)
        if not ws.closed:
            await ws.close()
    return ws


async def secure(_request: web.Request, response: web.StreamResponse) -> None:
    """Every answer carries the headers, the router's own 404 and 405 too; a handler's own
    value for one of them stands."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)


def build_app(hub: Hub, database: Path | None = None,
              routes: Sequence[Callable[[web.Application], None]] = ()) -> web.Application:
    """The web view's application. `routes`: each adds its pages (History and replays)."""
    files = static_files()
    app = web.Application(client_max_size=MAX_INCOMING)
    app[HUB] = hub
    app[DATABASE] = database
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

    for path in PAGES:
        app.router.add_get(path, page)
    app.router.add_get("/static/{name}", static)
    app.router.add_get("/live", live)
    for add in routes:
        add(app)
    return app
