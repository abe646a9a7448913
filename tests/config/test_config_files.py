"""The configuration file on disk as a hostile operator or file system leaves it (issue 22,
items 4-7): any failure is one ConfigError line, a start runs on the last good copy, that copy is
the bytes that were checked, and a link to nothing or a missing --config is said, not guessed."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

import pytest

from firmware_host.config import (
    ConfigError,
    DanglingLink,
    choose_config,
    find_config,
    last_good_path,
    load_config,
    read_config,
    remember_good,
    set_config,
)
from firmware_host.config import files as config_files
from firmware_host.config import load as config_load
from firmware_host.system import paths

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = (ROOT / "systemd" / "table.toml.example").read_bytes()
HUGE = b"9" * 5000


def huge_integer_file(path: Path) -> Path:
    lines = TEMPLATE.split(b"\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(b"window_ms"))
    lines[at] = b"window_ms = " + HUGE
    path.write_bytes(b"\n".join(lines))
    return path


def test_an_integer_past_pythons_limit_is_a_config_error_naming_its_line(tmp_path: Path) -> None:
    path = huge_integer_file(tmp_path / "table.toml")
    line = path.read_bytes()[: path.read_bytes().index(HUGE)].count(b"\n") + 1
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.problems == [f"{path}:{line}: an integer of more than 4300 digits"]


@pytest.mark.parametrize("failure", [ValueError("odd"), RecursionError(), IndexError("list"), MemoryError(),
                                     UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid")])
def test_any_exception_while_parsing_or_checking_is_one_config_error_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: Exception) -> None:
    path = tmp_path / "table.toml"
    path.write_bytes(TEMPLATE)

    def fails(*_args: object, **_kw: object) -> None:
        raise failure

    for where in ("tomllib.loads", "parse_config"):
        monkeypatch.undo()
        if where == "tomllib.loads":
            monkeypatch.setattr(config_load.tomllib, "loads", fails)
        else:
            monkeypatch.setattr(config_load, "parse_config", fails)
        with pytest.raises(ConfigError) as caught:
            load_config(path)
        assert len(caught.value.problems) == 1 and "\n" not in caught.value.problems[0]
        assert caught.value.problems[0].startswith(str(path)), caught.value.problems


def test_a_huge_integer_at_start_runs_on_the_last_good_copy_or_is_refused_without_one(dirs: Path) -> None:
    path = dirs / "table.toml"
    huge_integer_file(path)
    with pytest.raises(ConfigError, match="4300 digits"):
        choose_config(path, True)
    remember_good(TEMPLATE)
    config, problem = choose_config(path, True)
    assert config.inputs == load_config(last_good_path()).inputs
    assert problem == f"configuration invalid, running the last good one: {path}:{_line(path)}: an integer " \
                      "of more than 4300 digits"


def _line(path: Path) -> int:
    return path.read_bytes()[: path.read_bytes().index(HUGE)].count(b"\n") + 1


def test_config_set_of_a_huge_integer_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_bytes(TEMPLATE)
    with pytest.raises(ConfigError, match=r"arbiter\.window_ms: '9999"):
        set_config(path, "arbiter.window_ms", "9" * 5000)
    with pytest.raises(ConfigError, match=r"nested|Recursion"):
        set_config(path, "arbiter.window_ms", "[" * 100_000)
    assert path.read_bytes() == TEMPLATE


# ---------------------------------------------------------------- 5. a directory that may not be searched


def close_directory(closed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What chmod 000 does to a process without CAP_DAC_OVERRIDE: EACCES for any name inside."""
    inside = f"{closed}/"
    for name in ("stat", "lstat", "open"):
        real = getattr(os, name)

        def guarded(p: object, *args: object, _real=real, **kw: object) -> object:
            if str(p).startswith(inside):
                raise PermissionError(13, "Permission denied", str(p))
            return _real(p, *args, **kw)

        monkeypatch.setattr(os, name, guarded)
    real_access = os.access
    monkeypatch.setattr(os, "access",
                        lambda p, mode, **kw: str(p) != str(closed) and real_access(p, mode, **kw))


def test_a_directory_that_may_not_be_searched_is_said_and_the_last_good_copy_runs(
        dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As root, chmod 000 stops nothing: the errno a non-root daemon gets is raised here instead
    (tests/service/test_config_reload.py does it for real, as nobody)."""
    closed = dirs / "etc"
    closed.mkdir()
    path = closed / "table.toml"
    path.write_bytes(TEMPLATE)
    close_directory(closed, monkeypatch)
    with pytest.raises(ConfigError) as caught:
        find_config(path)
    assert caught.value.problems == [
        f"{path}: cannot look for it: {closed} may not be searched (permission denied)"]
    with pytest.raises(ConfigError, match="may not be searched"):
        choose_config(path, True)  # no last good copy: refused, in one line
    remember_good(TEMPLATE)
    config, problem = choose_config(path, True)
    assert problem.startswith("configuration invalid, running the last good one: ")
    assert "may not be searched" in problem
    assert len(config.inputs.seats) == len(tomllib.loads(TEMPLATE.decode())["inputs"]["seats"])


def test_the_users_file_in_a_closed_directory_is_still_the_users(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Off systemd the table looks in ~/.config first: a closed one is not skipped silently for /etc's."""
    monkeypatch.delenv("CONFIGURATION_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    user = tmp_path / "table-host" / "table.toml"
    system = tmp_path / "etc"
    system.mkdir()
    (system / "table.toml").write_bytes(TEMPLATE)
    monkeypatch.setattr(paths, "SYSTEM", {**paths.SYSTEM, "CONFIGURATION_DIRECTORY": system})
    assert paths.config_file() == system / "table.toml"  # no file of the user's: the system's
    close_directory(user.parent, monkeypatch)
    assert paths.config_file() == user


# ---------------------------------------------------------------- 6. the last good copy


def test_the_last_good_copy_is_the_bytes_checked_not_the_file_read_again(dirs: Path) -> None:
    path = dirs / "table.toml"
    path.write_bytes(TEMPLATE)
    config, raw = read_config(path)
    path.write_bytes(b"")  # an editor truncating it just after the check
    remember_good(raw)
    assert last_good_path().read_bytes() == TEMPLATE and load_config(last_good_path()) == config
    assert stat.S_IMODE(last_good_path().stat().st_mode) == 0o600


def test_copies_left_by_a_kill_are_removed_at_start(dirs: Path) -> None:
    remember_good(TEMPLATE)
    stale = [last_good_path().with_name(f".last-good.toml.{pid}") for pid in (4242, 99999)]
    for p in stale:
        p.write_bytes(TEMPLATE[:100])
    other = last_good_path().with_name(".table.db.journal-keep")
    other.write_bytes(b"x")
    path = dirs / "table.toml"
    path.write_bytes(TEMPLATE)
    choose_config(path, True)
    assert [p.exists() for p in stale] == [False, False] and other.exists()
    assert last_good_path().read_bytes() == TEMPLATE


def test_a_copy_that_cannot_be_written_is_said(dirs: Path, said) -> None:
    state = Path(os.environ["STATE_DIRECTORY"])
    os.rmdir(state)
    state.write_bytes(b"")  # a file where the state directory should be
    remember_good(TEMPLATE)
    assert any("cannot keep the last good configuration" in line for line in said)


# ---------------------------------------------------------------- 7. a link to nothing, a missing --config


def test_a_dangling_link_is_a_warning_naming_link_and_target(dirs: Path, monkeypatch, said) -> None:
    monkeypatch.delenv("INVOCATION_ID", raising=False)
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    link = dirs / "table.toml"
    link.symlink_to(dirs / "card" / "table.toml")
    with pytest.raises(DanglingLink):
        find_config(link)
    config, problem = choose_config(link, False)
    assert config.hardware.backend == "emulated"
    assert problem == f"{link} is a symbolic link to {dirs / 'card' / 'table.toml'}, which does not exist, " \
                      "and there is no last good copy"
    assert f"{problem}: running the 4-seat build (hardware/wiring/4-seat.toml), emulated" in list(said)
    remember_good(TEMPLATE)
    config, problem = choose_config(link, False)
    assert problem.startswith("configuration invalid, running the last good one: ")
    assert "which does not exist" in problem
    assert config == load_config(last_good_path())


def test_a_dangling_link_as_a_service_without_a_last_good_copy_is_an_error_naming_it(
        dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INVOCATION_ID", "0123")
    link = dirs / "table.toml"
    link.symlink_to("nowhere.toml")
    with pytest.raises(ConfigError, match=f"^{link} is a symbolic link to nowhere\\.toml, which does not"):
        choose_config(link, False)


def test_a_config_path_the_operator_named_must_exist(dirs: Path) -> None:
    missing = dirs / "no" / "such.toml"
    with pytest.raises(ConfigError, match=f"^{missing}: no such file \\(named by --config\\)$"):
        choose_config(missing, True, named=True)
    remember_good(TEMPLATE)  # a last good copy does not stand in for a file named on the command line
    with pytest.raises(ConfigError, match="no such file"):
        choose_config(missing, True, named=True)
    link = dirs / "named.toml"
    link.symlink_to(missing)
    with pytest.raises(DanglingLink):
        choose_config(link, True, named=True)
    assert choose_config(missing, True)[0].hardware.backend == "emulated"  # not named: the built-in one


def test_remember_good_never_writes_through_a_planted_temporary_link(dirs: Path) -> None:
    victim = dirs / "victim"
    victim.write_bytes(b"precious")
    planted = last_good_path().with_name(f".last-good.toml.{os.getpid()}")
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.symlink_to(victim)
    remember_good(TEMPLATE)  # refused (O_NOFOLLOW), said, and the planted link removed
    assert victim.read_bytes() == b"precious" and not planted.is_symlink() and not last_good_path().exists()
    remember_good(TEMPLATE)
    assert last_good_path().read_bytes() == TEMPLATE and victim.read_bytes() == b"precious"
    planted.symlink_to(victim)
    assert config_files.clean_stale_copies() == [planted] and victim.exists()


def test_web_names_are_host_names_or_addresses_and_a_bad_one_is_named(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    assert b"\nnames = []  #" in TEMPLATE
    named = b'\nnames = ["table.example.org", "fd00::7", "TABLE.local."]'
    path.write_bytes(TEMPLATE.replace(b"\nnames = []", named))
    assert load_config(path).web.names == ["table.example.org", "fd00::7", "TABLE.local."]
    path.write_bytes(TEMPLATE.replace(b"\nnames = []", b'\nnames = ["table.example.org", "evil.example/x"]'))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert len(caught.value.problems) == 1
    assert "names: 'evil.example/x' is neither a host name (letters, digits, '-' and dots, such as " \
           "table.example.org) nor an IP address" in caught.value.problems[0]
