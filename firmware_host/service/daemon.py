"""`table-host run`'s service: the table as a systemd service (Type=notify), or emulated.

One thread owns the game: the loop (loop.py) takes everything through one queue
(button edges from gpiozero's callback thread, control requests from the
socket's threads, signals, keys) and sleeps until the earliest timer, never
polling. Each part of the work is a component of its own, built here:

- TableFeed (table_feed.py): presses to the table, time advances it; its steps go to
- StoreBinding (binding.py): matches begun, journaled, saved, aborted, resumed;
- Screens (screen_feed.py): the phase's screens and the game's;
- Sounds (sounds.py), BotHands (bot_hands.py), Status (status.py);
- Configuration (configuration.py), SelfTests (selftest.py), Keys (keys.py),
  Watchdog (watchdog.py), TableCommands (commands.py);
- Frontends (frontend.py): whoever watches, attached by the composition root.

The control commands each component answers are registered in one registry
(registry.py), checked against their declarations (control/protocol.py) before
the loop starts. Everything it says goes through `logging` (system/logs.py).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import ConfigError, TableConfig, remember_good
from ..control.server import ControlServer, Request
from ..devices.board import Board, open_board, open_parts
from ..system import memory, paths, signals
from ..system.logs import PaneHandler, logger
from ..system.realtime import BESIDE
from ..system.systemd import Notifier, has_terminal, under_systemd
from ..table.machine import Table
from .binding import StoreBinding
from .bot_hands import BotHands
from .commands import TableCommands
from .configuration import Configuration
from .events import Signal, StandingsMade, Wake
from .frontend import Frontend, Frontends, TableView, TableViews, ViewMaker, views_of
from .journal import Store
from .keys import Keys
from .loop import Loop
from .registry import Commands
from .screen_feed import Screens
from .selftest import SelfTests
from .sounds import Sounds
from .statistics import Figurer
from .status import Status
from .table_feed import TableFeed
from .watchdog import Watchdog

if TYPE_CHECKING:
    from ..devices.board import Presser
    from ..devices.buzzer import Buzzer
    from ..devices.displays.ledlink import LedLink
    from ..devices.displays.oled import SeatDisplays
    from ..devices.inputs.pins import TableInputs
    from ..system.realtime import Realtime

log = logger("daemon")
config_log = logger("config")


def stop_on_term(loop: Loop) -> Callable[[Signal, int], bool]:
    """SIGTERM and SIGINT end the loop (SIGHUP is the configuration's: a reload)."""
    def on_signal(event: Signal, _now: int) -> bool:
        if event.name != "term":
            return False
        loop.stop()
        return True

    return on_signal


class Daemon:
    def __init__(self, config: TableConfig, state_db: Path | None = None, config_file: Path | None = None,
                 board: Board | None = None, terminal: bool = False) -> None:
        """`board`: the hardware to drive; opened from `config.hardware` when not given (and then
        `HardwareUnavailable` says what could not be opened). `terminal`: a terminal frontend will
        be attached: the log's INFO lines go to its pane, its keys play seat 1, sounds are INFO."""
        self.loop = loop = Loop()
        self.collector = collector = memory.Collector().watch()
        self.notify = notify = Notifier()
        self.table = table = Table(len(config.inputs.seats), window_ns=round(config.arbiter.window_ms * 1e6),
                                   epsilon_ns=round(config.arbiter.epsilon_ms * 1e6),
                                   seed=random.randrange(1 << 30))
        # Before any worker starts talking: a terminal shows the log's INFO lines in its pane.
        self.pane = PaneHandler().attach() if terminal else None
        self.store = store = Store(state_db)
        self.board = board if board is not None else open_board(config)
        self.parts = parts = open_parts(self.board, config, loop.put, wake=lambda: loop.put(Wake()),
                                        keys=terminal, on_error=logger("sounds").warning)
        parts.inputs.gate = table.gate
        self.control = control = self._listen(config)

        # The components, each built from what it uses (never the daemon), in the order they follow
        # the table's steps; each registers its own handlers, timers and commands.
        self.configuration = configuration = Configuration(loop, config, config_file, table, notify,
                                                           remember_good)
        self.feed = TableFeed(loop, table)
        parts.start(loop)  # each part's own timers, after the table's advance
        self.screens = screens = Screens(loop, table, parts.screens, parts.led, config.centre,
                                         lambda: configuration.problem)
        self.selftests = SelfTests(loop, table, parts, configuration, screens)
        self.binding = binding = StoreBinding(table, store)
        self.figurer = figurer = Figurer(store.path)
        figurer.made = lambda: loop.put(StandingsMade())  # the screens show the new figures
        self.frontends = frontends = Frontends(loop)
        self.sounds = Sounds(parts.buzzer, frontends, terminal)
        self.bots = BotHands(loop, table, self.board.presser)
        self.status = Status(table, parts, notify, configuration, store, frontends, collector,
                             self.selftests.state, lambda: binding.set_aside, lambda: screens.address)
        self.keys = Keys(loop, table, parts.keyboard)
        self.views = views = TableViews(table, screens, self.status, self.pane, self.keys,
                                        lambda: figurer.standings, lambda: binding.match_id)
        screens.standings, screens.match_id = views.standings, views.match_id
        Watchdog(loop, notify, time.monotonic_ns())
        loop.before_sleep(lambda: frontends.draw(views))
        loop.on(Signal, stop_on_term(loop), at="stop")
        configuration.applied += [screens.configured, control.configured]
        rounds_seen = [0]

        def figures_follow(_step: Any) -> None:  # a round stored: the figures' keeper looks (a flag)
            if binding.saved_rounds != rounds_seen[0]:
                rounds_seen[0] = binding.saved_rounds
                figurer.wake()

        for follower in (self.sounds.after_step, binding.began, screens.after_step, binding.journal,
                         figures_follow, screens.after_decisions, self.bots.after_step, screens.after_phase,
                         self.status.after_step):
            self.feed.follow(follower)

        self.commands = commands = Commands()
        for component in (TableCommands(table, store, self.status.extra), configuration, self.selftests,
                          self.status, figurer):
            component.register(commands)
        commands.check()
        loop.on(Request, commands.serve)
        control.beside = commands.beside  # the journal's reads: never on the game thread

        if binding.resume(len(config.inputs.seats)):
            screens.bind()

    def _listen(self, config: TableConfig) -> ControlServer:
        where = paths.control_socket()  # where tablectl looks
        try:
            return ControlServer(where, self.loop.events, config.control.admin_group)
        except OSError as exc:
            self.parts.close()
            raise paths.PathError(f"control socket {where}: {exc.strerror or exc}") from None

    # ------------------------------------------------------------ what the parts share

    @property
    def config(self) -> TableConfig:
        return self.configuration.config

    @property
    def config_problem(self) -> str:
        return self.configuration.problem

    @config_problem.setter
    def config_problem(self, problem: str) -> None:
        self.configuration.problem = problem

    @property
    def address(self) -> str:
        """Where the web view is watched ("" when it is not served): the composition root sets it."""
        return self.screens.address

    @address.setter
    def address(self, url: str) -> None:
        self.screens.address = url

    @property
    def realtime(self) -> Realtime | None:
        return self.status.realtime

    @realtime.setter
    def realtime(self, realtime: Realtime | None) -> None:
        """Set by the composition root: the threads' priority (`tablectl status`)."""
        self.status.realtime = realtime

    # The parts by name, for the composition root and the tests (the service goes round `parts`).
    @property
    def inputs(self) -> TableInputs:
        return self.parts.inputs

    @property
    def oleds(self) -> SeatDisplays:
        return self.parts.screens

    @property
    def led(self) -> LedLink:
        return self.parts.led

    @property
    def buzzer(self) -> Buzzer:
        return self.parts.buzzer

    @property
    def buttons(self) -> Presser | None:
        return self.board.presser

    @property
    def events(self) -> Any:
        return self.loop.events

    @property
    def selftest(self) -> Any:
        return self.selftests.test

    @property
    def match_id(self) -> int | None:
        return self.binding.match_id

    @property
    def set_aside(self) -> list[str]:
        return self.binding.set_aside

    def status_extra(self) -> dict[str, Any]:
        return self.status.extra()

    def apply_config(self, read: TableConfig | ConfigError | None) -> dict[str, Any]:
        return self.configuration.apply(read)

    # ------------------------------------------------------------ frontends

    def attach(self, frontend: Frontend) -> None:
        """Another frontend watches the table (any number; from before `serve` or from its thread)."""
        self.frontends.attach(frontend)

    def view(self, makers: Mapping[str, ViewMaker] | None = None) -> TableView:
        """The table as the attached frontends are shown it (or with the views `makers` make)."""
        return self.views.build(views_of(self.frontends.attached) if makers is None else makers)

    # ------------------------------------------------------------ the loop

    def catch_signals(self) -> None:
        """Signals become events: the loop handles them between others, like anything else. One
        held since start-up (`table-host run` holds them first: system/signals.py) comes now."""
        def term(*_: Any) -> None:
            self.loop.put(Signal("term"))

        if under_systemd() or not has_terminal():
            def hup(*_: Any) -> None:
                self.loop.put(Signal("hup"))
        else:  # its terminal closed: a table started by hand goes with it, as any program does
            hup = self._terminal_gone
        signals.release({signal.SIGTERM: term, signal.SIGINT: term, signal.SIGHUP: hup},
                        lambda: self.loop.put(Wake()))

    def _terminal_gone(self, *_: Any) -> None:
        """What is still written (the log's last lines, the UI handing the terminal back, Python's
        final flush) goes to /dev/null: to the hung-up terminal it fails (EIO), and the exit with it."""
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        self.loop.put(Signal("term"))

    def serve(self) -> int:
        """The loop; returns when told to stop, having closed everything."""
        self.figurer.keep()  # before the others are lifted: it is one of them (realtime.py)
        frozen = self.collector.freeze()  # start-up's objects, never walked again (memory.py)
        log.debug("start-up's %d objects kept out of the collector's way", frozen)
        if self.realtime is not None:  # its other threads, all started: beside the game (realtime.py)
            lifted = self.realtime.lift_the_rest()
            log.debug("%d threads at SCHED_RR %d beside the game thread", lifted, BESIDE)
        status = self.status.text()
        self.notify.send("READY=1", f"STATUS={status}")
        log.info("table-host ready: %s", status)
        self.loop.settle(time.monotonic_ns())  # the screens greet the table from the first moment
        self.loop.run()
        self.notify.send("STOPPING=1", "STATUS=stopping")
        self.close()
        return 0

    def close(self) -> None:
        self.collector.stop()
        self.frontends.stop()
        if self.pane is not None:  # the terminal is the terminal's again: the log goes back to it
            self.pane.detach()
        with contextlib.suppress(Exception):
            self.control.close()
        self.parts.close()  # the board last
        with contextlib.suppress(Exception):
            self.figurer.close()
        with contextlib.suppress(Exception):
            self.store.close()
