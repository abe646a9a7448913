"""What each start imports (docs/daemon.md, "Start-up"): the daemon never loads the web server's
library (the web view's own process does: docs/web.md, "Its own process"), and a start that traces no
allocations loads no tracemalloc. CPU figures come from `table-host bench startup`; this holds
the imports that made them, in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

WEB_THREAD_ONLY = ("aiohttp", "tracemalloc")

ATTACH = """
from firmware_host.cli import run
from firmware_host.config import emulated_config
from firmware_host.web import process

class Store:
    problem = None

class Control:
    handoff = None

class Daemon:  # what attach_web reads of the daemon, and what it attaches
    config, store, control, address = emulated_config(), Store(), Control(), ""
    attached = []

    def attach(self, view):
        self.attached.append(view)

process.WebProcess.listen = lambda self: "http://table.local/"  # no socket needed here
daemon = Daemon()
run.attach_web(daemon, terminal=False)
view = daemon.attached[0]
assert daemon.address == "http://table.local/" and isinstance(view, process.WebProcess)
assert daemon.control.handoff == view.ask  # tablectl history: answered by the web view's process
"""


def loaded_after(code: str) -> list[str]:
    """Which of WEB_THREAD_ONLY a fresh interpreter holds after running `code`."""
    probe = (f"import json, sys\n{code}\nloaded = {{m.split('.')[0] for m in sys.modules}}\n"
             f"print(json.dumps(sorted(loaded & set({list(WEB_THREAD_ONLY)!r}))))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout))


def test_the_daemons_modules_load_no_web_server_and_no_tracer() -> None:
    assert loaded_after("import firmware_host.cli.host, firmware_host.cli.run, firmware_host.web.frontend, "
                        "firmware_host.web.process, firmware_host.system.memory") == []


def test_attaching_the_web_view_loads_no_web_server_on_the_callers_thread() -> None:
    """attach_web takes the socket and attaches the web view's process, which is started only once
    the table is ready; its pages (which need aiohttp) are imported in that process alone."""
    assert loaded_after(ATTACH) == []


def test_the_check_sees_the_web_server_when_it_is_loaded() -> None:
    assert loaded_after("import firmware_host.web.replays") == ["aiohttp"]
