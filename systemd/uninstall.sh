#!/usr/bin/env bash
# Remove the table: sudo systemd/uninstall.sh [--purge] [--root DIR]
# Keeps /etc/table-host and /var/lib/table-host (configuration, scores) unless --purge.
set -euo pipefail
root=""
purge=0
while [ $# -gt 0 ]; do
    case "$1" in
        --root) root="$2"; shift 2 ;;
        --purge) purge=1; shift ;;
        *) echo "uninstall.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
if [ -z "$root" ]; then
    systemctl disable --now table-host.service 2>/dev/null || true
fi
rm -f "$root/etc/systemd/system/table-host.service" "$root/etc/udev/rules.d/90-table-host.rules" \
    "$root/etc/modules-load.d/table-host.conf"
[ -L "$root/usr/local/bin/tablectl" ] && rm -f "$root/usr/local/bin/tablectl"
rm -f "$root/usr/local/share/bash-completion/completions/table-host" \
    "$root/usr/local/share/bash-completion/completions/tablectl"
rm -rf "$root/opt/table-host"
config="$root/boot/firmware/config.txt"
if [ -f "$config" ]; then
    if grep -qx '# table-host end' "$config"; then
        sed -i '/^# table-host$/,/^# table-host end$/d' "$config"
    else  # an install before the end marker: its block was the marker and four lines
        sed -i '/^# table-host$/,+4d' "$config"
    fi
fi
if [ "$purge" -eq 1 ]; then
    rm -rf "$root/etc/table-host" "$root/var/lib/table-host"
fi
if [ -z "$root" ]; then
    systemctl daemon-reload
    id table-host >/dev/null 2>&1 && userdel table-host || true
fi
echo "table-host removed"
