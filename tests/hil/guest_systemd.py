"""Runs inside the virtual machine, as root, from hil-check.service once systemd reached multi-user.

Standard library only (the guest's own /usr/bin/python3). It does what a builder does on a board:
creates the GPIO chip the board would have (gpio-sim, 28 lines like the Pi's header), runs
`systemd/install.sh` from a copy of the checkout, points the configuration at the chip with
`tablectl config set`, starts the unit, then looks at the running service from outside: what
systemd says (READY, STATUS=, watchdog), what the kernel says about the process (its mounts,
privileges, seccomp, groups, open chip), and `tablectl status` as an admin logged in like over SSH.

In the install boot (settings `mode` "install") it runs install.sh alone, on the fresh root, with
the network QEMU gives when install.sh needs apt (settings `network`), and powers off cleanly: the
host keeps that disk for the check boots (hil/systemd_vm.py). A check boot starts from it: the table
built from this checkout (table/ on the second disk) goes into the venv, then install.sh --no-pip.

Results go to /dev/ttyS1 (a file on the host): progress lines `hil: ...` and one final line
`HIL-RESULT {json}`. Kernel interfaces used: Documentation/admin-guide/gpio/gpio-sim.rst (configfs),
proc(5) (status, mountinfo), systemd.exec(5)/systemd.service(5) properties via `systemctl show`.
"""

from __future__ import annotations

import contextlib
import grp
import json
import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import termios
import time
from pathlib import Path

MEDIA = Path("/mnt/hil")           # the second disk: src/, wheels/, settings.json
SRC = Path("/usr/local/src/table-host")  # where the checkout is copied, as a `git clone` would put it
UNIT = "table-host.service"
CHIP_NAME = "table"                # the configfs directory; the chip's label is set below
CHIP_LABEL = "table-gpio"
LINES = 28                         # GPIO0..GPIO27, the Pi header's BCM lines
RESULTS = "/dev/ttyS1"             # the second serial port: a file on the host
T0 = time.monotonic()
OUT: list = []                     # the open results port, once main() runs


def say(text: str) -> None:
    line = f"hil: {time.monotonic() - T0:6.1f}s {text}"
    print(line, flush=True)
    for out in OUT:
        out.write(line + "\n")


def sh(cmd: list[str] | str, timeout: float = 600, env: dict[str, str] | None = None,
       check: bool = False) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"{cmd if isinstance(cmd, str) else ' '.join(cmd)} exited {done.returncode}: "
                           f"{tail(done.stderr or done.stdout)}")
    return done


def tail(text: str, lines: int = 6) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def show(unit: str = UNIT) -> dict[str, str]:
    props = ("ActiveState,SubState,Result,StatusText,MainPID,NRestarts,ExecMainStatus,ExecMainCode,"
             "WatchdogUSec,WatchdogTimestampMonotonic,ExecMainStartTimestampMonotonic,"
             "ActiveEnterTimestampMonotonic,User,Group,SupplementaryGroups,Environment")
    out = sh(["systemctl", "show", "-p", props, unit]).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def make_chip() -> dict[str, object]:
    """A gpio-sim chip with the Pi header's 28 lines, named GPIO0..GPIO27 like the Pi's chip."""
    sh(["modprobe", "gpio-sim"], check=True)
    cfg = Path("/sys/kernel/config")
    if not (cfg / "gpio-sim").is_dir():
        sh(["mount", "-t", "configfs", "none", str(cfg)], check=True)
    bank = cfg / "gpio-sim" / CHIP_NAME / "bank0"
    bank.mkdir(parents=True)
    (bank / "num_lines").write_text(str(LINES))
    (bank / "label").write_text(CHIP_LABEL)
    for n in range(LINES):
        (bank / f"line{n}").mkdir()
        (bank / f"line{n}" / "name").write_text(f"GPIO{n}")
    (bank.parent / "live").write_text("1")
    chip = (bank / "chip_name").read_text().strip()
    sh(["udevadm", "settle", "--timeout=20"])
    return {"chip": chip, "label": CHIP_LABEL, "device": f"/dev/{chip}", **device_owner(f"/dev/{chip}")}


def device_owner(path: str) -> dict[str, object]:
    try:
        st = os.stat(path)
    except OSError as exc:
        return {"device_error": str(exc)}
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = str(st.st_gid)
    return {"device_group": group, "device_mode": oct(st.st_mode & 0o777)}


def update() -> dict[str, object]:
    """The check boot's: the table from this checkout into the kept install's venv (its dependencies
    are there), as install.sh's pip would install it, then install.sh --no-pip for the rest."""
    wheels = sorted((MEDIA / "table").glob("table_host-*.whl"))
    if not wheels:
        raise RuntimeError(f"no table_host wheel in {MEDIA / 'table'}")
    t = time.monotonic()
    done = sh(["/opt/table-host/venv/bin/pip", "install", "--quiet", "--disable-pip-version-check",
               "--no-deps", "--force-reinstall", "--no-index", str(wheels[0])], timeout=3600)
    r: dict[str, object] = {"update_pip_rc": done.returncode, "update_pip_s": round(time.monotonic() - t, 1),
                            "update_pip_output": tail(done.stdout + done.stderr, 6)}
    if done.returncode != 0:
        raise RuntimeError(f"pip install {wheels[0].name} exited {done.returncode}: {r['update_pip_output']}")
    return r | install({}, pip=False)


def install(settings: dict[str, object], pip: bool = True) -> dict[str, object]:
    """install.sh exactly as on a board, from a copy of the checkout, pip offline from the wheelhouse
    (pip=False: --no-pip, the venv as it is)."""
    if SRC.exists():
        shutil.rmtree(SRC)
    shutil.copytree(MEDIA / "src", SRC, symlinks=True)
    # Traced (set -x) with a time stamp on each command, to a file of its own: where install.sh's time
    # goes. PS4 is set inside: bash takes no PS4 from the environment when it runs as root.
    trace = Path("/root/install-trace.txt")
    with trace.open("w") as out:
        env = {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_LOG": "/root/pip.log"}
        traced = f'BASH_XTRACEFD={out.fileno()}; PS4="+ \\$EPOCHREALTIME "; set -x; . "$0" "$@"'
        t = time.monotonic()
        args = [str(SRC / "systemd/install.sh"), "--no-start",
                *(["--wheels", str(MEDIA / "wheels")] if pip else ["--no-pip"])]
        # The guest's clock is the host's: under load install.sh takes many times its quiet 3-9 min.
        done = subprocess.run(["bash", "-c", traced, *args], capture_output=True, text=True, timeout=3600,
                              env={**os.environ, **env}, pass_fds=(out.fileno(),), check=False)
        took = time.monotonic() - t
    noted = Path("/opt/table-host/installed-packages")  # what install.sh apt-got (uninstall.sh gives back)
    return {"install_rc": done.returncode, "install_s": round(took, 1),
            "install_output": tail(done.stdout + done.stderr, 12), "pip_marks": pip_marks(t),
            "install_steps": slowest_steps(trace.read_text(errors="replace")),
            "lgpio_from": wheel_tag("lgpio"),
            "apt_installed": noted.read_text().split() if noted.exists() else []}


def network() -> dict[str, object]:
    """QEMU's user-mode network, as its built-in DHCP server would hand it out (the root has no DHCP
    client): 10.0.2.15, the gateway 10.0.2.2, its DNS 10.0.2.3. Busybox's `ip` (busybox-static)."""
    sh(["modprobe", "virtio_net"])
    sh(["udevadm", "settle", "--timeout=60"])
    for cmd in (["ip", "link", "set", "eth0", "up"], ["ip", "addr", "add", "10.0.2.15/24", "dev", "eth0"],
                ["ip", "route", "add", "default", "via", "10.0.2.2"]):
        sh(["/bin/busybox", *cmd], check=True)
    resolv = Path("/etc/resolv.conf")
    if resolv.is_symlink():
        resolv.unlink()
    resolv.write_text("nameserver 10.0.2.3\n")
    return {"network": "10.0.2.15 via 10.0.2.2 (QEMU user mode)"}


def slowest_steps(trace: str, count: int = 8) -> list[str]:
    """The commands of install.sh that took longest, from its `bash -x` trace (PS4 starts each traced
    command with $EPOCHREALTIME): each command lasts until the next one starts."""
    stamped = []
    for line in trace.splitlines():
        found = re.match(r"(\++) (\d+\.\d+) (.*)", line)
        if found:
            stamped.append((float(found.group(2)), len(found.group(1)), found.group(3)[:120]))
    spans = [(stamped[i + 1][0] - at, depth, text) for i, (at, depth, text) in enumerate(stamped[:-1])]
    slowest = sorted(spans, reverse=True)[:count]
    return [f"{took:6.1f} s {'+' * depth} {text}" for took, depth, text in slowest]


def wheel_tag(project: str) -> str | None:
    """The installed distribution's wheel tag (its dist-info WHEEL file): PyPI's manylinux wheel, or
    `linux_x86_64` when pip built it here from the source distribution."""
    venv = Path("/opt/table-host/venv/lib")
    found = sorted(venv.glob(f"python3*/site-packages/{project}-*.dist-info/WHEEL"))
    if not found:
        return None
    tags = [ln.split(":", 1)[1].strip() for ln in found[0].read_text().splitlines() if ln.startswith("Tag:")]
    built = any(t.endswith("-linux_x86_64") for t in tags)
    return f"{'built here' if built else 'wheel'} {', '.join(tags)} ({found[0].parent.name})"


def pip_marks(t0: float) -> list[str]:
    """Where pip spent the install's time (its log has a time stamp on every line)."""
    log = Path("/root/pip.log")
    if not log.exists():
        return []
    keep = ("Processing ", "Installing build dependencies", "Getting requirements", "Preparing metadata",
            "Building wheel", "Created wheel", "Installing collected", "Successfully installed")
    lines = log.read_text(errors="replace").splitlines()
    marks = [ln[:200] for ln in lines if any(k in ln for k in keep)]
    errors = [ln[:200] for ln in lines if re.search(r"error:|cannot find|No such file", ln)]
    return [lines[0][:120], *marks[:90], *errors[:8], lines[-1][:120]] if lines else []


def configure(chip: dict[str, object], settings: dict[str, object]) -> dict[str, object]:
    """Point the installed configuration at the chip as an admin would: `sudo tablectl config set`."""
    results = []
    for key, value in settings.get("config", {}).items():
        text = str(value).replace("$CHIP", str(chip.get("label", "")))
        done = sh(["/opt/table-host/venv/bin/tablectl", "config", "set", key, text])
        results.append({"key": key, "value": text, "rc": done.returncode,
                        "output": tail(done.stdout + done.stderr, 3)})
    return {"config_set": results, "config_ok": all(r["rc"] == 0 for r in results)}


def wait_active(seconds: float, until_restart: bool) -> tuple[dict[str, str], float]:
    """Until READY (active), failed, or (until_restart) the first exit that systemd restarts."""
    t = time.monotonic()
    state = show()
    while time.monotonic() - t < seconds:
        state = show()
        if state.get("ActiveState") in ("active", "failed"):
            break
        if until_restart and (state.get("NRestarts", "0") != "0" or state.get("SubState") == "auto-restart"):
            break
        time.sleep(0.5)
    return state, round(time.monotonic() - t, 1)


def start_unit(wait: float, until_restart: bool = False) -> dict[str, object]:
    sh(["systemctl", "daemon-reload"])
    sh(["systemctl", "reset-failed", UNIT])
    t = time.monotonic()
    sh(["systemctl", "enable", UNIT])
    sh(["systemctl", "start", "--no-block", UNIT])
    state, took = wait_active(wait, until_restart)
    return {"state": state, "start_s": round(time.monotonic() - t, 1), "active_after_s": took}


def span_s(text: str) -> float:
    """A systemd time span as `systemctl show` prints it ("10s", "1min 30s", "500ms") in seconds."""
    units = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
    total = 0.0
    for number, unit in re.findall(r"([0-9.]+)\s*(us|ms|min|s|h)?", text or ""):
        total += float(number) * units[unit or "us"]  # a bare number is microseconds
    return total


def watchdog(state: dict[str, str]) -> dict[str, object]:
    """The service pings: WatchdogTimestamp moves, and no restart for more than two watchdog periods."""
    period = span_s(state.get("WatchdogUSec", ""))
    if not period:
        return {"watchdog_ok": False, "watchdog_error": "the unit has no WatchdogSec"}
    first = state
    stamps = {int(first.get("WatchdogTimestampMonotonic", "0") or 0)}
    end = time.monotonic() + 2 * period + 2
    while time.monotonic() < end:
        time.sleep(1)
        now = show()
        stamps.add(int(now.get("WatchdogTimestampMonotonic", "0") or 0))
    ok = (len(stamps - {0}) >= 2 and now.get("ActiveState") == "active"
          and now.get("NRestarts") == first.get("NRestarts") == "0"
          and now.get("MainPID") == first.get("MainPID"))
    return {"watchdog_ok": ok, "watchdog_s": period, "watchdog_pings_seen": len(stamps - {0}),
            "watched_s": round(2 * period + 2, 1), "NRestarts": now.get("NRestarts"),
            "state_after_watch": {k: now.get(k) for k in ("ActiveState", "SubState", "MainPID",
                                                          "StatusText")}}


def sandbox(pid: int) -> dict[str, object]:
    """The sandbox in force, read from the kernel's view of the service's process (proc(5))."""
    proc = Path(f"/proc/{pid}")
    out: dict[str, object] = {}
    status = dict(line.split(":", 1) for line in (proc / "status").read_text().splitlines() if ":" in line)
    status = {k: v.strip() for k, v in status.items()}
    gids = [int(g) for g in status.get("Groups", "").split()]
    names = []
    for g in gids:
        try:
            names.append(grp.getgrgid(g).gr_name)
        except KeyError:
            names.append(str(g))
    uid = int(status["Uid"].split()[0])
    out |= {"user": pwd.getpwuid(uid).pw_name, "groups": names,
            "no_new_privs": status.get("NoNewPrivs") == "1",
            "seccomp_filter": status.get("Seccomp") == "2",
            "seccomp_filters": int(status.get("Seccomp_filters", "0")),
            "cap_eff_zero": int(status.get("CapEff", "1"), 16) == 0,
            "cap_bnd_zero": int(status.get("CapBnd", "1"), 16) == 0}
    mounts = {}
    for line in (proc / "mountinfo").read_text().splitlines():
        fields = line.split()
        mounts[fields[4]] = fields[5] + "," + line.split(" - ", 1)[1].split()[-1]
    out["root_read_only"] = "ro" in mounts.get("/", "").split(",")
    out["usr_read_only"] = "ro" in mounts.get("/usr", mounts.get("/", "")).split(",")
    out["etc_read_only"] = "ro" in mounts.get("/etc", mounts.get("/", "")).split(",")
    run = next((m for m in sorted(mounts, key=len, reverse=True) if "/run/table-host".startswith(m)), "/")
    out["runtime_dir_writable"] = "rw" in mounts.get(run, "").split(",")[:1]
    out["proc_mount"] = mounts.get("/proc", "")
    out["proc_cpuinfo_visible"] = os.path.exists(f"{proc}/root/proc/cpuinfo")
    out["cwd"] = os.readlink(proc / "cwd")
    fds = []
    for fd in (proc / "fd").iterdir():
        with contextlib.suppress(OSError):  # closed meanwhile
            fds.append(os.readlink(fd))
    out["open_gpiochips"] = sorted({f for f in fds if f.startswith("/dev/gpiochip")})
    threads = []  # proc(5) stat: field 40 rt_priority, 41 policy (1 SCHED_FIFO, 2 SCHED_RR)
    for task in (proc / "task").iterdir():
        with contextlib.suppress(OSError):
            text = (task / "stat").read_text()
            fields = text.rsplit(")", 1)[1].split()
            if fields[38] in ("1", "2"):
                name = text[text.index("(") + 1:text.rindex(")")]
                threads.append(f"{name} {'FIFO' if fields[38] == '1' else 'RR'} {fields[37]}")
    out["realtime_threads"] = sorted(threads)
    rundir = Path("/run/table-host")
    out["runtime_files"] = sorted(p.name for p in rundir.iterdir()) if rundir.is_dir() else []
    out["lgpio_fifo_in_runtime_dir"] = any(n.startswith(".lgd-nfy") for n in out["runtime_files"])
    out["lgpio_fifo_in_root"] = any(p.name.startswith(".lgd-nfy") for p in Path("/").iterdir())
    env = (proc / "environ").read_bytes().split(b"\0")
    out["LG_WD"] = next((e.decode().split("=", 1)[1] for e in env if e.startswith(b"LG_WD=")), None)
    return out


def security() -> dict[str, object]:
    done = sh(["systemd-analyze", "security", "--no-pager", UNIT])
    m = re.search(r"Overall exposure level for \S+: ([0-9.]+) (\w+)", done.stdout)
    return {"security_exposure": float(m.group(1)) if m else None,
            "security_rating": m.group(2) if m else None,
            "security_error": None if m else tail(done.stderr or done.stdout, 3)}


def tablectl_as_admin() -> dict[str, object]:
    """`tablectl status` in a login shell of a table-admin member (what SSH gives)."""
    done = sh(["runuser", "-l", "admin", "-c", "tablectl status"], timeout=600)
    out: dict[str, object] = {"tablectl_rc": done.returncode,
                              "tablectl_output": tail(done.stdout + done.stderr, 8)}
    if done.returncode != 0:  # tell PATH from socket permission
        full = sh(["runuser", "-u", "admin", "--", "/opt/table-host/venv/bin/tablectl", "status"],
                  timeout=600)
        out |= {"tablectl_full_path_rc": full.returncode,
                "tablectl_full_path_output": tail(full.stdout + full.stderr, 4)}
    # The documented workflow (docs/daemon.md "Access"): an admin changes a setting; the daemon reloads.
    conf = sh(["runuser", "-l", "admin", "-c", "tablectl config set arbiter.window_ms 5.0"], timeout=600)
    etc = os.stat("/etc/table-host")
    out |= {"config_set_rc": conf.returncode, "config_set_output": tail(conf.stdout + conf.stderr, 4),
            "etc_mode": f"{stat.S_IMODE(etc.st_mode):o}"}
    out["tablectl_ok"] = done.returncode == 0 and conf.returncode == 0
    return out


def journal(lines: int = 25) -> str:
    done = sh(["journalctl", "-b", "-u", UNIT, "--no-pager", "-o", "cat", "-n", str(lines)])
    return tail(done.stdout, lines)


def journal_priorities() -> dict[str, object]:
    """The daemon writes `<6>daemon: ...` on stderr (sd-daemon(3) prefixes); journald must take
    the prefix as the entry's PRIORITY (SyslogLevelPrefix=, on by default) and strip it. So
    the ready line is PRIORITY 6 and no message of the unit still starts with `<N>`."""
    done = sh(["journalctl", "-b", "-u", UNIT, "--no-pager", "-o", "json", "-n", "300"])
    entries = []
    for line in done.stdout.splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if isinstance(entry.get("MESSAGE"), str):
                entries.append((entry.get("PRIORITY"), entry["MESSAGE"]))
    ready = [priority for priority, message in entries if message.startswith("daemon: table-host ready")]
    raw = [message for _, message in entries if re.match(r"<[0-7]>", message)]
    return {"journal_priority_ok": bool(ready) and set(ready) == {"6"} and not raw,
            "journal_ready_priority": ready[:1], "journal_raw_prefixes": raw[:3]}


def allocator(pid: int, wanted: dict[str, str]) -> dict[str, object]:
    """The allocator the service's process started with (its environment, proc(5) environ): the
    unit's Environment= chooses it, so the daemon runs on it without starting itself again."""
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    env = dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)
    found = {k: env.get(k) for k in wanted}
    return {"found": found, "ok": bool(wanted) and found == wanted}


def check_unit(settings: dict[str, object], r: dict[str, object]) -> None:
    started = start_unit(float(settings.get("ready_timeout_s", 120)))
    state = started["state"]
    r["start"] = started
    r["unit_active"] = state.get("ActiveState") == "active" and state.get("SubState") == "running"
    r["status_text"] = state.get("StatusText")
    say(f"unit: {state.get('ActiveState')}/{state.get('SubState')} after {started['active_after_s']} s: "
        f"{state.get('StatusText')!r}")
    pid = int(state.get("MainPID", "0") or 0)
    if r["unit_active"]:
        r |= watchdog(state)
        say(f"watchdog: ok={r['watchdog_ok']} pings seen {r.get('watchdog_pings_seen')}")
        pid = int(show().get("MainPID", "0") or 0)
    else:
        r["watchdog_ok"] = False
    if pid:
        r["sandbox"] = sandbox(pid)
        r["allocator"] = allocator(pid, dict(settings.get("allocator", {})))  # type: ignore[call-overload]
    r |= security()
    r |= tablectl_as_admin()
    say(f"tablectl status as admin: rc {r['tablectl_rc']}")
    r |= journal_priorities()
    say(f"journal: priorities taken from the prefixes {r['journal_priority_ok']} "
        f"(ready line {r['journal_ready_priority']}, raw prefixes {r['journal_raw_prefixes']})")
    r["journal"] = journal()


# Run in a transient service with the unit's own sandbox (systemd-run -p): what the table needs.
PROBES = {
    # gpiozero's Pi detection reads these (gpiozero/pins/local.py get_pi_revision)
    "proc_cpuinfo": "import os; print(os.path.exists('/proc/cpuinfo'))",
    # lgpio makes its notification FIFO .lgd-nfyN in $LG_WD, else the working directory
    "lgpio": "import lgpio; h = lgpio.gpiochip_open(0); lgpio.gpiochip_close(h); print(True)",
}
# Sockets= (the web view's port, table-web.socket) names a unit a transient probe has not got.
PROBE_SKIP = {"Type", "NotifyAccess", "Sockets", "NonBlocking", "ExecStart", "ExecReload", "Restart",
              "RestartSec", "WatchdogSec", "TimeoutStopSec", "StateDirectory", "RuntimeDirectory",
              "ConfigurationDirectory"}


def probe(unit_text: str, code: str) -> dict[str, object]:
    props: list[str] = []
    section = ""
    for line in unit_text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
            continue
        if section != "[Service]" or not line or line.startswith("#") or "=" not in line:
            continue
        if line.split("=", 1)[0] in PROBE_SKIP:
            continue
        props += ["-p", line.replace("%t/table-host", "/run/table-host-probe")]
    props += ["-p", "RuntimeDirectory=table-host-probe"]
    done = sh(["systemd-run", "--wait", "--pipe", "--quiet", "--collect", *props,
               "/opt/table-host/venv/bin/python", "-c", code], timeout=600)
    return {"ok": done.returncode == 0 and done.stdout.strip() == "True",
            "output": tail(done.stdout + done.stderr, 3)}


def sandbox_probes(r: dict[str, object]) -> None:
    """The sandbox as installed and as it was before the fixes, each probed for what the table needs."""
    units = {"unit": (Path("/etc/systemd/system") / UNIT).read_text(),
             "old_unit": (MEDIA / "faulty" / UNIT).read_text()}
    found = {name: {what: probe(text, code) for what, code in PROBES.items()} for name, text in units.items()}
    r["sandbox_probes"] = found
    r["old_unit_caught"] = (all(p["ok"] for p in found["unit"].values())
                            and not all(p["ok"] for p in found["old_unit"].values()))
    say(f"sandbox probes: unit {[(k, v['ok']) for k, v in found['unit'].items()]}, "
        f"old unit {[(k, v['ok']) for k, v in found['old_unit'].items()]}")


def faulty_unit(settings: dict[str, object], r: dict[str, object]) -> None:
    """The unit as it was before the sandbox faults were fixed: it must not come up."""
    old = MEDIA / "faulty" / UNIT
    good = Path("/etc/systemd/system") / UNIT
    saved = good.read_bytes()
    sh(["systemctl", "stop", UNIT], timeout=60)
    sh(["journalctl", "--rotate"])
    shutil.copyfile(old, good)
    started = start_unit(float(settings.get("ready_timeout_s", 180)), until_restart=True)
    if started["state"].get("ActiveState") == "active":
        time.sleep(float(settings.get("faulty_settle_s", 5)))  # up: does it stay up?
    state = show()
    r["faulty_unit"] = {"ActiveState": state.get("ActiveState"), "SubState": state.get("SubState"),
                        "NRestarts": state.get("NRestarts"), "StatusText": state.get("StatusText"),
                        "ExecMainStatus": state.get("ExecMainStatus"),
                        "came_up": state.get("ActiveState") == "active" and state.get("NRestarts") == "0",
                        "active_after_s": started["active_after_s"], "journal": journal(12)}
    pid = int(state.get("MainPID", "0") or 0)
    if pid:
        with contextlib.suppress(OSError):
            r["faulty_unit"]["sandbox"] = sandbox(pid)
    say(f"faulty unit: {state.get('ActiveState')}/{state.get('SubState')} restarts {state.get('NRestarts')}")
    sh(["systemctl", "stop", UNIT], timeout=60)
    good.write_bytes(saved)
    sh(["systemctl", "daemon-reload"])


# The update part (hil/update_vm.py): one stored match in the journal before the table first
# starts, recorded by the installed table-host's own journal code, as bots would play it.
SEED = """
import random, sys
from pathlib import Path
from firmware_host.cli.common import with_games
from firmware_host.engine.game import sight_of
from firmware_host.play.simulate import make_bots
from firmware_host.service.journal import Store
from firmware_host.table.matches import new_match
with_games()
store = Store(Path(sys.argv[1]))
match = new_match("dice", 2, 3, {"rounds": 1})
mid = store.begin_match(match, [0, 1])
bots, rng, now = make_bots(match.players, "hard", 1), random.Random(1), 0
while not match.is_over and not match.results:
    seat = rng.randrange(match.players)
    action = bots[seat].choose(sight_of(match.round, seat), now)
    now += 1_000_000
    if action is None or match.apply(action) is not None:
        continue
    store.record(mid, match.round_no, action)
    if match.round.result is not None:
        store.round_over(mid, match)
store.close()
"""
STATE = Path("/var/lib/table-host")
HOME = Path("/opt/table-host")


WATCHDOG_ROOM = "[Service]\nWatchdogSec=120\n"
"""The update part's drop-in. The systemd part checks the watchdog as installed (10 s); here one
vCPU also runs tablectl, dpkg and environments' builds beside the daemon, and in the first run
systemd killed the daemon by its watchdog (`stop-watchdog`) just after its first READY=1: under
TCG on a loaded host a pause of the game thread of 0.1-0.2 s on the host stretches past 10 s."""


def watchdog_room() -> None:
    drop_in = Path("/etc/systemd/system") / f"{UNIT}.d" / "hil-watchdog.conf"
    drop_in.parent.mkdir(parents=True, exist_ok=True)
    drop_in.write_text(WATCHDOG_ROOM)
    sh(["systemctl", "daemon-reload"], check=True)


def seed_journal() -> None:
    """The state directory as the unit's StateDirectory= makes it, with one stored match in it."""
    STATE.mkdir(mode=0o700, exist_ok=True)
    sh([str(HOME / "venv/bin/python"), "-c", SEED, str(STATE / "table.db")], check=True)
    sh(["chown", "-R", "table-host:table-admin", str(STATE)], check=True)


def tablectl(*args: str, timeout: float = 600, env: dict[str, str] | None = None) -> dict[str, object]:
    """tablectl as root (an admin's sudo): exit status, its JSON answer, its lines."""
    t = time.monotonic()
    done = sh([str(HOME / "venv/bin/tablectl"), *args], timeout=timeout, env=env)
    answer = None
    lines = done.stdout.strip().splitlines()
    with contextlib.suppress(ValueError, IndexError):
        answer = json.loads(lines[-1])
    return {"rc": done.returncode, "answer": answer, "stdout": tail(done.stdout, 60),
            "stderr": tail(done.stderr, 1), "stderr_lines": len(done.stderr.strip().splitlines()),
            "progress": tail(done.stderr, 60), "s": round(time.monotonic() - t, 1)}


def facts() -> dict[str, object]:
    """What runs: the unit's state and main process, the commit the table names, what its journal
    lists, the version links."""
    state = show()
    status = tablectl("--json", "status").get("answer") or {}
    history = tablectl("--json", "history").get("answer") or {}
    links = {}
    for name in ("current", "previous"):
        with contextlib.suppress(OSError):
            links[name] = os.readlink(HOME / name)
    return {"active": f"{state.get('ActiveState')}/{state.get('SubState')}", "pid": state.get("MainPID"),
            "restarts": state.get("NRestarts"),
            "commit": (status.get("version") or {}).get("commit") if isinstance(status, dict) else None,
            "history": [[m.get("match"), m.get("game")] for m in history.get("matches", [])]
            if isinstance(history, dict) and "matches" in history else None,
            "pending": (HOME / "update-pending").exists(), **links}


def update_and_restore(settings: dict[str, object], r: dict[str, object]) -> None:
    """tablectl update to a good version and to a broken one, then tablectl restore, under systemd."""
    u: dict[str, object] = {"seconds": {}}
    r["update"] = u
    seconds: dict[str, float] = u["seconds"]  # type: ignore[assignment]
    commits: dict[str, str] = settings["commits"]  # type: ignore[assignment]

    def step(name: str, what) -> None:
        t = time.monotonic()
        u[name] = what()
        seconds[name] = round(time.monotonic() - t, 1)
        keys = ("rc", "commit", "active", "pid", "history", "current", "stderr")
        brief = {k: v for k, v in u[name].items() if k in keys} if isinstance(u[name], dict) else u[name]
        say(f"update part: {name} in {seconds[name]} s: {brief}")

    offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(MEDIA / "wheels")}  # pip has no index here
    step("before", facts)
    step("backup", lambda: tablectl("--json", "backup", "/root/before.tar.gz"))
    for key, value in (("update.source", f'"{MEDIA / "update.git"}"'), ("update.ref", '"good"')):
        sh([str(HOME / "venv/bin/tablectl"), "config", "set", key, value], check=True)
    step("no_git", lambda: tablectl("--json", "update", "--yes", env=offline))
    debs = sorted(str(d) for d in (MEDIA / "debs").glob("*.deb"))
    step("git", lambda: {"rc": sh(["dpkg", "-i", *debs], timeout=1800).returncode,
                         "version": sh(["git", "--version"]).stdout.strip()})
    step("good", lambda: tablectl("--json", "update", "--yes", timeout=3600, env=offline))
    step("after_good", facts)
    sh([str(HOME / "venv/bin/tablectl"), "config", "set", "update.ref", '"broken"'], check=True)
    step("broken", lambda: tablectl("--json", "update", "--yes", timeout=3600, env=offline))
    step("after_broken", facts)
    u["broken_journal"] = [ln for ln in journal(200).splitlines()
                           if "status=70" in ln or "Failed" in ln or "exited" in ln][-6:]
    # The journal lost (a new one at the next start), then the backup restored over it.
    sh(["systemctl", "stop", UNIT], timeout=600)
    for extra in ("", "-wal", "-shm"):
        (STATE / f"table.db{extra}").unlink(missing_ok=True)
    step("emptied", lambda: (start_unit(600), facts())[1])
    step("restore", lambda: tablectl("--json", "restore", "/root/before.tar.gz", timeout=1800))
    step("after_restore", facts)
    u["aside"] = sorted(p.name for p in STATE.glob("before-restore-*"))
    t = time.monotonic()
    daily = sh(["systemctl", "start", "table-backup.service"], timeout=1200)
    u["daily_backup"] = {"rc": daily.returncode, "result": show("table-backup.service").get("Result"),
                         "output": tail(daily.stderr, 3),
                         "archives": sorted(p.name for p in (STATE / "backups").glob("*.tar.gz"))}
    seconds["daily_backup"] = round(time.monotonic() - t, 1)
    say(f"update part: daily backup {u['daily_backup']}")
    u["commits"] = commits
    # The unit's whole journal of this boot, with the kernel's clock: what systemd did and when.
    u["unit_journal"] = sh(["journalctl", "-b", "-u", UNIT, "-u", "table-backup.service", "--no-pager",
                            "-o", "short-monotonic", "-n", "400"]).stdout.splitlines()


def main() -> int:
    OUT.append(open(RESULTS, "w", buffering=1))  # noqa: SIM115 - open for the whole run
    settings = json.loads((MEDIA / "settings.json").read_text())
    r: dict[str, object] = {"unit_active": False, "watchdog_ok": False, "tablectl_ok": False, "failed": []}
    up = float(Path("/proc/uptime").read_text().split()[0])
    r["boot_s"] = round(up, 1)
    r["kernel"] = os.uname().release
    r["systemd"] = sh(["systemctl", "--version"]).stdout.split("\n")[0]
    r["pid1"] = Path("/proc/1/comm").read_text().strip()
    r["python"] = sh(["python3", "--version"]).stdout.strip()
    r["os"] = next((ln.split("=", 1)[1].strip('"') for ln in Path("/etc/os-release").read_text().splitlines()
                    if ln.startswith("PRETTY_NAME=")), None)
    say(f"systemd up after {up:.1f} s ({r['os']}, {r['systemd']}, PID 1 is {r['pid1']}, {r['python']})")
    try:  # figures only: a guest slowed by a loaded host (TCG) must still run the checks
        r["boot_time"] = sh(["systemd-analyze", "time"]).stdout.strip()
        r["boot_blame"] = sh(["systemd-analyze", "blame", "--no-pager"]).stdout.strip().splitlines()[:10]
    except subprocess.TimeoutExpired as exc:
        r["boot_time"] = f"systemd-analyze timed out after {exc.timeout} s"
    if settings.get("mode") == "update":  # hil/update_vm.py
        steps = [("chip", lambda: r.update(gpio=make_chip())),
                 ("install", lambda: r.update(update())),
                 ("configure", lambda: r.update(configure(r.get("gpio", {}), settings))),
                 ("journal", seed_journal),
                 ("watchdog room", watchdog_room),
                 ("unit", lambda: r.update(start=start_unit(float(settings.get("ready_timeout_s", 600))))),
                 ("update and restore", lambda: update_and_restore(settings, r))]
    elif settings.get("mode") == "install":
        steps = [*([("network", lambda: r.update(network()))] if settings.get("network") else []),
                 ("install", lambda: r.update(install(settings)))]
    else:
        steps = [("chip", lambda: r.update(gpio=make_chip())),
                 ("install", lambda: r.update(update())),
                 ("admin", lambda: sh(["useradd", "--create-home", "--shell", "/bin/bash", "--groups",
                                       "table-admin", "admin"], check=True)),
                 ("configure", lambda: r.update(configure(r.get("gpio", {}), settings))),
                 ("unit", lambda: check_unit(settings, r))]
        if settings.get("faulty"):
            steps.append(("sandbox probes", lambda: sandbox_probes(r)))
        if settings.get("old_unit_start"):
            steps.append(("faulty unit", lambda: faulty_unit(settings, r)))
    for name, step in steps:
        say(f"{name} ...")
        try:
            step()
        except Exception as exc:  # one failed step is reported, the rest still say what they can
            r["failed"].append(f"{name}: {type(exc).__name__}: {exc}")
            say(f"{name} failed: {exc}")
            if name in ("install",):
                break
        if name == "install" and r.get("install_rc") != 0:
            r["failed"].append(f"install.sh exited {r.get('install_rc')}: {r.get('install_output')}")
            break
    if isinstance(r.get("gpio"), dict):
        r["gpio"] |= device_owner(str(r["gpio"]["device"]))
    try:
        r["table_host_groups"] = [g.gr_name for g in grp.getgrall() if "table-host" in g.gr_mem]
    except Exception as exc:
        r["table_host_groups"] = str(exc)
    r["check_s"] = round(time.monotonic() - T0, 1)
    OUT[0].write("HIL-RESULT " + json.dumps(r, default=str) + "\n")
    OUT[0].flush()
    termios.tcdrain(OUT[0].fileno())
    os.sync()
    # Power off here: once, the VM stayed up minutes after the script's last line (exit of the
    # unit's main process, with a tty as its controlling terminal, never reached SuccessAction).
    # The install boot's disk is kept: its file systems are unmounted first (one --force), the check
    # boot's goes at once (two).
    keep = settings.get("mode") == "install"
    sh(["systemctl", "poweroff", "--force", *([] if keep else ["--force"])])
    return 0


if __name__ == "__main__":
    sys.exit(main())
