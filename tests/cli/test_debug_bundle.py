"""`tablectl debug-bundle` run as root where a member of the admin group may write (issue 22,
item 11): it never reads a file through a link or a second name they planted, never writes
through a directory link they planted in the path it was given, and never reads a file because a
socket named it (the daemon's own user can put another socket in the daemon's place)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from plumbing import DaemonProcess, configured_daemon

from firmware_host.system.errors import PathError
from firmware_host.system.nofollow import open_directory, read_regular

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = (ROOT / "systemd" / "table.toml.example").read_bytes()
NOBODY = 65534
SECRET = b"root:$6$not-for-a-bug-report:19000:0:99999:7:::\n"
as_root = pytest.mark.skipif(os.geteuid() != 0,
                             reason="planting a link that is not root's needs root (lchown)")


def bundle(path: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "firmware_host.cli.ctl", "debug-bundle", str(path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        return {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    proc = configured_daemon(tmp_path, TEMPLATE)
    proc.start()
    yield proc
    proc.close()


def test_a_configuration_linked_to_a_secret_is_left_out_with_a_note(daemon: DaemonProcess,
                                                                     tmp_path: Path) -> None:
    shadow = tmp_path / "shadow"
    shadow.write_bytes(SECRET)
    shadow.chmod(0o600)
    config = tmp_path / "etc" / "table.toml"
    out = tmp_path / "bundle.tar.gz"
    result = bundle(out, daemon.env)
    assert result.returncode == 0, result.stderr
    assert members(out)["table.toml"] == TEMPLATE  # the real file is collected
    attacks = [(config.symlink_to, f"{config} is a symbolic link to {shadow}: not followed"),  # an admin can
               (lambda to: os.link(to, config),  # a second name (where fs.protected_hardlinks is off)
                f"{config} has 2 names (a hard link to another file?): not read")]
    for plant, note in attacks:
        config.unlink()
        plant(shadow)
        result = bundle(out, daemon.env)
        assert result.returncode == 0, result.stderr
        files = members(out)
        assert "table.toml" not in files and all(SECRET.strip() not in data for data in files.values())
        assert files["notes.txt"] == f"table.toml not collected: {note}\n".encode()


@as_root
def test_a_directory_link_planted_in_the_path_is_not_followed(tmp_path: Path) -> None:
    env = {**os.environ, "TABLE_HOST_SOCKET": str(tmp_path / "none.sock")}
    victim = tmp_path / "etc"
    victim.mkdir()
    (victim / "passwd").write_bytes(b"root:x:0:0\n")
    shared = tmp_path / "shared"
    shared.symlink_to(victim)
    os.lchown(shared, NOBODY, NOBODY)  # planted by someone else
    result = bundle(shared / "passwd", env)
    assert result.returncode == 1
    assert result.stderr == (f"tablectl: {shared} is a symbolic link owned by uid {NOBODY}: not following "
                             "it; give the real path\n")
    assert sorted(p.name for p in victim.iterdir()) == ["passwd"]
    assert (victim / "passwd").read_bytes() == b"root:x:0:0\n"
    deeper = tmp_path / "box"
    deeper.mkdir()
    (deeper / "in").symlink_to(shared)  # root's own link, leading to the planted one: refused there
    result = bundle(deeper / "in" / "bundle.tar.gz", env)
    assert result.returncode == 1 and f"{shared} is a symbolic link owned by uid {NOBODY}" in result.stderr
    assert sorted(p.name for p in victim.iterdir()) == ["passwd"]
    os.lchown(shared, 0, 0)  # root's own link is followed
    result = bundle(shared / "bundle.tar.gz", env)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE((victim / "bundle.tar.gz").stat().st_mode) == 0o600


def test_open_directory_walks_links_it_trusts_and_names_the_one_it_does_not(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "rel").symlink_to("a/b")
    (tmp_path / "abs").symlink_to(tmp_path / "a")
    (tmp_path / "loop").symlink_to("loop")
    b = tmp_path / "a" / "b"
    for path, real in ((tmp_path / "rel", b), (tmp_path / "abs" / "b", b),
                       (tmp_path / "abs" / ".." / "a", b.parent)):
        fd = open_directory(path)
        try:
            assert os.fstat(fd).st_ino == real.stat().st_ino
        finally:
            os.close(fd)
    with pytest.raises(PathError, match="too many symbolic links"):
        open_directory(tmp_path / "loop")
    if os.geteuid() == 0:
        os.lchown(tmp_path / "rel", NOBODY, NOBODY)
        with pytest.raises(PathError, match=f"^{tmp_path / 'rel'} is a symbolic link owned by uid {NOBODY}"):
            open_directory(tmp_path / "rel")


def test_read_regular_reads_only_a_regular_file_with_one_name(tmp_path: Path) -> None:
    data = tmp_path / "table.toml"
    data.write_bytes(TEMPLATE)
    assert read_regular(data, 1 << 20) == TEMPLATE
    assert read_regular(data, 10) == f"{data}: larger than 10 bytes"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert read_regular(fifo, 1 << 20) == f"{fifo}: not a regular file"  # at once: no writer is waited for
    assert read_regular(tmp_path / "none", 10) == f"{tmp_path / 'none'}: No such file or directory"


@pytest.fixture
def fake_daemon(tmp_path: Path) -> Iterator[tuple[Path, dict]]:
    """A socket where the daemon's is, answering every request with `answer` (filled in by the
    test): what the daemon's own user can put in /run/table-host."""
    path = tmp_path / "fake.sock"
    answer: dict = {"ok": True}
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:  # closed: the test is over
                return
            with conn:
                conn.recv(65536)
                conn.sendall(json.dumps(answer).encode() + b"\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, answer
    server.close()
    thread.join(5)


def test_a_configuration_file_a_socket_names_is_never_read(tmp_path: Path,
                                                           fake_daemon: tuple[Path, dict]) -> None:
    sock, answer = fake_daemon
    shadow = tmp_path / "shadow"
    shadow.write_bytes(SECRET)
    shadow.chmod(0o600)
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "table.toml").write_bytes(TEMPLATE)
    env = {**os.environ, "TABLE_HOST_SOCKET": str(sock), "CONFIGURATION_DIRECTORY": str(tmp_path / "etc")}
    answer |= {"config_file": str(shadow), "status": {"phase": "attract"}}
    out = tmp_path / "bundle.tar.gz"
    result = bundle(out, env)
    assert result.returncode == 0, result.stderr
    files = members(out)
    assert files["table.toml"] == TEMPLATE  # the file tablectl knows, not the one the socket named
    assert all(SECRET.strip() not in data for name, data in files.items() if name != "daemon.json")
    assert json.loads(files["daemon.json"])["config_file"] == str(shadow)  # what it said, as said
    known = tmp_path / "etc" / "table.toml"
    assert files["notes.txt"] == (f"the daemon says it runs {str(shadow)!r}: not read (the bundle reads only "
                                  f"{known}, never a path the socket sends)\n").encode()
    (tmp_path / "etc" / "table.toml").unlink()  # and with no file where tablectl looks, none at all
    result = bundle(out, env)
    assert result.returncode == 0, result.stderr
    files = members(out)
    assert "table.toml" not in files and SECRET.strip() not in files["notes.txt"]
    assert files["notes.txt"].decode().splitlines()[1] == (
        f"table.toml not collected: {tmp_path / 'etc' / 'table.toml'}: No such file or directory")
