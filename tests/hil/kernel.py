"""The guest kernel: Debian's trixie-backports amd64 kernel, which builds gpio-sim as a module.

Bookworm's and trixie's own kernels leave `CONFIG_GPIO_SIM` unset; trixie-backports (7.x) has it `=m`.
Installing that kernel on a bookworm host would drag in trixie packages, so it is fetched with a
scratch APT configuration (its own sources list, lists, cache and empty dpkg status, under the
cache folder, given to apt through `APT_CONFIG`), `apt-get download`ed and unpacked with
`dpkg-deb -x`. Nothing on the host is installed or changed.

The version is picked at run time: whatever `linux-image-amd64` in trixie-backports depends on
today (backports move on, old versions leave the archive). The unpacked tree is cached under
`<cache>/kernel/<version>/` and reused as long as it is complete; set `HIL_KERNEL_REFRESH=1` to look
for a newer kernel. `HIL_DEBIAN_MIRROR` overrides the archive (default http://deb.debian.org/debian).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SUITE = "trixie-backports"
MIRROR = "http://deb.debian.org/debian"
META = "linux-image-amd64"
COMPLETE = ".complete"


class KernelUnavailable(Exception):
    """The kernel could not be fetched or unpacked; the message says which command failed."""


@dataclass(frozen=True)
class Kernel:
    version: str          # the kernel release, as `uname -r` prints it in the guest: "7.3.4+deb13-amd64"
    package_version: str  # the Debian package version: "7.3.4-1~bpo13+1"
    root: Path            # the unpacked tree (has usr/lib/modules/<version>/)
    vmlinuz: Path         # the image to boot
    modules: Path         # usr/lib/modules/<version>/ inside root (modules.dep built)
    config: Path          # the kernel's .config


def _run(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError as e:
        raise KernelUnavailable(f"{cmd[0]} not found ({e}); it comes with Debian's apt/dpkg/kmod") from e
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise KernelUnavailable(f"`{' '.join(cmd)}` failed (exit {done.returncode}): {' | '.join(tail)}")
    return done.stdout


def apt_config(apt_dir: Path, mirror: str = MIRROR, suite: str = SUITE) -> Path:
    """Write a scratch APT configuration under apt_dir and return the file to give as APT_CONFIG."""
    for sub in ("lists/partial", "archives/partial", "cache", "etc/sources.list.d", "etc/preferences.d"):
        (apt_dir / sub).mkdir(parents=True, exist_ok=True)
    (apt_dir / "status").touch()
    (apt_dir / "etc/sources.list").write_text(f"deb {mirror} {suite} main\n")
    d = apt_dir.resolve()
    conf = apt_dir / "apt.conf"
    conf.write_text("\n".join([
        f'Dir::Etc::SourceList "{d}/etc/sources.list";',
        f'Dir::Etc::SourceParts "{d}/etc/sources.list.d";',
        f'Dir::Etc::Preferences "{d}/etc/preferences";',
        f'Dir::Etc::PreferencesParts "{d}/etc/preferences.d";',
        f'Dir::State "{d}";',
        f'Dir::State::Lists "{d}/lists";',
        f'Dir::State::status "{d}/status";',
        f'Dir::Cache "{d}/cache";',
        f'Dir::Cache::archives "{d}/archives";',
        'APT::Architectures { "amd64"; };',
        'Acquire::Languages "none";',
        # apt-get download as root hands the download to user _apt, who cannot write here.
        'APT::Sandbox::User "root";' if os.geteuid() == 0 else "",
        "",
    ]))
    return conf


def abi_from_depends(depends: str) -> str:
    """The kernel ABI name ("7.3.4+deb13-amd64") from linux-image-amd64's Depends line."""
    m = re.search(r"linux-image-(\d[^\s,()]*-amd64)\b", depends)
    if not m:
        raise KernelUnavailable(f"{META} in {SUITE} names no linux-image-<version>-amd64: {depends!r}")
    return m.group(1)


def _field(stanza: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", stanza, re.MULTILINE)
    return m.group(1).strip() if m else ""


def _cached(cache: Path) -> Kernel | None:
    """The newest complete tree in the cache, if any."""
    best: Kernel | None = None
    for marker in sorted((cache / "kernel").glob(f"*/{COMPLETE}")):
        version = marker.parent.name
        kernel = _kernel(marker.parent / "tree", version, marker.read_text().strip())
        if kernel.vmlinuz.is_file() and (kernel.modules / "modules.dep").is_file():
            best = kernel
    return best


def _kernel(root: Path, version: str, package_version: str) -> Kernel:
    modules = root / "usr/lib/modules" / version
    vmlinuz = modules / "vmlinuz"
    if not vmlinuz.exists():
        vmlinuz = root / "boot" / f"vmlinuz-{version}"
    config = modules / "config"
    if not config.exists():
        config = root / "boot" / f"config-{version}"
    return Kernel(version, package_version, root, vmlinuz, modules, config)


def config_value(config: Path, option: str) -> str | None:
    """`y`, `m`, a value, or None when the option is not set in the kernel's .config."""
    for line in config.read_text().splitlines():
        if line.startswith(f"{option}="):
            return line.split("=", 1)[1]
    return None


def ensure_kernel(cache: Path, log: Callable[[str], None] = print) -> Kernel:
    """The trixie-backports kernel unpacked under cache/kernel/, fetched on first use.

    Raises KernelUnavailable with the failing command and its output.
    """
    cache = Path(cache)
    if os.environ.get("HIL_KERNEL_REFRESH") != "1":
        found = _cached(cache)
        if found:
            return found
    conf = apt_config(cache / "kernel" / "apt", os.environ.get("HIL_DEBIAN_MIRROR", MIRROR))
    env = {**os.environ, "APT_CONFIG": str(conf.resolve()), "LC_ALL": "C"}
    log(f"hil: looking up the kernel in Debian {SUITE}")
    _run(["apt-get", "-q", "--error-on=any", "update"], env)
    meta = _run(["apt-cache", "show", META], env)
    newest = meta.split("\n\n")[0]  # apt-cache lists the candidate first
    version = abi_from_depends(_field(newest, "Depends"))
    package_version = _field(newest, "Version")
    home = cache / "kernel" / version
    found = _cached(cache)
    if found and found.version == version:
        return found
    # 7.x splits the image into base (config), binary (vmlinuz) and modules; older ones are one package.
    names = [f"linux-base-{version}", f"linux-binary-{version}", f"linux-modules-{version}"]
    if not _has_all(names, env):
        names = [f"linux-image-{version}"]
    debs = home / "debs"
    if home.exists():
        shutil.rmtree(home)
    debs.mkdir(parents=True)
    log(f"hil: downloading {', '.join(names)} ({package_version}, about 120 MB, once)")
    _run(["apt-get", "-q", "download", *[f"{n}={package_version}" for n in names]], env, cwd=debs)
    tree = home / "tree"
    tree.mkdir()
    for deb in sorted(debs.glob("*.deb")):
        _run(["dpkg-deb", "-x", str(deb), str(tree)])
    kernel = _kernel(tree, version, package_version)
    if not kernel.vmlinuz.is_file():
        raise KernelUnavailable(f"no vmlinuz in {', '.join(names)} (looked in {kernel.modules} and boot/)")
    if config_value(kernel.config, "CONFIG_GPIO_SIM") not in ("y", "m"):
        raise KernelUnavailable(f"kernel {version} from {SUITE} does not build gpio-sim (CONFIG_GPIO_SIM)")
    # The package's postinst would run depmod; nothing runs it for an unpacked tree.
    depmod = shutil.which("depmod") or "/usr/sbin/depmod"
    _run([depmod, "-b", str(kernel.modules.parent.parent.parent), version])  # -b X reads X/lib/modules/
    shutil.rmtree(debs)
    for old in (cache / "kernel").iterdir():
        if old.is_dir() and old.name not in ("apt", version):
            shutil.rmtree(old)  # a kernel that left the archive: keep one tree only
    (home / COMPLETE).write_text(package_version + "\n")
    return kernel


def _has_all(names: list[str], env: dict[str, str]) -> bool:
    done = subprocess.run(["apt-cache", "show", "--no-all-versions", *names], env=env,
                          capture_output=True, text=True, check=False)
    return done.returncode == 0


if __name__ == "__main__":
    import sys
    k = ensure_kernel(Path(sys.argv[1] if len(sys.argv) > 1 else ".cache/hil"))
    print(k)
