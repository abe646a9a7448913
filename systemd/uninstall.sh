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
    systemctl disable --now table-backup.timer table-screen.service table-host.service table-web.socket \
        table-update-recover.service 2>/dev/null || true
fi
# The groups install.sh made (on a Pi, gpio, i2c and spi are the system's and stay), and the Debian
# packages it installed (python3-venv, lgpio's build tools where pip built lgpio).
created_groups=""
[ -f "$root/opt/table-host/created-groups" ] && created_groups=$(sort -u "$root/opt/table-host/created-groups")
installed_packages=""
[ -f "$root/opt/table-host/installed-packages" ] \
    && installed_packages=$(sort -u "$root/opt/table-host/installed-packages")
created_users=""
[ -f "$root/opt/table-host/created-users" ] && created_users=$(sort -u "$root/opt/table-host/created-users")
rm -f "$root/etc/systemd/system/table-host.service" "$root/etc/systemd/system/table-web.socket" \
    "$root/etc/systemd/system/table-screen.service" "$root/etc/udev/rules.d/90-table-host.rules" \
    "$root/etc/modules-load.d/table-host.conf" "$root/etc/systemd/system/table-backup.service" \
    "$root/etc/systemd/system/table-backup.timer" "$root/etc/systemd/system/table-update-recover.service"
[ -L "$root/usr/local/bin/tablectl" ] && rm -f "$root/usr/local/bin/tablectl"
completions="$root/usr/local/share/bash-completion/completions"
rm -f "$completions/table-host" "$completions/tablectl"
[ -d "$completions" ] && rmdir --ignore-fail-on-non-empty "$completions" "$(dirname "$completions")"
man1="$root/usr/local/share/man/man1"
rm -f "$man1/table-host.1" "$man1/tablectl.1"
[ -d "$man1" ] && rmdir --ignore-fail-on-non-empty "$man1" "$(dirname "$man1")"
rm -rf "$root/opt/table-host"

# config.txt: the block between `# table-host` and `# table-host end` goes only if every line in it
# is one install.sh writes (table-host boot-config); an install before the end marker wrote the
# marker and four such lines, and only those that follow it go. Anything else is someone's edit:
# said, and left as it is.
config="$root/boot/firmware/config.txt"
if [ -f "$config" ] && grep -qx '# table-host' "$config"; then
    ours='^([[]all[]]|dtparam=i2c_arm=on|dtparam=i2c_arm_baudrate=[0-9]+|dtoverlay=i2c-mux,pca9548,addr=0x[0-9a-fA-F]+(,disconnect_on_idle)?|dtparam=spi=on|dtoverlay=spi1-3cs)$'
    if grep -qx '# table-host end' "$config"; then
        foreign=$(sed -n '/^# table-host$/,/^# table-host end$/p' "$config" | sed '1d;$d' | grep -Ev "$ours" || true)
        if [ -z "$foreign" ]; then
            sed -i '/^# table-host$/,/^# table-host end$/d' "$config"
        else
            echo "uninstall.sh: $config: the table-host block holds lines install.sh did not write:" >&2
            printf '  %s\n' "$foreign" >&2
            echo "uninstall.sh: the block is left as it is: remove it by hand" >&2
        fi
    else
        tmp=$(mktemp "$config.XXXXXX")
        awk -v ours="$ours" '
            $0 == "# table-host" && !done { skipping = 1; left = 4; done = 1; next }
            skipping && left > 0 && $0 ~ ours { left--; next }
            { skipping = 0; print }' "$config" > "$tmp"
        cat "$tmp" > "$config"
        rm -f "$tmp"
    fi
fi
if [ "$purge" -eq 1 ]; then
    rm -rf "$root/etc/table-host" "$root/var/lib/table-host"
fi
if [ -z "$root" ]; then
    systemctl daemon-reload
    id table-host >/dev/null 2>&1 && userdel table-host || true
    for u in $created_users; do  # the big screen's user (install.sh --screen)
        id "$u" >/dev/null 2>&1 && userdel --remove "$u" || true
    done
    for g in $created_groups; do
        if getent group "$g" >/dev/null; then
            groupdel "$g" && echo "removed group $g (install.sh created it)" \
                || echo "uninstall.sh: could not remove group $g (above)" >&2
        fi
    done
    # Marked as installed automatically, not removed: something installed since may need them.
    if [ -n "$installed_packages" ]; then
        # shellcheck disable=SC2086
        apt-mark auto $installed_packages >/dev/null \
            && echo "install.sh installed $(echo $installed_packages): \`sudo apt autoremove\` removes them" \
            || echo "uninstall.sh: apt-mark auto $(echo $installed_packages) failed (above)" >&2
    fi
fi
echo "table-host removed"
