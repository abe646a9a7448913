"""The web view's units: table-web.socket hands port 80 to the service by the name the daemon
looks for, the kiosk unit runs the browser apt offers, systemd verifies both in a root laid out
by install.sh (staged, --screen), and uninstall.sh takes them away."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from plumbing import ROOT

from firmware_host.web.listen import NAME

ANALYZE = shutil.which("systemd-analyze")
UNITS = ROOT / "systemd"


def unit_lines(path: Path) -> set[str]:
    return {line.strip() for line in path.read_text().splitlines() if line and not line.startswith("#")}


def test_the_socket_is_port_80_passed_by_the_name_the_daemon_takes() -> None:
    socket_unit = unit_lines(UNITS / "table-web.socket")
    assert {"ListenStream=80", "BindIPv6Only=both", f"FileDescriptorName={NAME}",
            "Service=table-host.service", "IPAddressDeny=any"} <= socket_unit
    # Global IPv6 is let through to the daemon, which answers only the table's own /64
    # (tests/web/test_address.py); without it phones on an IPv6 network fell back to IPv4.
    allowed = next(line for line in socket_unit if line.startswith("IPAddressAllow=")).split("=")[1].split()
    assert allowed == ["localhost", "link-local", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                       "fc00::/7", "2000::/3"]
    service = unit_lines(UNITS / "table-host.service")
    assert "Sockets=table-web.socket" in service
    # The service itself stays off the network: only the passed socket serves.
    assert {"PrivateNetwork=yes", "IPAddressDeny=any", "RestrictAddressFamilies=AF_UNIX",
            "CapabilityBoundingSet=", "AmbientCapabilities="} <= service


def test_the_kiosk_rates_5_or_better_for_security_and_reaches_only_this_machine() -> None:
    """It rated 9.2 (UNSAFE): the browser ran with the whole network, free to gain privileges."""
    assert ANALYZE, "systemd-analyze (Debian's systemd package) is needed to check the unit"
    result = subprocess.run([ANALYZE, "security", "--offline=true", str(UNITS / "table-screen.service")],
                            capture_output=True, text=True, timeout=60)
    rating = re.search(r"Overall exposure level for table-screen.service: ([\d.]+)", result.stdout)
    assert rating, result.stdout[-500:] + result.stderr
    assert float(rating[1]) <= 5.0
    kiosk = unit_lines(UNITS / "table-screen.service")
    assert {"NoNewPrivileges=yes", "CapabilityBoundingSet=", "IPAddressAllow=localhost", "IPAddressDeny=any",
            "RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6", "ProtectSystem=strict",
            "DevicePolicy=closed", "DeviceAllow=char-drm rw", "DeviceAllow=char-input rw",
            "DeviceAllow=/dev/tty1 rw"} <= kiosk
    # The browser's own sandbox: user, PID and network namespaces, and chroot into an empty root.
    assert "RestrictNamespaces=user pid net" in kiosk
    denied = " ".join(line.split("=", 1)[1] for line in kiosk if line.startswith("SystemCallFilter=~"))
    assert "chroot" not in denied and "@mount" not in denied and "@privileged" not in denied


def _install(staged: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TABLE_HOST": str(Path(sys.executable).parent / "table-host")}
    return subprocess.run(["bash", str(UNITS / "install.sh"), "--root", str(staged), "--no-pip", *extra],
                          capture_output=True, text=True, timeout=120, env=env)


def test_install_screen_lays_out_the_socket_and_the_kiosk_and_systemd_verifies_them(tmp_path: Path) -> None:
    assert ANALYZE, "systemd-analyze (Debian's systemd package) is needed to check the units"
    staged = tmp_path / "root"
    run = _install(staged, "--screen")
    assert run.returncode == 0, run.stderr
    units = staged / "etc/systemd/system"
    assert (units / "table-web.socket").read_text() == (UNITS / "table-web.socket").read_text()
    kiosk = (units / "table-screen.service").read_text()
    assert "@BROWSER@" not in kiosk
    # apt here offers Debian's chromium (the tests' browser): the unit runs it, in cage, on tty1.
    assert "ExecStart=/usr/bin/cage -d -s -- /usr/bin/chromium --kiosk" in kiosk
    assert "http://localhost/big" in kiosk and "User=table-screen" in kiosk and "TTYPath=/dev/tty1" in kiosk
    # systemd verifies all three in the staged root (with the programs they start in it).
    for program in ("opt/table-host/venv/bin/table-host", "usr/bin/cage", "usr/bin/chromium"):
        path = staged / program
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
    (staged / "bin").mkdir(exist_ok=True)
    shutil.copy("/bin/kill", staged / "bin/kill")
    shutil.copytree("/lib/systemd/system", staged / "usr/lib/systemd/system", symlinks=True)
    for unit in ("table-host.service", "table-web.socket", "table-screen.service"):
        result = subprocess.run([ANALYZE, "verify", f"--root={staged}", "--man=no",
                                 f"/etc/systemd/system/{unit}"], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0 and result.stdout + result.stderr == "", result.stderr
    out = subprocess.run(["bash", str(UNITS / "uninstall.sh"), "--root", str(staged)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    for unit in ("table-host.service", "table-web.socket", "table-screen.service"):
        assert not (units / unit).exists()


def test_the_kiosk_installs_xwayland_without_which_cage_does_not_start() -> None:
    """Debian bookworm's cage 0.1.4 exits at once without /usr/bin/Xwayland ("Cannot create
    XWayland server"), and install.sh installs without recommended packages: it names it."""
    wanted = [line.split()[1:] for line in (UNITS / "install.sh").read_text().splitlines()
              if line.strip().startswith("need_packages cage")]
    assert wanted == [["cage", "xwayland", '"$browser"']]


def test_without_screen_no_kiosk(tmp_path: Path) -> None:
    staged = tmp_path / "root"
    assert _install(staged).returncode == 0
    assert (staged / "etc/systemd/system/table-web.socket").exists()
    assert not (staged / "etc/systemd/system/table-screen.service").exists()


def test_the_web_section_is_checked_with_one_line_a_problem() -> None:
    from firmware_host.config import ConfigError, default_config, parse_config

    data = default_config(2).model_dump(mode="json", exclude_none=True)
    web = parse_config({**data, "web": {"bind": "0.0.0.0", "port": 80, "url": "http://table.local/"}}).web
    assert (web.bind, web.port, web.url) == ("0.0.0.0", 80, "http://table.local/")
    for web, says in (({"bind": "localhost"}, "bind must be an IP address"), ({"port": 70000}, "web.port"),
                      ({"max_clients": 0}, "web.max_clients"), ({"url": "ftp://x"}, "web.url"),
                      ({"enabled": "yes"}, "web.enabled"), ({"colour": 1}, "web.colour")):
        with pytest.raises(ConfigError) as refused:
            parse_config({**data, "web": web})
        assert says in str(refused.value), str(refused.value)


def test_port_0_has_the_same_port_again_after_a_restart(tmp_path: Path) -> None:
    """[web] port 0: the kernel's choice the first time, remembered; the same port next time, so
    a bookmark or a photographed QR code still opens the table; a new one, said, when taken."""
    from firmware_host.web.listen import open_remembered

    remembered = tmp_path / "web-port"
    first, said = open_remembered("127.0.0.1", remembered)
    port = first.getsockname()[1]
    assert said == "" and remembered.read_text() == f"{port}\n"
    first.close()
    again, said = open_remembered("127.0.0.1", remembered)
    assert again.getsockname()[1] == port and said == ""
    taken, said = open_remembered("127.0.0.1", remembered)  # `again` still holds it
    new = taken.getsockname()[1]
    assert new != port and remembered.read_text() == f"{new}\n"
    assert said == f"port {port}, the web view's last time, is taken (Address already in use): " \
        f"it listens on {new} now"
    for sock in (again, taken):
        sock.close()
    remembered.write_text("not a port\n")
    sock, said = open_remembered("127.0.0.1", remembered)
    assert said == "" and remembered.read_text() == f"{sock.getsockname()[1]}\n"
    sock.close()
    nowhere = tmp_path / "missing" / "web-port"
    sock, said = open_remembered("127.0.0.1", nowhere)
    assert said == f"cannot remember port {sock.getsockname()[1]} in {nowhere}: No such file or directory"
    sock.close()


def test_the_web_views_process_listens_on_its_remembered_port(tmp_path: Path) -> None:
    """The daemon takes the socket for its web view's process (web/process.py): port 0 remembered
    there too, so the table's address stays the same across restarts."""
    from firmware_host.web.process import WebProcess

    remembered = tmp_path / "web-port"
    first = WebProcess("127.0.0.1", 0, port_file=remembered)
    url = first.listen()
    port = int(remembered.read_text())
    assert url.endswith(f":{port}/") and first.said == ""
    first.stop()
    again = WebProcess("127.0.0.1", 0, port_file=remembered)
    assert again.listen() == url
    again.stop()
