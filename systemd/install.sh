#!/usr/bin/env bash
# Install the table on Raspberry Pi OS (run as root from a checkout):
#   sudo systemd/install.sh            user, virtual environment, unit, config, udev, config.txt
#   systemd/install.sh --root DIR      lay the files out under DIR only (staging, tests)
# Options: --no-pip (keep the virtual environment as it is), --no-start,
#          --wheels DIR (pip offline: the project's dependencies as wheels in DIR, no index),
#          --screen (the big screen: a kiosk on the HDMI port, cage + chromium, docs/web.md).
# Raspberry Pi OS has the gpio, i2c and spi groups and their udev rules (raspberrypi-sys-mods);
# on another Debian (a non-Pi board, the test bench) this creates the groups and the rules.
# The package and group checks (installed, offered, pick_browser, missing_groups): their own file,
# which tests/service/test_install_checks.py sources to run them under `set -euo pipefail` as here.
. "$(cd "$(dirname "$0")" && pwd)/install-checks.sh"

set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
root=""
pip=1
start=1
wheels=""
screen=0
while [ $# -gt 0 ]; do
    case "$1" in
        --root) root="$2"; shift 2 ;;
        --no-pip) pip=0; shift ;;
        --no-start) start=0; shift ;;
        --wheels) wheels=$(cd "$2" && pwd); shift 2 ;;
        --screen) screen=1; shift ;;
        *) echo "install.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
staging=${root:+1}
# What pip needs to build lgpio from its source (below): SWIG, a C compiler, libc's and Python's headers.
lgpio_build_deps="swig gcc libc6-dev python3-dev"

if [ -z "$staging" ]; then
    [ "$(id -u)" -eq 0 ] || { echo "install.sh: run as root (sudo)" >&2; exit 2; }
    # The unit's SupplementaryGroups: systemd refuses to start it (216/GROUP) if one is missing.
    # The ones made here are noted in /opt/table-host/created-groups: uninstall.sh removes those only.
    created=()
    for g in $(missing_groups table-admin gpio i2c spi dialout); do
        groupadd --system "$g"
        created+=("$g")
    done
    id table-host >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin \
        --gid table-admin table-host
    usermod --append --groups gpio,i2c,spi,dialout table-host
fi

install -d "$root/opt/table-host"
if [ -z "$staging" ] && [ ${#created[@]} -gt 0 ]; then
    printf '%s\n' "${created[@]}" >> /opt/table-host/created-groups
fi

# Debian packages this needs and the system lacks: installed with apt-get, and noted in
# /opt/table-host/installed-packages so that uninstall.sh can hand them back to apt (autoremove).
need_packages() {
    local missing=() p
    for p in "$@"; do
        installed "$p" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ -n "$staging" ]; then
        echo "install.sh: needs ${missing[*]}, not installed here: sudo apt-get install ${missing[*]}" >&2
        exit 2
    fi
    echo "install.sh: installing ${missing[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get -qq update && apt-get -qq install -y --no-install-recommends "${missing[@]}"; } >&2 \
        || { echo "install.sh: apt-get install ${missing[*]} failed (above)" >&2; exit 2; }
    printf '%s\n' "${missing[@]}" >> /opt/table-host/installed-packages
}

if [ "$pip" -eq 1 ]; then
    need_packages python3-venv
    # Each version in a directory of its own, named by its commit, beside the others: `current`
    # names the one that runs, `venv` is current/venv (the unit's ExecStart and tablectl's link),
    # and `tablectl update` installs the next one beside it and switches the link (docs/keeping.md).
    home="$root/opt/table-host"
    commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || true)
    name=${commit:0:12}
    [ -n "$name" ] || name=local
    if [ -n "$(git -C "$src" status --porcelain 2>/dev/null || true)" ] || [ "$name" = local ]; then
        name="$name-$(date -u +%Y%m%d%H%M%S)"  # a tree that is no commit: a version of its own
    fi
    version="$home/versions/$name"
    venv="$version/venv"
    install -d "$version/src"
    install -m 0644 "$src/CHANGELOG.md" "$version/src/CHANGELOG.md"  # what the next update adds to
    python3 -m venv "$venv"
    index=()
    [ -n "$wheels" ] && index=(--no-index --find-links "$wheels")
    # lgpio (the [pi] extra) has wheels on PyPI for CPython 3.9-3.12 (lgpio 0.2.2.0): on bookworm
    # pip takes one. For another Python (trixie's 3.13) or machine, pip builds it from its source
    # distribution: SWIG and a C compiler, and PYPI=1 makes its setup.py link the lg C library
    # (in the same source) into the module. Without it, it links to liblgpio, a package Raspberry
    # Pi OS has and Debian has not.
    # spidev (the [pi] extra on ARM, for SPI screens) has no wheel on PyPI at all: pip builds it
    # with a C compiler and Python's headers, whatever lgpio does. Each is asked of pip itself,
    # where it would look, not guessed; only what must be built brings its build tools.
    requirement() {  # the [pi] extra's requirement for package $1, as pyproject.toml pins it
        python3 -c 'import sys, tomllib
pi = tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]["pi"]
print(next(r.split(";")[0].strip() for r in pi if r.startswith(sys.argv[2])))' "$src/pyproject.toml" "$1"
    }
    has_wheel() {
        local probe status
        probe=$(mktemp -d)
        "$venv/bin/pip" download --quiet --no-deps --only-binary=:all: "${index[@]}" --dest "$probe" \
            "$1" >/dev/null 2>&1 && status=0 || status=1
        rm -rf "$probe"
        return $status
    }
    build=""
    if ! has_wheel "$(requirement lgpio)"; then
        build=1
        echo "install.sh: no lgpio wheel for $(python3 -V) on $(uname -m): pip builds it from source"
        need_packages $lgpio_build_deps
    fi
    case "$(uname -m)" in
        aarch64|armv7l|armv6l)
            if ! has_wheel "$(requirement spidev)"; then
                echo "install.sh: no spidev wheel for $(python3 -V) on $(uname -m): pip builds it from source"
                need_packages gcc libc6-dev python3-dev
            fi ;;
    esac
    PYPI=${build:-0} "$venv/bin/pip" install --quiet "${index[@]}" "$src[pi]" \
        || { echo "install.sh: pip install of the table and its [pi] extra failed (above)" >&2; exit 2; }
    # The commit it was built from, and whether the checkout differed from it: `table-host
    # --version` and `tablectl status` name it, and never run git themselves (system/build.py).
    (cd / && "$venv/bin/python" -m firmware_host.system.build "$src") \
        || { echo "install.sh: cannot record the build (above)" >&2; exit 2; }
    echo "${commit:-}" > "$version/complete"
    # The switch: one rename of each link. An install before versions had venv as a directory.
    old=$(readlink "$home/current" 2>/dev/null || true)
    if [ -n "$old" ] && [ "$old" != "versions/$name" ]; then
        ln -sfn "$old" "$home/.previous.new" && mv -T "$home/.previous.new" "$home/previous"
    fi
    ln -sfn "versions/$name" "$home/.current.new" && mv -T "$home/.current.new" "$home/current"
    [ -d "$home/venv" ] && [ ! -L "$home/venv" ] && rm -rf "$home/venv"
    ln -sfn current/venv "$home/.venv.new" && mv -T "$home/.venv.new" "$home/venv"
fi
# An update cut short before its health check goes back at the next boot (docs/keeping.md).
install -D -m 0755 "$src/systemd/update-recover.sh" "$root/opt/table-host/update-recover.sh"
# tablectl for the table-admin group's logins (SSH), on everyone's PATH.
install -d "$root/usr/local/bin"
ln -sfn /opt/table-host/venv/bin/tablectl "$root/usr/local/bin/tablectl"

install -D -m 0644 "$src/systemd/table-host.service" "$root/etc/systemd/system/table-host.service"
# The web view's port 80: systemd listens and passes the socket to the service (docs/web.md).
install -D -m 0644 "$src/systemd/table-web.socket" "$root/etc/systemd/system/table-web.socket"
# The daily backup (docs/keeping.md): the newest 7 kept in /var/lib/table-host/backups.
install -D -m 0644 -t "$root/etc/systemd/system" "$src/systemd/table-backup.service" \
    "$src/systemd/table-backup.timer" "$src/systemd/table-update-recover.service"

# --screen: the big screen on the HDMI port, the kiosk table-screen.service (cage running the
# browser as the unprivileged user table-screen on tty1). The browser's package is asked of apt:
# Debian (bookworm, trixie) and Raspberry Pi OS since August 2024 name it chromium; Raspberry
# Pi OS named its build chromium-browser before. Whichever apt offers, chromium first.
if [ "$screen" -eq 1 ]; then
    browser=$(pick_browser) || { echo "install.sh: --screen: apt offers neither chromium nor" \
        "chromium-browser (apt-get update first?)" >&2; exit 2; }
    if [ -z "$staging" ]; then
        # xwayland: Debian bookworm's cage (0.1.4) will not start without the Xwayland binary
        # ("Cannot create XWayland server"), though the browser draws with Wayland itself.
        need_packages cage xwayland "$browser"
        # The screen's user: no login, a home for the browser's profile. The unit's
        # SupplementaryGroups (video render input: the display and the input devices) must exist,
        # or systemd refuses to start it (216/GROUP): the missing ones are made, as above.
        for g in $(missing_groups video render input); do
            echo "install.sh: no $g group here: making it (the screen's unit needs it)"
            groupadd --system "$g"
            echo "$g" >> /opt/table-host/created-groups
        done
        if ! id table-screen >/dev/null 2>&1; then
            useradd --system --create-home --home-dir /var/lib/table-screen --shell /usr/sbin/nologin \
                table-screen
            echo table-screen >> /opt/table-host/created-users  # uninstall.sh removes it
        fi
        usermod --append --groups video,render,input table-screen
    fi
    sed "s|@BROWSER@|/usr/bin/$browser|" "$src/systemd/table-screen.service" \
        | install -D -m 0644 /dev/stdin "$root/etc/systemd/system/table-screen.service"
fi
# The configuration is the table-admin group's to change (`tablectl config set`, docs/daemon.md
# "Access"): the file 0660; the directory 2770, since config set writes a new file beside it and
# renames it over the old one (never half a file), and the setgid bit keeps that file the group's.
# The unit's ConfigurationDirectoryMode=2770 says the same (systemd's default is 0755).
install -d "$root/etc/table-host"
if [ ! -e "$root/etc/table-host/table.toml" ]; then
    install -m 0660 "$src/systemd/table.toml.example" "$root/etc/table-host/table.toml"
fi
[ -z "$staging" ] && chgrp table-admin /etc/table-host /etc/table-host/table.toml
chmod 2770 "$root/etc/table-host"
chmod 0660 "$root/etc/table-host/table.toml"

# The LED controller always appears as /dev/table-led: an RP2040 running MicroPython enumerates
# as USB 2e8a:0005 (vendor Raspberry Pi, product MicroPython), not just any Raspberry Pi device.
# GPIO chips, I2C buses and SPI belong to their groups, as raspberrypi-sys-mods' 99-com.rules has
# it on a Pi (plain Debian has no such rules).
install -D -m 0644 /dev/stdin "$root/etc/udev/rules.d/90-table-host.rules" <<'RULES'
SUBSYSTEM=="tty", ATTRS{idVendor}=="2e8a", ATTRS{idProduct}=="0005", SYMLINK+="table-led", GROUP="dialout", MODE="0660"
SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"
SUBSYSTEM=="i2c-dev", GROUP="i2c", MODE="0660"
SUBSYSTEM=="spidev", GROUP="spi", MODE="0660"
RULES

# What the configuration needs of the boot, both derived by `table-host boot-config`.
table_host=${TABLE_HOST:-$root/opt/table-host/venv/bin/table-host}
lines=$("$table_host" boot-config --config "$root/etc/table-host/table.toml") \
    || { echo "install.sh: cannot derive config.txt lines (above); fix table.toml first" >&2; exit 2; }
modules=$("$table_host" boot-config --modules --config "$root/etc/table-host/table.toml")

# Kernel modules loaded at boot, before the service starts: i2c-dev makes /dev/i2c-N; cdc_acm (the
# LED controller's port) and spidev because the unit's DeviceAllow=char-ttyACM and char-spi become
# device rules once, when it starts, from the majors then in /proc/devices: a driver loaded later
# (the Pico plugged in after boot) would stay denied with EPERM until a restart.
printf '%s\n' "$modules" | install -D -m 0644 /dev/stdin "$root/etc/modules-load.d/table-host.conf"
if [ -z "$staging" ]; then
    for m in $modules; do modprobe "$m" || echo "install.sh: modprobe $m failed (above)" >&2; done
fi

# config.txt: only the buses the configuration uses (I2C at 400 kHz, one i2c-mux overlay per
# TCA9548A, with disconnect_on_idle when two share a bus; SPI only for an SPI display: SPI0 would
# claim GPIO 7-11, which the 12-seat build uses for expander interrupts), after `[all]` so that a
# file ending in a model's section ([pi5], [cm4]) does not keep them to that model. The block
# between the markers is replaced on every install: re-run install.sh after changing the buses.
config="$root/boot/firmware/config.txt"
install -d "$(dirname "$config")"
touch "$config"
if grep -qx '# table-host end' "$config"; then
    sed -i '/^# table-host$/,/^# table-host end$/d' "$config"
else  # an install before the end marker: its block was the marker and four lines
    sed -i '/^# table-host$/,+4d' "$config"
fi
printf '# table-host\n%s\n# table-host end\n' "$lines" >> "$config"

# The documentation beside the program (the unit's Documentation= points here), and bash
# completion for both commands, generated from their own parsers by the installed Python.
doc="$root/opt/table-host/doc"
rm -rf "$doc"
install -D -m 0644 -t "$doc" "$src/README.md" "$src/CHANGELOG.md" "$src/LICENSE"
install -D -m 0644 -t "$doc/docs" "$src"/docs/*.md
install -D -m 0644 -t "$doc/hardware" "$src/hardware/README.md"
completions="$root/usr/local/share/bash-completion/completions"
install -d "$completions"
for prog in table-host tablectl; do
    "$(dirname "$table_host")/python" -m firmware_host.cli.completion "$prog" > "$completions/$prog" \
        || { echo "install.sh: cannot generate the bash completion for $prog (above)" >&2; exit 2; }
done
# Manual pages, from the same parsers (argparse-manpage), with examples, exit status, environment.
"$(dirname "$table_host")/python" -m firmware_host.cli.manpages "$root/usr/local/share/man/man1" \
    || { echo "install.sh: cannot generate the manual pages (above)" >&2; exit 2; }

if [ -z "$staging" ]; then
    udevadm control --reload-rules || true
    # Devices already there (the GPIO chip, I2C buses) get their group now, not at the next boot.
    udevadm trigger --subsystem-match=gpio --subsystem-match=i2c-dev --subsystem-match=spidev || true
    udevadm settle --timeout=30 || true
    systemctl daemon-reload
    systemctl enable --quiet table-update-recover.service  # at boot only, before the table
    if [ "$start" -eq 1 ]; then
        systemctl enable --now table-web.socket
        systemctl enable --now table-host.service
        systemctl enable --now table-backup.timer
        if [ "$screen" -eq 1 ]; then
            systemctl enable --now table-screen.service
        fi
    fi
    echo "table-host installed. Reboot once for the I2C and SPI settings; then: tablectl status"
    echo "tablectl works for root and the table-admin group. Add a user (who then logs in again):"
    echo "    sudo usermod --append --groups table-admin USER"
    echo "The web view: http://$(hostname).local/ (or this machine's address), docs/web.md"
    echo "Documentation: /opt/table-host/doc/README.md"
else
    echo "table-host laid out under $root"
fi
