"""The unit file: systemd accepts it, and its hardening rates 2.0 or better."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

UNIT = Path(__file__).resolve().parents[2] / "systemd" / "table-host.service"
ANALYZE = shutil.which("systemd-analyze")


def test_systemd_analyze_is_here_to_check_the_unit() -> None:
    assert ANALYZE, "systemd-analyze (Debian's systemd package) is needed to check the unit"


def test_the_unit_rates_2_or_better_for_security() -> None:
    result = subprocess.run([ANALYZE, "security", "--offline=true", str(UNIT)], capture_output=True,
                            text=True, timeout=60)
    rating = re.search(r"Overall exposure level for table-host.service: ([\d.]+)", result.stdout)
    assert rating, result.stdout[-500:] + result.stderr
    assert float(rating[1]) <= 2.0


def test_systemd_verifies_the_unit_without_a_warning(tmp_path: Path) -> None:
    """In a root laid out as an installed table: the program, kill, the base units."""
    program = tmp_path / "opt/table-host/venv/bin/table-host"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    (tmp_path / "bin").mkdir()
    shutil.copy("/bin/kill", tmp_path / "bin/kill")
    shutil.copytree("/lib/systemd/system", tmp_path / "usr/lib/systemd/system", symlinks=True)
    units = tmp_path / "etc/systemd/system"
    units.mkdir(parents=True)
    shutil.copy(UNIT, units / UNIT.name)
    result = subprocess.run([ANALYZE, "verify", f"--root={tmp_path}", "--man=no",
                             f"/etc/systemd/system/{UNIT.name}"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and result.stdout + result.stderr == "", result.stderr


def test_the_unit_is_a_notify_service_with_a_watchdog_and_its_directories() -> None:
    text = UNIT.read_text()
    for line in ("Type=notify", "WatchdogSec=", "Restart=on-failure", "StateDirectory=table-host",
                 "StateDirectoryMode=0700", "RuntimeDirectory=table-host",
                 "ConfigurationDirectory=table-host", "SupplementaryGroups=gpio i2c spi dialout",
                 "ExecReload=/bin/kill -HUP $MAINPID"):
        assert line in text, line


ROOT = UNIT.parents[1]


def test_the_configuration_template_is_valid_for_the_4_seat_build() -> None:
    from firmware_host.config import load_config

    cfg = load_config(ROOT / "systemd" / "table.toml.example")
    assert len(cfg.inputs.seats) == 4 and len(cfg.screens) == 4
    assert [e.interrupt_gpio for e in cfg.inputs.expanders] == [17, 27]


def _install(staged: Path) -> subprocess.CompletedProcess[str]:
    """Staged with this checkout's table-host (the real install runs the one it installed)."""
    import os
    import sys

    env = {**os.environ, "TABLE_HOST": str(Path(sys.executable).parent / "table-host")}
    return subprocess.run(["bash", str(ROOT / "systemd/install.sh"), "--root", str(staged), "--no-pip"],
                          capture_output=True, text=True, timeout=60, env=env)


def test_install_and_uninstall_lay_out_and_remove_the_table(tmp_path: Path) -> None:
    staged = tmp_path / "root"
    run = _install(staged)
    assert run.returncode == 0, run.stderr
    assert (staged / "etc/systemd/system/table-host.service").read_text() == UNIT.read_text()
    assert (staged / "etc/table-host/table.toml").exists()
    rule = (staged / "etc/udev/rules.d/90-table-host.rules").read_text()
    assert 'ATTRS{idVendor}=="2e8a", ATTRS{idProduct}=="0005", SYMLINK+="table-led"' in rule
    # /dev/i2c-N, and the LED controller's driver before the unit resolves DeviceAllow=char-ttyACM
    assert (staged / "etc/modules-load.d/table-host.conf").read_text() == "i2c-dev\ncdc_acm\n"
    boot = (staged / "boot/firmware/config.txt").read_text()
    assert boot == ("# table-host\n[all]\ndtparam=i2c_arm=on\ndtparam=i2c_arm_baudrate=400000\n"
                    "dtoverlay=i2c-mux,pca9548,addr=0x70\n# table-host end\n")  # no SPI: no SPI display
    doc = staged / "opt/table-host/doc"
    assert (doc / "docs/rules.md").is_file() and (doc / "hardware/README.md").is_file()
    for uri in re.findall(r"file:(\S+)", UNIT.read_text()):  # the unit's Documentation= is there
        assert (staged / uri.lstrip("/")).is_file(), uri
    completions = staged / "usr/local/share/bash-completion/completions"
    assert "complete -o bashdefault -F _shtab_tablectl tablectl" in (completions / "tablectl").read_text()
    assert "-F _shtab_table_host table-host" in (completions / "table-host").read_text()
    assert "usermod --append --groups table-admin" not in run.stdout  # staged: no users to add
    units = staged / "etc/systemd/system"
    assert (units / "table-backup.timer").read_text() == (ROOT / "systemd/table-backup.timer").read_text()
    assert "ExecStart=/opt/table-host/venv/bin/tablectl backup --keep 7" in (
        units / "table-backup.service").read_text()
    assert (units / "table-update-recover.service").is_file()
    recover = staged / "opt/table-host/update-recover.sh"
    assert recover.read_text() == (ROOT / "systemd/update-recover.sh").read_text()
    assert os.access(recover, os.X_OK)
    man1 = staged / "usr/local/share/man/man1"
    assert sorted(p.name for p in man1.iterdir()) == ["table-host.1", "tablectl.1"]
    again = _install(staged)
    assert again.returncode == 0 and (staged / "boot/firmware/config.txt").read_text() == boot  # once
    out = subprocess.run(["bash", str(ROOT / "systemd/uninstall.sh"), "--root", str(staged)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert not (staged / "etc/systemd/system/table-host.service").exists()
    assert not (staged / "etc/modules-load.d/table-host.conf").exists()
    assert not (staged / "usr/local/share/bash-completion/completions/tablectl").exists()
    assert not (staged / "etc/systemd/system/table-backup.timer").exists()
    assert not (staged / "usr/local/share/man/man1/tablectl.1").exists()
    assert not (staged / "opt/table-host").exists()
    assert (staged / "etc/table-host/table.toml").exists()  # configuration kept without --purge
    assert "table-host" not in (staged / "boot/firmware/config.txt").read_text()


def test_reinstalling_over_an_old_block_replaces_it_and_keeps_the_rest(tmp_path: Path) -> None:
    staged = tmp_path / "root"
    config = staged / "boot/firmware/config.txt"
    config.parent.mkdir(parents=True)
    old = ("# table-host\ndtparam=i2c_arm=on\ndtparam=i2c_arm_baudrate=400000\n"
           "dtoverlay=i2c-mux,pca9548,addr=0x70\ndtparam=spi=on\n")
    config.write_text("arm_64bit=1\n" + old + "dtoverlay=vc4-kms-v3d\n")
    assert _install(staged).returncode == 0
    text = config.read_text()
    assert "dtparam=spi=on" not in text
    assert text.startswith("arm_64bit=1\ndtoverlay=vc4-kms-v3d\n# table-host\n[all]\n")


def tree(root: Path) -> dict[str, bytes | str]:
    """Every file (its bytes), link (its target) and folder under root."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if path.is_symlink():
            found[name] = f"-> {os.readlink(path)}"
        elif path.is_dir():
            found[name] = "dir"
        else:
            found[name] = path.read_bytes()
    return found


def pi_root(staged: Path, config_txt: str) -> None:
    """What a Raspberry Pi OS root has before install.sh: the folders it writes into, a config.txt."""
    for folder in ("etc/systemd/system", "etc/udev/rules.d", "etc/modules-load.d", "usr/local/bin",
                   "usr/local/share", "opt", "var/lib"):
        (staged / folder).mkdir(parents=True)
    (staged / "boot/firmware").mkdir(parents=True)
    (staged / "boot/firmware/config.txt").write_text(config_txt)


PI5_CONFIG = ("dtparam=audio=on\ncamera_auto_detect=1\n\n[cm5]\ndtoverlay=dwc2,dr_mode=host\n\n"
              "[pi5]\narm_boost=1\n")


def test_uninstall_purge_leaves_the_root_as_install_found_it(tmp_path: Path) -> None:
    """Everything install.sh writes (unit, udev rules, modules-load file, config.txt block, tablectl,
    completions, /opt/table-host, the configuration) goes again; the rest of config.txt is kept byte
    for byte. Without --purge only the configuration stays."""
    staged = tmp_path / "root"
    pi_root(staged, PI5_CONFIG)
    before = tree(staged)
    assert _install(staged).returncode == 0
    written = set(tree(staged)) - set(before)
    assert {"etc/systemd/system/table-host.service", "etc/udev/rules.d/90-table-host.rules",
            "etc/modules-load.d/table-host.conf", "usr/local/bin/tablectl", "etc/table-host/table.toml",
            "opt/table-host/doc/README.md", "usr/local/share/bash-completion/completions/tablectl",
            "etc/systemd/system/table-backup.service", "etc/systemd/system/table-backup.timer",
            "usr/local/share/man/man1/table-host.1", "usr/local/share/man/man1/tablectl.1",
            "etc/systemd/system/table-update-recover.service", "opt/table-host/update-recover.sh"} <= written
    assert (staged / "boot/firmware/config.txt").read_text() != PI5_CONFIG
    kept = subprocess.run(["bash", str(ROOT / "systemd/uninstall.sh"), "--root", str(staged)],
                          capture_output=True, text=True, timeout=60)
    assert kept.returncode == 0, kept.stderr
    assert set(tree(staged)) - set(before) == {"etc/table-host", "etc/table-host/table.toml"}
    assert _install(staged).returncode == 0
    out = subprocess.run(["bash", str(ROOT / "systemd/uninstall.sh"), "--purge", "--root", str(staged)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert tree(staged) == before


def test_the_block_starts_with_all_after_a_config_txt_that_ends_in_a_model_section(tmp_path: Path) -> None:
    """config.txt's [pi5] holds until the next filter: without [all] the table's buses would be
    switched on for a Pi 5 only (Raspberry Pi OS's own config.txt ends in [all] today, but a
    builder's edit may not)."""
    staged = tmp_path / "root"
    pi_root(staged, PI5_CONFIG)
    assert _install(staged).returncode == 0
    text = (staged / "boot/firmware/config.txt").read_text()
    assert text.startswith(PI5_CONFIG)
    block = text[len(PI5_CONFIG):].splitlines()
    assert block[:2] == ["# table-host", "[all]"] and block[-1] == "# table-host end"
    filters = [line for line in text.splitlines() if line.startswith("[")]
    assert filters[-1] == "[all]"  # the section every line of the block is in


def test_twelve_seats_two_muxes_on_one_bus_disconnect_on_idle_and_uninstall_takes_it(tmp_path: Path) -> None:
    staged = tmp_path / "root"
    pi_root(staged, "dtparam=audio=on\n")
    (staged / "etc/table-host").mkdir(parents=True)
    (staged / "etc/table-host/table.toml").write_bytes(
        (ROOT / "firmware_host/data/wiring/12-seat.toml").read_bytes())
    assert _install(staged).returncode == 0
    text = (staged / "boot/firmware/config.txt").read_text()
    assert "dtoverlay=i2c-mux,pca9548,addr=0x70,disconnect_on_idle\n" in text
    assert "dtoverlay=i2c-mux,pca9548,addr=0x71,disconnect_on_idle\n" in text
    out = subprocess.run(["bash", str(ROOT / "systemd/uninstall.sh"), "--root", str(staged)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "lines install.sh did not write" not in out.stderr, out.stderr
    assert (staged / "boot/firmware/config.txt").read_text() == "dtparam=audio=on\n"


def test_uninstall_keeps_a_block_someone_edited(tmp_path: Path) -> None:
    staged = tmp_path / "root"
    pi_root(staged, "")
    assert _install(staged).returncode == 0
    config = staged / "boot/firmware/config.txt"
    config.write_text(config.read_text().replace("[all]\n", "[all]\ndtoverlay=w1-gpio\n"))
    out = subprocess.run(["bash", str(ROOT / "systemd/uninstall.sh"), "--root", str(staged)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "  dtoverlay=w1-gpio" in out.stderr
    assert "dtoverlay=w1-gpio" in config.read_text() and "[all]" in config.read_text()


def test_install_refuses_a_configuration_that_does_not_load(tmp_path: Path) -> None:
    staged = tmp_path / "root"
    (staged / "etc/table-host").mkdir(parents=True)
    (staged / "etc/table-host/table.toml").write_text("[inputs]\nseats = 3\n")
    run = _install(staged)
    assert run.returncode == 2 and "cannot derive config.txt lines" in run.stderr
    assert "inputs.seats" in run.stderr


def test_the_unit_grants_real_time_up_to_the_daemons_priority_and_no_capability() -> None:
    """LimitRTPRIO (setrlimit(2) RLIMIT_RTPRIO) caps what the daemon's threads may take; the
    syscall filter lets sched_setscheduler through, nothing else of @resources."""
    from firmware_host.system.realtime import PRIORITY

    text = UNIT.read_text()
    assert f"LimitRTPRIO={PRIORITY}\n" in text and PRIORITY < 50  # below the kernel's IRQ threads
    assert "RestrictRealtime=no" in text and "CapabilityBoundingSet=\n" in text
    assert "AmbientCapabilities=\n" in text and "CAP_SYS_NICE" not in text
    assert "SystemCallFilter=~@privileged @resources\nSystemCallFilter=sched_setscheduler\n" in text
    assert "CPUSchedulingPolicy" not in text  # the daemon chooses its threads; workers stay normal


BACKUP_UNITS = [ROOT / "systemd" / "table-backup.service", ROOT / "systemd" / "table-backup.timer",
                ROOT / "systemd" / "table-update-recover.service"]


def test_systemd_verifies_the_backup_and_recovery_units_without_a_warning(tmp_path: Path) -> None:
    for name in ("opt/table-host/venv/bin/tablectl", "opt/table-host/update-recover.sh"):
        program = tmp_path / name
        program.parent.mkdir(parents=True, exist_ok=True)
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
    shutil.copytree("/lib/systemd/system", tmp_path / "usr/lib/systemd/system", symlinks=True)
    units = tmp_path / "etc/systemd/system"
    units.mkdir(parents=True)
    for unit in BACKUP_UNITS:
        shutil.copy(unit, units / unit.name)
    result = subprocess.run([ANALYZE, "verify", f"--root={tmp_path}", "--man=no",
                             *(f"/etc/systemd/system/{u.name}" for u in BACKUP_UNITS)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout + result.stderr == "", result.stderr


def test_the_backup_runs_as_the_tables_user_daily_and_keeps_a_bounded_number() -> None:
    service, timer = (u.read_text() for u in BACKUP_UNITS[:2])
    for line in ("Type=oneshot", "User=table-host", "StateDirectory=table-host",
                 "ExecStart=/opt/table-host/venv/bin/tablectl backup --keep 7"):
        assert line in service, line
    assert "OnCalendar=*-*-* 04:00:00" in timer and "Persistent=true" in timer
    result = subprocess.run([ANALYZE, "security", "--offline=true", str(BACKUP_UNITS[0])],
                            capture_output=True, text=True, timeout=60)
    rating = re.search(r"Overall exposure level for table-backup.service: ([\d.]+)", result.stdout)
    assert rating and float(rating[1]) <= 2.0, result.stdout[-500:]
