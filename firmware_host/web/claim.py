"""A phone claims a seat: the one thing the web may change (docs/web.md, "A seat's claim").

The seat's OLED shows a QR code of `/c/SEAT/TOKEN` (views/phases.py `claim_url`); that page
(static/claim.html) offers the known players and a box to type a name, and posts
{"seat", "token", "name"} to `/api/claim`. The table checks the token on its own thread
(table/machine.py `Table.claim`: that seat's, single-use, in the lobby only, gone at the start)
and seats the name; the phone is told, in words, what happened.

Bounded like everything else on the web: the request goes through the same gate and Host check
as every request (server.py `admit`, gate.py), its body is at most MAX_INCOMING bytes (the app's
limit), it must come from the table's own page (Origin, as the WebSocket's) as JSON, and one
address may try CLAIMS_PER_MINUTE times a minute (TRIED_KEPT addresses remembered at most).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import hdrs, web

from ..service.events import SeatClaimed
from ..service.journal import read_only
from ..service.players import known_names
from ..system.logs import escape, logger
from .gate import Sparing, who
from .server import DATABASE, NAMES

log = logger("web")

CLAIMS_PER_MINUTE = 6
"""Claims one address may post in a minute: a person mistyping, never a guesser."""
TRIED_KEPT = 1024
"""Addresses whose tries are remembered; the oldest is forgotten first (bounded memory)."""
ANSWER_S = 3.0
"""How long a claim waits for the table's thread before the phone is told to try again."""
TEXT_MAX = 64
"""Characters of a name or a token a claim may carry (a name is 16 at most once cleaned)."""


class Claims:
    """The claim's routes, with the way to the table (`put`, the frontend's) and the tries."""

    def __init__(self, put: Callable[[Any], None]) -> None:
        self.put = put
        self.tried: OrderedDict[str, deque[float]] = OrderedDict()
        self.refused = {"origin": 0, "type": 0, "rate": 0, "bad": 0, "table": 0}
        self.claimed = 0
        self.journal = Sparing()

    def add(self, app: web.Application) -> None:
        app.router.add_get(r"/c/{seat:\d{1,2}}/{token:[A-Za-z0-9_-]{1,64}}", self.page)
        app.router.add_get("/api/players", self.players)
        app.router.add_post("/api/claim", self.claim)

    async def page(self, _request: web.Request) -> web.Response:
        from .server import static_files

        body, kind = static_files()["claim.html"]
        return web.Response(body=body, content_type=kind, charset="utf-8")

    async def players(self, request: web.Request) -> web.Response:
        """The known players' names, for the phone's list (read-only, off the table's thread)."""
        database = request.app[DATABASE]
        names: tuple[str, ...] = ()
        if database is not None and Path(database).exists():
            names = await asyncio.to_thread(_known, Path(database))
        return web.json_response({"players": list(names)}, dumps=_dumps)

    def _refuse(self, key: str, reason: str, status: int, text: str) -> web.Response:
        self.refused[reason] += 1
        self.journal.say(f"claim {reason}", f"{key}: a seat's claim refused ({status}): {text}")
        return web.json_response({"ok": False, "error": text}, status=status, dumps=_dumps)

    def _too_often(self, key: str) -> bool:
        now = time.monotonic()
        tries = self.tried.pop(key, None) or deque(maxlen=CLAIMS_PER_MINUTE)
        self.tried[key] = tries  # the newest last: the oldest goes first
        while len(self.tried) > TRIED_KEPT:
            self.tried.popitem(last=False)
        if len(tries) == CLAIMS_PER_MINUTE and now - tries[0] < 60.0:
            return True
        tries.append(now)
        return False

    async def claim(self, request: web.Request) -> web.Response:
        key, _itself = who(request.transport)
        origin = request.headers.get(hdrs.ORIGIN)
        if origin is None or not request.app[NAMES].origin_ok(origin, request.transport):
            return self._refuse(key, "origin", 403, "a seat is claimed from the table's own page (the QR "
                                                    "code on the seat), not from another site")
        if request.content_type != "application/json":
            return self._refuse(key, "type", 415, "a claim is JSON: {\"seat\", \"token\", \"name\"}")
        if self._too_often(key):
            return self._refuse(key, "rate", 429, f"{CLAIMS_PER_MINUTE} tries a minute from one address at "
                                                  "most: wait a minute")
        try:
            body = json.loads(await request.text())
        except (ValueError, UnicodeDecodeError):
            return self._refuse(key, "bad", 400, "a claim is JSON: {\"seat\", \"token\", \"name\"}")
        seat, token, name = (body.get(k) for k in ("seat", "token", "name")) if isinstance(body, dict) \
            else (None, None, None)
        if not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= 64:
            return self._refuse(key, "bad", 400, "seat must be a seat number, from 1")
        if not isinstance(token, str) or not 0 < len(token) <= TEXT_MAX:
            return self._refuse(key, "bad", 400, "this address has no seat's code in it: scan the seat's "
                                                 "QR code again")
        if not isinstance(name, str) or len(name) > TEXT_MAX:
            return self._refuse(key, "bad", 400, f"a name is text, {TEXT_MAX} characters at most")
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[dict[str, Any]] = loop.create_future()

        def answer(result: dict[str, Any]) -> None:  # on the table's thread
            loop.call_soon_threadsafe(lambda: answered.done() or answered.set_result(result))

        self.put(SeatClaimed(seat - 1, token, name, answer))
        try:
            result = await asyncio.wait_for(answered, ANSWER_S)
        except TimeoutError:
            return self._refuse(key, "table", 503, "the table did not answer in time: try again")
        if not result.get("ok"):
            return self._refuse(key, "table", 409, str(result.get("error")))
        self.claimed += 1
        log.info("web view: %s claimed seat %d as %s", key, seat, escape(result.get("name")))
        return web.json_response(result, dumps=_dumps)

    def stats(self) -> dict[str, Any]:
        return {"claimed": self.claimed, "refused": dict(self.refused), "per_minute": CLAIMS_PER_MINUTE}


def _known(database: Path) -> tuple[str, ...]:
    try:
        db = read_only(database)
    except sqlite3.Error as exc:
        log.warning("web view: the known players cannot be read (%s): the phone offers none", exc)
        return ()
    try:
        return known_names(db)
    except sqlite3.Error as exc:  # the daemon moved a damaged file aside meanwhile, say
        log.warning("web view: the known players cannot be read (%s): the phone offers none", exc)
        return ()
    finally:
        db.close()


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
