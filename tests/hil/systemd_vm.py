"""The table under real systemd: a Debian root booted by QEMU, `systemd/install.sh` run in it as on a Pi.

This is the check that reads the sandbox the way the kernel applies it, not the way our code assumes:
the unit file, install.sh's users, groups and udev rules, the venv, `tablectl` over the control
socket, all as they come out of the repo. A test in-process cannot see ProtectSystem=strict making
`/` read-only for lgpio's FIFO, or ProcSubset=pid hiding /proc/cpuinfo; this can.

The machines: one per Debian release a Pi may run (GUESTS: bookworm with Python 3.11, trixie with
3.13), each `debootstrap --variant=minbase` plus systemd, udev, python3, ... in a raw ext4 image, the
trixie-backports kernel from `hil.kernel` (gpio-sim as a module), its modules copied into the root,
a busybox initramfs that loads virtio_blk and ext4 (both modules in Debian's kernel) and hands over
to systemd as PID 1. The checkout (tracked and untracked, not ignored files), a wheelhouse for pip
and `hil/guest_systemd.py` travel on a second disk; the guest writes its results to a second serial
port, a file here.

Two boots per guest. The install boot runs `systemd/install.sh` on the fresh root and powers off;
what it leaves is kept as a copy-on-write overlay of the root (`installed-<guest>-<key>.qcow2`),
keyed on install.sh, pyproject.toml and the wheels, so it runs again only when one of them changes.
On trixie (no lgpio wheel for 3.13) it has a network (QEMU's user mode): install.sh installs lgpio's
build tools with apt-get, from Debian's archive, as on a Pi. The check boot starts from that
install, puts the table built from the current checkout into its venv (a wheel built here: pip
installs it with no dependencies, as install.sh's pip would install the table) and runs install.sh
--no-pip (the unit, the rules, the groups, all from the checkout), starts the unit and looks at it;
it writes into a temporary overlay (QEMU's snapshot=on), so the cached install stays clean. The
guests boot side by side, one vCPU each.

Cache (`<cache>/sys/`), per guest: `debootstrap-<guest>-<key>.tar` (debootstrap needs root and 1-4
min, once per package list), `root-<guest>-<key>.img` and `initrd-<guest>-<key>.img` (from the
tarball in seconds, once per recipe and kernel), `wheels-<guest>-<key>/` (`pip download`, once per
dependency list), `installed-<guest>-<key>.qcow2` and `.json` (the install boot's image and what it
reported), `last-<guest>/` and `install-<guest>/` (the last runs' console logs, results and disks).
Host needs: qemu-system-x86_64 (qemu-system-x86), mkfs.ext4 (e2fsprogs), modprobe (kmod), and for
the first build debootstrap, run as root.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import lzma
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from firmware_host.system import memory

REPO = Path(__file__).resolve().parents[2]
MIRROR = "http://deb.debian.org/debian"
PACKAGES = ["systemd", "systemd-sysv", "udev", "dbus", "python3", "python3-venv", "kmod", "procps",
            "passwd", "util-linux", "busybox-static"]
RECIPE = 6  # bump when the root's customisation below changes
INITRD_MODULES = ["virtio_blk", "ext4"]
UNIT = "table-host.service"


def lgpio_build_deps() -> list[str]:
    """The Debian packages install.sh installs before pip builds lgpio from its source (no wheel
    for the Python there): read from install.sh itself, so the install boot checks it asked for
    exactly these."""
    text = (REPO / "systemd/install.sh").read_text()
    found = re.search(r'^lgpio_build_deps="([^"]*)"$', text, re.M)
    return found.group(1).split() if found else []


@dataclass(frozen=True)
class Guest:
    """One Debian release the systemd part boots: its suite, its Python and glibc (which wheels run
    there), and what its root needs beyond PACKAGES."""

    suite: str
    python: tuple[str, str]  # pip download's --python-version and --abi
    glibc_minor: int         # wheels up to manylinux_2_<this> run there
    build_lgpio: bool        # no lgpio wheel for this Python: install.sh apt-gets the tools and builds it

    def packages(self) -> list[str]:
        """The root's: what a fresh Raspberry Pi OS Lite has of what install.sh needs, no build tools."""
        return list(PACKAGES)


# Raspberry Pi OS follows Debian: bookworm has Python 3.11 and glibc 2.36, trixie Python 3.13 and
# glibc 2.41. PyPI's lgpio 0.2.2.0 has wheels for CPython 3.9-3.12 only, so on trixie pip builds it.
GUESTS = {
    "bookworm": Guest("bookworm", ("311", "cp311"), 36, build_lgpio=False),
    "trixie": Guest("trixie", ("313", "cp313"), 41, build_lgpio=True),
}

CHECK_UNIT = """\
[Unit]
Description=table-host bench check (hil/guest_systemd.py from the second disk)
After=multi-user.target
ConditionPathExists=/dev/vdb

[Service]
# exec, not oneshot: the boot counts as finished once this runs (systemd-analyze time works)
Type=exec
ExecStartPre=/bin/mkdir -p /mnt/hil
ExecStartPre=/bin/mount -o ro /dev/vdb /mnt/hil
ExecStart=/usr/bin/python3 /mnt/hil/guest_systemd.py
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=1200
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Install]
WantedBy=multi-user.target
"""

INIT = """\
#!/bin/busybox sh
/bin/busybox --install -s /bin
echo "initrd: the kernel is up; mounting /dev/vda"
mkdir -p /proc /sys /dev /newroot
mount -t devtmpfs dev /dev
mount -t proc proc /proc
for m in {modules}; do insmod /lib/modules/$m.ko || echo "initrd: insmod $m failed"; done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
mount -t ext4 -o rw /dev/vda /newroot || {{ echo "initrd: cannot mount /dev/vda"; poweroff -f; }}
umount /proc
umount /dev
exec switch_root /newroot /sbin/init
"""


HOST_TOOLS = [("qemu-system-x86_64", "qemu-system-x86"), ("qemu-img", "qemu-utils"),
              ("mkfs.ext4", "e2fsprogs"), ("modprobe", "kmod"), ("git", "git"), ("tar", "tar")]


class SetupMissing(Exception):
    """The bench cannot run here; the message is one line: what is missing and how to get it.
    (hil/__main__.py knows the name: such a part makes `./dev hil` exit 2.)"""


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _run(cmd: list[str], timeout: float | None = None, **kw) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, **kw)
    except FileNotFoundError as e:
        raise SetupMissing(f"{cmd[0]} not found") from e
    if done.returncode != 0:
        last = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise RuntimeError(f"`{' '.join(cmd)}` failed (exit {done.returncode}): {last}")
    return done.stdout


def need(tool: str, package: str) -> str:
    sbin = (f"/usr/sbin/{tool}", f"/sbin/{tool}")  # not on a user's PATH
    path = shutil.which(tool) or next((p for p in sbin if os.access(p, os.X_OK)), None)
    if not path:
        raise SetupMissing(f"{tool} is missing: apt-get install {package}")
    return path


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:12]


def _drop_old(home: Path, pattern: str, keep: Path) -> None:
    """Earlier builds of the same kind for the same guest (and, for bookworm, the names from before
    there were two guests: `root-<key>.img`)."""
    for old in home.glob(pattern):
        if old != keep:
            if old.is_dir():
                shutil.rmtree(old)
            else:
                old.unlink()


def ensure_root(cache: Path, kernel, guest: Guest, log=_stderr) -> tuple[Path, Path]:
    """The guest's root image and its initramfs, built once per package list, recipe and kernel."""
    home = cache / "sys"
    suite, packages = guest.suite, guest.packages()
    key = _key(suite, packages, RECIPE, kernel.version)
    image, initrd = home / f"root-{suite}-{key}.img", home / f"initrd-{suite}-{key}.img"
    if image.is_file() and initrd.is_file():
        return image, initrd
    debootstrap = need("debootstrap", "debootstrap")
    mkfs = need("mkfs.ext4", "e2fsprogs")
    if os.geteuid() != 0:
        raise SetupMissing("building the guest root once needs root (debootstrap): run `./dev hil` as root "
                          "(or with sudo) the first time; later runs use .cache/hil/sys/")
    home.mkdir(parents=True, exist_ok=True)
    # debootstrap's result is kept on its own: a change below (RECIPE, kernel) rebuilds in seconds.
    tarball = home / f"debootstrap-{suite}-{_key(suite, packages)}.tar"
    with tempfile.TemporaryDirectory(dir=home, prefix=f"build-{suite}-") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        if tarball.is_file():
            _run([need("tar", "tar"), "--numeric-owner", "-xpf", str(tarball), "-C", str(root)], timeout=600)
        else:
            log(f"hil: debootstrap {suite} (minbase + {len(packages)} packages, about 2-4 min, once)")
            t = time.monotonic()
            _run([debootstrap, "--variant=minbase", f"--include={','.join(packages)}", suite, str(root),
                  os.environ.get("HIL_DEBIAN_MIRROR", MIRROR)], timeout=1800)
            log(f"hil: debootstrap {suite} took {time.monotonic() - t:.0f} s")
            _run([need("tar", "tar"), "--numeric-owner", "-cpf", str(tarball.with_suffix(".tmp")),
                  "-C", str(root), "."], timeout=600)
            tarball.with_suffix(".tmp").rename(tarball)
            _drop_old(home, f"debootstrap-{suite}-*.tar", tarball)
            if suite == "bookworm":
                _drop_old(home, "debootstrap-" + "?" * 12 + ".tar", tarball)
        customise(root, kernel)
        build_initrd(root, kernel, initrd.with_suffix(".tmp"))
        tmp_image = image.with_suffix(".tmp")
        size_mb = 2048 + _du_mb(root)
        _run([mkfs, "-q", "-F", "-L", "table-root", "-E", "root_owner=0:0", "-d", str(root), str(tmp_image),
              f"{size_mb}M"], timeout=900)
        tmp_image.rename(image)
        initrd.with_suffix(".tmp").rename(initrd)
        for kind, made in (("root", image), ("initrd", initrd)):
            _drop_old(home, f"{kind}-{suite}-*.img", made)
            if suite == "bookworm":
                _drop_old(home, f"{kind}-" + "?" * 12 + ".img", made)
    return image, initrd


def _du_mb(path: Path) -> int:
    total = 0
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            total += p.stat().st_size
    return total // 2**20


def customise(root: Path, kernel) -> None:
    """What a fresh image of a board has: the kernel's modules, a hostname, / in fstab; the check unit."""
    modules = root / "usr/lib/modules" / kernel.version
    shutil.copytree(kernel.modules, modules, symlinks=True)
    # A host under load slows udev's start: the root device is waited for longer than systemd's 90 s.
    (root / "etc/fstab").write_text("/dev/vda / ext4 rw,noatime,x-systemd.device-timeout=600 0 1\n")
    (root / "etc/hostname").write_text("table\n")
    (root / "etc/hosts").write_text("127.0.0.1 localhost\n127.0.1.1 table\n")
    system = root / "etc/systemd/system"
    (system / "hil-check.service").write_text(CHECK_UNIT)
    wants = system / "multi-user.target.wants"
    wants.mkdir(parents=True, exist_ok=True)
    (wants / "hil-check.service").symlink_to("/etc/systemd/system/hil-check.service")
    # Timers that would wake apt or fstrim during a run; nothing else is masked.
    for unit in ("apt-daily.timer", "apt-daily-upgrade.timer", "fstrim.timer", "e2scrub_all.timer",
                 "systemd-tmpfiles-clean.timer"):
        link = system / unit
        if not link.exists():
            link.symlink_to("/dev/null")
    (root / "etc/machine-id").write_text("")  # systemd makes one on first boot, as on a fresh SD card


def build_initrd(root: Path, kernel, out: Path) -> None:
    """A newc cpio: static busybox from the root, the modules to reach /dev/vda, an /init that hands over."""
    busybox = root / "bin/busybox"
    if not busybox.is_file():
        raise RuntimeError(f"no static busybox in the root ({busybox}); busybox-static is in PACKAGES")
    depmod_base = kernel.modules.parent.parent.parent  # tree/usr: depmod -b reads tree/usr/lib/modules
    order: list[Path] = []
    for name in INITRD_MODULES:
        text = _run([need("modprobe", "kmod"), "-d", str(depmod_base), "-S", kernel.version,
                     "--show-depends", name])
        for line in text.splitlines():
            if line.startswith("insmod "):
                p = Path(line.split()[1])
                if p not in order:
                    order.append(p)
    files: list[tuple[str, int, bytes]] = [
        ("bin", stat.S_IFDIR | 0o755, b""), ("lib", stat.S_IFDIR | 0o755, b""),
        ("lib/modules", stat.S_IFDIR | 0o755, b""), ("dev", stat.S_IFDIR | 0o755, b""),
        ("bin/busybox", stat.S_IFREG | 0o755, busybox.read_bytes())]
    names = []
    for p in order:
        data = p.read_bytes()
        if p.name.endswith(".xz"):
            data = lzma.decompress(data)
        name = p.name.split(".ko")[0]
        names.append(name)
        files.append((f"lib/modules/{name}.ko", stat.S_IFREG | 0o644, data))
    files.append(("init", stat.S_IFREG | 0o755, INIT.format(modules=" ".join(names)).encode()))
    out.write_bytes(cpio_newc(files))


def cpio_newc(files: list[tuple[str, int, bytes]]) -> bytes:
    """The kernel's initramfs format (Documentation/driver-api/early-userspace/buffer-format.rst)."""
    out = bytearray()

    def entry(name: str, mode: int, data: bytes, ino: int) -> None:
        nb = name.encode() + b"\0"
        fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nb), 0]
        out.extend(b"070701" + b"".join(f"{f:08x}".encode() for f in fields) + nb)
        out.extend(b"\0" * (-len(out) % 4))
        out.extend(data)
        out.extend(b"\0" * (-len(out) % 4))

    for ino, (name, mode, data) in enumerate(files, start=1):
        entry(name, mode, data, ino)
    entry("TRAILER!!!", 0, b"", 0)
    return bytes(out)


def requirements() -> list[str]:
    """What `pip install '.[pi]'` needs, build backend included, read from pyproject.toml."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    return (project["build-system"]["requires"] + project["project"]["dependencies"]
            + project["project"]["optional-dependencies"]["pi"])


def _name(requirement: str) -> str:
    """The project name of a requirement, normalised (PEP 503): "luma.oled>=3" -> "luma-oled"."""
    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]).lower()


WHEELHOUSE = 2
"""The wheelhouse's recipe: 2 adds the source distributions' build requirements. A new recipe is a
new key, so a wheelhouse made by an older one is made again."""


def ensure_wheels(cache: Path, guest: Guest, log=_stderr) -> Path:
    """What pip would take from PyPI for the guest's Python and glibc, so install.sh's pip works offline
    (`--wheels`): a wheel where one fits, else the source distribution, as pip itself chooses."""
    reqs = requirements()
    home = cache / "sys" / f"wheels-{guest.suite}-{_key(reqs, guest.python, guest.glibc_minor, WHEELHOUSE)}"
    if (home / ".complete").is_file():
        return home
    log(f"hil: pip download of {len(reqs)} requirements for {guest.suite}'s Python {guest.python[0]} (once)")
    if home.exists():
        shutil.rmtree(home)
    platforms = [f"manylinux_2_{m}_x86_64" for m in range(17, guest.glibc_minor + 1)]
    platforms += ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64"]
    base = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
            "--dest", str(home)]
    binary = [*base, "--only-binary=:all:", "--python-version", guest.python[0], "--implementation", "cp",
              "--abi", guest.python[1], "--abi", "abi3", "--abi", "none"]
    for p in platforms:
        binary += ["--platform", p]
    wheels, sources = list(reqs), []
    for _ in range(len(reqs) + 1):
        done = subprocess.run([*binary, *wheels], capture_output=True, text=True, timeout=900, check=False)
        if done.returncode == 0:
            break
        missing = re.search(r"No matching distribution found for ([A-Za-z0-9_.-]+)", done.stderr)
        which = [r for r in wheels if missing and _name(r) == _name(missing.group(1))]
        if not which:
            last = " | ".join(done.stderr.strip().splitlines()[-3:])
            raise SetupMissing(f"the guest's wheels could not be downloaded: {last}")
        wheels.remove(which[0])
        sources.append(which[0])
    if any(_name(r) == "lgpio" for r in sources) and not guest.build_lgpio:
        raise RuntimeError(f"no lgpio wheel for {guest.suite}'s Python {guest.python[0]}: install.sh "
                           f"builds it there, so GUESTS[{guest.suite!r}] needs build_lgpio=True (its root "
                           f"then has {' '.join(lgpio_build_deps())})")
    if sources:  # no wheel for this Python: pip builds these from source in the guest, as it would online
        log(f"hil: no wheel for {guest.suite}'s Python {guest.python[0]}: {', '.join(sources)} from source")
        _run([*base, "--no-deps", "--no-binary=:all:", *sources], timeout=900)
        build = build_requirements(home, guest.python[0])
        if build:  # pip's isolated build asks the index for these: online PyPI has them, so must this
            log(f"hil: their build requirements, as wheels: {', '.join(build)}")
            _run([*binary, *build], timeout=900)
    (home / ".complete").write_text("\n".join([*wheels, *(f"{r} (source)" for r in sources)]) + "\n")
    _drop_old(cache / "sys", f"wheels-{guest.suite}-*", home)
    if guest.suite == "bookworm":
        _drop_old(cache / "sys", "wheels-" + "?" * 12, home)
    return home


def build_requirements(home: Path, python: str) -> list[str]:
    """What the source distributions in `home` need to be built ([build-system] requires of each
    one's pyproject.toml, PEP 518), for the guest's Python (`python`: "311"): pip installs them
    into an isolated environment from the index before it builds, so an offline wheelhouse needs
    them as an online install would find them (without them, installing argparse-manpage failed
    in both guests: "pip subprocess to install build dependencies did not run successfully")."""
    import tarfile
    import tomllib

    from packaging.requirements import Requirement

    version = f"{python[0]}.{python[1:]}"
    found: list[str] = []
    for sdist in sorted(home.glob("*.tar.gz")):
        with tarfile.open(sdist) as tar:
            member = next((m for m in tar.getmembers() if m.name.count("/") == 1
                           and m.name.endswith("/pyproject.toml")), None)
            if member is None:
                continue  # setup.py alone: pip builds it with the venv's own setuptools
            handle = tar.extractfile(member)
            table = tomllib.loads(handle.read().decode()) if handle is not None else {}
        for text in table.get("build-system", {}).get("requires", []):
            requirement = Requirement(text)
            marker = requirement.marker
            where = {"python_version": version, "python_full_version": f"{version}.0"}
            if marker is None or marker.evaluate(where):
                spec = f"{requirement.name}{requirement.specifier}"
                if spec not in found:
                    found.append(spec)
    return found


def checkout_files() -> list[str]:
    """The checkout as a clone would have it: tracked files plus new ones, nothing ignored."""
    out = _run([need("git", "git"), "-C", str(REPO), "ls-files", "-z", "--cached", "--others",
                "--exclude-standard"])
    return [f for f in out.split("\0") if f and (REPO / f).is_file()]


def faulty_unit_text(unit: str) -> str:
    """The unit as it was before the sandbox fixes: /proc reduced to processes, no LG_WD for lgpio."""
    lines = [ln for ln in unit.splitlines() if not ln.startswith("Environment=LG_WD")]
    if not any(ln.startswith("ProcSubset=") for ln in lines):
        at = next(i for i, ln in enumerate(lines) if ln.startswith("ProtectProc="))
        lines.insert(at + 1, "ProcSubset=pid")
    return "\n".join(lines) + "\n"


def table_wheel(work: Path) -> Path:
    """The table itself as a wheel, built here from the checkout (pure Python: any guest takes it)."""
    out = work / "table"
    if out.exists():
        shutil.rmtree(out)
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--disable-pip-version-check",
          "--wheel-dir", str(out), str(REPO)], timeout=600)
    return out


def media(work: Path, wheels: Path, settings: dict, table: Path | None = None,
          extra: dict[str, Path] | None = None) -> Path:
    """The second disk: src/, wheels/, guest_systemd.py, settings.json, faulty/, table/ (the
    table's own wheel, for the check boot) and `extra` (name: folder, the update part's) (an ext4
    image)."""
    stage = work / "media"
    if stage.exists():
        shutil.rmtree(stage)
    (stage / "src").mkdir(parents=True)
    for f in checkout_files():
        dest = stage / "src" / f
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, dest)
    shutil.copytree(wheels, stage / "wheels", ignore=shutil.ignore_patterns(".complete"))
    if table is not None:
        shutil.copytree(table, stage / "table")
    for name, folder in (extra or {}).items():
        shutil.copytree(folder, stage / name, symlinks=True)
    shutil.copy2(REPO / "tests/hil/guest_systemd.py", stage / "guest_systemd.py")
    (stage / "settings.json").write_text(json.dumps(settings, indent=1))
    (stage / "faulty").mkdir()
    (stage / "faulty" / UNIT).write_text(faulty_unit_text((REPO / "systemd" / UNIT).read_text()))
    image = work / "media.img"
    image.unlink(missing_ok=True)
    _run([need("mkfs.ext4", "e2fsprogs"), "-q", "-F", "-L", "hil-media", "-d", str(stage), str(image),
          f"{_du_mb(stage) + 64}M"])
    shutil.rmtree(stage)
    return image


def boot(work: Path, kernel, image: Path, initrd: Path, disk: Path, log=_stderr, keep: bool = False,
         network: bool = False, cpu_limit: float | None = None) -> dict:
    """Boot the root with systemd as PID 1; return the results the guest wrote, with timings.

    keep: the guest's writes go to `image` itself (a qcow2 overlay: the install boot), else to a
    temporary overlay. network: QEMU's user-mode network (NAT to the host's), else none."""
    qemu = need("qemu-system-x86_64", "qemu-system-x86")
    console, results = work / "console.log", work / "results.txt"
    for f in (console, results):
        f.unlink(missing_ok=True)
    # systemd's start jobs get 10 min, not 90 s: on a loaded host a slow boot is not a failed one.
    cmdline = ("console=ttyS0 root=/dev/vda rw panic=-1 systemd.show_status=auto loglevel=4 net.ifnames=0 "
               "systemd.default_timeout_start_sec=600")
    # Nehalem (x86-64-v2): PyPI's lgpio wheel dies of SIGILL on qemu64 (status=4/ILL in the VM,
    # `qemu-x86_64 -cpu qemu64 python -c "import lgpio"` alike); -cpu max oopsed at boot here
    # (int3 in sched_clock_cpu while the kernel patches itself).
    # One vCPU: with two under multi-threaded TCG the kernel's live text patching (int3, then the
    # new bytes) raced the other vCPU's translated code: "Oops: int3" in get_random_u32, a panic
    # 12 s into boot, seen once in about ten runs. Nothing here needs two CPUs.
    cpu = os.environ.get("HIL_QEMU_CPU", "Nehalem")
    root = (f"file={image},if=virtio,format=qcow2,cache=writeback" if keep else
            # snapshot=on: the run writes to a temporary overlay, the cached root stays as built
            f"file={image},if=virtio,format={'qcow2' if image.suffix == '.qcow2' else 'raw'},"
            "cache=unsafe,snapshot=on")
    cmd = [qemu, "-machine", "q35", "-accel", "tcg", "-cpu", cpu, "-smp", "1", "-m", "1536",
           "-display", "none", "-monitor", "none", "-no-reboot",
           *(["-nic", "user,model=virtio-net-pci"] if network else ["-nic", "none"]),
           "-kernel", str(kernel.vmlinuz), "-initrd", str(initrd), "-append", cmdline,
           "-drive", root, "-drive", f"file={disk},if=virtio,format=raw,cache=unsafe,readonly=on",
           "-serial", f"file:{console}", "-serial", f"file:{results}"]
    t = time.monotonic()
    vm_cpu = 0.0
    for attempt in (1, 2):
        qemu_rc, qemu_err, silent, cpu_s = _qemu(cmd, console, wall_limit(), cpu_limit or CPU_LIMIT_S)
        vm_cpu += cpu_s
        if not silent:
            break
        log(f"hil: the VM printed nothing in {cpu_s:.0f} s of its CPU time (attempt {attempt}); "
            "starting it again")
        for f in (console, results):
            f.unlink(missing_ok=True)
    took = time.monotonic() - t
    text = results.read_text(errors="replace") if results.exists() else ""
    found = [ln for ln in text.splitlines() if ln.startswith("HIL-RESULT ")]
    r = json.loads(found[-1][len("HIL-RESULT "):]) if found else {
        "unit_active": False, "watchdog_ok": False, "tablectl_ok": False,
        "failed": [f"no result from the guest (qemu exit {qemu_rc}: {qemu_err or 'no message'}); "
                   f"console: {tail_file(console)}"]}
    if qemu_rc not in (0, None) and found:
        r.setdefault("failed", []).append(f"qemu exited {qemu_rc}: {qemu_err}")
    r["qemu_rc"] = qemu_rc
    r["vm_s"] = round(took, 1)
    r["vm_cpu_s"] = round(vm_cpu, 1)  # QEMU's CPU time: on a loaded host, wall time says little
    r["progress"] = [ln for ln in text.splitlines() if ln.startswith("hil:")]
    r["console_log"] = str(console)
    return r


AFTER_RESULT_S = 30
# Limits in QEMU's own CPU time, not the wall clock's: on a host shared with other work a guest gets
# a fraction of a core (at load 10 on 2 cores about a sixth), and its wall time grows with the load
# while the work it does does not. A guest's check needs 300-450 s of QEMU's CPU time, the install
# boot with apt on trixie more; the limits are for a guest that hangs, not a slow one.
CPU_LIMIT_S = 1500
TIMEOUT_S = 3600  # the wall clock's limit (HIL_SYSTEMD_TIMEOUT), for a guest that hangs without using CPU
# The initramfs says it is up a few seconds of CPU into the boot; a VM silent for longer has hung in
# the firmware (seen once in ~5 before). HIL_SILENT_S: QEMU CPU seconds; the wall clock waits 10 times that.
SILENT_S = float(os.environ.get("HIL_SILENT_S", 60))


STOPPING = threading.Event()
"""Set when `run` is interrupted while guests boot on threads of their own: each stops its QEMU
(an interrupt reaches the main thread only, and a guest's QEMU was left running)."""


def wall_limit() -> float:
    return float(os.environ.get("HIL_SYSTEMD_TIMEOUT", TIMEOUT_S))


def _finished(results: Path) -> bool:
    if not results.exists():
        return False
    with results.open("rb") as f:
        f.seek(max(0, results.stat().st_size - 2**20))
        return b"HIL-RESULT " in f.read() and results.read_bytes().endswith(b"\n")


def _cpu_s(pid: int, last: float) -> float:
    """The process's CPU time so far, all its threads (proc(5) stat: utime, stime), else `last`. Per
    process, not RUSAGE_CHILDREN: with two guests side by side that would count the other one too."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return last
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _stop(proc: subprocess.Popen) -> None:
    """Kill QEMU's whole process group (it was started as a session of its own), then reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _qemu(cmd: list[str], console: Path, timeout: float,
          cpu_timeout: float | None = None) -> tuple[int | None, str, bool, float]:
    """Run QEMU to the guest's power-off: (exit status or None, stderr, hung silent before the kernel,
    its CPU seconds, sampled each second).

    Silent: nothing on the console after SILENT_S of QEMU's CPU time (or ten times that of the wall
    clock's). Timed out: `cpu_timeout` of its CPU time, or `timeout` of the wall clock's. A guest that
    wrote its result gets AFTER_RESULT_S of its CPU time (ten times that of the wall clock's) to power
    off, then QEMU is stopped. On a time-out or any
    error here (an interrupt too) its process group is killed: no VM is left running."""
    t = time.monotonic()
    results = console.with_name("results.txt")
    done_at: float | None = None
    done_cpu = 0.0
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, text=True, start_new_session=True)
        try:
            cpu = 0.0
            while proc.poll() is None:
                if STOPPING.wait(1):
                    _stop(proc)
                    return None, "interrupted", False, cpu
                cpu = _cpu_s(proc.pid, cpu)
                waited = time.monotonic() - t
                quiet = not console.exists() or console.stat().st_size == 0
                if quiet and (cpu > SILENT_S or waited > 10 * SILENT_S):
                    _stop(proc)
                    return None, "silent", True, cpu
                if waited > timeout or (cpu_timeout is not None and cpu > cpu_timeout):
                    _stop(proc)
                    spent = f"{waited:.0f} s" if waited > timeout else f"{cpu:.0f} s of its CPU time"
                    return None, f"timed out after {spent}", False, cpu
                if done_at is None and _finished(results):
                    done_at, done_cpu = time.monotonic(), cpu
                if done_at is not None and (cpu - done_cpu > AFTER_RESULT_S
                                            or time.monotonic() - done_at > 10 * AFTER_RESULT_S):
                    _stop(proc)  # killed: no exit status (the install boot's disk is not kept then)
                    why = f"stopped {AFTER_RESULT_S} s after the guest's result (no power-off)"
                    return None, why, False, cpu
        finally:
            if proc.poll() is None:
                _stop(proc)
        err.seek(0)
        return proc.returncode, err.read().strip(), False, cpu


def tail_file(path: Path, lines: int = 5) -> str:
    if not path.exists():
        return "(none)"
    text = path.read_text(errors="replace")
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    return " | ".join(text.strip().splitlines()[-lines:])


CHECKS = ("unit_active", "watchdog_ok", "tablectl_ok", "journal_priority_ok", "allocator_ok", "installed_ok")
INSTALL_RECIPE = 1  # bump when what the install boot does (guest_systemd.py's install mode) changes


@dataclass(frozen=True)
class Built:
    """One guest's prepared parts: its root and initramfs, the wheelhouse, the check boot's second
    disk and its work folder."""

    image: Path
    initrd: Path
    wheels: Path
    disk: Path
    work: Path


def prepare(cache: Path, kernel, guest: Guest, settings: dict, log=_stderr) -> Built:
    """The guest's root image, initramfs, wheelhouse and second disk (built or reused); its work folder."""
    image, initrd = ensure_root(cache, kernel, guest, log)
    wheels = ensure_wheels(cache, guest, log)
    work = cache / "sys" / f"last-{guest.suite}"
    work.mkdir(parents=True, exist_ok=True)
    disk = media(work, wheels, {**settings, "guest": guest.suite}, table_wheel(work))
    return Built(image, initrd, wheels, disk, work)


def install_key(image: Path, wheels: Path) -> str:
    """What the install boot's result depends on: the root it starts from (its name holds its own
    key), install.sh, pyproject.toml, every wheel and source distribution, and INSTALL_RECIPE."""
    digest = hashlib.sha256()
    for f in (REPO / "systemd/install.sh", REPO / "pyproject.toml"):
        digest.update(f.read_bytes())
    for f in sorted(wheels.iterdir()):
        if f.name != ".complete":
            digest.update(f.name.encode() + hashlib.sha256(f.read_bytes()).digest())
    return _key(image.name, digest.hexdigest(), INSTALL_RECIPE)


def install_checked(guest: Guest, r: dict) -> dict:
    """The install boot's checks: install.sh passed, the guest powered off cleanly (its disk is whole),
    and apt-get was used exactly where it must be: on a guest with no lgpio wheel for lgpio's build
    tools, nowhere else (install.sh notes what it installed in /opt/table-host/installed-packages)."""
    wanted = sorted(lgpio_build_deps()) if guest.build_lgpio else []
    apt_ok = sorted(r.get("apt_installed") or []) == wanted
    built = str(r.get("lgpio_from") or "").startswith("built here") == guest.build_lgpio
    r["apt_ok"], r["lgpio_ok"] = apt_ok, built
    r["ok"] = r.get("install_rc") == 0 and r.get("qemu_rc") == 0 and not r.get("failed") and apt_ok and built
    if not r["ok"]:
        why = list(r.get("failed", []))
        if r.get("install_rc"):
            why.append(f"install.sh exited {r.get('install_rc')}: {r.get('install_output')}")
        if r.get("qemu_rc") != 0:
            why.append(f"no clean power-off (qemu {r.get('qemu_rc')})")
        if not apt_ok:
            why.append(f"apt-get installed {r.get('apt_installed')}, not {wanted}")
        if not built:
            why.append(f"lgpio {r.get('lgpio_from')}")
        r["why"] = "; ".join(why)
    return r


def ensure_installed(cache: Path, kernel, guest: Guest, built: Built, settings: dict,
                     log=_stderr) -> tuple[Path | None, dict]:
    """The guest after install.sh (the install boot's overlay, reused while its key holds), and what
    the install boot reported (`cached`: from an earlier run). None when the install failed."""
    home = cache / "sys"
    key = install_key(built.image, built.wheels)
    installed = home / f"installed-{guest.suite}-{key}.qcow2"
    record = installed.with_suffix(".json")
    if installed.is_file() and record.is_file():
        return installed, {**json.loads(record.read_text()), "cached": True}
    work = home / f"install-{guest.suite}"
    work.mkdir(parents=True, exist_ok=True)
    disk = media(work, built.wheels, {**settings, "guest": guest.suite, "mode": "install",
                                      "network": guest.build_lgpio})
    overlay = installed.with_suffix(".tmp")
    overlay.unlink(missing_ok=True)
    _run([need("qemu-img", "qemu-utils"), "create", "-q", "-f", "qcow2", "-b", str(built.image), "-F", "raw",
          str(overlay)])
    log(f"hil: [{guest.suite}] install boot: install.sh on the fresh root"
        + (" (apt-get from Debian's archive over QEMU's network)" if guest.build_lgpio else "")
        + ", kept until install.sh, pyproject.toml or the wheels change")
    t = time.monotonic()
    r = install_checked(guest, boot(work, kernel, overlay, built.initrd, disk, log, keep=True,
                                    network=guest.build_lgpio))
    r["install_boot_s"] = round(time.monotonic() - t, 1)
    r["cached"] = False
    log(f"hil: [{guest.suite}] install boot {'passed' if r['ok'] else 'FAILED'} in "
        f"{r['install_boot_s']:.0f} s" + ("" if r["ok"] else f": {r['why']}"))
    if not r["ok"]:
        overlay.unlink(missing_ok=True)
        return None, r
    record.write_text(json.dumps(r, indent=1, default=str))
    overlay.rename(installed)
    for kind in ("qcow2", "json"):
        _drop_old(home, f"installed-{guest.suite}-*.{kind}", installed.with_suffix(f".{kind}"))
    return installed, r


def check_guest(kernel, guest: Guest, built: Built, faulty: bool, log=_stderr,
                cache: Path | None = None, settings: dict | None = None) -> dict:
    """Install (or reuse the install), boot the guest for its checks and judge what it reported."""
    t = time.monotonic()
    installed, fresh = ensure_installed(Path(cache or built.work.parent.parent), kernel, guest, built,
                                        settings or {}, log)
    if installed is None:
        r = {"guest": guest.suite, "ok": False, "installed": fresh, "installed_ok": False,
             "why": f"the install boot failed: {fresh.get('why')}"}
        log(f"hil: [{guest.suite}] FAILED: {r['why']}")
        return r
    log(f"hil: [{guest.suite}] booting Debian {guest.suite} with systemd as PID 1 (QEMU TCG)"
        + (", installed by an earlier run" if fresh.get("cached") else ""))
    r = boot(built.work, kernel, installed, built.initrd, built.disk, log)
    r["guest"] = guest.suite
    r["installed"] = {k: fresh.get(k) for k in ("cached", "ok", "install_rc", "install_s", "install_boot_s",
                                               "apt_installed", "lgpio_from", "vm_s", "vm_cpu_s", "boot_s",
                                               "install_steps")}
    r["installed_ok"] = bool(fresh.get("ok"))
    r["allocator_ok"] = bool(r.get("allocator", {}).get("ok"))
    checks = [*CHECKS, *(["old_unit_caught"] if faulty else [])]
    r["ok"] = all(r.get(k) for k in checks)
    if not r["ok"]:
        r["why"] = "; ".join([*r.get("failed", []), *(f"{k} false" for k in checks if not r.get(k))])
    log(f"hil: [{guest.suite}] {'passed' if r['ok'] else 'FAILED'} in {time.monotonic() - t:.0f} s"
        + ("" if r["ok"] else f": {r['why']}"))
    return r


def run(cache: Path, kernel, faulty: bool = True, old_unit_start: bool = False, log=_stderr,
        guests: list[str] | None = None, parallel: bool | None = None) -> dict:
    """Build (or reuse) each guest's root, boot them, run install.sh and the unit; results as a dict.

    Per guest (`by_guest`): `unit_active`: systemd ran the installed unit to READY. `watchdog_ok`: it
    kept pinging for more than two watchdog periods without a restart. `journal_priority_ok`: journald
    took the daemon's `<N>` prefixes as priorities (the ready line is PRIORITY 6, no raw prefix).
    `old_unit_caught` (faulty=True): in the old unit's sandbox Pi detection or lgpio fails where the
    installed unit's passes, which is what this check is for. old_unit_start: also start the daemon
    under the old unit (`faulty_unit`, about 90 s). At the top, each check holds when it holds on
    every guest. The guests boot side by side when the host has a core for each (`parallel`; each
    QEMU runs one vCPU), else one after the other.
    """
    t = time.monotonic()
    cache = Path(cache)
    names = guests or os.environ.get("HIL_SYSTEMD_GUESTS", " ".join(GUESTS)).split()
    unknown = [n for n in names if n not in GUESTS]
    if unknown:
        raise SetupMissing(f"no guest {', '.join(unknown)}: the guests are {', '.join(GUESTS)}")
    for tool, package in HOST_TOOLS:  # all of them before any work: one line for the first missing
        need(tool, package)
    settings = {"faulty": faulty, "old_unit_start": old_unit_start, "ready_timeout_s": 600,
                "allocator": memory.ALLOCATOR,
                # chip first: a gpiochip backend without a chip is refused, and each set is checked
                "config": {"hardware.chip": '"$CHIP"', "hardware.backend": '"gpiochip"'}}
    built = {n: prepare(cache, kernel, GUESTS[n], settings, log) for n in names}
    prepared = time.monotonic() - t
    if parallel is None:
        parallel = os.environ.get("HIL_SYSTEMD_PARALLEL", "1") != "0" and (os.cpu_count() or 1) >= len(names)
    by_guest: dict[str, dict] = {}

    def one(name: str) -> None:
        try:
            by_guest[name] = check_guest(kernel, GUESTS[name], built[name], faulty, log, cache, settings)
        except Exception as exc:  # reported as that guest's failure; the other guest still runs
            by_guest[name] = {"ok": False, "guest": name, "why": f"{type(exc).__name__}: {exc}"}

    if parallel and len(names) > 1:
        threads = [threading.Thread(target=one, args=(n,), name=f"guest-{n}") for n in names]
        STOPPING.clear()
        for th in threads:
            th.start()
        try:
            for th in threads:
                th.join()
        except BaseException:  # an interrupt: every guest's QEMU goes before this run does
            STOPPING.set()
            for th in threads:
                th.join()
            raise
    else:
        for n in names:
            one(n)
    results = [by_guest[n] for n in names]
    r: dict = {"guests": names, "parallel": bool(parallel and len(names) > 1), "by_guest": by_guest,
               "prepare_s": round(prepared, 1), "total_s": round(time.monotonic() - t, 1)}
    for key in (*CHECKS, "old_unit_caught", "ok"):
        r[key] = all(g.get(key) for g in results)
    if not r["ok"]:
        r["why"] = "; ".join(f"{g['guest']}: {g.get('why')}" for g in results if not g.get("ok"))
    return r


def summary(r: dict) -> str:
    """Each guest's figures, a few lines each."""
    out = [f"systemd part: guests {', '.join(r.get('guests', []))} "
           f"({'side by side' if r.get('parallel') else 'one after the other'}), "
           f"{'PASS' if r.get('ok') else 'FAIL'}, prepare {r.get('prepare_s')} s, total {r.get('total_s')} s"]
    for name, g in r.get("by_guest", {}).items():
        out.append(f"[{name}] " + guest_summary(g))
    return "\n".join(out)


def guest_summary(r: dict) -> str:
    sb = r.get("sandbox", {})
    lines = [
        f"systemd: unit active {r.get('unit_active')} ({r.get('status_text')!r}), "
        f"watchdog {r.get('watchdog_ok')}, tablectl as admin {r.get('tablectl_ok')} (config set rc "
        f"{r.get('config_set_rc')}, /etc/table-host {r.get('etc_mode')}), "
        f"journal priorities {r.get('journal_priority_ok')}, "
        f"allocator {r.get('allocator', {}).get('found')}, "
        f"exposure {r.get('security_exposure')} {r.get('security_rating')}",
        f"  sandbox: / ro {sb.get('root_read_only')}, no_new_privs {sb.get('no_new_privs')}, seccomp "
        f"{sb.get('seccomp_filter')}, caps 0 {sb.get('cap_eff_zero')}, groups {sb.get('groups')}, "
        f"chip open {sb.get('open_gpiochips')}, FIFO in runtime dir {sb.get('lgpio_fifo_in_runtime_dir')}, "
        f"real-time threads {sb.get('realtime_threads')}",
        f"  gpio: {r.get('gpio')}",
    ]
    if "sandbox_probes" in r:
        lines.append("  probes in the unit's sandbox (systemd-run -p ...): " + "; ".join(
            f"{name}: " + ", ".join(f"{k} {'ok' if v['ok'] else 'FAILS'}" for k, v in found.items())
            for name, found in r["sandbox_probes"].items()) + f"; old unit caught {r.get('old_unit_caught')}")
    if "faulty_unit" in r:
        f = r["faulty_unit"]
        lines.append(f"  old unit (ProcSubset=pid, no LG_WD): came up {f.get('came_up')}, "
                     f"{f.get('ActiveState')}/{f.get('SubState')}, restarts {f.get('NRestarts')}")
    fresh = r.get("installed") or {}
    apt = " ".join(fresh.get("apt_installed") or []) or "nothing"
    lines.append(f"  install boot: {'cached from an earlier run' if fresh.get('cached') else 'ran now'}, "
                 f"install.sh exit {fresh.get('install_rc')} in {fresh.get('install_s')} s, "
                 f"apt-get installed {apt}, lgpio {fresh.get('lgpio_from')}, "
                 f"VM {fresh.get('vm_s')} s (QEMU CPU {fresh.get('vm_cpu_s')} s)")
    lines.append(f"  {r.get('python')}; the table from this checkout: pip exit {r.get('update_pip_rc')} in "
                 f"{r.get('update_pip_s')} s, install.sh --no-pip exit {r.get('install_rc')}, "
                 f"lgpio {r.get('lgpio_from')}")
    lines.append(f"  times: boot {r.get('boot_s')} s, install {r.get('install_s')} s, "
                 f"in guest {r.get('check_s')} s, VM {r.get('vm_s')} s (QEMU CPU {r.get('vm_cpu_s')} s)")
    for f in r.get("failed", []):
        lines.append(f"  FAILED: {f}")
    if r.get("why") and not r.get("failed"):
        lines.append(f"  FAILED: {r['why']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hil.systemd_vm", description=__doc__.split("\n")[0])
    p.add_argument("--json", action="store_true", help="the results as one JSON object")
    p.add_argument("--cache", type=Path, default=Path(os.environ.get("HIL_CACHE") or REPO / ".cache/hil"))
    p.add_argument("--no-faulty", action="store_true", help="skip the old sandbox's probes (about 45 s less)")
    p.add_argument("--old-unit-start", action="store_true", help="also run the daemon under the old unit")
    p.add_argument("--guest", action="append", choices=list(GUESTS),
                   help="boot only this Debian release (repeatable; default: all of them)")
    p.add_argument("--one-by-one", action="store_true", help="boot the guests one after the other")
    args = p.parse_args(argv)
    from hil.kernel import KernelUnavailable, ensure_kernel

    log = _stderr
    try:
        kernel = ensure_kernel(args.cache, log=log)
        r = run(args.cache, kernel, faulty=not args.no_faulty, old_unit_start=args.old_unit_start, log=log,
                guests=args.guest, parallel=False if args.one_by_one else None)
    except (SetupMissing, KernelUnavailable) as e:
        print(f"hil: {e}", file=sys.stderr)
        return 2
    print(json.dumps(r, indent=1) if args.json else summary(r))
    return 0 if r["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
