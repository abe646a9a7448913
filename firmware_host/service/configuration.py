"""The configuration while the table runs: `tablectl config get`, and reloads (SIGHUP or
`tablectl config reload`) read on a thread of their own (a slow disk or a file swapped for a
FIFO must not stall the game); the loop applies what was read. A broken file changes nothing
and is said loudly; what can change live does, the wiring waits for a restart."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import ConfigError, TableConfig, find_config, one_line, read_config
from ..system.logs import logger
from ..system.realtime import join_the_rest
from ..table.machine import Table
from .events import ConfigRead, Signal
from .loop import Loop
from .registry import Call, Commands

log = logger("config")


class Configuration:
    def __init__(self, loop: Loop, config: TableConfig, config_file: Path | None, table: Table,
                 notify: Any, remember: Callable[[bytes], None]) -> None:
        """`remember(data)`: keep the bytes of a file that loaded (the last good one)."""
        self.loop, self.config, self.file, self.table = loop, config, config_file, table
        self.notify, self.remember = notify, remember
        self.problem = ""  # set while the file on disk is broken and an earlier one runs
        self.applied: list[Callable[[TableConfig, TableConfig], None]] = []  # (old, new), live
        self.settled: list[Callable[[], None]] = []  # after every reload, taken or not (the status)
        loop.on(ConfigRead, self.on_read)
        loop.on(Signal, self.on_signal, at="reload")

    def register(self, commands: Commands) -> None:
        commands.register("config", self.get, action="get")
        commands.register("config", self.reload_command, action="reload")

    def on_signal(self, signal: Signal, _now: int) -> bool:
        if signal.name != "hup":
            return False
        self.start_reload(None)
        return True

    def reload_command(self, call: Call) -> None:
        self.start_reload(call.request)
        return None  # answered when the file has been read

    def start_reload(self, request: Any) -> None:
        self.notify.send("RELOADING=1")

        def read() -> None:
            join_the_rest()  # started by the game thread: beside it, like the daemon's others
            self.loop.put(ConfigRead(self.read(), request))

        threading.Thread(target=read, name="config-reload", daemon=True).start()

    def on_read(self, event: ConfigRead, _now: int) -> None:
        answer = self.apply(event.read)
        if event.request is not None:
            event.request.reply({"ok": True, **answer})

    def read(self) -> TableConfig | ConfigError | None:
        """The file's configuration, what is wrong with it, or None when there is no file. Never
        raises: a reload that died on its thread would leave `config reload` unanswered."""
        if self.file is None:
            return None
        try:
            if not find_config(self.file):  # a dangling link or a closed directory: a ConfigError
                return None
            config, raw = read_config(self.file)
        except ConfigError as exc:
            return exc
        except Exception as exc:  # read_config turns every failure into a ConfigError: a bug here
            log.exception("reading %s", self.file)
            return ConfigError([f"{self.file}: {one_line(exc)}"])
        self.remember(raw)  # off the game thread too: the bytes just checked, not the file again
        return config

    def reload(self) -> dict[str, Any]:
        """Re-read the configuration file now, on the calling thread."""
        self.notify.send("RELOADING=1")
        return self.apply(self.read())

    def apply(self, read: TableConfig | ConfigError | None) -> dict[str, Any]:
        answer: dict[str, Any]
        if read is None:
            answer = {"reloaded": False, "problems": ["no configuration file: the built-in one runs"]}
            log.warning("Configuration not reloaded: no file at %s, the built-in one runs", self.file)
        elif isinstance(read, ConfigError):
            self.problem = f"configuration refused, the running one stays: {read}"
            self.table._note(f"Configuration refused, the running one stays: {read}", logging.WARNING, log)
            answer = {"reloaded": False, "problems": read.problems}
        else:
            new, old = read, self.config
            self.problem = ""
            restart = new.inputs != old.inputs or new.screens != old.screens or new.buzzer != old.buzzer
            self.table.window_ns = round(new.arbiter.window_ms * 1e6)
            self.table.epsilon_ns = round(new.arbiter.epsilon_ms * 1e6)
            self.config = new
            for follower in self.applied:
                follower(old, new)
            note = "Configuration reloaded"
            if restart:
                note += "; wiring, screens and buzzer change at restart"
            self.table._note(note, logging.INFO, log)
            answer = {"reloaded": True, "restart_needed": restart}
        for hook in self.settled:
            hook()
        return answer

    def get(self, call: Call) -> dict[str, Any]:
        value: Any = self.config.model_dump(mode="json")
        for part in str(call.get("key") or "").split("."):
            if not part:
                continue
            if isinstance(value, list) and part.isdigit() and 1 <= int(part) <= len(value):
                value = value[int(part) - 1]  # counted from 1, as config set and every problem count
            elif isinstance(value, dict) and part in value:
                value = value[part]
            else:
                raise ValueError(f"no setting {call.get('key')!r}")
        return {"key": call.get("key") or "", "value": value}
