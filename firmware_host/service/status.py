"""What the table says about itself: the STATUS= line systemd shows (sent when it changes),
what `tablectl status` adds to the table's own status, and `tablectl debug-bundle`'s view."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..system import memory
from ..table.machine import Phase, Table
from .frontend import who
from .registry import Call, Commands
from .table_feed import Step


class Status:
    def __init__(self, table: Table, parts: Any, notify: Any, problem: Callable[[], str],
                 testing: Callable[[], str | None], set_aside: Callable[[], list[str]]) -> None:
        """`parts`: the daemon (board, oleds, inputs, led, buzzer, realtime, store, config);
        `testing()`: the running self-test's state, or None."""
        self.table, self.parts, self.notify = table, parts, notify
        self.problem, self.testing, self.set_aside = problem, testing, set_aside
        self._said = ""

    def register(self, commands: Commands) -> None:
        commands.register("debug", self.debug)
        commands.register("firmware", self.firmware, action="status")
        commands.register("firmware", self.firmware_pause, action="pause")
        commands.register("firmware", self.firmware_resume, action="resume")

    # ------------------------------------------------------------ the LED controller's firmware

    def firmware(self, _call: Call) -> dict[str, Any]:
        """The controller's firmware as its hello said it, and the one this table-host carries."""
        link, centre = self.parts.led, self.parts.config.centre
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
        text = f"{s['phase']}, {s['game']}"
        missing = self.missing()
        if missing:
            text = f"DEGRADED, not answering: {', '.join(missing)}; " + text
        if self.problem():
            text = "CONFIGURATION INVALID (the earlier one runs); " + text
        if self.parts.store.problem:
            text = f"DEGRADED: {self.parts.store.problem}; " + text
        for problem in self.parts.frontends.problems():  # the web view: the table plays on
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
            text += f"; seats joined: {joined}; bots: {len(table.bots)}"
        return text

    def extra(self) -> dict[str, Any]:
        """What `tablectl status` adds to the table's own status."""
        board = self.parts.board.describe()
        extra: dict[str, Any] = {"hardware": {"board": board, **self.parts.board.chip_info(),
                                              "missing": self.missing()},
                                 "priority": self.priority(),
                                 "memory": {"rss_mb": round(memory.rss_mb(), 1),
                                            "threads": memory.threads(),
                                            "allocator": memory.describe(),
                                            "collector": self.parts.collector.figures()}}
        extra["led_controller"] = self.led_controller()
        if self.problem():
            extra["warning"] = self.problem()
        if getattr(self.parts, "address", ""):
            extra["web"] = self.parts.address  # where browsers watch (docs/web.md)
        for name, report in self.parts.frontends.reports().items():  # the web view's limits, met
            extra[name.replace(" ", "_")] = report
        if self.set_aside():
            extra["set_aside"] = self.set_aside()
        if self.parts.store.problem:
            extra["storage"] = self.parts.store.describe()
        return extra

    def missing(self) -> list[str]:
        """The parts that were tried and do not answer: the table plays on without them."""
        parts = self.parts
        out = [f"seat {seat + 1} screen ({s['bus']})" for seat, s in sorted(parts.oleds.status().items())
               if not s["online"] and s.get("failures")]
        out += [f"expander {name}" for name in parts.inputs.expanders_down()]
        if not parts.led.stats.online and parts.led.stats.last_error:
            out.append("LED controller")
        if parts.buzzer.problem:
            out.append("buzzer")
        return out

    def priority(self) -> dict[str, str]:
        """The scheduling in force for the game thread and the edge thread (system/realtime.py)."""
        if self.parts.realtime is None:
            return {"game": "SCHED_OTHER (real-time is asked for headless only: --ui none, as the service)"}
        return self.parts.realtime.status()

    def debug(self, _call: Call) -> dict[str, Any]:
        """What a debug bundle holds from inside the daemon."""
        import platform
        from importlib.metadata import version

        parts, table = self.parts, self.table
        referee = table.referee
        return {
            "status": table.status(),
            "config": parts.config.model_dump(mode="json"),
            "config_file": str(parts.configuration.file),
            "config_problem": self.problem(),
            "notices": table.notices[-200:],
            "displays": {str(k): v for k, v in parts.oleds.status().items()},
            "led_link": vars(parts.led.stats),
            "arbiter": [d.describe(referee.seat_of) for d in referee.arbiter.decisions] if referee else [],
            "contests": [c.describe(referee.seat_of) for c in referee.contests] if referee else [],
            "priority": self.priority(),
            "versions": {"python": platform.python_version(), "table-host": version("table-host"),
                         "gpiozero": version("gpiozero"), "luma.oled": version("luma.oled")},
        }
