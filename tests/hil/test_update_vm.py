"""The update part's host side (hil/update_vm.py): the versions it commits and how it judges what the
guest reported. The part itself boots a VM (`./dev hil --only update`, 10-25 min)."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path

import pytest

from hil import update_vm

GOOD, BROKEN = "a" * 40, "b" * 40
COMMITS = {"installed": "c" * 40, "good": GOOD, "broken": BROKEN}
KEPT = [[1, "dice"]]


def running(pid: str, commit: str | None = GOOD, history: list | None = None, previous: str = "") -> dict:
    return {"active": "active/running", "pid": pid, "commit": commit, "previous": previous, "pending": False,
            "history": KEPT if history is None else history, "current": f"versions/{(commit or '')[:12]}"}


def reported() -> dict:
    """What a guest reports when everything went as it should."""
    before = {**running("100", commit=None), "current": "versions/local-20261127150741"}
    return {"failed": [], "update": {
        "before": before,
        "no_git": {"rc": 1, "stderr_lines": 1,
                   "stderr": "tablectl: update: git is not installed here: sudo apt-get install git"},
        "good": {"rc": 0, "answer": {"ok": True, "running": GOOD}},
        "after_good": running("200", previous="versions/local-20261127150741"),
        "broken": {"rc": 1, "stderr": "tablectl: update: table-host.service did not start (no READY=1): "
                                      f"Job for ... failed ...; rolled back to {GOOD[:12]}, which runs"},
        "after_broken": running("300", previous=f"versions/{BROKEN[:12]}"),
        "emptied": running("400", history=[]),
        "restore": {"rc": 0, "answer": {"ok": True, "restarted": True}},
        "after_restore": running("500"),
        "daily_backup": {"rc": 0, "result": "success"}}}


def test_a_run_that_went_as_it_should_passes_every_check() -> None:
    r = update_vm.judge(reported(), COMMITS)
    assert {k: r[k] for k in update_vm.CHECKS} == dict.fromkeys(update_vm.CHECKS, True)
    assert r["ok"] is True and "why" not in r


@pytest.mark.parametrize(("check", "spoil"), [
    ("update_git_missing_said", lambda u: u["no_git"].update(stderr_lines=30)),  # a traceback
    ("update_good", lambda u: u["after_good"].update(commit=COMMITS["installed"])),  # the old one runs
    ("update_good", lambda u: u["after_good"].update(pid="100")),  # never restarted
    ("update_good", lambda u: u["after_good"].update(history=[])),  # the journal lost
    ("update_good", lambda u: u["before"].update(active="deactivating/stop-watchdog")),  # never settled
    ("update_broken_rolled_back", lambda u: u["after_broken"].update(commit=BROKEN)),
    ("update_broken_rolled_back", lambda u: u["after_broken"].update(pending=True)),
    ("update_broken_rolled_back", lambda u: u["broken"].update(rc=0)),
    ("restore_ok", lambda u: u["after_restore"].update(history=[])),  # restored nothing
    ("restore_ok", lambda u: u["after_restore"].update(pid="400")),  # not restarted by systemd
    ("restore_ok", lambda u: u["after_restore"].update(active="activating/auto-restart")),
    ("daily_backup_after_update", lambda u: u["daily_backup"].update(rc=1, result="exit-code")),
])
def test_each_check_fails_on_what_it_is_for(check: str, spoil) -> None:
    r = copy.deepcopy(reported())
    spoil(r["update"])
    judged = update_vm.judge(r, COMMITS)
    assert judged[check] is False and judged["ok"] is False
    assert f"{check} false" in judged["why"]


def test_no_report_from_the_guest_fails_every_check() -> None:
    r = update_vm.judge({"failed": ["no result from the guest"]}, COMMITS)
    assert not any(r[k] for k in update_vm.CHECKS) and r["why"].startswith("no result from the guest")


def test_the_versions_are_this_checkout_a_good_one_and_one_that_ends_at_start(tmp_path: Path) -> None:
    repo, commits = update_vm.versions_repo(tmp_path)

    def show(ref: str, path: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "show", f"{ref}:{path}"], capture_output=True,
                              text=True, check=True).stdout

    here = Path(update_vm.sv.REPO)
    assert show("installed", "firmware_host/cli/run.py") == (here / "firmware_host/cli/run.py").read_text()
    version = update_vm.sv.REPO.joinpath("firmware_host/__init__.py").read_text().split('"')[1]
    assert f'__version__ = "{version}+hil.good"' in show("good", "firmware_host/__init__.py")
    assert "- The virtual Pi's good version." in show("good", "CHANGELOG.md")
    assert "raise SystemExit(70)" in show("broken", "firmware_host/cli/run.py")
    assert "raise SystemExit(70)" not in show("good", "firmware_host/cli/run.py")
    assert len(set(commits.values())) == 3
