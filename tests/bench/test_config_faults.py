"""`table-host bench faults`' configuration part (bench/config_faults.py) counts what it claims."""

from __future__ import annotations

from firmware_host.bench.config_faults import config_faults, config_faults_text, mutants

ROOT_KINDS = ["binary garbage", "dangling link", "deep nesting", "huge integers", "missing --config",
              "unsearchable directory", "wrong encodings"]


def test_every_kind_is_tried_every_way_and_nothing_is_a_traceback() -> None:
    f = config_faults(kills=4, editor_reloads=8)
    assert f["kinds"] == ROOT_KINDS and f["unsearchable_not_run"] == ""
    files = sum(len(v) for v in mutants(b"a = 1\n").values())
    assert f["tried"] == 3 * files + 4 + 4 + 1  # three ways each, the link four, the directory four, --config
    assert (f["traceback"], f["wrong"], f["tracebacks"]) == (0, 0, [])
    assert f["remember_kills"]["kills"] == 4 and f["remember_kills"]["broken"] == 0
    assert f["remember_kills"]["stale_left"] == 0 and f["meets_target"]
    text = "\n".join(config_faults_text(f))
    assert f"{f['tried']} reads" in text and "tracebacks 0 (target 0)" in text
    # Each reload at a random moment of a save in place: none loads a file cut short (one in three
    # did), and one that never stops being written is refused, naming it.
    e = f["editor"]
    assert (e["reloads"], e["cut_short_loaded"], e["cut_short_kept"], e["examples"]) == (8, 0, 0, [])
    assert e["loaded_whole"] + e["refused"] == 8 and e["loaded_whole"] > 0
    never = e["never_settles"]
    assert never["refused"] and never["said"].endswith(
        "editor/table.toml: still being written: it changed while it was read, again and again for 3 s; "
        "it is read once left alone for 200 ms")
    assert "kept as the last good copy 0 (target 0)" in text


def test_a_traceback_is_counted_and_said_in_one_line(monkeypatch) -> None:
    from firmware_host.bench import config_faults as bench

    def crashes(_path: object) -> None:
        raise KeyError("inputs")

    monkeypatch.setattr(bench, "load_config", crashes)
    tally = bench.Tally()
    tally.attempt("huge integers", lambda: (bench.load_config("x"), "loaded")[1])
    assert tally.kinds["huge integers"]["traceback"] == 1
    assert tally.tracebacks == ["huge integers: KeyError: 'inputs'"]
