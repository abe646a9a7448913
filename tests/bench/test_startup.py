"""`table-host bench startup`: CPU figures named with their units, judged against their targets,
and an exit status that follows the judgement."""

from __future__ import annotations

import json

import pytest

from firmware_host.bench import startup
from firmware_host.cli import host


def test_the_three_figures_are_measured_named_with_units_and_judged(
        capsys: pytest.CaptureFixture[str]) -> None:
    status = host.main(["bench", "startup", "--runs", "1", "--json"])
    f = json.loads(capsys.readouterr().out)["startup"]
    assert f["runs"] == 1 and not f["failures"]
    assert 0 < f["tablectl_status_cpu_ms"] < 5000 and 0 < f["version_cpu_ms"] < 5000
    assert 0 < f["daemon_ready_cpu_s"] < 30 and f["daemon_ready_wall_s"] > 0
    assert 0 < f["tablectl_status_human_cpu_ms"] < 5000
    assert f["targets"] == {"tablectl_status_cpu_ms": 60.0, "tablectl_status_human_cpu_ms": 150.0,
                            "version_cpu_ms": 60.0, "daemon_ready_cpu_s": 0.45}
    met = {name: f[name] <= target for name, target in f["targets"].items()}
    assert f["met"] == met and f["meets_target"] == all(met.values())
    assert status == (0 if all(met.values()) else 1)


def test_a_target_no_process_can_meet_exits_1_and_says_which(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(startup, "TARGETS", {"tablectl_status_cpu_ms": 0.001, "version_cpu_ms": 60_000.0,
                                             "tablectl_status_human_cpu_ms": 60_000.0,
                                             "daemon_ready_cpu_s": 600.0})
    assert host.main(["bench", "startup", "--runs", "1"]) == 1
    out = capsys.readouterr().out
    assert "tablectl --json status (a running emulated daemon):" in out
    assert " ms (target <= 0.001 ms): MISSES" in out and "its tables:" in out
    assert "table-host --version:" in out and "(target <= 60000 ms): meets" in out
    assert "s CPU" in out and "(target <= 600 s CPU): meets" in out
