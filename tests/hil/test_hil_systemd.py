"""The systemd bench's host side (hil/systemd_vm.py) and what install.sh must do on a plain Debian.

The bench itself boots a VM (`python -m hil.systemd_vm`, minutes); these check its parts quickly.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hil import systemd_vm

ROOT = Path(__file__).resolve().parents[2]


def staged_install(tmp_path: Path) -> Path:
    staged = tmp_path / "root"
    env = {**os.environ, "TABLE_HOST": str(Path(sys.executable).parent / "table-host")}
    run = subprocess.run(["bash", str(ROOT / "systemd/install.sh"), "--root", str(staged), "--no-pip"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr
    return staged


def test_install_gives_gpio_chips_i2c_and_spi_to_their_groups(tmp_path: Path) -> None:
    """Plain Debian has no gpio/i2c/spi rules (on a Pi they come from raspberrypi-sys-mods): found
    in the VM, /dev/gpiochip0 stayed root:root 0600 and the service could not open it."""
    rules = (staged_install(tmp_path) / "etc/udev/rules.d/90-table-host.rules").read_text()
    assert 'SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"' in rules
    assert 'SUBSYSTEM=="i2c-dev", GROUP="i2c", MODE="0660"' in rules
    assert 'SUBSYSTEM=="spidev", GROUP="spi", MODE="0660"' in rules


@pytest.mark.parametrize(("unit_file", "first"), [("table-host.service", "table-admin"),
                                                   ("table-screen.service", "video")])
def test_install_creates_every_group_the_unit_names(unit_file: str, first: str) -> None:
    """systemd refuses a unit whose SupplementaryGroups has a missing group (216/GROUP, seen in the VM)."""
    unit = (ROOT / "systemd" / unit_file).read_text()
    line = next(ln for ln in unit.splitlines() if ln.startswith("SupplementaryGroups="))
    groups = line.split("=")[1].split()
    script = (ROOT / "systemd/install.sh").read_text()
    created = next(ln for ln in script.splitlines() if f"$(missing_groups {first}" in ln)
    for group in groups:
        assert f" {group}" in created, group


def test_tablectl_is_on_the_path_for_admins_and_goes_with_uninstall(tmp_path: Path) -> None:
    """`tablectl status` over SSH said `command not found` in the VM: the venv is not on PATH."""
    staged = staged_install(tmp_path)
    link = staged / "usr/local/bin/tablectl"
    assert link.is_symlink() and str(link.readlink()) == "/opt/table-host/venv/bin/tablectl"
    out = subprocess.run(["bash", str(ROOT / "systemd/uninstall.sh"), "--root", str(staged)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert not link.is_symlink()


def test_install_takes_an_offline_wheelhouse() -> None:
    script = (ROOT / "systemd/install.sh").read_text()
    assert "--wheels) wheels=" in script and '--no-index --find-links "$wheels"' in script


def test_the_faulty_unit_is_the_unit_before_the_sandbox_fixes() -> None:
    unit = (ROOT / "systemd/table-host.service").read_text()
    assert "Environment=LG_WD=%t/table-host" in unit and "\nProcSubset=pid" not in unit
    old = systemd_vm.faulty_unit_text(unit)
    assert "Environment=LG_WD" not in old and "\nProcSubset=pid\n" in old
    assert set(unit.splitlines()) - set(old.splitlines()) == {"Environment=LG_WD=%t/table-host"}


def test_the_wheelhouse_covers_the_build_backend_and_the_pi_extra() -> None:
    names = {r.split(">")[0].split("<")[0].split("=")[0].strip() for r in systemd_vm.requirements()}
    assert {"setuptools", "lgpio", "smbus2", "gpiozero", "pydantic"} <= names


def parse_newc(data: bytes) -> dict[str, tuple[int, bytes]]:
    """Read back an initramfs as the kernel does
    (Documentation/driver-api/early-userspace/buffer-format.rst)."""
    files, at = {}, 0
    while True:
        assert data[at:at + 6] == b"070701"
        fields = [int(data[at + 6 + 8 * i: at + 14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = fields[1], fields[6], fields[11]
        name = data[at + 110: at + 110 + namesize - 1].decode()
        at = (at + 110 + namesize + 3) & ~3
        body = data[at: at + size]
        at = (at + size + 3) & ~3
        if name == "TRAILER!!!":
            return files
        files[name] = (mode, body)


def test_the_initramfs_is_the_newc_format_the_kernel_unpacks() -> None:
    data = systemd_vm.cpio_newc([("bin", stat.S_IFDIR | 0o755, b""),
                                 ("bin/busybox", stat.S_IFREG | 0o755, b"\x7fELF" + b"x" * 5),
                                 ("init", stat.S_IFREG | 0o755, b"#!/bin/busybox sh\n")])
    assert len(data) % 4 == 0
    files = parse_newc(data)
    assert files["bin/busybox"] == (stat.S_IFREG | 0o755, b"\x7fELFxxxxx")
    assert stat.S_ISDIR(files["bin"][0]) and files["init"][1].startswith(b"#!")


def test_a_missing_tool_is_one_line_naming_the_package() -> None:
    with pytest.raises(systemd_vm.SetupMissing, match=r"^no-such-qemu is missing: apt-get install qemu-x$"):
        systemd_vm.need("no-such-qemu", "qemu-x")


def test_no_root_has_lgpios_build_tools_so_install_sh_apt_gets_them_on_trixie() -> None:
    """No lgpio wheel for trixie's Python 3.13: install.sh builds it and apt-gets what the build
    needs. The roots carry none of it (it was once pre-installed, and install.sh's apt path never ran),
    and only the guest that builds lgpio gets a network for its install boot."""
    deps = systemd_vm.lgpio_build_deps()
    assert {"swig", "gcc", "python3-dev"} <= set(deps)
    trixie, bookworm = systemd_vm.GUESTS["trixie"], systemd_vm.GUESTS["bookworm"]
    assert trixie.python == ("313", "cp313") and trixie.glibc_minor == 41 and trixie.build_lgpio
    assert bookworm.python == ("311", "cp311") and bookworm.glibc_minor == 36 and not bookworm.build_lgpio
    assert trixie.packages() == bookworm.packages() == systemd_vm.PACKAGES
    assert not set(deps) & set(systemd_vm.PACKAGES)


def test_the_install_boot_passes_only_with_apt_used_exactly_where_lgpio_is_built() -> None:
    trixie, bookworm = systemd_vm.GUESTS["trixie"], systemd_vm.GUESTS["bookworm"]
    built = {"install_rc": 0, "qemu_rc": 0, "failed": [], "lgpio_from": "built here cp313-cp313-linux_x86_64",
             "apt_installed": systemd_vm.lgpio_build_deps()}
    assert systemd_vm.install_checked(trixie, dict(built))["ok"]
    pre_installed = systemd_vm.install_checked(trixie, {**built, "apt_installed": []})
    assert not pre_installed["ok"] and pre_installed["why"] == (
        f"apt-get installed [], not {sorted(systemd_vm.lgpio_build_deps())}")
    wheel = {**built, "lgpio_from": "wheel cp311-cp311-manylinux_2_34_x86_64", "apt_installed": []}
    assert systemd_vm.install_checked(bookworm, dict(wheel))["ok"]
    assert not systemd_vm.install_checked(bookworm, {**wheel, "apt_installed": ["gcc"]})["ok"]
    killed = systemd_vm.install_checked(bookworm, {**wheel, "qemu_rc": None})  # its disk may be torn
    assert not killed["ok"] and killed["why"] == "no clean power-off (qemu None)"


def test_the_install_is_kept_until_install_sh_pyproject_or_a_wheel_changes(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "lgpio-0.2.2.0.tar.gz").write_bytes(b"source")
    (wheels / ".complete").write_text("lgpio (source)\n")
    image = tmp_path / "root-trixie-abc.img"
    key = systemd_vm.install_key(image, wheels)
    assert systemd_vm.install_key(image, wheels) == key
    (wheels / ".complete").write_text("another note\n")  # not a wheel
    assert systemd_vm.install_key(image, wheels) == key
    assert systemd_vm.install_key(tmp_path / "root-trixie-def.img", wheels) != key  # another root
    (wheels / "lgpio-0.2.2.0.tar.gz").write_bytes(b"source, changed")
    assert systemd_vm.install_key(image, wheels) != key


def test_requirement_names_are_compared_as_pip_does() -> None:
    assert systemd_vm._name("lgpio>=0.2,<1") == "lgpio"
    assert systemd_vm._name("luma.oled>=3.12,<4") == systemd_vm._name("Luma_OLED") == "luma-oled"
    assert systemd_vm._name("pillow>=10.1,<14") == "pillow"


def test_every_guest_must_pass_and_the_summary_names_them(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    monkeypatch.setattr(systemd_vm, "need", lambda tool, package: tool)
    monkeypatch.setattr(systemd_vm, "prepare", lambda cache, kernel, guest, settings, log: guest.suite)
    passed = dict.fromkeys((*systemd_vm.CHECKS, "old_unit_caught", "ok"), True)

    def check(kernel: object, guest: systemd_vm.Guest, built: str, faulty: bool, log: object,
              cache: Path, settings: dict) -> dict:
        assert cache == tmp_path and settings["ready_timeout_s"] == 600
        assert built == guest.suite
        if guest.suite == "trixie":
            return {**passed, "guest": "trixie", "ok": False, "unit_active": False,
                    "why": "install.sh exited 1"}
        return {**passed, "guest": guest.suite}

    monkeypatch.setattr(systemd_vm, "check_guest", check)
    for parallel in (True, False):
        r = systemd_vm.run(tmp_path, None, log=lambda line: None, parallel=parallel)
        assert r["guests"] == ["bookworm", "trixie"] and r["parallel"] is parallel
        assert r["watchdog_ok"] is True and r["unit_active"] is False and r["ok"] is False
        assert r["why"] == "trixie: install.sh exited 1"
    one = systemd_vm.run(tmp_path, None, log=lambda line: None, guests=["bookworm"])
    assert one["ok"] is True and one["guests"] == ["bookworm"] and not one["parallel"]
    with pytest.raises(systemd_vm.SetupMissing, match="no guest buster: the guests are bookworm, trixie"):
        systemd_vm.run(tmp_path, None, guests=["buster"])


def test_a_vm_past_its_time_is_killed_with_everything_it_started(tmp_path: Path) -> None:
    """QEMU stopped on a time-out takes its whole process group along: nothing keeps running."""
    pidfile = tmp_path / "child"
    console = tmp_path / "console.log"
    console.write_text("booting\n")  # it printed something: not the silent-firmware case
    fake_qemu = ["bash", "-c", f"sleep 300 & echo $! > {pidfile}; wait"]
    rc, why, silent, cpu = systemd_vm._qemu(fake_qemu, console, timeout=2, cpu_timeout=100)
    assert (rc, why, silent) == (None, "timed out after 2 s", False) and 0 <= cpu < 1.5
    child = int(pidfile.read_text())
    time.sleep(0.5)
    stat_file = Path(f"/proc/{child}/stat")
    assert not stat_file.exists() or stat_file.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_silence_and_time_outs_are_counted_in_the_vms_cpu_time(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """On a loaded host the guest gets a fraction of a core: its wall time says little. A VM that
    spins printing nothing is silent after SILENT_S of its CPU; one that prints and spins on is
    stopped at its CPU limit; one that prints and sleeps is not stopped for its wall time below
    the wall limit."""
    monkeypatch.setattr(systemd_vm, "SILENT_S", 0.5)
    console = tmp_path / "console.log"
    spin = ["python3", "-c", "while True: pass"]
    rc, why, silent, cpu = systemd_vm._qemu(spin, console, timeout=60, cpu_timeout=100)
    assert (rc, why, silent) == (None, "silent", True) and cpu > 0.5
    console.write_text("initrd: the kernel is up; mounting /dev/vda\n")
    rc, why, silent, cpu = systemd_vm._qemu(spin, console, timeout=60, cpu_timeout=1)
    assert (rc, silent) == (None, False) and why.startswith("timed out after") and "CPU time" in why
    rc, why, silent, cpu = systemd_vm._qemu(["sleep", "3"], console, timeout=60, cpu_timeout=1)
    assert (rc, why, silent) == (0, "", False) and cpu < 1.0


def test_an_interrupted_run_stops_the_vms_its_guest_threads_started(tmp_path: Path) -> None:
    """An interrupt reaches the main thread only: the guests' threads stop their QEMU themselves
    (one was left running after ^C while the guests booted side by side)."""
    import threading

    pidfile = tmp_path / "child"
    console = tmp_path / "console.log"
    console.write_text("booting\n")
    fake_qemu = ["bash", "-c", f"sleep 300 & echo $! > {pidfile}; wait"]
    said: list[tuple] = []
    guest = threading.Thread(target=lambda: said.append(systemd_vm._qemu(fake_qemu, console, timeout=60)))
    guest.start()
    try:
        deadline = time.monotonic() + 30
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        systemd_vm.STOPPING.set()
        guest.join(30)
    finally:
        systemd_vm.STOPPING.clear()
    assert said and said[0][:3] == (None, "interrupted", False)
    stat_file = Path(f"/proc/{int(pidfile.read_text())}/stat")
    time.sleep(0.5)
    assert not stat_file.exists() or stat_file.read_text().rsplit(")", 1)[1].split()[0] == "Z"
