"""`table-host run`: the table as a systemd service (Type=notify), or emulated on a laptop.

One thread owns the game. Everything comes to it through one queue: input
events (from gpiozero's callback thread), control requests (from the socket's
threads), signals. Between events it sleeps until the next deadline — the
arbiter's window, a countdown, a stuck button, a bot's move, the watchdog —
and never polls. After each decision it journals the accepted actions and
queues the affected screens; the disk and the buses are other threads' work.
Everything it says goes through `logging` (firmware_host/system/logs.py), set up by
`table-host run`.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import queue
import random
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

from ..config.schema import ConfigError, TableConfig, as_emulated, emulated_config, load_config
from ..control.server import ControlServer, Request, serve_request
from ..devices.board import EX_UNAVAILABLE, Board, HardwareUnavailable, open_board
from ..devices.buzzer import BuzzerPlayer, Cue
from ..devices.displays.ledlink import LedLink
from ..devices.displays.oled import SeatDisplays, specs_for
from ..devices.emulated.keyboard import KeyboardSeats
from ..devices.inputs.pins import InputEvent, TableInputs
from ..game.table import Phase, Table
from ..rules.common import RulesError
from ..rules.sight import sight_of
from ..system import memory, paths
from ..system.logs import PaneHandler, logger
from ..system.realtime import Realtime
from ..ui.plain import TableView, TerminalUI
from ..views.phases import countdown_left, phase_centre, phase_seat
from ..views.readable import centre_words, key_help, seat_words
from .screens import TableScreens
from .selftest import DEFAULT_TIMEOUT_S, SelfTest, matrix_pattern
from .store import Store, StoreError

BOT_TAP_NS = 80_000_000  # bots press like a brisk person: a button every 80 ms

log = logger("daemon")
config_log = logger("config")
sounds_log = logger("sounds")


def config_path(explicit: str | None) -> Path:
    return Path(explicit).absolute() if explicit else paths.config_file()


class Notifier:
    """sd_notify: a datagram to $NOTIFY_SOCKET (nothing happens outside systemd)."""

    def __init__(self) -> None:
        path = os.environ.get("NOTIFY_SOCKET", "")
        self._address = ("\0" + path[1:]) if path.startswith("@") else path
        usec = os.environ.get("WATCHDOG_USEC", "")
        self.watchdog_ns = int(usec) * 1000 // 2 if usec.isdigit() else None

    def send(self, *fields: str) -> None:
        """Never blocks: a supervisor slow to read must not stop the game."""
        if not self._address:
            return
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.setblocking(False)
            s.sendto("\n".join(fields).encode(), self._address)


class Daemon:
    def __init__(self, config: TableConfig, state_db: Path | None = None,
                 ui: str = "none", config_file: Path | None = None, board: Board | None = None) -> None:
        """`board`: the hardware to drive; opened from `config.hardware` when not given (and then
        `HardwareUnavailable` says what could not be opened)."""
        self.config = config
        self.config_file = config_file
        self.config_problem = ""  # set while the file on disk is broken and the last good one runs
        self.events: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.notify = Notifier()
        self.table = Table(len(config.inputs.seats), window_ns=round(config.arbiter.window_ms * 1e6),
                           epsilon_ns=round(config.arbiter.epsilon_ms * 1e6), seed=random.randrange(1 << 30))
        self.ui = ui
        self.tui: TerminalUI | None = None
        self.on_view: Any = None  # the Textual app's hook, set when it mounts
        self._shown: tuple[Any, ...] = ()
        self._phase_key: tuple[Any, ...] = ()
        self.phase_seats: dict[int, Any] = {}  # what the seats show outside play
        self.phase_centre: Any = None
        self.selftest: SelfTest | None = None  # the running or last self-test
        self._selftest_frames = 0
        if ui == "plain":
            self.tui = TerminalUI(self.events.put)
        # Before any worker starts talking: a terminal UI shows the log's INFO lines in its pane.
        self.pane = PaneHandler().attach() if ui in ("plain", "textual") else None
        self.realtime: Realtime | None = None  # set by run(): the threads' real-time priority
        self.store = Store(state_db)
        self.board = board if board is not None else open_board(config)
        self.buttons = self.board.presser
        buses = {e.bus: self.board.i2c(e.bus) for e in config.inputs.expanders}
        self.inputs = TableInputs(config.inputs, self.board.factory, buses, self.events.put)
        self.inputs.gate = self.table.gate
        self.oleds = SeatDisplays(specs_for(list(config.screens)), self.board.screen_opener(config))
        centre = config.centre
        self.led = LedLink(self.board.led_port(config), centre.width, centre.height)
        self.buzzer = BuzzerPlayer(config.buzzer, self.board.factory, on_error=sounds_log.warning)
        self.on_sound: Any = None  # the Textual app's bell, set when it mounts
        self.screens: TableScreens | None = None
        where = paths.control_socket()  # where tablectl looks
        try:
            self.control = ControlServer(where, self.events, config.control.admin_group)
        except OSError as exc:
            self.board.close()
            raise paths.PathError(f"control socket {where}: {exc.strerror or exc}") from None
        self.match_id: int | None = None
        self._bound: Any = None  # the match the store and screens follow
        self._last_status = ""
        self._saved_rounds = 0
        self._stopping = False
        self._bot_due: dict[int, int] = {}
        self._rng = random.Random()
        self.keyboard: KeyboardSeats | None = None
        if ui in ("plain", "textual") and self.buttons is not None:
            self.keyboard = KeyboardSeats(self.buttons, (0,))
        self.set_aside: list[str] = []  # matches that could not come back at this start
        self._resume()

    def _resume(self) -> None:
        """The match a crash interrupted, if it can come back on the seats wired now; else it is
        set aside (kept in history, marked, said by `tablectl status`) and the table starts clean."""
        resumed = self.store.resume(len(self.config.inputs.seats))
        if resumed is not None:
            match_id, match = resumed
            try:
                saved = len(match.results)  # a round the resume's wakes end is stored by the loop
                self.table.resume(match, time.monotonic_ns(), *self.store.seating(match_id))
                self.match_id, self._saved_rounds, self._bound = match_id, saved, match
                self._bind_screens()
            except Exception as exc:
                reason = f"cannot resume: {type(exc).__name__}: {exc}"
                self.store.set_aside(match_id, reason)
                self.store.set_aside_notes.append(f"match {match_id} set aside: {reason}")
                self.table.match = self.table.referee = None
                self.table.joined.clear()
                self.table.bots.clear()
                self.table.phase = Phase.ATTRACT
                self.match_id, self._saved_rounds, self._bound, self.screens = None, 0, None, None
        self.set_aside = list(self.store.set_aside_notes)
        for note in self.set_aside:
            self.table._note(note, logging.WARNING, log)

    def status_extra(self) -> dict[str, Any]:
        """What `tablectl status` adds to the table's own status."""
        extra: dict[str, Any] = {"hardware": {"board": self.board.describe(), "missing": self.missing()},
                                 "priority": self.priority(),
                                 "memory": {"rss_mb": round(memory.rss_mb(), 1),
                                            "threads": memory.threads(),
                                            "allocator": memory.describe()}}
        if self.config_problem:
            extra["warning"] = self.config_problem
        if self.set_aside:
            extra["set_aside"] = self.set_aside
        if self.store.problem:
            extra["storage"] = self.store.describe()
        return extra

    # ------------------------------------------------------------ the loop

    def run(self) -> int:
        self.catch_signals()
        if self.pane is not None:
            self.pane.hold_terminal()  # until close(): the log's lines are the pane's
        if self.ui == "textual":
            from ..ui.textual_app import run_app

            return run_app(self)
        return self.serve()

    def catch_signals(self) -> None:
        """Signals become queue items: the loop handles them between events, like anything else."""
        signal.signal(signal.SIGTERM, lambda *_: self.events.put(("signal", "term")))
        signal.signal(signal.SIGINT, lambda *_: self.events.put(("signal", "term")))
        if under_systemd() or not has_terminal():
            signal.signal(signal.SIGHUP, lambda *_: self.events.put(("signal", "hup")))
        else:  # its terminal closed: a table started by hand goes with it, as any program does
            signal.signal(signal.SIGHUP, self._terminal_gone)

    def _terminal_gone(self, *_: Any) -> None:
        """What is still written (the log's last lines, the UI handing the terminal back, Python's
        final flush) goes to /dev/null: to the hung-up terminal it fails (EIO), and the exit with it."""
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        self.events.put(("signal", "term"))

    def serve(self) -> int:
        """The loop; returns when told to stop, having closed everything."""
        self.notify.send("READY=1", f"STATUS={self._status()}")
        log.info("table-host ready: %s", self._status())
        next_ping = time.monotonic_ns()
        self._show_phase(next_ping)  # the screens greet the table from the first moment
        while not self._stopping:
            if self.tui is not None or self.on_view is not None:
                self._draw()
            now = time.monotonic_ns()
            if self.notify.watchdog_ns and now >= next_ping:
                self.notify.send("WATCHDOG=1")
                next_ping = now + self.notify.watchdog_ns
            due = [d for d in (self.table.deadline(), self.inputs.next_deadline(),
                               next_ping if self.notify.watchdog_ns else None, self._next_count(now),
                               min(self._bot_due.values(), default=None),
                               self.selftest.deadline() if self.selftest else None) if d is not None]
            timeout = max(0.0, (min(due) - now) / 1e9) if due else None
            try:
                item = self.events.get(timeout=timeout)
            except queue.Empty:
                item = None
            now = time.monotonic_ns()
            if item is not None:
                self._dispatch(item, now)
            self.inputs.tick(now)
            if self.selftest is not None:
                self.selftest.tick(now)
            self._advance(now)
        self.notify.send("STOPPING=1", "STATUS=stopping")
        self.close()
        return 0

    def _dispatch(self, item: Any, now: int) -> None:
        if isinstance(item, InputEvent) and self.selftest is not None and self.selftest.active:
            self.selftest.on_input(item, now)  # the walk takes every press; the table waits
        elif isinstance(item, InputEvent):
            self.table.on_input(item, now)
            if self.screens is not None and item.seat >= 0 and self.table.phase is Phase.PLAYING:
                player = self.table.player_of(item.seat)
                if player is not None:
                    self.screens.refresh([player], centre=False)  # the cursor moved
        elif isinstance(item, Request) and item.body.get("cmd") == "config" \
                and item.body.get("action") == "reload":
            self.start_reload(item)
        elif isinstance(item, tuple) and item[0] == "config-read":
            answer = self.apply_config(item[2])
            if item[1] is not None:
                serve_request(item[1], lambda _body: answer)
        elif isinstance(item, Request):
            from .commands import handle

            def answer(body: dict[str, Any]) -> dict[str, Any]:
                if body.get("cmd") == "config":
                    return self.config_command(body)
                if body.get("cmd") == "debug":
                    return self.debug()
                if body.get("cmd") == "selftest":
                    return self.selftest_command(body, now)
                if body.get("cmd") in ("start", "new", "next") and self.selftest and self.selftest.active:
                    raise ValueError("the self-test is running: wait for its report or "
                                     "tablectl selftest --abort")
                result = handle(self.table, self.store, now, body)
                if body.get("cmd") == "status":
                    result.update(self.status_extra())
                return result

            serve_request(item, answer)
        elif item == ("selftest", "probed") and self.selftest is not None:
            self.selftest.on_probed(now)
        elif isinstance(item, tuple) and item[0] == "key":
            self._key(item[1], now)
        elif item == ("ui", "abort"):  # the terminal's confirmed way back to the lobby
            try:
                self.table.abort(now)
            except RulesError as exc:
                self.table._note(str(exc))
        elif item == ("signal", "term"):
            self._stopping = True
        elif item == ("signal", "hup"):
            self.start_reload(None)

    def _advance(self, now: int) -> None:
        outcomes = self.table.tick(now)
        for cue in self.table.take_cues():  # the one place the table's sounds leave it
            self._sound(cue)
        match = self.table.match
        if match is None and self._bound is not None:  # aborted: it must not come back at a restart
            if self.match_id is not None:
                self.store.abort(self.match_id)
            self.match_id, self._bound, self._saved_rounds = None, None, 0
        if match is not None and match is not self._bound:  # a new match began
            self.match_id = self.store.begin_match(
                match, self.table.seat_of_player,
                {p: str(bot.level) for p, bot in self.table.bots.items()})
            self._saved_rounds = 0
            self._bind_screens()
        acting = []
        for outcome in outcomes:
            if outcome.action is not None and outcome.refusal is None and match is not None:
                self.store.record(self.match_id or 0, match.round_no, outcome.action)
                acting.append(outcome.press.seat)
        woken = self.table.take_wakes()
        for wake in woken:  # time ended a hold or a round: journaled, so a replay does the same
            if match is not None:
                self.store.record(self.match_id or 0, match.round_no, wake)
        if woken and self.screens is not None:
            self.screens.refresh(range(len(self.screens.seats)))
        if match is not None and len(match.results) > self._saved_rounds:
            self.store.round_over(self.match_id or 0, match)
            self._saved_rounds = len(match.results)
        if outcomes and self.screens is not None:
            self.screens.after_decisions(acting or [o.press.seat for o in outcomes])
        self._drive_bots(now)
        self._show_phase(now)
        status = self._status()
        if status != self._last_status:
            self._last_status = status
            self.notify.send(f"STATUS={status}")

    def _sound(self, cue: Cue) -> None:
        """The buzzer plays it (its own thread); a terminal UI also shows it in its log pane (an
        INFO line, standing for the sound) and rings its bell; headless it is a DEBUG line."""
        self.buzzer.play(cue)
        terminal = self.ui in ("plain", "textual")
        sounds_log.log(logging.INFO if terminal else logging.DEBUG, "%s", cue.describe())
        if self.tui is not None:
            self.tui.bell()
        if terminal and self.on_sound is not None:
            self.on_sound(cue)

    def _bind_screens(self) -> None:
        referee = self.table.referee
        if referee is None:
            return
        self._bound = self.table.match
        self.screens = TableScreens(referee.seats, _PlayerScreens(self.oleds, self.table), self.led,
                                    (self.config.centre.width, self.config.centre.height),
                                    self.config.centre.brightness)
        self.screens.refresh(range(len(referee.seats)))

    def _show_phase(self, now: int) -> None:
        """Outside play the seats and the matrix show the table's phase (views/phases.py);
        back in play, the game screens are drawn afresh over them. The self-test has the
        screens while it runs; after it, the phase is drawn afresh."""
        if self.selftest is not None and self.selftest.active:
            self._phase_key = ("selftest", self._selftest_frames)  # the terminal redraws on a change
            return
        table = self.table
        match = table.match
        count = countdown_left(table, now) if table.phase is Phase.COUNTDOWN else 0
        key = (table.phase, table.phase_since, tuple(table.joined), table.menu, table.game, len(table.bots),
               count, bool(self.config_problem), id(match), len(match.results) if match else 0)
        if key == self._phase_key:
            return
        self._phase_key = key
        if table.phase is Phase.PLAYING:
            if self.screens is not None:
                self.screens.forget_centre()
                self.screens.refresh(range(len(self.screens.seats)))
            return
        for seat in range(table.seats):
            frame = phase_seat(table, seat, now, bool(self.config_problem))
            if frame is not None:
                self.phase_seats[seat] = frame
                self.oleds.show(seat, frame)
        size = (self.config.centre.width, self.config.centre.height)
        self.phase_centre = phase_centre(table, now, size, self.config.centre.brightness)
        if self.phase_centre is not None:
            self.led.show(self.phase_centre)

    def _next_count(self, now: int) -> int | None:
        """During the countdown: when the number on the screens next changes."""
        table = self.table
        if table.phase is not Phase.COUNTDOWN:
            return None
        left = countdown_left(table, now)
        return table.phase_since + table.timing.countdown_ns - max(0, left - 1) * 1_000_000_000

    # ------------------------------------------------------------ configuration

    def start_reload(self, request: Request | None) -> None:
        """Read the configuration file on a thread of its own (a slow disk or a file swapped for
        a FIFO must not stall the game); the loop applies what it read (`apply_config`)."""
        self.notify.send("RELOADING=1")

        def read() -> None:
            self.events.put(("config-read", request, self.read_config()))

        threading.Thread(target=read, name="config-reload", daemon=True).start()

    def read_config(self) -> TableConfig | ConfigError | None:
        """The file's configuration, what is wrong with it, or None when there is no file."""
        if self.config_file is None or not self.config_file.exists():
            return None
        try:
            config = load_config(self.config_file)
        except ConfigError as exc:
            return exc
        remember_good(self.config_file)  # off the game thread too: the copy reads the file again
        return config

    def reload(self) -> dict[str, Any]:
        """Re-read the configuration file now, on the calling thread."""
        self.notify.send("RELOADING=1")
        return self.apply_config(self.read_config())

    def apply_config(self, read: TableConfig | ConfigError | None) -> dict[str, Any]:
        """A broken file changes nothing and is reported loudly; what can change live does,
        the wiring waits for a restart."""
        answer: dict[str, Any]
        if read is None:
            answer = {"reloaded": False, "problems": ["no configuration file: the built-in one runs"]}
            config_log.warning("Configuration not reloaded: no file at %s, the built-in one runs",
                               self.config_file)
        elif isinstance(read, ConfigError):
            self.config_problem = f"configuration invalid, running the last good one: {read}"
            self.table._note(f"Configuration refused, the last good one runs: {read}", logging.WARNING,
                             config_log)
            answer = {"reloaded": False, "problems": read.problems}
        else:
            new = read
            self.config_problem = ""
            restart = (new.inputs != self.config.inputs or new.screens != self.config.screens
                       or new.buzzer != self.config.buzzer)
            self.table.window_ns = round(new.arbiter.window_ms * 1e6)
            self.table.epsilon_ns = round(new.arbiter.epsilon_ms * 1e6)
            if self.screens is not None:
                self.screens.brightness = new.centre.brightness
            if new.control != self.config.control:
                self.control.set_admin_group(new.control.admin_group)
            self.config = new
            note = "Configuration reloaded"
            if restart:
                note += "; wiring, screens and buzzer change at restart"
            self.table._note(note, logging.INFO, config_log)
            answer = {"reloaded": True, "restart_needed": restart}
        self.notify.send("READY=1", f"STATUS={self._status()}")
        return answer

    def debug(self) -> dict[str, Any]:
        """What a debug bundle holds from inside the daemon."""
        import platform
        from importlib.metadata import version

        return {
            "status": self.table.status(),
            "config": self.config.model_dump(mode="json"),
            "config_file": str(self.config_file),
            "config_problem": self.config_problem,
            "notices": self.table.notices[-200:],
            "displays": {str(k): v for k, v in self.oleds.status().items()},
            "led_link": vars(self.led.stats),
            "arbiter": [d.describe(self.table.referee.seat_of) for d in self.table.referee.arbiter.decisions]
            if self.table.referee else [],
            "contests": [c.describe(self.table.referee.seat_of) for c in self.table.referee.contests]
            if self.table.referee else [],
            "history": self.store.history(10),
            "priority": self.priority(),
            "versions": {"python": platform.python_version(), "table-host": version("table-host"),
                         "gpiozero": version("gpiozero"), "luma.oled": version("luma.oled")},
        }

    def config_command(self, body: dict[str, Any]) -> dict[str, Any]:
        action = body.get("action")
        if action == "reload":
            return self.reload()
        if action == "check":  # not here: it would read any file with the daemon's rights
            raise ValueError("config check runs in tablectl, with your own rights: update tablectl")
        if action == "get":
            value: Any = self.config.model_dump(mode="json")
            for part in str(body.get("key") or "").split("."):
                if not part:
                    continue
                if isinstance(value, list) and part.isdigit() and int(part) < len(value):
                    value = value[int(part)]
                elif isinstance(value, dict) and part in value:
                    value = value[part]
                else:
                    raise ValueError(f"no setting {body.get('key')!r}")
            return {"key": body.get("key") or "", "value": value}
        raise ValueError("config takes get [KEY] or reload")

    # ------------------------------------------------------------ the self-test

    def selftest_command(self, body: dict[str, Any], now: int) -> dict[str, Any]:
        """start (between matches only), abort, or status: the running or last report."""
        action = body.get("action", "status")
        test = self.selftest
        if action == "start":
            if test is not None and test.active:
                raise ValueError("a self-test is running already: tablectl selftest --abort stops it")
            if self.table.phase in (Phase.COUNTDOWN, Phase.PLAYING, Phase.ROUND_RESULT):
                raise ValueError(f"a match is running ({self.table.phase}): the self-test runs between "
                                 "matches; let it end or tablectl abort")
            seats = body.get("seats")
            if seats is not None and not (isinstance(seats, list) and all(isinstance(s, int) for s in seats)):
                raise ValueError("seats must be a list of seat numbers, e.g. [1, 3]")
            timeout = body.get("timeout_s", DEFAULT_TIMEOUT_S)
            if not isinstance(timeout, int | float):
                raise ValueError("timeout_s must be a number of seconds")
            test = SelfTest(self.config, self.board, self.oleds, self.led, self.events.put,
                            self._selftest_show, None if seats is None else [s - 1 for s in seats],
                            float(timeout), bool(body.get("probe_only")), note=logger("selftest").info,
                            buzzer=self.buzzer)
            self.selftest = test
            centre = self.config.centre
            self.phase_centre = matrix_pattern((centre.width, centre.height), centre.brightness)
            test.start()
        elif action == "abort":
            if test is None or not test.active:
                raise ValueError("no self-test is running")
            test.abort("tablectl selftest --abort", now)
        elif action != "status":
            raise ValueError("selftest takes start, abort or status")
        if test is None:
            raise ValueError("no self-test since the daemon started: tablectl selftest runs one")
        return {"selftest": test.report()}

    def _selftest_show(self, seat: int, frame: Any) -> None:
        self._selftest_frames += 1
        self.phase_seats[seat] = frame
        self.oleds.show(seat, frame)

    # ------------------------------------------------------------ the terminal

    def _key(self, name: str, now: int) -> None:
        if name == "q":
            self._stopping = True
        elif name in ("b", "B"):
            count = len(self.table.bots) + (1 if name == "b" else -1)
            try:
                self.table.set_bots(max(0, count))
            except RulesError as exc:
                self.table._note(str(exc))
        elif self.keyboard is not None:
            self.keyboard.key(name, now)

    def _draw(self) -> None:
        """Hand the terminal a new view when anything on it changed."""
        table = self.table
        playing = self.screens is not None and table.phase is Phase.PLAYING
        seen = (self._status(), self._phase_key, self.pane.count if self.pane else len(table.notices),
                self.config_problem,
                (id(self.screens.last_centre), tuple(map(id, self.screens.last_seats.values())))
                if playing and self.screens is not None else None)
        if seen == self._shown:
            return
        self._shown = seen
        view = self.view()
        if self.tui is not None:
            self.tui.draw(view)
        if self.on_view is not None:
            self.on_view(view)

    def view(self) -> TableView:
        """The table as a terminal shows it: the frames the devices were sent, or the lobby."""
        table = self.table
        if self.screens is not None and table.phase is Phase.PLAYING:
            centre = self.screens.last_centre
            seats = {table.seat_of_player[p]: frame for p, frame in self.screens.last_seats.items()}
        else:
            centre, seats = self.phase_centre, dict(self.phase_seats)
        hands = {seat: seat_words(table, seat) for seat in table.seat_of_player}
        notices, logged = self.pane.snapshot() if self.pane is not None else (table.notices, 0)
        return TableView(self._status(), centre, seats, self._scores(), list(notices), self.config_problem,
                         centre_words(table), hands, key_help(table), logged or len(notices))

    def _scores(self) -> list[str]:
        """One line a player: seat, who, total; in the lobby no totals (the last match's are over)."""
        table, match = self.table, self.table.match
        current = match is not None and table.phase not in (Phase.LOBBY, Phase.ATTRACT)
        lines = []
        for player, seat in enumerate(table.seat_of_player):
            who = self._who(player, seat)
            total = f"{match.totals[player]:>+4d}" if current and match is not None \
                and player < len(match.totals) else ""
            lines.append(f"seat {seat + 1:>2} {who:<12} {total}".rstrip())
        return lines

    def _who(self, player: int, seat: int) -> str:
        bot = self.table.bots.get(player)
        return f"bot ({bot.level})" if bot is not None else ("you" if seat == 0 else "player")

    # ------------------------------------------------------------ bots press pins

    def _drive_bots(self, now: int) -> None:
        if self.table.phase is not Phase.PLAYING or self.buttons is None or self.table.referee is None:
            self._bot_due.clear()
            return
        match = self.table.match
        assert match is not None
        for player, bot in self.table.bots.items():
            due = self._bot_due.get(player)
            if due is None:
                self._bot_due[player] = now + bot.delay_ns(None)  # type: ignore[arg-type]
                continue
            if now < due:
                continue
            controller = self.table.referee.seats[player]
            action = bot.choose(sight_of(match.round, player), now)
            presses = controller.presses_for(action) if action is not None else None
            seat = self.table.seat_of_player[player]
            at = now
            for control in presses or []:
                self.buttons.tap(seat, control, at, 35_000_000)
                at += BOT_TAP_NS
            self._bot_due[player] = at + max(bot.delay_ns(action), BOT_TAP_NS) if action else now + 10**9

    # ------------------------------------------------------------ the rest

    def missing(self) -> list[str]:
        """The parts that were tried and do not answer: the table plays on without them."""
        out = [f"seat {seat + 1} screen ({s['bus']})" for seat, s in sorted(self.oleds.status().items())
               if not s["online"] and s.get("failures")]
        out += [f"expander {name}" for name in self.inputs.expanders_down()]
        if not self.led.stats.online and self.led.stats.last_error:
            out.append("LED controller")
        if self.buzzer.problem:
            out.append("buzzer")
        return out

    def priority(self) -> dict[str, str]:
        """The scheduling in force for the game thread and the edge thread (system/realtime.py)."""
        if self.realtime is None:
            return {"game": "SCHED_OTHER (real-time is asked for headless only: --ui none, as the service)"}
        return self.realtime.status()

    def _status(self) -> str:
        s = self.table.status()
        text = f"{s['phase']}, {s['game']}"
        missing = self.missing()
        if missing:
            text = f"DEGRADED, not answering: {', '.join(missing)}; " + text
        if self.config_problem:
            text = "CONFIGURATION INVALID (last good one runs); " + text
        if self.store.problem:
            text = f"DEGRADED: {self.store.problem}; " + text
        if self.selftest is not None and self.selftest.active:
            text = f"SELF-TEST {self.selftest.state}; " + text
        table, match = self.table, self.table.match
        if match is not None and table.phase not in (Phase.LOBBY, Phase.ATTRACT):
            o = match.options
            text += f", round {s['round']}/{o['rounds']}"
            text += f", first to {o['target']}" if "target" in o else ""
            seats = table.seat_of_player
            text += " · " + " · ".join(f"seat {seats[p] + 1} {self._who(p, seats[p]).split()[0]} {t:+d}"
                                       for p, t in enumerate(match.totals) if p < len(seats))
        elif table.phase is Phase.LOBBY:
            joined = ", ".join(str(seat + 1) for seat in table.joined) or "none"
            text += f"; seats joined: {joined}; bots: {len(table.bots)}"
        return text

    def close(self) -> None:
        if self.tui is not None:
            self.tui.close()
        if self.pane is not None:  # the terminal is the terminal's again: the log goes back to it
            self.pane.detach()
        for part in (self.control.close, self.inputs.close, self.led.close, self.oleds.close,
                     self.buzzer.close, self.store.close):
            with contextlib.suppress(Exception):
                part()
        with contextlib.suppress(Exception):
            self.board.close()


class _PlayerScreens:
    """TableScreens speaks of players; the displays are per physical seat."""

    def __init__(self, oleds: SeatDisplays, table: Table) -> None:
        self.oleds, self.table = oleds, table

    def show(self, player: int, frame: Any) -> bool:
        return self.oleds.show(self.table.seat_of_player[player], frame)


def last_good_path() -> Path:
    return paths.directory("STATE_DIRECTORY") / "last-good.toml"


def remember_good(path: Path) -> None:
    """Keep a copy of a configuration that loaded, to start on if the file breaks later."""
    target = last_good_path()
    temporary = target.with_name(f".{target.name}.{os.getpid()}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        data = path.read_bytes()
        with open(temporary, "wb") as f:  # written whole beside it, then put in its place:
            f.write(data)                 # a kill or a power cut leaves the old copy or the new
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, target)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()


def has_terminal() -> bool:
    """A controlling terminal, whose hangup should stop us (detached by setsid, there is none)."""
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
    except OSError:
        return False
    return True


def under_systemd() -> bool:
    """Started by systemd as a service: it sets INVOCATION_ID for every unit it runs."""
    return bool(os.environ.get("INVOCATION_ID") or os.environ.get("NOTIFY_SOCKET"))


def choose_config(path: Path, emulate: bool) -> tuple[TableConfig, str]:
    """The configuration to run and any problem to keep saying. Which hardware it drives is
    the file's `[hardware]` (or `--emulate`), never a guess. No file: the 4-seat build,
    emulated, said loudly; as a service that is an error, since a service must drive hardware."""
    problem = ""
    if path.exists():
        try:
            config = load_config(path)
            remember_good(path)
        except ConfigError as exc:
            if not last_good_path().exists():
                raise
            config = load_config(last_good_path())
            problem = f"configuration invalid, running the last good one: {exc}"
            config_log.error("%s", problem)
    elif under_systemd() and not emulate:
        raise ConfigError([f"{path}: no configuration file; the service drives the hardware that "
                           "file names (systemd/install.sh puts the 4-seat build there)"])
    else:
        config = emulated_config(4)
        config_log.warning("no configuration file at %s: running the 4-seat build "
                           "(hardware/wiring/4-seat.toml), emulated", path)
    if emulate and config.hardware.backend != "emulated":
        config = as_emulated(config)
        config_log.warning("--emulate: every part emulated, whatever the configuration's [hardware] says")
    return config, problem


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
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def run(config_file: str | None, emulate: bool, ui: str = "none") -> int:
    """Load the configuration, open the hardware it names, run. A broken file with a last good
    copy kept: run on the copy and say so loudly. GPIO that cannot be opened: say exactly what
    failed (journal and STATUS=) and exit 69, which systemd shows as status=69/UNAVAILABLE."""
    path = config_path(config_file)
    try:
        lock = hold_table(paths.state_database())  # noqa: F841 - held until the process ends
        if not os.environ.get("TABLE_HOST_SOCKET"):
            paths.runtime_directory()  # made, and the /tmp fallback checked, before any hardware
        config, problem = choose_config(path, emulate)
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
            log.info("priority: %s", ", ".join(f"{role} thread {text}"
                                               for role, text in realtime.status().items()))
        daemon = Daemon(config, ui=ui, config_file=path, board=board)
        daemon.config_problem = problem
        daemon.realtime = realtime
    except HardwareUnavailable as exc:
        message = f"hardware unavailable: {exc}"
        log.error("%s", message)
        Notifier().send(f"STATUS={message}", f"ERRNO={errno.ENODEV}")
        return EX_UNAVAILABLE
    except (ConfigError, StoreError, RulesError, paths.PathError) as exc:
        log.error("%s", exc)
        return 2
    log.info("hardware: %s", board.describe())
    log.info("memory: allocator %s", memory.describe())
    return daemon.run()
