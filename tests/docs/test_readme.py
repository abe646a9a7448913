"""Every command README.md shows works as written. The commands are read from README.md when the
tests are collected, so an edit there is tested as it stands:

- a command line in a code block runs (emulated, in a private home with no table variables set):
  a table it starts must get ready and stop cleanly on SIGTERM; `tablectl` talks to a table the
  test starts the same way; anything else exits 0, or is still running without an error when its
  time is up (a benchmark, a watched match, the self-test's walk);
- a synopsis in the command table names subcommands and options that `--help` knows.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware_host.system.children import ending_with_me

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PROGRAMS = {"table-host": "firmware_host.cli.host", "tablectl": "firmware_host.cli.ctl"}
BUDGET_S = 6.0  # a command still running after this long is one that runs until stopped
TABLE_VARIABLES = ("CONFIGURATION_DIRECTORY", "STATE_DIRECTORY", "RUNTIME_DIRECTORY", "TABLE_HOST_SOCKET",
                   "NOTIFY_SOCKET", "INVOCATION_ID", "WATCHDOG_USEC")


def code_lines(text: str) -> list[str]:
    """Command lines of the code blocks (indented or fenced), comments and prompts taken off."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not (fenced or line.startswith("    ")):
            continue
        command = re.sub(r"\s+#.*$", "", line.strip()).removeprefix("$ ").strip()
        first = command.split(" ", 1)[0]
        if first in ("./dev", "sudo", *PROGRAMS) or first.startswith(".venv/bin/"):
            out.append(command)
    return list(dict.fromkeys(out))


def table_synopses(text: str) -> list[str]:
    """The code spans in the first cell of the command table that start with a program's name."""
    out = []
    for line in text.splitlines():
        if not line.startswith("|"):
            continue
        cell = re.split(r"(?<!\\)\|", line)[1]
        for span in re.findall(r"`([^`]+)`", cell):
            span = span.replace("\\|", "|")
            if span.split(" ", 1)[0] in PROGRAMS:
                out.append(span)
    return list(dict.fromkeys(out))


TEXT = README.read_text(encoding="utf-8")
LINES = code_lines(TEXT)
SYNOPSES = table_synopses(TEXT)


def test_readme_has_commands_to_test() -> None:
    assert any(line.startswith(("./dev run", "table-host run", ".venv/bin/table-host run")) for line in LINES)
    assert any("tablectl" in line for line in LINES) and SYNOPSES


# ------------------------------------------------------------------ running them


def as_run(command: str) -> str:
    """`./dev run ARGS` is `table-host run ARGS` once set up (test_commands_behave.py checks that
    `dev` does exactly that); `.venv/bin/X` is X from this interpreter's install."""
    command = re.sub(r"^\./dev run\b", "table-host run", command)
    return re.sub(r"^\.venv/bin/", "", command)


def serves(command: str) -> bool:
    """A command that runs the table: `table-host` alone or `table-host run ...`."""
    words = shlex.split(as_run(command))
    rest = [w for w in words[1:] if not w.startswith("-")]
    return words[0] == "table-host" and (not rest or rest[0] == "run")


def environment(tmp: Path) -> dict[str, str]:
    """A newcomer's shell: no table variables, a home of its own, the programs on PATH."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, module in PROGRAMS.items():
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m {module} "$@"\n')
        shim.chmod(0o755)
    (tmp / "run").mkdir(mode=0o700, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in TABLE_VARIABLES and not k.startswith("XDG_")}
    return env | {"HOME": str(tmp), "XDG_RUNTIME_DIR": str(tmp / "run"), "PATH": f"{bin_dir}:{env['PATH']}",
                  "PYTHONPATH": str(ROOT)}


def start(command: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(["bash", "-c", as_run(command)], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=ending_with_me())


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> tuple[int, str, str]:
    with_signal = proc.poll() is None
    if with_signal:
        os.killpg(proc.pid, sig)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    return proc.returncode, out, err


def wait_ready(proc: subprocess.Popen, env: dict[str, str], timeout: float = 60.0) -> None:
    sock = Path(env["XDG_RUNTIME_DIR"]) / "table-host" / "control.sock"
    end = time.monotonic() + timeout
    while not sock.exists():
        if proc.poll() is not None or time.monotonic() > end:
            code, _, err = stop(proc)
            raise AssertionError(f"the table did not get ready (exit {code}): {err.strip()[-500:]}")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The table the README's `tablectl` lines talk to, started as the README starts one."""
    env = environment(tmp_path_factory.mktemp("readme-table"))
    first = next((line for line in LINES if serves(line)), "table-host run --ui none")
    proc = start(first, env)
    wait_ready(proc, env)
    yield env
    stop(proc)


@pytest.mark.parametrize("command", LINES)
def test_readme_command_works_as_written(command: str, table: dict[str, str], tmp_path: Path) -> None:
    if command.startswith("sudo "):  # the Pi's install: here only that what it names is there
        target = command.split()[1]
        if "/" in target:
            assert os.access(ROOT / target, os.X_OK), f"{target} is not an executable file"
        return
    if command.startswith("./dev ") and not command.startswith("./dev run"):
        word = command.split()[1]  # test is this suite; hil boots a VM (tests/test_hil.py)
        assert re.search(rf"^\s*{re.escape(word)}\)", (ROOT / "dev").read_text(), re.M), f"dev has no {word}"
        return
    if serves(command):  # its own home: it must come up, answer, and stop cleanly
        env = environment(tmp_path)
        proc = start(command, env)
        wait_ready(proc, env)
        status = subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", "status"], env=env, cwd=ROOT,
                                capture_output=True, text=True, timeout=60)
        code, _, err = stop(proc)
        assert status.returncode == 0, status.stderr
        assert code == 0 and "Traceback" not in err, err[-2000:]
        return
    proc = start(command, table)
    try:
        proc.wait(timeout=BUDGET_S)
    except subprocess.TimeoutExpired:  # runs until stopped: fine if nothing went wrong so far
        _, _, err = stop(proc, signal.SIGINT)
        assert "Traceback" not in err and "error" not in err.lower(), err[-2000:]
        return
    code, out, err = stop(proc)
    assert code == 0, f"exit {code}: {err.strip()[-1000:]}"
    assert out.strip() or err.strip(), "no output at all"


# ------------------------------------------------------------------ the command table


def help_of(program: str, *words: str) -> str:
    """`program words --help`, in this process (the parsers are the programs' own)."""
    import contextlib
    import importlib
    import io

    parser = importlib.import_module(PROGRAMS[program]).build_parser()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            pytest.raises(SystemExit) as exited:
        parser.parse_args([*words, "--help"])
    assert exited.value.code == 0, f"{program} {' '.join(words)} --help: {err.getvalue().strip()}"
    return out.getvalue()


def subcommands(program: str, synopsis: str) -> list[str]:
    """`prog sub ...` names sub; `prog {a,b ARG,c}` names a, b and c."""
    rest = synopsis[len(program):].strip()
    if rest.startswith("{"):
        group = rest[1:rest.index("}")]
        return [part.strip().split(" ")[0] for part in group.split(",") if part.strip()]
    first = rest.split(" ", 1)[0] if rest else ""
    return [first] if re.fullmatch(r"[a-z][a-z0-9-]*", first) else []


@pytest.mark.parametrize("synopsis", SYNOPSES)
def test_readme_command_table_matches_the_help(synopsis: str) -> None:
    program = synopsis.split(" ", 1)[0]
    names = subcommands(program, synopsis)
    helps = help_of(program) + "".join(help_of(program, name) for name in names)
    for flag in set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", synopsis)):
        assert re.search(rf"{re.escape(flag)}\b", helps), f"{flag} is not an option of {program} {names}"
