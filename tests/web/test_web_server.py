"""The web view's server against real HTTP and WebSocket clients (aiohttp's): the page and only
its files, one push channel, bounded queues and connections, nothing accepted back; the
frontend that never makes the table wait, and that says so when it cannot serve."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from plumbing import ROOT, gated_web, wait_for

from firmware_host.bench.harness import daemon_env
from firmware_host.service.events import FrontendTrouble
from firmware_host.service.frontend import TableView
from firmware_host.system.children import ending_with_me
from firmware_host.web.server import PER_ADDRESS, QUEUE, Client, Hub


def frame(n: int) -> dict[str, Any]:
    return {"type": "table", "phase": "playing", "n": n}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _serve_and(check: Any) -> None:
    hub = Hub(max_clients=2)
    async with gated_web(hub) as (url, _gate), aiohttp.ClientSession() as session:
        await check(url, hub, session)


def test_the_page_its_files_and_nothing_else() -> None:
    async def check(url: str, _hub: Hub, session: aiohttp.ClientSession) -> None:
        for path in ("/", "/big", "/?screen=big"):
            async with session.get(url + path) as r:
                assert r.status == 200 and r.content_type == "text/html"
                assert "script-src 'self'" in r.headers["Content-Security-Policy"]
                assert r.headers["X-Content-Type-Options"] == "nosniff"
                assert '<script src="/static/table.js"' in await r.text()
        async with session.get(url + "/static/table.js") as r:
            assert r.status == 200 and r.content_type == "text/javascript"
            code = await r.text()  # names go in as text, never as markup
            assert not re.search(r"\.(inner|outer)HTML\s*[+]?=|insertAdjacentHTML|document\.write", code)
        for path in ("/static/server.py", "/static/..%2fserver.py", "/static/%2e%2e%2fserver.py",
                     "/static/../server.py", "/../pyproject.toml", "/static/", "/static/nothing.js",
                     "/etc/passwd", "/static/..%2f..%2f..%2fpyproject.toml"):
            async with session.get(url + path) as r:
                assert r.status == 404, path
                assert "Hub" not in await r.text() and "[project]" not in await r.text()
                # it was: the router's own 404 went out without them
                assert r.headers["X-Content-Type-Options"] == "nosniff", path
                assert r.headers["Content-Security-Policy"].startswith("default-src 'none'"), path
        for path in ("/favicon.ico", "/static/favicon.svg"):  # it was: a 404 for the favicon
            async with session.get(url + path) as r:
                assert r.status == 200 and r.content_type == "image/svg+xml", path
                assert (await r.text()).startswith("<svg ")
        async with session.get(url + "/") as r:
            assert '<link rel="icon" href="/static/favicon.svg"' in await r.text()
        async with session.post(url + "/", data=b"x") as r:
            assert r.status == 405  # read-only: no method but GET
            assert r.headers["Referrer-Policy"] == "no-referrer"

    run(_serve_and(check))


def test_a_browser_gets_the_last_frame_at_once_then_every_new_one() -> None:
    async def check(url: str, hub: Hub, session: aiohttp.ClientSession) -> None:
        hub.publish(frame(1))
        async with session.ws_connect(url + "/live") as ws:
            first = json.loads((await ws.receive(timeout=5)).data)
            assert first["n"] == 1 and first["type"] == "table" and first["sent_ns"] > 0
            hub.publish(frame(2))
            assert json.loads((await ws.receive(timeout=5)).data)["n"] == 2

    run(_serve_and(check))


def test_read_only_anything_a_browser_sends_closes_its_connection() -> None:
    async def check(url: str, hub: Hub, session: aiohttp.ClientSession) -> None:
        async with session.ws_connect(url + "/live") as ws:
            await ws.send_str('{"cmd": "abort"}')
            message = await ws.receive(timeout=5)
            assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
            assert ws.close_code == 1003
        await asyncio.sleep(0.05)
        assert hub.clients == set()
        async with session.ws_connect(url + "/live", max_msg_size=0) as ws:  # too big to read: closed
            await ws.send_bytes(b"x" * 5000)
            message = await ws.receive(timeout=5)
            assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
            assert ws.close_code == 1009

    run(_serve_and(check))


def from_address(host: str) -> aiohttp.ClientSession:
    """A client on the network at `host` (127.0.0.2 ...: another address of the loopback, so not
    the table itself, whose connections come from the address they reach)."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(host, 0), limit=0))


def test_browsers_are_bounded_the_table_itself_keeps_its_place_and_a_place_frees_up() -> None:
    async def check(url: str, hub: Hub, kiosk: aiohttp.ClientSession) -> None:
        async with from_address("127.0.0.2") as a, from_address("127.0.0.3") as b, \
                from_address("127.0.0.4") as c:
            one = await a.ws_connect(url + "/live")
            two = await b.ws_connect(url + "/live")
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await c.ws_connect(url + "/live")
            assert refused.value.status == 503 and hub.refused["full"] == 1
            screen = await kiosk.ws_connect(url + "/live")  # the Pi's own screen: a place of its own
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await kiosk.ws_connect(url + "/live")
            assert refused.value.status == 503 and hub.refused["full"] == 2
            await one.close()
            for _ in range(100):
                if len(hub.clients) < 3:
                    break
                await asyncio.sleep(0.01)
            three = await c.ws_connect(url + "/live")
            hub.publish(frame(7))
            for ws in (two, three, screen):
                assert json.loads((await ws.receive(timeout=5)).data)["n"] == 7
            for ws in (two, three, screen):
                await ws.close()

    run(_serve_and(check))


def test_one_address_has_its_share_of_browsers_and_the_kiosk_is_never_shut_out() -> None:
    """It was: 32 WebSockets from one address took every place, and the TV got 503 on 18 of 18
    tries."""
    async def check() -> None:
        hub = Hub(max_clients=32)
        async with gated_web(hub) as (url, _gate), from_address("127.0.0.2") as hog, \
                aiohttp.ClientSession() as kiosk, from_address("127.0.0.3") as phone:
            held, statuses = [], []
            for _ in range(32):
                try:
                    held.append(await hog.ws_connect(url + "/live"))
                except aiohttp.WSServerHandshakeError as exc:
                    statuses.append(exc.status)
            assert len(held) == PER_ADDRESS and statuses == [429] * (32 - PER_ADDRESS)
            assert hub.refused["per_address"] == 32 - PER_ADDRESS
            for _ in range(18):
                ws = await kiosk.ws_connect(url + "/live")
                await ws.close()
            async with phone.ws_connect(url + "/live") as ws:  # another phone: its own share
                hub.publish(frame(3))
                assert json.loads((await ws.receive(timeout=5)).data)["n"] == 3
            async with hog.get(url + "/live") as refused:  # says why, in words
                assert refused.status == 429
                assert await refused.text() == f"{PER_ADDRESS} browsers from one address at most; " \
                                               "close one, reload\n"
            for ws in held:
                await ws.close()

    run(check())


def test_a_stalled_browsers_queue_keeps_the_newest_frames_and_drops_the_oldest() -> None:
    async def check() -> None:
        client = Client(None, None)  # type: ignore[arg-type]  # nobody drains it: a stalled browser
        for n in range(10):
            client.offer(f"frame {n}".encode())
        assert list(client.queue) == [f"frame {n}".encode() for n in range(10 - QUEUE, 10)]
        assert client.dropped == 10 - QUEUE

    run(check())


def test_a_browser_that_stops_reading_holds_up_neither_the_hub_nor_another_browser() -> None:
    """A raw TCP client that upgrades and never reads: its socket buffers fill, its pump waits,
    and a second browser still gets every frame at once."""
    async def check(url: str, hub: Hub, session: aiohttp.ClientSession) -> None:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.transport.set_write_buffer_limits(0)
        writer.write(b"GET /live HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        await writer.drain()
        assert b"101" in await reader.readline()
        async with session.ws_connect(url + "/live") as good:
            big = {"type": "table", "pad": "x" * 200_000}
            for n in range(100):  # 20 MB towards a browser that reads none of it: more than the
                # kernel's socket buffers take (tcp_wmem, tcp_rmem), so its frames back up here;
                # publishing waits for no socket (it is not a coroutine), and what it leaves queued
                # for the stalled one is bounded (below)
                hub.publish({**big, "n": n})
                got = json.loads((await good.receive(timeout=5)).data)
                assert got["n"] == n
            stalled = next(c for c in hub.clients if c.sent < 100)
            assert len(stalled.queue) <= QUEUE and stalled.dropped > 0
            assert stalled.transport.get_write_buffer_size() <= 3 * 200_100  # a few frames, not 20 MB
        writer.close()

    run(_serve_and(check))


# ---------------------------------------------------------------- the frontend


def view(live: dict[str, Any]) -> TableView:
    return TableView("playing", None, {}, [], made={"live": live})


@pytest.fixture
def webview() -> Iterator[Any]:
    from firmware_host.web.frontend import WebView

    events: list[Any] = []
    front = WebView("127.0.0.1", 0, max_clients=4)
    front.start(events.append)
    front.events = events  # type: ignore[attr-defined]
    wait_for(lambda: front._loop is not None)
    try:
        yield front
    finally:
        front.stop()


async def _receive(url: str, count: int = 1) -> list[dict[str, Any]]:
    async with aiohttp.ClientSession() as session, session.ws_connect(url + "live") as ws:
        return [json.loads((await ws.receive(timeout=5)).data) for _ in range(count)]


def test_show_hands_over_the_newest_and_never_waits_for_a_stalled_server(webview: Any) -> None:
    assert webview.url.startswith("http://127.0.0.1:") and webview.problem == ""
    webview.show(view(frame(0)))
    wait_for(lambda: webview.hub.latest is not None)
    stalled = threading.Event()
    webview._loop.call_soon_threadsafe(lambda: stalled.wait(5))  # the server's loop is stuck
    started = time.perf_counter()
    for n in range(1, 5001):
        webview.show(view(frame(n)))
    took = time.perf_counter() - started
    assert took < 0.5, f"5000 shows took {took:.3f} s"  # never a wait: a slot and one wake-up
    assert len(webview._loop._ready) <= 2  # one delivery waits, however many shows came
    stalled.set()
    wait_for(lambda: json.loads(webview.hub.latest)["n"] == 5000)
    assert webview.hub.published == 2  # frame 0, then only the newest: nothing piled up
    got = run(_receive(webview.url))
    assert got[0]["n"] == 5000


def test_a_web_view_that_cannot_listen_says_so_and_the_table_plays_on(dirs: Path) -> None:
    from firmware_host.config import emulated_config
    from firmware_host.service.daemon import Daemon
    from firmware_host.web.frontend import WebView

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    daemon = Daemon(emulated_config(2))
    front = WebView("127.0.0.1", taken.getsockname()[1])
    daemon.address = front.listen()
    daemon.attach(front)
    thread = threading.Thread(target=daemon.serve, daemon=True)
    thread.start()
    try:
        assert daemon.address == ""
        assert front.problem.startswith("web view: cannot listen on 127.0.0.1:")
        assert "Address already in use" in front.problem
        wait_for(lambda: daemon.status.text().startswith("DEGRADED: web view: cannot listen"))
        daemon.buttons.tap(0, "slap", time.monotonic_ns(), 35_000_000)  # the table plays on
        wait_for(lambda: daemon.table.joined == [0])
        assert "web" not in daemon.status.extra()
    finally:
        daemon.loop.put(FrontendTrouble("test", "stop"))
        daemon.loop.stop()
        thread.join(10)
        taken.close()


def test_a_web_server_that_dies_is_reported_and_the_table_plays_on(dirs: Path) -> None:
    from firmware_host.config import emulated_config
    from firmware_host.service.daemon import Daemon
    from firmware_host.web.frontend import WebView

    daemon = Daemon(emulated_config(2))
    front = WebView("127.0.0.1", 0)
    daemon.address = front.listen()
    daemon.attach(front)
    thread = threading.Thread(target=daemon.serve, daemon=True)
    thread.start()
    try:
        wait_for(lambda: front.hub is not None and front.hub.latest is not None)

        front._loop.call_soon_threadsafe(front._loop.stop)  # its loop ends, not by our stop()
        wait_for(lambda: front.problem == "web view: stopped: RuntimeError: its loop ended")
        wait_for(lambda: daemon.status.text().startswith("DEGRADED: web view: stopped"))
        daemon.buttons.tap(0, "slap", time.monotonic_ns(), 35_000_000)
        wait_for(lambda: daemon.table.joined == [0])
    finally:
        daemon.loop.stop()
        daemon.loop.put(FrontendTrouble("test", "stop"))
        thread.join(10)


def test_the_daemon_takes_the_socket_systemd_passes(tmp_path: Path) -> None:
    """systemd-socket-activate (systemd's own tool) listens, as table-web.socket does on the Pi,
    and hands the socket to the real daemon process with LISTEN_FDS and LISTEN_FDNAMES=web."""
    activate = "/usr/bin/systemd-socket-activate"
    assert os.path.exists(activate), "systemd-socket-activate is missing: apt-get install systemd"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = daemon_env(tmp_path)
    with open(tmp_path / "daemon.log", "wb") as log:
        # systemd-socket-activate hands its child only the variables named with -E: the table's
        # directories are passed on by name, or the daemon would use (and resume) the user's own.
        passed = [f"-E{name}={env[name]}" for name in ("RUNTIME_DIRECTORY", "STATE_DIRECTORY",
                                                         "CONFIGURATION_DIRECTORY", "TABLE_HOST_SOCKET")]
        proc = subprocess.Popen([activate, "-l", f"127.0.0.1:{port}", "--fdname=web", *passed,
                                 sys.executable, "-m", "firmware_host", "run", "--emulate", "--ui", "none"],
                                cwd=ROOT, env=env, stdout=log, stderr=log, preexec_fn=ending_with_me())
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                got = run(_receive(f"http://127.0.0.1:{port}/"))
                break
            except (aiohttp.ClientError, OSError, TimeoutError):
                assert time.monotonic() < deadline, (tmp_path / "daemon.log").read_text()[-2000:]
                time.sleep(0.2)
        assert got[0]["type"] == "table" and got[0]["phase"] == "attract"
        assert got[0]["address"] == f"http://127.0.0.1:{port}/"  # systemd's socket, not one of its own
    finally:
        proc.terminate()
        proc.wait(10)
    told = (tmp_path / "daemon.log").read_text()
    assert "web view: http://127.0.0.1:" in told and str(tmp_path / "etc") in told  # its own directories


def test_a_table_stopped_while_its_web_view_still_begins_waits_for_it(monkeypatch) -> None:
    """The web thread imports aiohttp after the table is ready; a table stopped meanwhile must
    not end its process under that import (a SIGTERM 0.5 s after READY once ended in SIGSEGV)."""
    from firmware_host.web.frontend import WebView

    begin = WebView._begin
    began = threading.Event()

    async def slow_begin(self: WebView) -> None:
        began.set()
        await asyncio.sleep(0.3)  # as an import on a loaded Pi
        await begin(self)

    monkeypatch.setattr(WebView, "_begin", slow_begin)
    front = WebView("127.0.0.1", 0)
    front.start(lambda _event: None)
    assert began.wait(5)
    assert front._loop is None  # still beginning
    front.stop()
    assert front._thread is not None and not front._thread.is_alive()
