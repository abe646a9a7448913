"""What the table says about itself: the STATUS= line systemd shows (sent when it changes),
what `tablectl status` adds to the table's own status, and `tablectl debug-bundle`'s view."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..system import build, memory
from ..table.machine import Phase, Table
from ..table.words import game_name, phase_name
from .frontend import Frontends, who
from .registry import Call, Commands
from .table_feed import Step

if TYPE_CHECKING:
    from ..devices.board import TableParts
    from ..system.realtime import Realtime
    from .configuration import Configuration
    from .journal import Store


class Status:
    def __init__(self, table: Table, parts: TableParts, notify: Any, configuration: Configuration,
                 store: Store, frontends: Frontends, collector: memory.Collector,
                 testing: Callable[[], str | None], set_aside: Callable[[], list[str]],
                 address: Callable[[], str]) -> None:
        """`parts`: the hardware, gone round for what is missing and what the bundle holds;
        `testing()`: the running self-test's state, or None; `address()`: where the web view
        is watched ("" when it is not served). After a reload the status is said again."""
        self.table, self.parts, self.notify = table, parts, notify
        self.configuration, self.store = configuration, store
        self.frontends, self.collector = frontends, collector
        self.testing, self.set_aside, self.address = testing, set_aside, address
        self.realtime: Realtime | None = None  # set by the composition root: the threads' priority
        self._said = ""
        configuration.settled.append(self.ready)

    def problem(self) -> str:
        return self.configuration.problem

    def ready(self) -> None:
        """A reload is done (taken or refused): systemd hears READY=1 and the status again."""
        self.notify.send("READY=1", f"STATUS={self.text()}")

    def register(self, commands: Commands) -> None:
        commands.register("debug", self.debug)
        commands.register("firmware", self.firmware, action="status")
        commands.register("firmware", self.firmware_pause, action="pause")
        commands.register("firmware", self.firmware_resume, action="resume")

    # ------------------------------------------------------------ the LED controller's firmware

    def firmware(self, _call: Call) -> dict[str, Any]:
        """The controller's firmware as its hello said it, and the one this table-host carries."""
        link, centre = self.parts.led, self.configuration.config.centre
        stats = link.stats
        return {"firmware": {"controller": stats.firmware, "expected": stats.firmware_expected,
                             "current": stats.firmware_current, "online": stats.online,
                             "paused": stats.paused, "port_open": link.port_open, "port": link.path,
                             "size": [centre.width, centre.height], "problem": stats.last_error}}

    def firmware_pause(self, call: Call) -> dict[str, Any]:
        """`tablectl firmware flash` is about to take the port: the link lets go (its worker
        closes the port; `port_open` says when) and keeps off it until resumed, or `seconds`."""
        seconds = call.get("seconds", 300)
        if not isinstance(seconds, int | float) or not 0 < seconds <= 900:
            raise ValueError("firmware pause: seconds must be above 0 and at most 900")
        self.parts.led.pause(float(seconds), wait=False)
        return self.firmware(call)

    def firmware_resume(self, call: Call) -> dict[str, Any]:
        self.parts.led.resume()
        return self.firmware(call)

    def led_controller(self) -> dict[str, Any]:
        """`tablectl status`'s line on the LED controller: what answers, and its firmware."""
        stats = self.parts.led.stats
        out: dict[str, Any] = {"online": stats.online, "name": stats.controller,
                               "firmware": stats.firmware, "expected": stats.firmware_expected,
                               "current": stats.firmware_current}
        if stats.paused:
            out["paused"] = True
        if stats.last_error:
            out["problem"] = stats.last_error
        return out

    def after_step(self, _step: Step) -> None:
        text = self.text()
        if text != self._said:
            self._said = text
            self.notify.send(f"STATUS={text}")

    def text(self) -> str:
        s = self.table.status()
        text = f"{phase_name(s['phase'])}, {game_name(s['game'])}"
        missing = self.missing()
        if missing:
            text = f"DEGRADED, not answering: {', '.join(missing)}; " + text
        if self.problem():
            text = "CONFIGURATION INVALID (the earlier one runs); " + text
        if self.store.problem:
            text = f"DEGRADED: {self.store.problem}; " + text
        for problem in self.frontends.problems():  # the web view: the table plays on
            text = f"DEGRADED: {problem}; " + text
        testing = self.testing()
        if testing is not None:
            text = f"SELF-TEST {testing}; " + text
        table, match = self.table, self.table.match
        if match is not None and table.phase not in (Phase.LOBBY, Phase.ATTRACT):
            o = match.options
            text += f", round {s['round']}" + (f"/{o['rounds']}" if o.get("rounds") else "")
            text += f", first to {o['target']}" if "target" in o else ""
            seats = table.seat_of_player
            text += " · " + " · ".join(f"seat {seats[p] + 1} {who(table, p, seats[p]).split()[0]} {t:+d}"
                                       for p, t in enumerate(match.totals) if p < len(seats))
        elif table.phase is Phase.LOBBY:
            joined = ", ".join(str(seat + 1) for seat in table.joined) or "none"
            text += f"; players: {table.players} (seats joined: {joined}; bots: {len(table.bots)})"
        return text

    def extra(self) -> dict[str, Any]:
        """What `tablectl status` adds to the table's own status."""
        board = self.parts.board.describe()
        stats = self.parts.led.stats
        extra: dict[str, Any] = {"version": {**build.describe(), "led_firmware": stats.firmware},
                                 "hardware": {"board": board, **self.parts.board.chip_info(),
                                              "missing": self.missing()},
                                 "priority": self.priority(),
                                 "memory": {"rss_mb": round(memory.rss_mb(), 1),
                                            "threads": memory.threads(),
                                            "allocator": memory.describe(),
                                            "collector": self.collector.figures()}}
        extra["led_controller"] = self.led_controller()
        if self.problem():
            extra["warning"] = self.problem()
        if self.address():
            extra["web"] = self.address()  # where browsers watch (docs/web.md)
        for name, report in self.frontends.reports().items():  # the web view's limits, met
            extra[name.replace(" ", "_")] = report
        if self.set_aside():
            extra["set_aside"] = self.set_aside()
        if self.store.problem:
            extra["storage"] = self.store.describe()
        return extra

    def missing(self) -> list[str]:
        """The parts that were tried and do not answer: the table plays on without them."""
        return self.parts.missing()

    def priority(self) -> dict[str, str]:
        """The scheduling in force for the game thread and the edge thread (system/realtime.py)."""
        if self.realtime is None:
            return {"game": "SCHED_OTHER (real-time is asked for headless only: --ui none, as the service)"}
        return self.realtime.status()

    def debug(self, _call: Call) -> dict[str, Any]:
        """What a debug bundle holds from inside the daemon."""
        import platform
        from importlib.metadata import version

        table, configuration = self.table, self.configuration
        referee = table.referee
        return {
            "status": table.status(),
            "config": configuration.config.model_dump(mode="json"),
            "config_file": str(configuration.file),
            "config_problem": self.problem(),
            "notices": table.notices[-200:],
            **self.parts.report(),  # each part's own: the screens' and the LED link's
            "arbiter": [d.describe(referee.seat_of) for d in referee.arbiter.decisions] if referee else [],
            "contests": [c.describe(referee.seat_of) for c in referee.contests] if referee else [],
            "priority": self.priority(),
            "versions": {"python": platform.python_version(), "table-host": version("table-host"),
                         "gpiozero": version("gpiozero"), "luma.oled": version("luma.oled")},
        }
