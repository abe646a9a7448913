"""Reading the journal never on the game thread, never under the writer's lock, a bounded page
at a time (issue "No decision comes late", item 3): `Store.history_page`, the control socket's
`history` answered beside the game, `tablectl history` paging, the web list's pages."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import play_recorded
from plumbing import wait_for

from firmware_host.config import emulated_config
from firmware_host.control.client import ask
from firmware_host.service import journal as store_module
from firmware_host.service.journal import Store
from firmware_host.table.matches import new_match

LIMIT_MAX = 100  # control/protocol.py's HISTORY_MAX, as docs/persistence.md says it


def within(call: Callable[[], Any], timeout: float = 5.0) -> Any:
    """`call()`'s value, from another thread, if it returns within `timeout`; else AssertionError."""
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(call()), daemon=True)
    worker.start()
    worker.join(timeout)
    assert out, f"did not return within {timeout} s"
    return out[0]


def stored(db: Path, count: int) -> None:
    """`count` finished matches, numbered 1 to `count`, written as the table writes them."""
    store = Store(db)
    store.close()
    with sqlite3.connect(db) as raw:
        raw.executemany("INSERT INTO matches (id, game, players, seed, options, boards, started, ended, "
                        "winners, seats, bots) "
                        "VALUES (?, 'dice', 2, '3', '{}', '[]', ?, ?, '[0]', '[0, 1]', '{}')",
                        [(n, 1000.0 + n, 1001.0 + n) for n in range(1, count + 1)])
        raw.executemany("INSERT INTO rounds VALUES (?, 0, 'finished', '[0]', '[5, -3]', ?)",
                        [(n, 1001.0 + n) for n in range(1, count + 1)])


# ---------------------------------------------------------------- the store


def test_history_is_read_while_the_writer_holds_its_lock(tmp_path: Path) -> None:
    """A writer stuck in a commit (a card that hangs) keeps no reader waiting."""
    db = tmp_path / "table.db"
    stored(db, 3)
    store = Store(db)
    try:
        with store._mutex:
            assert [m["match"] for m in within(store.history)] == [3, 2, 1]
            assert within(lambda: store.match_record(2))["row"]["id"] == 2
    finally:
        store.close()


def test_history_pages_newest_first_with_a_bounded_limit(tmp_path: Path) -> None:
    db = tmp_path / "table.db"
    stored(db, 7)
    store = Store(db)
    try:
        pages, before = [], None
        while True:
            page = store.history_page(3, before)
            pages.append([m["match"] for m in page["matches"]])
            before = page["next"]
            if before is None:
                break
        assert pages == [[7, 6, 5], [4, 3, 2], [1]]
        assert [m["match"] for m in store.every_match()] == [7, 6, 5, 4, 3, 2, 1]
        assert store.history_page(2, 99)["matches"][0]["match"] == 7
        assert store.history_page(LIMIT_MAX)["next"] is None
        assert store.history()[0] == {"match": 7, "game": "dice", "players": 2, "seats": [1, 2],
                                      "started": 1007.0, "ended": 1008.0, "winners": [1], "set_aside": None,
                                      "rounds": [{"round": 1, "ending": "finished", "finishers": [1],
                                                  "scores": [5, -3]}], "names": [None, None],
                                      "ids": [None, None], "kinds": ["guest", "guest"]}
        for limit in (LIMIT_MAX + 1, 100_000, 0, -1, True, "all", 2.5):
            with pytest.raises(ValueError, match=rf"limit must be a whole number from 1 to {LIMIT_MAX} "):
                store.history_page(limit)  # type: ignore[arg-type]
        for before in (0, -3, "7", True):
            with pytest.raises(ValueError, match="before must be a match number from 1"):
                store.history_page(3, before)  # type: ignore[arg-type]
    finally:
        store.close()


def test_a_page_holds_the_matches_not_yet_on_disk(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(store_module, "RETRY_S", (0.05, 0.1))
    db = tmp_path / "table.db"
    stored(db, 2)
    store = Store(db)
    try:
        with store._mutex:  # SQLite's own SQLITE_FULL
            pages = store._db.execute("PRAGMA page_count").fetchone()[0]
            store._db.execute(f"PRAGMA max_page_count={pages}")
        for seed in (1, 2):
            match = new_match("dice", 2, seed, {"rounds": 1})
            play_recorded(store, store.begin_match(match, [0, 1]), match, 10**6)
        wait_for(lambda: store.problem is not None, 10)
        first = store.history_page(3)
        assert [m["match"] for m in first["matches"]] == [4, 3, 2] and first["next"] == 2
        assert [m["match"] for m in store.history_page(3, 4)["matches"]] == [3, 2, 1]
    finally:
        store.close()


# ---------------------------------------------------------------- the control socket


@pytest.fixture
def daemon(dirs: Path, monkeypatch) -> Iterator[Any]:
    """The service with 260 stored matches and its control socket, its loop NOT running: the game
    thread answers nothing, as when it is busy."""
    from firmware_host.service.daemon import Daemon

    monkeypatch.delenv("TABLE_HOST_SOCKET", raising=False)
    stored(dirs / "STATE_DIRECTORY" / "table.db", 260)
    served = Daemon(emulated_config(2), state_db=dirs / "STATE_DIRECTORY" / "table.db")
    try:
        yield served
    finally:
        served.close()


def test_history_is_answered_beside_the_game_thread(daemon: Any) -> None:
    began = time.monotonic()
    answer = ask({"cmd": "history", "limit": 3}, daemon.control.path)
    assert answer["ok"] is True, answer
    assert [m["match"] for m in answer["matches"]] == [260, 259, 258] and answer["next"] == 258
    older = ask({"cmd": "history", "limit": 2, "before": 258}, daemon.control.path)
    assert [m["match"] for m in older["matches"]] == [257, 256]
    assert daemon.loop.events.empty()  # nothing was queued for the game thread
    assert time.monotonic() - began < 5  # not the server's REPLY_TIMEOUT_S: nobody waited for the game


def test_a_history_past_the_bound_is_refused_naming_it(daemon: Any) -> None:
    answer = ask({"cmd": "history", "limit": 100_000}, daemon.control.path)
    assert answer == {"ok": False, "error": f"limit must be a whole number from 1 to {LIMIT_MAX} (older "
                                            f"matches: ask again with before, the answer's next), not 100000"}
    assert ask({"cmd": "history", "before": "x"}, daemon.control.path)["ok"] is False


def test_tablectl_history_asks_page_after_page(daemon: Any, monkeypatch, capsys) -> None:
    from firmware_host.cli import ctl

    monkeypatch.setenv("TABLE_HOST_SOCKET", str(daemon.control.path))
    asked: list[Any] = []
    pages = daemon.store.history_page
    monkeypatch.setattr(daemon.store, "history_page", lambda limit, before: asked.append((limit, before))
                        or pages(limit, before))
    assert ctl.main(["--json", "history", "--limit", "250"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [m["match"] for m in out["matches"]] == list(range(260, 10, -1)) and out["next"] == 11
    assert asked == [(100, None), (100, 161), (50, 61)]  # each page bounded
    assert ctl.main(["--json", "history", "--limit", "100000", "--before", "5"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [m["match"] for m in out["matches"]] == [4, 3, 2, 1] and out["next"] is None
    monkeypatch.setenv("COLUMNS", "120")
    assert ctl.main(["history", "--limit", "2"]) == 0
    text = capsys.readouterr().out
    assert text.rstrip().endswith("older matches: tablectl history --before 259")


# ---------------------------------------------------------------- the web list


def test_the_web_list_pages_with_a_link_to_the_older_matches(tmp_path: Path) -> None:
    import asyncio

    import aiohttp
    from aiohttp import web

    from firmware_host.web import replays
    from firmware_host.web.server import Hub, build_app

    db = tmp_path / "table.db"
    stored(db, 150)
    store = Store(db)

    async def fetch(client: aiohttp.ClientSession, path: str) -> tuple[int, str, str]:
        async with client.get(path) as r:
            return r.status, r.headers.get("Link", ""), await r.text()

    async def run() -> list[tuple[int, str, str]]:
        runner = web.AppRunner(build_app(Hub(2), routes=[replays.routes(store)]), handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        try:
            async with aiohttp.ClientSession(url) as client:
                return [await fetch(client, p) for p in (
                    "/api/matches", "/api/matches?before=51", "/api/matches?limit=2&before=3",
                    f"/api/matches?limit={LIMIT_MAX + 1}", "/api/matches?before=x")]
        finally:
            await runner.cleanup()

    try:
        first, last, small, too_many, garbage = asyncio.run(run())
    finally:
        store.close()
    assert first[0] == 200 and len(json.loads(first[2])) == LIMIT_MAX
    assert first[1] == '</api/matches?before=51>; rel="next"'
    assert last[0] == 200 and [m["match"] for m in json.loads(last[2])] == list(range(50, 0, -1))
    assert last[1] == ""  # the oldest page
    assert [m["match"] for m in json.loads(small[2])] == [2, 1] and small[1] == ""
    assert too_many[0] == 400 and f"limit must be a whole number from 1 to {LIMIT_MAX}" in too_many[2]
    assert garbage[0] == 400 and "before must be a match number from 1" in garbage[2]
