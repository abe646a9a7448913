"""The clients `table-host bench attack` sets on the table, each a process of its own (a fresh
interpreter, so no lock of the bench's threads is copied into it, and the attack's CPU is not
the bench's): `python -m firmware_host.bench.attackers KIND SPEC`, SPEC a JSON object.

Each one gets ready (its uid, its descriptors, its imports), says `ready` on stdout and waits
for `go SECONDS` on stdin; it attacks for that long, lets go of every connection, prints what
it did as one JSON object and waits for the next `go`. It dies with the bench
(PR_SET_PDEATHSIG), and anything but `go` on stdin (its end too) ends it.

- half-open: COUNT connections at once to the web port from ADDRESSES addresses of the loopback
  network, each sending a request's head that never ends; one the table closes (or refuses) is
  opened again at once.
- websockets: COUNT WebSockets to `/live` from one address, as a phone's browser opens them (its
  Origin the table's page); one refused or closed is tried again after RETRY_S.
- web-history: USERS addresses asking the history's pages (`/api/matches`, `/api/matches/N`)
  without pause, each on a kept-alive connection of its own.
- history: `tablectl history` without pause as UID (a read-only user), each on a connection of its own.
- slowloris: PEERS connections of UID to the control socket, a byte every 2 s (client_faults.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import importlib
import json
import os
import resource
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

HALF = b"GET / HTTP/1.1\r\nHost: x\r\nX: "  # a request's head that never ends (issue 29's)
RETRY_S = 0.2  # a refused or closed WebSocket: tried again after this
PR_SET_PDEATHSIG = 1  # linux/prctl.h

Counts = dict[str, int]


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _become(uid: int) -> None:
    """A user of its own, no groups (root can; the kernel's word is the uid, no account needed)."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def _most(counts: Counts, key: str, now: int) -> None:
    counts[key] = max(counts.get(key, 0), now)


# ---------------------------------------------------------------- the web port


async def _until_closed(sock: socket.socket, end: float) -> bytes:
    """What the table says before it closes; b"" also when the attack is over first."""
    loop, said = asyncio.get_running_loop(), b""
    with contextlib.suppress(TimeoutError, ConnectionResetError, BrokenPipeError):
        async with asyncio.timeout(max(0.0, end - time.monotonic())):
            while chunk := await loop.sock_recv(sock, 4096):
                said += chunk
    return said


async def half_open(spec: dict[str, Any], end: float) -> Counts:
    loop = asyncio.get_running_loop()
    counts: Counts = {"tried": 0, "connections": 0, "refused_503": 0, "closed_by_the_table": 0, "errors": 0,
                      "open_most": 0}
    held = [0]

    async def one(n: int) -> None:
        source = f"{spec['network']}{1 + n % spec['addresses']}"
        while time.monotonic() < end:
            sock = socket.socket()
            sock.setblocking(False)
            opened = False
            counts["tried"] += 1
            try:
                sock.bind((source, 0))
                async with asyncio.timeout(max(0.001, end - time.monotonic())):
                    await loop.sock_connect(sock, ("127.0.0.1", spec["port"]))
                opened = True
                held[0] += 1
                counts["connections"] += 1
                _most(counts, "open_most", held[0])
                with contextlib.suppress(OSError):
                    sock.send(HALF)
                said = await _until_closed(sock, end)
                if said.startswith(b"HTTP/1.1 503"):
                    counts["refused_503"] += 1
                elif time.monotonic() < end:
                    counts["closed_by_the_table"] += 1
            except (OSError, TimeoutError):
                if time.monotonic() < end:
                    counts["errors"] += 1
                    await asyncio.sleep(0.01)  # no port or address now: not a spin
            finally:
                held[0] -= opened
                sock.close()

    await asyncio.gather(*(one(n) for n in range(spec["count"])))
    return counts


async def websockets(spec: dict[str, Any], end: float) -> Counts:
    import aiohttp

    counts: Counts = {"tried": 0, "opened": 0, "frames": 0, "refused": 0, "errors": 0, "open_most": 0}
    held = [0]
    url = spec["url"]
    connector = aiohttp.TCPConnector(local_addr=(spec["source"], 0), limit=0, force_close=True)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one() -> None:
            while time.monotonic() < end:
                counts["tried"] += 1
                try:
                    async with asyncio.timeout(max(0.001, end - time.monotonic())):
                        ws = await session.ws_connect(url + "live", heartbeat=None,
                                                      origin=url.rstrip("/"))
                        counts["opened"] += 1
                        held[0] += 1
                        _most(counts, "open_most", held[0])
                        try:
                            async for _ in ws:
                                counts["frames"] += 1
                        finally:
                            held[0] -= 1
                            await ws.close()
                except aiohttp.WSServerHandshakeError:
                    counts["refused"] += 1
                except TimeoutError:
                    return
                except (aiohttp.ClientError, OSError):
                    counts["errors"] += 1
                await asyncio.sleep(RETRY_S)

        await asyncio.gather(*(one() for _ in range(spec["count"])))
    return counts


async def web_history(spec: dict[str, Any], end: float) -> Counts:
    import aiohttp

    counts: Counts = {"tried": 0, "answered": 0, "refused": 0, "errors": 0}
    url, matches = spec["url"], spec["matches"]

    async def user(n: int) -> None:
        connector = aiohttp.TCPConnector(local_addr=(f"{spec['network']}{spec['first'] + n}", 0), limit=1)
        async with aiohttp.ClientSession(connector=connector) as session:
            asked = n
            while time.monotonic() < end:
                asked += 1
                counts["tried"] += 1
                path = "api/matches" if asked % 2 else f"api/matches/{1 + asked // 2 % matches}"
                try:
                    async with asyncio.timeout(max(0.001, end - time.monotonic())), \
                            session.get(url + path) as answer:
                        await answer.read()
                        counts["answered" if answer.status == 200 else "refused"] += 1
                except TimeoutError:
                    return
                except (aiohttp.ClientError, OSError):
                    counts["errors"] += 1

    await asyncio.gather(*(user(n) for n in range(spec["users"])))
    return counts


# ---------------------------------------------------------------- the control socket


def history(spec: dict[str, Any], end: float) -> Counts:
    from .history import _ask_again  # imported already, before the uid changed (main)

    counts: Counts = {"answered": 0, "refused": 0}
    _ask_again(spec["socket"], lambda: time.monotonic() > end, counts)
    return counts


def slowloris(spec: dict[str, Any], end: float) -> Counts:
    from .client_faults import _slowloris  # imported already, before the uid changed (main)

    counts: Counts = {"connections": 0, "requests": 0, "errors": 0}
    threads = [threading.Thread(target=_slowloris, args=(spec["socket"], end, counts))
               for _ in range(spec["peers"])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return counts


KINDS: dict[str, Callable[[dict[str, Any], float], Any]] = {
    "half-open": half_open, "websockets": websockets, "web-history": web_history,
    "history": history, "slowloris": slowloris}


def main(argv: list[str]) -> int:
    kind, spec = argv[0], json.loads(argv[1])
    _die_with_parent()
    if spec.get("descriptors"):
        resource.setrlimit(resource.RLIMIT_NOFILE, (spec["descriptors"], spec["descriptors"]))
    # Everything it needs imported now: after the uid changes the interpreter's own files may be
    # out of reach (a Python under /root), and before `go` its time is not the attack's.
    needs = {"websockets": "aiohttp", "web-history": "aiohttp", "history": f"{__package__}.history",
             "slowloris": f"{__package__}.client_faults"}
    if kind in needs:
        importlib.import_module(needs[kind])
    if spec.get("uid") is not None:
        _become(spec["uid"])
    print("ready", flush=True)
    attack = KINDS[kind]
    while (line := sys.stdin.readline().split())[:1] == ["go"]:  # a turn of the attack each
        end = time.monotonic() + float(line[1])
        counts = asyncio.run(attack(spec, end)) if asyncio.iscoroutinefunction(attack) else attack(spec, end)
        print(json.dumps(counts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
