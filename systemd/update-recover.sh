#!/usr/bin/env bash
# At boot, before the table starts (table-update-recover.service): an update cut short between
# its switch and the end of its health check left /opt/table-host/update-pending, naming the
# version it switched from. Never checked, the new version is not kept: `current` goes back to
# that one, by one rename (docs/keeping.md, "Updates"). Nothing pending: nothing to do.
#   update-recover.sh [HOME]      HOME: /opt/table-host (a staging root's, in the tests)
set -euo pipefail
home=${1:-/opt/table-host}
pending="$home/update-pending"
[ -f "$pending" ] || exit 0
name=$(head -n 1 "$pending")
case "$name" in
    ''|*/*|.*) echo "update-recover: $pending names no version ('$name'): left as it is" >&2; exit 1 ;;
esac
if [ ! -f "$home/versions/$name/complete" ]; then
    echo "update-recover: $pending names $name, which is not a whole version: left as it is" >&2
    exit 1
fi
ln -sfn "versions/$name" "$home/.current.recover"
mv -T "$home/.current.recover" "$home/current"
sync "$home" 2>/dev/null || sync
rm -f "$pending"
echo "update-recover: an update was cut short before its health check: back to $name"
