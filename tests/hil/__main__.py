"""`./dev hil`: the virtual Raspberry Pi. Boots a Linux kernel under QEMU and runs the table on it.

Parts, each plugged in when its module is present (docs/virtual-pi.md):
- gpio (hil/gpio.py): the daemon on a gpio-sim chip in a virtme-ng VM, pressed through sysfs;
- firmware (hil/firmware.py): the LED firmware under MicroPython, fed by the host's LedLink;
- systemd (hil/systemd_vm.py): the unit under systemd as PID 1 in a VM;
- update (hil/update_vm.py): `tablectl update` and `restore` under systemd, on the bookworm guest;
  not run unless asked for (`--only update`): it builds two environments under TCG (10-25 min).
A part that is absent or fails has its keys null and the summary says why. Exit status: 0 when
every part that ran passed its checks, 1 when one failed, 2 when the set-up is missing something
(one line naming it and how to get it).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .kernel import Kernel, KernelUnavailable, ensure_kernel

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("HIL_CACHE") or REPO / ".cache" / "hil")  # .ci/run keeps it out of the clone
EXIT_SETUP = 2
VM_TIMEOUT_S = 600

GPIO_KEYS = ("kernel", "gpio_sim", "presses_sent", "presses_decided", "fraction_in_order",
             "edge_to_decision_p99_ms", "backend", "chip_label", "i2c")
FIRMWARE_KEYS = ("micropython_version", "firmware_frames_sent", "firmware_frames_acked")
SYSTEMD_KEYS = ("unit_active", "watchdog_ok", "allocator_ok", "guests")  # guests: the Debian releases booted
SUMMARY_KEYS = (*GPIO_KEYS, *SYSTEMD_KEYS, *FIRMWARE_KEYS)


class SetupMissing(Exception):
    """Something the host needs is not there: the message says what and how to get it."""


SETUP_ERRORS = ("SetupMissing", "Missing")
"""A part raising one of these could not start for want of something on the host (exit 2)."""


HOST_TOOLS = {  # what vng needs on the host, and the Debian package that brings it
    "qemu-system-x86_64": "qemu-system-x86",
    "busybox": "busybox-static",
    "depmod": "kmod",
    "udevadm": "udev",
}


def check_host() -> Path:
    """The host tools virtme-ng needs; the vng in this venv."""
    path = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
    for tool, package in HOST_TOOLS.items():
        if not shutil.which(tool, path=path):
            raise SetupMissing(f"{tool} is missing: apt-get install {package} (./dev hil does it as root)")
    vng = Path(sys.executable).with_name("vng")
    if not vng.exists():
        raise SetupMissing(f"virtme-ng is missing from {vng.parent}: .venv/bin/pip install -e '.[hil]' "
                           "(./dev hil does it)")
    return vng


def boot(vng: Path, kernel: Kernel, command: str, out: Path, log: Callable[[str], None]) -> tuple[int, str]:
    """One VM on the host's own file system (copy-on-write): run `command`, power off.

    `out` is shared read-write with the guest. TCG only: KVM does not work on these machines.
    """
    env = {**os.environ, "PATH": f"{vng.parent}:{os.environ.get('PATH', '')}:/usr/sbin:/sbin"}
    cmd = [str(vng), "--run", str(kernel.vmlinuz), "--disable-kvm", "--rwdir", str(out),
           "--exec", command]
    for attempt in (1, 2):
        start = time.monotonic()
        code, output = run_group(cmd, env, VM_TIMEOUT_S)
        if code is None:
            return 124, f"the VM did not finish in {VM_TIMEOUT_S} s (its process group killed): " \
                        f"{output[-400:]}"
        log(f"hil: VM exited with {code} after {time.monotonic() - start:.0f} s")
        # About one boot in ten ends at once with 255 and no output (virtual-pi notes): retry once.
        if code == 255 and not output and attempt == 1:
            log("hil: the VM ended at once with 255 and no output; booting it again")
            continue
        return code, output
    return 255, ""


def run_group(cmd: list[str], env: dict[str, str], timeout: float) -> tuple[int | None, str]:
    """Run `cmd` in a session and process group of its own; on a timeout kill the whole group
    (vng, virtme-run and QEMU under them), not only vng, and say None for the exit status."""
    proc = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the session's group id is vng's pid
        output, _ = proc.communicate()
        return None, (output or "").strip()
    return proc.returncode, (output or "").strip()


def run_gpio(vng: Path, kernel: Kernel, cache: Path, log: Callable[[str], None]) -> dict[str, Any]:
    out = cache / "gpio"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    command = f"cd {REPO} && PYTHONPATH=tests {sys.executable} -m hil.gpio --out {out}"
    log(f"hil: booting Linux {kernel.version} under QEMU (TCG) for the GPIO part")
    code, output = boot(vng, kernel, command, out, log)
    result_file = out / "gpio.json"
    if not result_file.exists():
        tail = " | ".join(output.splitlines()[-6:]) or "(no output)"
        return {"ok": False, "error": f"`vng --run {kernel.vmlinuz.name} --disable-kvm --exec "
                                      f"'python -m hil.gpio'` exited with {code} and left no results: {tail}"}
    result = json.loads(result_file.read_text())
    result["vm_exit"] = code
    return result


def run_part(name: str, module: str, call: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    """Import hil.<module> and run it; absent or failing, say why."""
    try:
        mod = importlib.import_module(f"hil.{module}")
    except ModuleNotFoundError as exc:
        if exc.name == f"hil.{module}":
            return {"ran": False, "ok": None, "why": f"hil/{module}.py is not in this checkout"}
        return {"ran": False, "ok": False, "why": f"hil/{module}.py cannot be imported: {exc}"}
    try:
        result = dict(call(mod))
    except Exception as exc:
        if type(exc).__name__ in SETUP_ERRORS:  # the part's own "install X" message
            return {"ran": False, "ok": False, "setup": True, "why": str(exc)}
        return {"ran": True, "ok": False, "why": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc()}
    result.setdefault("ok", True)
    result["ran"] = True
    if not result["ok"] and "why" not in result:
        result["why"] = result.get("error") or "; ".join(result.get("problems", [])) or "its checks failed"
    return result


def summarise(parts: dict[str, dict[str, Any]], kernel: Kernel | None, seconds: float) -> dict[str, Any]:
    """One flat object: the required keys (null where a part did not give them), then each part."""
    owner = {**dict.fromkeys(GPIO_KEYS, "gpio"), **dict.fromkeys(SYSTEMD_KEYS, "systemd"),
             **dict.fromkeys(FIRMWARE_KEYS, "firmware")}
    summary: dict[str, Any] = {}
    for key in SUMMARY_KEYS:
        part = parts.get(owner[key], {})
        summary[key] = part.get(key) if part.get("ran") else None
    if summary["kernel"] is None and kernel is not None:
        summary["kernel"] = kernel.version
    ran = [p for p in parts.values() if p.get("ran")]
    summary["ok"] = bool(ran) and all(p.get("ok") for p in ran) and all(
        p.get("ok") is not False for p in parts.values())
    summary["parts"] = {name: {"ran": bool(p.get("ran")), "ok": p.get("ok"),
                               **({"why": p["why"]} if p.get("why") else {})} for name, p in parts.items()}
    summary["seconds"] = round(seconds, 1)
    return summary


def human(summary: dict[str, Any], parts: dict[str, dict[str, Any]]) -> str:
    def show(value: Any) -> str:
        return "-" if value is None else str(value)

    lines = [f"virtual Pi: {'PASS' if summary['ok'] else 'FAIL'} in {summary['seconds']} s"]
    for name, p in summary["parts"].items():
        state = "not run" if not p["ran"] else ("ok" if p["ok"] else "FAILED")
        lines.append(f"  {name:<9} {state}{': ' + p['why'] if p.get('why') else ''}")
    gpio = parts.get("gpio", {})
    lines.append(f"kernel {show(summary['kernel'])}, gpio-sim chip: {show(summary['gpio_sim'])}")
    if gpio.get("ran") and "chip" in gpio:
        lines.append(f"backend {show(summary['backend'])}: found /dev/{gpio['chip']['name']} labelled "
                     f"{show(summary['chip_label'])} (revision {gpio.get('revision')}, after "
                     f"{len(gpio['chip'].get('spares', []))} other chips)")
    if summary.get("i2c"):
        i2c = summary["i2c"]
        lines.append(f"i2c: {i2c.get('bus')} ({i2c.get('adapter')}), answered "
                     f"{', '.join(sorted(i2c.get('answered', {})))}; {i2c.get('how')}")
    if gpio.get("ran") and "checks" in gpio:
        window = (gpio.get("window_ms") or ["?"])[0]
        lines.append(f"presses decided {summary['presses_decided']}/{summary['presses_sent']}, "
                     f"in timestamp order {show(summary['fraction_in_order'])}, edge to decision p50 "
                     f"{show(gpio.get('edge_to_decision_p50_ms'))} ms, p99 "
                     f"{show(summary['edge_to_decision_p99_ms'])} ms (the arbiter holds a press {window} ms)")
        lines.append(f"edge to engine p50 {show(gpio.get('edge_to_engine_p50_ms'))} ms, p99 "
                     f"{show(gpio.get('edge_to_engine_p99_ms'))} ms; stamps inside their sysfs write "
                     f"{gpio.get('stamps_inside_write')}; late presses {gpio.get('late_presses')}")
        lines.append(f"races (epsilon {gpio.get('epsilon_ms')} ms): {gpio.get('races')}; bounce bursts "
                     f"{gpio.get('bounce_bursts')}, first contact kept {gpio.get('bounce_first_contact')}, "
                     f"bursts with a bounce dropped {gpio.get('bounce_bursts_within_debounce')}")
        lines.append(f"spikes (µs, their writes' span): {gpio.get('spike_widths_us')}, traced by the daemon "
                     f"as spikes {gpio.get('spikes_seen_by_daemon')}; tries void by a VM stall "
                     f"{gpio.get('spike_tries_void_by_stall')}")
        checks = gpio["checks"].items()
        lines.append("checks: " + ", ".join(f"{k} {'ok' if v else 'FAILED'}" for k, v in checks))
        lines += [f"  problem: {p}" for p in gpio.get("problems", [])]
    guests = ", ".join(summary["guests"] or []) or "-"
    lines.append(f"systemd on {guests}: unit active {show(summary['unit_active'])}, "
                 f"watchdog {show(summary['watchdog_ok'])}, "
                 f"allocator from the unit {show(summary['allocator_ok'])}")
    for name, g in parts.get("systemd", {}).get("by_guest", {}).items():
        fresh = g.get("installed") or {}
        kept = "kept from an earlier run" if fresh.get("cached") else f"VM {show(fresh.get('vm_s'))} s"
        apt = " ".join(fresh.get("apt_installed") or []) or "nothing"
        lines.append(f"  {name}: {'ok' if g.get('ok') else 'FAILED'}, {g.get('python') or '-'}; install boot "
                     f"{kept} (install.sh {show(fresh.get('install_s'))} s, apt-get installed {apt}); "
                     f"check boot: the table's wheel {show(g.get('update_pip_s'))} s, install.sh --no-pip "
                     f"{show(g.get('install_s'))} s, lgpio "
                     f"{g.get('lgpio_from') or '-'}, VM {show(g.get('vm_s'))} s")
    update = parts.get("update", {})
    if update.get("ran"):
        checks = ("update_git_missing_said", "update_good", "update_broken_rolled_back", "restore_ok",
                  "daily_backup_after_update")
        lines.append("update on bookworm: " + ", ".join(f"{k} {show(update.get(k))}" for k in checks)
                     + f", VM {show(update.get('vm_s'))} s")
    lines.append(f"firmware: MicroPython {show(summary['micropython_version'])}, frames acked "
                 f"{show(summary['firmware_frames_acked'])}/{show(summary['firmware_frames_sent'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="./dev hil", description="Boot a virtual Pi and run the table on it.")
    p.add_argument("--json", action="store_true", help="the summary as one JSON object on the last line")
    p.add_argument("--only", action="append", choices=("gpio", "firmware", "systemd", "update"),
                   help="run only this part (repeatable)")
    args = p.parse_args(argv)
    start = time.monotonic()

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    wanted = args.only or ["gpio", "firmware", "systemd"]
    try:
        vng = check_host()
        kernel = ensure_kernel(CACHE, log)
    except SetupMissing as exc:
        print(f"hil: {exc}", file=sys.stderr)
        return EXIT_SETUP
    except KernelUnavailable as exc:
        print(f"hil: the trixie-backports kernel could not be fetched: {exc} "
              "(needs apt-get, dpkg-deb, depmod and Debian's archive)", file=sys.stderr)
        return EXIT_SETUP
    log(f"hil: kernel {kernel.version} ({kernel.package_version}) from {kernel.root}")
    parts: dict[str, dict[str, Any]] = {}
    if "gpio" in wanted:
        parts["gpio"] = run_part("gpio", "gpio", lambda _: run_gpio(vng, kernel, CACHE, log))
    if "systemd" in wanted:
        log("hil: systemd part")
        parts["systemd"] = run_part("systemd", "systemd_vm", lambda m: m.run(CACHE, kernel))
    if "update" in wanted:
        log("hil: update part")
        parts["update"] = run_part("update", "update_vm", lambda m: m.run(CACHE, kernel, log))
    if "firmware" in wanted:
        log("hil: firmware part")
        parts["firmware"] = run_part("firmware", "firmware", lambda m: m.run(CACHE))
    summary = summarise(parts, kernel, time.monotonic() - start)
    (CACHE / "last.json").write_text(json.dumps({"summary": summary, "parts": parts}, indent=1, default=str))
    if args.json:
        print(json.dumps(summary, default=str))
    else:
        print(human(summary, parts))
    missing = [f"hil: {name}: {p['why']}" for name, p in parts.items() if p.get("setup")]
    if missing:
        print("\n".join(missing), file=sys.stderr)
        return EXIT_SETUP
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
