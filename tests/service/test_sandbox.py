"""The daemon as the unit's sandbox shows it the system, and the hardware choice it never guesses.

The service once ran emulated on a real Pi: `ProcSubset=pid` hid /proc/device-tree, a guess
read that as "not a Pi", and lgpio could not make its FIFO in the read-only working directory
`/`. Here a mount namespace gives the daemon what the unit gives it (/proc mounted subset=pid,
/ read-only, the working directory /, writable state and runtime directories), with a
configuration that says "pi", on a machine that has no Pi GPIO: it must say exactly what
failed, in the log and STATUS=, and exit 69, never emulate.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from firmware_host.config import ConfigError, choose_config, default_config, parse_config
from firmware_host.devices.board import EX_UNAVAILABLE, find_chip, open_board
from firmware_host.system.errors import HardwareUnavailable

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "table-host.service"
UNSHARE = shutil.which("unshare")

SANDBOX = """set -e
mount -t proc -o subset=pid proc /proc
mount -t tmpfs tmpfs "$RUNTIME_DIRECTORY"
mount -t tmpfs tmpfs "$STATE_DIRECTORY"
mount -o remount,bind,ro /
cd /
{command}
"""


def _sandboxed(tmp_path: Path, command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    if os.geteuid() != 0 or UNSHARE is None:
        pytest.skip("needs root and unshare(1) for a mount namespace (CI runs as root)")
    for name in ("run", "state"):
        (tmp_path / name).mkdir(exist_ok=True)
    full = {**os.environ, "RUNTIME_DIRECTORY": str(tmp_path / "run"),
            "STATE_DIRECTORY": str(tmp_path / "state"), "PYTHONPATH": str(ROOT), **env}
    full.pop("LG_WD", None)  # the unit sets it; the daemon must manage without it as well
    script = SANDBOX.format(command=command)
    return subprocess.run([UNSHARE, "--mount", "--pid", "--fork", "sh", "-c", script],
                          capture_output=True, text=True, timeout=120, env=full)


def _pi_config(tmp_path: Path) -> Path:
    text = (ROOT / "systemd" / "table.toml.example").read_text()
    assert 'backend = "pi"' in text  # the installed template names the Pi, explicitly
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def test_under_the_units_sandbox_a_pi_configuration_without_pi_gpio_exits_69_and_says_why(
        tmp_path: Path) -> None:
    config = _pi_config(tmp_path)
    notify = tmp_path / "notify.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(notify))
    listener.settimeout(5)
    with listener:
        result = _sandboxed(tmp_path, f"exec {sys.executable} -m firmware_host.cli.host run --ui none "
                                      f"--config {config}", {"NOTIFY_SOCKET": str(notify)})
        status = listener.recv(4096).decode()
    assert result.returncode == EX_UNAVAILABLE, result.stderr
    # The header's chip is chosen by the board's revision, which /proc subset=pid hides: said exactly.
    assert "hardware unavailable: cannot tell which Raspberry Pi this is" in result.stderr
    assert "/proc/cpuinfo" in result.stderr and "ProcSubset=pid" in result.stderr
    assert "lgd-nfy" not in result.stderr  # lgpio itself started, read-only / notwithstanding
    assert "ready" not in result.stderr and "emulated" not in result.stderr
    assert status.startswith("STATUS=hardware unavailable: cannot tell which Raspberry Pi")


def test_lgpio_starts_with_a_read_only_working_directory_once_the_board_prepares_it(
        tmp_path: Path) -> None:
    started = _sandboxed(tmp_path, f"exec {sys.executable} -c 'from firmware_host.devices.board import "
                                   "prepare_lgpio; prepare_lgpio(); import lgpio; print(\"lgpio ok\")'", {})
    assert started.returncode == 0 and "lgpio ok" in started.stdout, started.stderr
    bare = _sandboxed(tmp_path, f"exec {sys.executable} -c 'import lgpio'", {})
    assert bare.returncode != 0 and ".lgd-nfy" in bare.stderr  # the upstream fault, reproduced


def test_the_unit_shows_the_service_proc_and_gives_lgpio_the_runtime_directory() -> None:
    lines = [line.strip() for line in UNIT.read_text().splitlines() if not line.startswith("#")]
    assert not any(line.startswith("ProcSubset=") for line in lines)
    assert "Environment=LG_WD=%t/table-host" in lines and "RuntimeDirectory=table-host" in lines


# ------------------------------------------------------------ the choice is the configuration's


def test_a_configuration_file_without_a_hardware_table_means_the_pi() -> None:
    assert default_config(4).hardware.backend == "pi"


def test_the_gpiochip_backend_needs_its_chip_named() -> None:
    data = default_config(2).model_dump()
    data["hardware"] = {"backend": "gpiochip"}
    with pytest.raises(ConfigError, match="hardware: Value error, the gpiochip backend needs chip"):
        parse_config(data)
    data["hardware"] = {"backend": "raspberry"}
    with pytest.raises(ConfigError, match=r"hardware\.backend"):
        parse_config(data)


def test_no_file_runs_emulated_and_says_so_but_not_as_a_service(tmp_path: Path, monkeypatch, said) -> None:
    monkeypatch.delenv("INVOCATION_ID", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    config, _ = choose_config(tmp_path / "table.toml", False)
    assert config.hardware.backend == "emulated" and "emulated" in next(iter(said))
    monkeypatch.setenv("INVOCATION_ID", "0123")
    with pytest.raises(ConfigError, match="no configuration file; the service drives the hardware"):
        choose_config(tmp_path / "table.toml", False)


def test_emulate_overrides_a_pi_file_and_says_so(tmp_path: Path, monkeypatch, said) -> None:
    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path))  # where the last good copy goes
    config, _ = choose_config(_pi_config(tmp_path), True)
    assert config.hardware.backend == "emulated" and any("--emulate" in line for line in said)


def test_a_chip_by_number_path_or_name_and_an_unknown_label_named_in_the_error(tmp_path: Path) -> None:
    cwd = Path.cwd()
    assert find_chip(3) == 3 and find_chip("2") == 2 and find_chip("gpiochip5") == 5
    assert find_chip("/dev/gpiochip4") == 4
    with pytest.raises(HardwareUnavailable, match=r"no GPIO chip labelled 'gpio-sim.0-node0': no GPIO chips"):
        find_chip("gpio-sim.0-node0", dev=tmp_path)
    assert Path.cwd() == cwd  # lgpio's start moved it to $LG_WD; the board puts it back


def test_a_gpiochip_board_on_a_missing_chip_names_the_device(tmp_path: Path) -> None:
    data = default_config(2).model_dump()
    data["hardware"] = {"backend": "gpiochip", "chip": 57}
    with pytest.raises(HardwareUnavailable, match=r"cannot open /dev/gpiochip57: .*does not exist"):
        open_board(parse_config(data))
