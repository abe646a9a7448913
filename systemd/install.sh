#!/usr/bin/env bash
# Install the table on Raspberry Pi OS (run as root from a checkout):
#   sudo systemd/install.sh            user, virtual environment, unit, config, udev, config.txt
#   systemd/install.sh --root DIR      lay the files out under DIR only (staging, tests)
# Options: --no-pip (keep the virtual environment as it is), --no-start,
#          --wheels DIR (pip offline: the project's dependencies as wheels in DIR, no index).
# Raspberry Pi OS has the gpio, i2c and spi groups and their udev rules (raspberrypi-sys-mods);
# on another Debian (a non-Pi board, the test bench) this creates the groups and the rules.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
root=""
pip=1
start=1
wheels=""
while [ $# -gt 0 ]; do
    case "$1" in
        --root) root="$2"; shift 2 ;;
        --no-pip) pip=0; shift ;;
        --no-start) start=0; shift ;;
        --wheels) wheels=$(cd "$2" && pwd); shift 2 ;;
        *) echo "install.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
staging=${root:+1}

if [ -z "$staging" ]; then
    [ "$(id -u)" -eq 0 ] || { echo "install.sh: run as root (sudo)" >&2; exit 2; }
    # The unit's SupplementaryGroups: systemd refuses to start it (216/GROUP) if one is missing.
    # The ones made here are noted in /opt/table-host/created-groups: uninstall.sh removes those only.
    created=()
    for g in table-admin gpio i2c spi dialout; do
        getent group "$g" >/dev/null || { groupadd --system "$g"; created+=("$g"); }
    done
    id table-host >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin \
        --gid table-admin table-host
    usermod --append --groups gpio,i2c,spi,dialout table-host
fi

install -d "$root/opt/table-host"
if [ -z "$staging" ] && [ ${#created[@]} -gt 0 ]; then
    printf '%s\n' "${created[@]}" >> /opt/table-host/created-groups
fi
if [ "$pip" -eq 1 ]; then
    python3 -m venv "$root/opt/table-host/venv"
    "$root/opt/table-host/venv/bin/pip" install --quiet ${wheels:+--no-index --find-links "$wheels"} \
        "$src[pi]"
fi
# tablectl for the table-admin group's logins (SSH), on everyone's PATH.
install -d "$root/usr/local/bin"
ln -sfn /opt/table-host/venv/bin/tablectl "$root/usr/local/bin/tablectl"

install -D -m 0644 "$src/systemd/table-host.service" "$root/etc/systemd/system/table-host.service"
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

# /dev/i2c-N exists only while the i2c-dev driver holds bus N; config.txt does not load it.
install -D -m 0644 /dev/stdin "$root/etc/modules-load.d/table-host.conf" <<'MODULES'
i2c-dev
MODULES
[ -z "$staging" ] && { modprobe i2c-dev || true; }

# config.txt: only the buses the configuration uses (I2C at 400 kHz, one i2c-mux overlay per
# TCA9548A, SPI only for an SPI display: SPI0 would claim GPIO 7-11, which the 12-seat build
# uses for expander interrupts). `table-host boot-config` derives the lines; the block between
# the markers is replaced on every install, so re-run install.sh after changing the buses.
table_host=${TABLE_HOST:-$root/opt/table-host/venv/bin/table-host}
lines=$("$table_host" boot-config --config "$root/etc/table-host/table.toml") \
    || { echo "install.sh: cannot derive config.txt lines (above); fix table.toml first" >&2; exit 2; }
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
install -D -m 0644 -t "$doc" "$src/README.md" "$src/LICENSE"
install -D -m 0644 -t "$doc/docs" "$src"/docs/*.md
install -D -m 0644 -t "$doc/hardware" "$src/hardware/README.md"
completions="$root/usr/local/share/bash-completion/completions"
install -d "$completions"
for prog in table-host tablectl; do
    "$(dirname "$table_host")/python" -m firmware_host.cli.completion "$prog" > "$completions/$prog" \
        || { echo "install.sh: cannot generate the bash completion for $prog (above)" >&2; exit 2; }
done

if [ -z "$staging" ]; then
    udevadm control --reload-rules || true
    # Devices already there (the GPIO chip, I2C buses) get their group now, not at the next boot.
    udevadm trigger --subsystem-match=gpio --subsystem-match=i2c-dev --subsystem-match=spidev || true
    udevadm settle --timeout=30 || true
    systemctl daemon-reload
    if [ "$start" -eq 1 ]; then
        systemctl enable --now table-host.service
    fi
    echo "table-host installed. Reboot once for the I2C and SPI settings; then: tablectl status"
    echo "tablectl works for root and the table-admin group. Add a user (who then logs in again):"
    echo "    sudo usermod --append --groups table-admin USER"
    echo "Documentation: /opt/table-host/doc/README.md"
else
    echo "table-host laid out under $root"
fi
