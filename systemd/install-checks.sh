# install.sh's package and group checks, sourced by it (and by tests/service/test_install_checks.py,
# which runs them under `set -euo pipefail`, as install.sh does).
# None pipes into `grep -q`: under pipefail a `grep -q` that exits at its first match leaves the
# command before it writing into a closed pipe, and apt 3.0's `apt-cache policy` (trixie) dies
# of SIGPIPE there, failing the whole pipeline though the match was found. The output is taken
# whole first, then matched.
installed() {  # is Debian package $1 installed?
    local status
    status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
    [[ $status == *"install ok installed"* ]]
}
offered() {  # does apt have a candidate version of package $1 to install?
    local policy
    policy=$(apt-cache policy "$1" 2>/dev/null) || return 1
    [[ $policy =~ Candidate:\ [0-9] ]]
}
pick_browser() {  # the browser package for the kiosk: installed or offered, chromium first
    local candidate
    for candidate in chromium chromium-browser; do
        if installed "$candidate" || offered "$candidate"; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}
missing_groups() {  # the groups among $@ this system lacks, one a line
    local g
    for g in "$@"; do
        getent group "$g" >/dev/null || echo "$g"
    done
}
