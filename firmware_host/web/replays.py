"""The History and replays pages' routes (docs/web.md, "History and replays"): the matches list,
one match's timeline and races, its journal as a JSON download. Read-only (GET only); the pages
themselves are static files (static/history.html, static/match.html).

Rebuilding a match is the rules replayed step by step: a long match takes a few hundred
milliseconds of CPU. Done in the table's own process, that work would hold the interpreter's
lock (the GIL) against the game thread, and a browser asking again and again would delay the
table's decisions (measured: decisions up to 120 ms late). So a process of its own rebuilds
(`Rebuilder`): one match at a time however many browsers ask, at the lowest priority there is
(SCHED_IDLE: only when nothing of the table wants a CPU), on a read-only connection to the state
database, keeping each timeline gzipped until its match changes (web/history.py's
`timeline_gzipped`, which imports no web server); it is started at the first request and ends
after `IDLE_S` unasked, giving its memory back.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from aiohttp import web

from ..control.protocol import HISTORY_MAX
from ..service.journal import Reader, Store, StoreError
from ..system import pieces
from ..system.logs import logger
from ..system.realtime import join_the_rest, lift_stragglers
from . import history
from .server import static_files

log = logger("web")

MATCHES_MAX = HISTORY_MAX  # matches a page of the list shows; older ones: ?before=N, the Link header
IDLE_S = 120.0  # the rebuilding process ends after this long without a request


# ---------------------------------------------------------------- in the table's process


class Rebuilder:
    """The process that rebuilds timelines: started when first needed, ended when idle."""

    def __init__(self, database: Path) -> None:
        self.database = str(database)
        self.pool: ProcessPoolExecutor | None = None
        self.idle: asyncio.TimerHandle | None = None
        self.rebuilt = 0  # timelines rebuilt (the tests count them)
        self.started = 0  # processes started

    async def run(self, work: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        if self.idle is not None:
            self.idle.cancel()
        started = self.pool is None
        if started:
            # Started from the web view's thread, which lives as long as the table: the process
            # ends with the table (history.worker_start), and so does multiprocessing's tracker.
            self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=history.worker_start, initargs=(os.getpid(),))
            self.started += 1
        try:
            answer = await loop.run_in_executor(self.pool, functools.partial(work, self.database, *args))
            if started:  # the pool's own threads (its manager, its queue's feeder) are there now
                lift_stragglers()
            return answer
        except BrokenProcessPool:
            self.pool = None
            log.warning("web view: the history's process stopped; the next request starts another")
            raise web.HTTPServiceUnavailable(text="the history's process stopped: try again\n") from None
        except StoreError as exc:
            raise web.HTTPServiceUnavailable(text=f"{exc}\n") from None
        finally:
            self.idle = loop.call_later(IDLE_S, self.stop)

    def stop(self) -> None:
        if self.idle is not None:
            self.idle.cancel()
        pool, self.pool = self.pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def routes(store: Store | Reader) -> Callable[[web.Application], None]:
    """What `build_app(routes=[...])` calls: adds the history's pages and their data to `app`."""

    def add(app: web.Application) -> None:
        files = static_files()
        rebuilder = Rebuilder(store.path)
        # Started after the daemon is ready: it runs Python beside the game, so it joins the
        # daemon's other threads' priority (system/realtime.py).
        lister = ThreadPoolExecutor(max_workers=1, thread_name_prefix="history", initializer=join_the_rest)

        def page(name: str) -> Callable[[web.Request], Any]:
            body, kind = files[name]

            async def serve(_request: web.Request) -> web.Response:
                return web.Response(body=body, content_type=kind, charset="utf-8")
            return serve

        async def listed(request: web.Request) -> web.Response:
            """A page of matches (`?limit=`, at most MATCHES_MAX; `?before=N`: older than match N),
            its next page in the Link header (RFC 8288), read on the history's own thread."""
            try:
                query = request.query
                limit, before = _whole(query.get("limit", MATCHES_MAX)), _whole(query.get("before"))
                work = functools.partial(history.matches, store, limit, before)
                page = await asyncio.get_running_loop().run_in_executor(lister, work)
            except ValueError as exc:
                raise web.HTTPBadRequest(text=f"{exc}\n") from None
            except StoreError as exc:
                raise web.HTTPServiceUnavailable(text=f"{exc}\n") from None
            headers = {"Link": f'</api/matches?before={page["next"]}>; rel="next"'} if page["next"] else {}
            text = pieces.dumps(page["matches"], separators=(",", ":"), ensure_ascii=False)  # GIL: pieces
            return web.Response(text=text, content_type="application/json", headers=headers)

        async def one(request: web.Request) -> web.Response:
            match_id = int(request.match_info["id"])
            body, rebuilt = _or_404(await rebuilder.run(history.timeline_gzipped, match_id), request)
            rebuilder.rebuilt += rebuilt
            headers = {"Vary": "Accept-Encoding"}
            if "gzip" in request.headers.get("Accept-Encoding", ""):
                headers["Content-Encoding"] = "gzip"
            else:
                body = gzip.decompress(body)
            return web.Response(body=body, content_type="application/json", charset="utf-8", headers=headers)

        async def download(request: web.Request) -> web.Response:
            match_id = int(request.match_info["id"])
            text = _or_404(await rebuilder.run(history.journal_text, match_id), request)
            return web.Response(text=text, content_type="application/json", headers={
                "Content-Disposition": f'attachment; filename="match-{match_id}.json"'})

        async def shutdown(_app: web.Application) -> None:
            rebuilder.stop()
            lister.shutdown(wait=False, cancel_futures=True)

        app.router.add_get("/history", page("history.html"))
        app.router.add_get(r"/history/{id:\d{1,12}}", page("match.html"))
        app.router.add_get("/api/matches", listed)
        app.router.add_get(r"/api/matches/{id:\d{1,12}}", one)
        app.router.add_get(r"/api/matches/{id:\d{1,12}}/journal.json", download)
        app.on_cleanup.append(shutdown)
        app[REBUILDER] = rebuilder

    return add


REBUILDER: web.AppKey[Rebuilder] = web.AppKey("rebuilder")


def _whole(text: Any) -> Any:
    """A query's whole number as a number; anything else as it came, for the store to name."""
    return int(text) if isinstance(text, str) and text.isascii() and text.isdigit() else text


def _or_404(found: Any, request: web.Request) -> Any:
    if found is None:
        raise web.HTTPNotFound(text=f"no match {request.match_info['id']} is stored\n")
    return found
