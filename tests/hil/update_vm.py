"""`./dev hil --only update`: `tablectl update` and `tablectl restore` under real systemd.

tests/service/test_update.py proves the update's steps in a staging root with a stand-in for
systemctl; this boots the bookworm guest of the systemd part (hil/systemd_vm.py: its root, its kept
install boot, its wheelhouse) and does it as an admin would on a Pi: `tablectl update` from a bare
git repository to a good version, then to a broken one (its daemon ends before READY=1: rolled
back by itself), then `tablectl restore` of a backup taken before, each time with the unit
restarted by systemd, and asks the running table which commit it runs and what its journal holds.

What differs from a Pi, and why: the versions are this checkout committed three times on the host
(as installed; "good", the version and a CHANGELOG line changed; "broken", its `table-host run`
exiting 70 at once) into a bare repository on the second disk, the update's source; the guest has
no network, so pip takes the wheelhouse (`PIP_NO_INDEX`, `PIP_FIND_LINKS` in tablectl's
environment: pip reads them as it reads its options) where a Pi takes PyPI; and the guest's root
has no git (the systemd part copies the checkout, a Pi's admin cloned it), so git comes as
Debian's packages downloaded here for bookworm and `dpkg -i`-ed in the guest, after the update
was first tried without it.

One guest (bookworm) is enough: the update's code is the same on trixie, and each version's
environment is built in the VM (a `venv` and a `pip install` from the wheelhouse, 4-10 min of
TCG), which is why this is a part of its own and not in the systemd part. Cache (`<cache>/sys/`):
`debs-bookworm-<key>/` (git and what it needs beyond the root); the last run in `last-update/`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from hil import systemd_vm as sv

GUEST = "bookworm"
DEBS = ["git"]  # what the update needs that the guest's root has not (a Pi's admin cloned with it)
CPU_LIMIT_S = 3600  # QEMU's CPU seconds: two environments built under TCG, on top of the check boot's
BROKEN_FROM = "    with_games()\n    path = config_path(config_file)\n"  # firmware_host/cli/run.py
CHECKS = ("update_git_missing_said", "update_good", "update_broken_rolled_back", "restore_ok",
          "daily_backup_after_update")


def _git(repo: Path, *args: str) -> str:
    return sv._run(["git", "-C", str(repo), "-c", "user.name=hil", "-c", "user.email=hil@table",
                    "-c", "init.defaultBranch=installed", *args])


def versions_repo(work: Path) -> tuple[Path, dict[str, str]]:
    """A bare repository with this checkout committed as it is (`installed`), a good version on
    branch `good` and a broken one on `broken`; their commits."""
    tree, repo = work / "versions-tree", work / "update.git"
    for old in (tree, repo):
        if old.exists():
            shutil.rmtree(old)
    for f in sv.checkout_files():
        (tree / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(sv.REPO / f, tree / f)
    _git(tree, "init", "-q")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-qm", "installed")
    init = tree / "firmware_host/__init__.py"
    text = init.read_text()
    version = text.split('__version__ = "', 1)[1].split('"', 1)[0]
    init.write_text(text.replace(f'__version__ = "{version}"', f'__version__ = "{version}+hil.good"', 1))
    changelog(tree, "The virtual Pi's good version.")
    _git(tree, "checkout", "-qb", "good")
    _git(tree, "commit", "-qam", "good")
    run = tree / "firmware_host/cli/run.py"
    if BROKEN_FROM not in run.read_text():
        raise RuntimeError("firmware_host/cli/run.py no longer has the lines the broken version replaces")
    run.write_text(run.read_text().replace(BROKEN_FROM, "    raise SystemExit(70)  # broken on purpose\n", 1))
    changelog(tree, "The virtual Pi's broken version.")
    _git(tree, "checkout", "-qb", "broken")
    _git(tree, "commit", "-qam", "broken")
    sv._run(["git", "clone", "-q", "--bare", str(tree), str(repo)])
    commits = {name: _git(repo, "rev-parse", name).strip() for name in ("installed", "good", "broken")}
    shutil.rmtree(tree)
    return repo, commits


def changelog(tree: Path, line: str) -> None:
    log = tree / "CHANGELOG.md"
    log.write_text(log.read_text().replace("## [Unreleased]\n", f"## [Unreleased]\n\n- {line}\n", 1))


def ensure_debs(cache: Path, guest: sv.Guest, log=sv._stderr) -> Path:
    """Debian's packages for DEBS and what they need beyond the guest's root, downloaded once with a
    scratch APT configuration (hil/kernel.py's) whose dpkg status is the root's own."""
    from hil.kernel import apt_config

    home = cache / "sys"
    tarball = home / f"debootstrap-{guest.suite}-{sv._key(guest.suite, guest.packages())}.tar"
    if not tarball.is_file():
        raise sv.SetupMissing(f"no {tarball.name}: run `./dev hil --only systemd` once first")
    out = home / f"debs-{guest.suite}-{sv._key(tarball.name, DEBS)}"
    if (out / ".complete").is_file():
        return out
    log(f"hil: downloading {', '.join(DEBS)} for {guest.suite} and what it needs beyond the root (once)")
    apt = home / f"apt-{guest.suite}"
    conf = apt_config(apt, os.environ.get("HIL_DEBIAN_MIRROR", sv.MIRROR), guest.suite)
    status = sv._run(["tar", "-xOf", str(tarball), "./var/lib/dpkg/status"])
    (apt / "status").write_text(status)
    for old in (apt / "archives").glob("*.deb"):
        old.unlink()
    env = {**os.environ, "APT_CONFIG": str(conf.resolve()), "LC_ALL": "C",
           "DEBIAN_FRONTEND": "noninteractive"}
    sv._run(["apt-get", "-q", "update"], timeout=900, env=env)
    sv._run(["apt-get", "-q", "-y", "--download-only", "--no-install-recommends", "-o", "Debug::NoLocking=1",
             "install", *DEBS], timeout=900, env=env)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    debs = sorted((apt / "archives").glob("*.deb"))
    for deb in debs:
        shutil.move(deb, out / deb.name)
    (out / ".complete").write_text("\n".join(d.name for d in debs) + "\n")
    sv._drop_old(home, f"debs-{guest.suite}-*", out)
    return out


def judge(r: dict, commits: dict[str, str]) -> dict:
    """The checks, from what the guest reported (pure: tests/hil/test_update_vm.py)."""
    u = r.get("update") or {}
    good, before = commits["good"], u.get("before") or {}

    def ran(facts: dict, commit: str) -> bool:
        return (facts.get("commit") == commit and facts.get("active") == "active/running"
                and facts.get("current") == f"versions/{commit[:12]}" and not facts.get("pending"))

    def restarted(facts: dict, earlier: dict) -> bool:
        return bool(facts.get("pid")) and facts.get("pid") != earlier.get("pid")

    kept = before.get("history") if before.get("active") == "active/running" else None  # ran as started
    no_git = u.get("no_git") or {}
    said = "tablectl: update: git is not installed here: sudo apt-get install git"
    r["update_git_missing_said"] = (no_git.get("rc") == 1 and no_git.get("stderr_lines") == 1
                                    and no_git.get("stderr") == said)
    step, after = u.get("good") or {}, u.get("after_good") or {}
    r["update_good"] = (step.get("rc") == 0 and (step.get("answer") or {}).get("running") == good
                        and ran(after, good) and restarted(after, before) and bool(kept)
                        and after.get("history") == kept and after.get("previous") == before.get("current"))
    step, broken = u.get("broken") or {}, u.get("after_broken") or {}
    last = str(step.get("stderr", ""))
    r["update_broken_rolled_back"] = (
        step.get("rc") == 1 and last.endswith(f"rolled back to {good[:12]}, which runs")
        and "did not start" in last and ran(broken, good) and restarted(broken, after)
        and broken.get("history") == kept and broken.get("previous") == f"versions/{commits['broken'][:12]}")
    step, emptied, restored = u.get("restore") or {}, u.get("emptied") or {}, u.get("after_restore") or {}
    r["restore_ok"] = (step.get("rc") == 0 and (step.get("answer") or {}).get("restarted") is True
                       and emptied.get("history") == [] and ran(restored, good)
                       and restarted(restored, emptied) and restored.get("history") == kept)
    daily = u.get("daily_backup") or {}
    r["daily_backup_after_update"] = daily.get("rc") == 0 and daily.get("result") == "success"
    failed = [k for k in CHECKS if not r.get(k)]
    r["ok"] = not failed and not r.get("failed")
    if not r["ok"]:
        r["why"] = "; ".join([*r.get("failed", []), *(f"{k} false" for k in failed)])
    return r


def run(cache: Path, kernel, log=sv._stderr) -> dict:
    """Build (or reuse) the bookworm guest and its install, boot it and update, roll back, restore."""
    t = time.monotonic()
    cache = Path(cache)
    for tool, package in sv.HOST_TOOLS:
        sv.need(tool, package)
    guest = sv.GUESTS[GUEST]
    settings = {"mode": "update", "guest": GUEST, "ready_timeout_s": 600,
                "config": {"hardware.chip": '"$CHIP"', "hardware.backend": '"gpiochip"'}}
    image, initrd = sv.ensure_root(cache, kernel, guest, log)
    wheels = sv.ensure_wheels(cache, guest, log)
    debs = ensure_debs(cache, guest, log)
    work = cache / "sys" / "last-update"
    work.mkdir(parents=True, exist_ok=True)
    repo, commits = versions_repo(work)
    settings["commits"] = commits
    disk = sv.media(work, wheels, settings, sv.table_wheel(work), extra={"update.git": repo, "debs": debs})
    shutil.rmtree(repo)
    built = sv.Built(image, initrd, wheels, disk, work)
    installed, fresh = sv.ensure_installed(cache, kernel, guest, built, settings, log)
    if installed is None:
        return {"ok": False, "guest": GUEST, "why": f"the install boot failed: {fresh.get('why')}"}
    log(f"hil: [update] booting Debian {GUEST}: tablectl update to good {commits['good'][:12]} and broken "
        f"{commits['broken'][:12]}, then tablectl restore (two environments built under TCG: 10-25 min)")
    r = sv.boot(work, kernel, installed, initrd, disk, log, cpu_limit=CPU_LIMIT_S)
    r["guest"], r["commits"] = GUEST, commits
    r = judge(r, commits)
    r["total_s"] = round(time.monotonic() - t, 1)
    log(f"hil: [update] {'passed' if r['ok'] else 'FAILED'} in {r['total_s']:.0f} s"
        + ("" if r["ok"] else f": {r['why']}"))
    return r


def summary(r: dict) -> str:
    u = r.get("update") or {}
    times = ", ".join(f"{k} {v} s" for k, v in (u.get("seconds") or {}).items())
    lines = [f"update part ({r.get('guest')}): {'PASS' if r.get('ok') else 'FAIL'} in {r.get('total_s')} s; "
             + ", ".join(f"{k} {r.get(k)}" for k in CHECKS),
             f"  steps: {times}; VM {r.get('vm_s')} s (QEMU CPU {r.get('vm_cpu_s')} s)"]
    if r.get("why"):
        lines.append(f"  FAILED: {r['why']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hil.update_vm", description=__doc__.split("\n")[0])
    p.add_argument("--json", action="store_true", help="the results as one JSON object")
    p.add_argument("--cache", type=Path, default=Path(os.environ.get("HIL_CACHE") or sv.REPO / ".cache/hil"))
    args = p.parse_args(argv)
    from hil.kernel import KernelUnavailable, ensure_kernel

    try:
        kernel = ensure_kernel(args.cache, log=sv._stderr)
        r = run(args.cache, kernel)
    except (sv.SetupMissing, KernelUnavailable) as e:
        print(f"hil: {e}", file=sys.stderr)
        return 2
    except subprocess.SubprocessError as e:
        print(f"hil: {e}", file=sys.stderr)
        return 1
    print(json.dumps(r, indent=1, default=str) if args.json else summary(r))
    return 0 if r["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
