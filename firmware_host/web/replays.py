"""The History and replays pages' routes (docs/web.md, "History and replays"): the matches list,
one match's timeline and races, its journal as a JSON download. Read-only (GET only), answered
from web/history.py in a worker thread so that a long match never holds up the server's loop;
the pages themselves are static files (static/history.html, static/match.html).
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from ..service.store import Store, StoreError
from ..views.live import BOARDS
from . import history
from .server import SECURITY_HEADERS, static_files

MATCHES_MAX = 200  # the newest matches the list shows


def board(game: str, rnd: Any, seats: list[int]) -> dict[str, Any]:
    """A step's board as the live page draws it (views/live.py), so a replay looks like the table."""
    build = BOARDS.get(game)
    return {"kind": game, **(build(rnd, seats) if build is not None else {})}


def routes(store: Store) -> Callable[[web.Application], None]:
    """What `build_app(routes=[...])` calls: adds the history's pages and their data to `app`."""

    def add(app: web.Application) -> None:
        files = static_files()

        def page(name: str) -> Callable[[web.Request], Any]:
            body, kind = files[name]

            async def serve(_request: web.Request) -> web.Response:
                return web.Response(body=body, content_type=kind, charset="utf-8", headers=SECURITY_HEADERS)
            return serve

        async def listed(_request: web.Request) -> web.Response:
            found = await _off_loop(history.matches, store, MATCHES_MAX)
            return _json(found)

        async def one(request: web.Request) -> web.Response:
            found = await _off_loop(history.match_timeline, store, int(request.match_info["id"]), board)
            return _json(_or_404(found, request))

        async def download(request: web.Request) -> web.Response:
            match_id = int(request.match_info["id"])
            found = _or_404(await _off_loop(history.match_journal, store, match_id), request)
            return _json(found, {"Content-Disposition": f'attachment; filename="match-{match_id}.json"'})

        app.router.add_get("/history", page("history.html"))
        app.router.add_get(r"/history/{id:\d{1,12}}", page("match.html"))
        app.router.add_get("/api/matches", listed)
        app.router.add_get(r"/api/matches/{id:\d{1,12}}", one)
        app.router.add_get(r"/api/matches/{id:\d{1,12}}/journal.json", download)

    return add


async def _off_loop(work: Callable[..., Any], *args: Any) -> Any:
    """Read the store in a worker thread; a store that cannot be read is a 503 that says why."""
    try:
        return await asyncio.get_running_loop().run_in_executor(None, functools.partial(work, *args))
    except StoreError as exc:
        raise web.HTTPServiceUnavailable(text=f"{exc}\n", headers=SECURITY_HEADERS) from None


def _or_404(found: Any, request: web.Request) -> Any:
    if found is None:
        raise web.HTTPNotFound(text=f"no match {request.match_info['id']} is stored\n",
                               headers=SECURITY_HEADERS)
    return found


def _json(value: Any, headers: dict[str, str] | None = None) -> web.Response:
    body = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return web.Response(text=body, content_type="application/json",
                        headers={**SECURITY_HEADERS, **(headers or {})})
