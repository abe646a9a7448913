"""The History and replays pages' routes (docs/web.md, "History and replays"): the matches list,
one match's timeline and races, its journal as a JSON download. Read-only (GET only); the pages
themselves are static files (static/history.html, static/match.html).

Rebuilding a match is the rules replayed step by step: a long match takes a few hundred
milliseconds of CPU here, in the table's own process. So it is done by one worker thread, one
match at a time however many browsers ask, never on the server's loop; and each timeline is
kept, gzipped, until its match changes, so that asking again costs a read and no replay.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import json
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aiohttp import web

from ..service.store import Store, StoreError
from ..views.live import BOARDS
from . import history
from .server import SECURITY_HEADERS, static_files

MATCHES_MAX = 200  # the newest matches the list shows
KEPT = 8  # timelines kept gzipped (a long Classic match: about 1 MB of JSON, 0.1 MB gzipped)


def board(game: str, rnd: Any, seats: list[int]) -> dict[str, Any]:
    """A step's board as the live page draws it (views/live.py), so a replay looks like the table."""
    build = BOARDS.get(game)
    return {"kind": game, **(build(rnd, seats) if build is not None else {})}


class Timelines:
    """The page's JSON of each match, rebuilt only when the match has changed since."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.kept: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()
        self.built = 0  # timelines rebuilt (the tests count them)

    def gzipped(self, match_id: int) -> bytes | None:
        record = self.store.match_record(match_id)
        if record is None:
            return None
        key = history.revision(record)
        body = self.kept.get(key)
        if body is None:
            timeline = history.timeline_of(record, board)
            for step in timeline["steps"]:  # the page draws `board`; the rules' own state would double it
                del step["state"]
            body = gzip.compress(json.dumps(timeline, separators=(",", ":"), ensure_ascii=False).encode(), 6)
            self.built += 1
            self.kept[key] = body
            while len(self.kept) > KEPT:
                self.kept.popitem(last=False)
        self.kept.move_to_end(key)
        return body


def routes(store: Store) -> Callable[[web.Application], None]:
    """What `build_app(routes=[...])` calls: adds the history's pages and their data to `app`."""
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="history")
    timelines = Timelines(store)

    async def off_loop(work: Callable[..., Any], *args: Any) -> Any:
        """In the one worker; a store that cannot be read is a 503 that says why."""
        try:
            return await asyncio.get_running_loop().run_in_executor(worker, functools.partial(work, *args))
        except StoreError as exc:
            raise web.HTTPServiceUnavailable(text=f"{exc}\n", headers=SECURITY_HEADERS) from None

    def add(app: web.Application) -> None:
        files = static_files()

        def page(name: str) -> Callable[[web.Request], Any]:
            body, kind = files[name]

            async def serve(_request: web.Request) -> web.Response:
                return web.Response(body=body, content_type=kind, charset="utf-8", headers=SECURITY_HEADERS)
            return serve

        async def listed(_request: web.Request) -> web.Response:
            return _json(await off_loop(history.matches, store, MATCHES_MAX))

        async def one(request: web.Request) -> web.Response:
            body = _or_404(await off_loop(timelines.gzipped, int(request.match_info["id"])), request)
            headers = {**SECURITY_HEADERS, "Vary": "Accept-Encoding"}
            if "gzip" in request.headers.get("Accept-Encoding", ""):
                headers["Content-Encoding"] = "gzip"
            else:
                body = gzip.decompress(body)
            return web.Response(body=body, content_type="application/json", charset="utf-8", headers=headers)

        async def download(request: web.Request) -> web.Response:
            match_id = int(request.match_info["id"])
            found = _or_404(await off_loop(history.match_journal, store, match_id), request)
            return _json(found, {"Content-Disposition": f'attachment; filename="match-{match_id}.json"'})

        async def shutdown(_app: web.Application) -> None:
            worker.shutdown(wait=False, cancel_futures=True)

        app.router.add_get("/history", page("history.html"))
        app.router.add_get(r"/history/{id:\d{1,12}}", page("match.html"))
        app.router.add_get("/api/matches", listed)
        app.router.add_get(r"/api/matches/{id:\d{1,12}}", one)
        app.router.add_get(r"/api/matches/{id:\d{1,12}}/journal.json", download)
        app.on_cleanup.append(shutdown)
        app[TIMELINES] = timelines

    return add


TIMELINES: web.AppKey[Timelines] = web.AppKey("timelines")


def _or_404(found: Any, request: web.Request) -> Any:
    if found is None:
        raise web.HTTPNotFound(text=f"no match {request.match_info['id']} is stored\n",
                               headers=SECURITY_HEADERS)
    return found


def _json(value: Any, headers: dict[str, str] | None = None) -> web.Response:
    body = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return web.Response(text=body, content_type="application/json",
                        headers={**SECURITY_HEADERS, **(headers or {})})
