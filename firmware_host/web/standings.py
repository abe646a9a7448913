"""The players' pages (docs/web.md, "Players and the leaderboard"): a player's statistics, rating
over time and matches (/players/N), and the leaderboard tonight and all time (/leaderboard).
Read-only (GET only), through the web view's gate and limits as every page; the pages are static
files (static/player.html, static/leaderboard.html) that ask for their data as JSON.

The figures are read in the statistics' own process at the lowest priority (service/statistics.py
`Figurer`): a page is never Python run beside the game thread. The web thread waits for it on a
thread of its own, one request at a time.
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aiohttp import web

from ..service.statistics import Figurer, highlights_in, leaderboard_in, player_in
from ..system import pieces
from ..system.errors import StoreError
from ..system.realtime import join_the_rest
from .server import static_files

PLAYER_ID_MAX = 12
"""Digits of a player number in an address: more is a 404, as a match number is."""


def routes(figurer: Figurer) -> Callable[[web.Application], None]:
    """What `build_app(routes=[...])` calls: adds the players' pages and their data to `app`."""

    def add(app: web.Application) -> None:
        files = static_files()
        asker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="standings", initializer=join_the_rest)

        def page(name: str) -> Callable[[web.Request], Any]:
            body, kind = files[name]

            async def serve(_request: web.Request) -> web.Response:
                return web.Response(body=body, content_type=kind, charset="utf-8")
            return serve

        async def ask(work: Callable[..., Any], *args: Any) -> Any:
            try:
                return await asyncio.get_running_loop().run_in_executor(
                    asker, functools.partial(figurer.ask, work, *args, timeout=30.0))
            except (StoreError, TimeoutError) as exc:
                raise web.HTTPServiceUnavailable(text=f"the statistics cannot be read now: {exc}\n") from None

        async def player(request: web.Request) -> web.Response:
            player_id = int(request.match_info["id"])
            query = request.query
            try:
                game = query.get("game") or None
                since, until = _time(query.get("since"), "since"), _time(query.get("until"), "until")
            except ValueError as exc:
                raise web.HTTPBadRequest(text=f"{exc}\n") from None
            found = await ask(player_in, player_id, game, since, until)
            if found is None:
                raise web.HTTPNotFound(text=f"no player {player_id} is known\n")
            return _json(found)

        async def leaderboard(_request: web.Request) -> web.Response:
            return _json(await ask(leaderboard_in))

        async def highlights(_request: web.Request) -> web.Response:
            return _json(await ask(highlights_in))

        async def shutdown(_app: web.Application) -> None:
            asker.shutdown(wait=False, cancel_futures=True)

        app.router.add_get(rf"/players/{{id:\d{{1,{PLAYER_ID_MAX}}}}}", page("player.html"))
        app.router.add_get("/leaderboard", page("leaderboard.html"))
        app.router.add_get(rf"/api/players/{{id:\d{{1,{PLAYER_ID_MAX}}}}}", player)
        app.router.add_get("/api/leaderboard", leaderboard)
        app.router.add_get("/api/highlights", highlights)
        app.on_cleanup.append(shutdown)

    return add


def _time(text: str | None, name: str) -> float | None:
    """A query's Unix time, or None when absent; anything else a ValueError naming it."""
    if text is None or text == "":
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a time in seconds since 1970 (Unix time), not {text[:40]!r}")
    return value


def _json(value: Any) -> web.Response:
    text = pieces.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return web.Response(text=text, content_type="application/json")
