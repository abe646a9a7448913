"""`table-host run`: the one composition root. It loads the configuration, takes the state
database's lock, claims real-time priority headless, opens the hardware the configuration
names, builds the service (service/daemon.py) and attaches the frontend asked for:

    --ui textual   Textual owns the main thread; the service's loop runs in a thread of its own
    --ui plain     a plain terminal: the loop runs here, the keys are read on a thread
    --ui none      headless (the systemd service)

Only this module imports a frontend (ui/): the service talks to them through
service/frontend.py's Frontend, so a web view attaches here the same way.
"""

from __future__ import annotations

import errno
import logging
import os
import sys
from pathlib import Path

from ..config import choose_config, config_path
from ..devices.board import EX_UNAVAILABLE, HardwareUnavailable, open_board
from ..service.daemon import Daemon
from ..service.journal import StoreError
from ..system import memory, paths
from ..system.errors import TableError
from ..system.logs import MAINTAINER, logger
from ..system.realtime import Realtime
from ..system.systemd import Notifier
from .common import with_games

log = logger("daemon")


def hold_table(database: Path) -> int:
    """One daemon to a state database: a second one (a terminal UI beside the service, two
    shells) would write the same match and, quitting, delete the first one's control socket.
    The lock (flock, so a crash releases it) is held for the life of the process."""
    import fcntl

    lock = database.with_name(database.name + ".lock")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o660)
    except OSError as exc:
        raise StoreError(f"cannot open {lock}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        other = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise StoreError(f"another table-host (pid {other}) is running on {database}: stop it first, "
                         "or give this one its own STATE_DIRECTORY") from None
    try:  # the pid is for the refusal above, said to a second table; the lock is what counts
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError as exc:  # a full disk: the table starts DEGRADED (service/journal.py), not here
        log.warning("cannot write the pid into %s: %s", lock, exc.strerror or exc)
    return fd


def run(config_file: str | None, emulate: bool, ui: str = "none") -> int:
    """Load the configuration, open the hardware it names, run. A broken file with a last good
    copy kept: run on the copy and say so loudly. GPIO that cannot be opened: say exactly what
    failed (journal and STATUS=) and exit 69, which systemd shows as status=69/UNAVAILABLE."""
    with_games()
    path = config_path(config_file)
    try:
        lock = hold_table(paths.state_database())  # noqa: F841 - held until the process ends
        if not os.environ.get("TABLE_HOST_SOCKET"):
            paths.runtime_directory()  # made, and the /tmp fallback checked, before any hardware
        config, problem = choose_config(path, emulate, named=config_file is not None)
        traced = memory.trace_if_asked()  # a diagnosis (bench soak, docs/daemon.md)
        # Headless, this thread serves the table: real-time. On real GPIO it is claimed before the
        # board is opened, so that lgpio's threads, started by the opening, inherit it; emulated
        # parts (the LED controller's own thread) are not the Pi's and start before it.
        realtime = Realtime() if ui == "none" else None
        lgpio_inherits = config.hardware.backend != "emulated"
        if realtime is not None and lgpio_inherits:
            realtime.claim_game_thread()
        board = open_board(config)
        if realtime is not None:
            if not lgpio_inherits:
                realtime.claim_game_thread()
            realtime.claim_edge_thread()
            realtime.stop_inheriting()  # the daemon's own workers run at normal priority
            log.info("priority: %s", ", ".join(f"{role} thread {text}" for role, text in
                                               realtime.status().items()), extra=MAINTAINER)
        daemon = Daemon(config, config_file=path, board=board, terminal=ui in ("plain", "textual"))
        daemon.config_problem = problem
        daemon.realtime = realtime
    except HardwareUnavailable as exc:
        message = f"hardware unavailable: {exc}"
        log.error("%s", message)
        Notifier().send(f"STATUS={message}", f"ERRNO={errno.ENODEV}")
        return EX_UNAVAILABLE
    except TableError as exc:  # every error the table reports (system/errors.py)
        log.error("%s", exc)
        return 2
    log.info("hardware: %s", board.describe(), extra=MAINTAINER)
    log.info("memory: allocator %s", memory.describe(), extra=MAINTAINER)
    if traced is not None:
        log.warning("memory: tracing allocations (tracemalloc) into %s: slow, not for play", traced)
    return serve(daemon, ui)


def serve(daemon: Daemon, ui: str) -> int:
    """Attach the frontend asked for and run the loop until the table stops."""
    daemon.catch_signals()
    attach_web(daemon, terminal=ui != "none")
    if daemon.pane is not None:
        daemon.pane.hold_terminal()  # until close(): the log's lines are the pane's
    if ui == "textual":
        from ..ui.textual_app import run_app

        return run_app(daemon)
    if ui == "plain":
        from ..ui.plain import TerminalUI

        daemon.attach(TerminalUI())
    return daemon.serve()


def attach_web(daemon: Daemon, terminal: bool) -> None:
    """The web view beside any other frontend ([web] in the configuration, docs/web.md), served by
    a process of its own (web/process.py), which answers the journal's readers on the control
    socket too. If it cannot listen, the table plays on and its status says `DEGRADED: web view ...`."""
    web = daemon.config.web
    if not web.enabled:
        return
    from ..web.process import WebProcess

    store = daemon.store
    view = WebProcess(web.bind, web.port, web.max_clients, database=paths.state_database(),
                      names=web.names, url=web.url, held=lambda: bool(store.problem),
                      level=logging.getLevelName(logging.getLogger("table_host").getEffectiveLevel()).lower(),
                      port_file=paths.state_database().with_name("web-port"))
    daemon.control.handoff = view.ask  # `tablectl history` answered in the web view's process
    found = view.listen()
    if view.said:  # the port it had last time was taken: a bookmark of it no longer opens the table
        logger("web").warning("web view: %s", view.said)
    daemon.address = (web.url or found) if found else ""  # what people type: [web] url wins
    daemon.attach(view)
    if terminal and daemon.address:  # before the terminal UI takes the screen: `./dev run` says where
        print(f"web view: {daemon.address}", file=sys.stderr, flush=True)
