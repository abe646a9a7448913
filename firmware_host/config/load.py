"""Reading table.toml: every problem at once as `file:line: dotted.path: what is wrong`, and
the built-in wiring files of the box as built (hardware/wiring/)."""

from __future__ import annotations

import os
import re
import stat
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..system.errors import ConfigError
from .checks import semantic_problems
from .schema import HardwareConfig, TableConfig

Key = tuple[str | int, ...]


def dotted(path: Key) -> str:
    """A person counts from 1: the first `[[inputs.seats]]` is `inputs.seats[1]`, seat 1's table."""
    return ".".join(f"[{p + 1}]" if isinstance(p, int) else str(p) for p in path).replace(".[", "[")


def undotted(text: str) -> Key:
    """`inputs.seats[1].slap` -> ("inputs", "seats", 0, "slap"): from a person's count to an index."""
    return tuple(int(p) - 1 if p.isdigit() else p for p in re.split(r"[.\[\]]+", text) if p)


_HEADER = re.compile(r"^\[(\[?)\s*([^\]]+?)\s*\]\]?\s*$")
_ASSIGN = re.compile(r"^([A-Za-z0-9_\-.\" ]+?)\s*=\s*(.*)$")


def key_lines(text: str) -> dict[Key, int]:
    """Where each setting of a TOML file is (1-based line), so a problem can name its line.
    Reads what configuration files hold: tables, arrays of tables, keys, inline tables and
    arrays of inline tables one to a line."""
    lines: dict[Key, int] = {}
    counts: dict[Key, int] = {}
    prefix: Key = ()
    array: tuple[Key, int] | None = None  # inside a multi-line `key = [`: its path, next index
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip() if '"' not in raw else raw.strip()
        if not line:
            continue
        if array is not None:
            path, index = array
            if line.startswith(("{", '"')) or line[0].isdigit():
                lines.setdefault((*path, index), number)
                array = (path, index + 1)
            if line.startswith("]") or line.endswith("]"):
                array = None
            continue
        header = _HEADER.match(line)
        if header:
            parts = tuple(p.strip().strip('"') for p in header.group(2).split("."))
            resolved: list[str | int] = []
            for part in parts:
                resolved.append(part)
                if tuple(resolved) in counts and tuple(resolved) != parts:
                    resolved.append(counts[tuple(resolved)])
            key = tuple(resolved)
            if header.group(1):  # [[array of tables]]
                counts[key] = counts.get(key, -1) + 1
                lines.setdefault(key, number)
                key = (*key, counts[key])
            prefix = key
            lines.setdefault(prefix, number)
            continue
        assign = _ASSIGN.match(line)
        if assign:
            path = (*prefix, *(p.strip().strip('"') for p in assign.group(1).split(".")))
            lines.setdefault(path, number)
            value = assign.group(2)
            if value.startswith("[") and "]" not in value:
                array = (path, 0)
    return lines


def line_of(path: Key, lines: dict[Key, int]) -> int | None:
    """The line of the setting, or of the nearest table around it."""
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return None


def parse_config(data: dict[str, Any], source: str = "table.toml", text: str = "") -> TableConfig:
    """Every problem at once: `file:line: dotted.path: what is wrong` (the line when the
    text of the file is given)."""
    lines = key_lines(text) if text else {}

    def where(path: Key) -> str:
        number = line_of(path, lines)
        return f"{source}:{number}" if number else source

    try:
        cfg = TableConfig.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            path = tuple(p for p in err["loc"] if isinstance(p, str | int))
            problems.append(f"{where(path)}: {dotted(path)}: {in_words(err, path)}")
        raise ConfigError(problems) from None
    problems = [f"{where(undotted(p.split(':', 1)[0]))}: {p}" for p in semantic_problems(cfg)]
    if problems:
        raise ConfigError(problems)
    return cfg


BOUNDS = (("gt", "above"), ("ge", "at least"), ("lt", "below"), ("le", "at most"))
"""A setting's limits as pydantic keeps them (annotated_types' Gt, Ge, Lt, Le), in words."""
RANGE_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}


def in_words(err: Any, path: Key) -> str:
    """A problem pydantic found, in the table's words: a number out of range names the whole
    range the setting allows and the value given (pydantic says "Input should be greater than 0")."""
    if err["type"] in RANGE_ERRORS:
        allowed = allowed_range(path)
        if allowed:
            return f"{err['input']!r} is out of range: it must be {allowed}"
    return str(err["msg"])


def allowed_range(path: Key) -> str:
    """The limits of the setting at `path` ("above 0 and at most 100"), read from the schema."""
    model: Any = TableConfig
    field = None
    for part in path:
        if isinstance(part, int):
            continue  # an array's table: the same model
        fields = getattr(model, "model_fields", None)
        if fields is None or part not in fields:
            return ""
        field = fields[part]
        model = field.annotation
        args = getattr(model, "__args__", ())  # list[SeatWiring], X | None: the model inside
        model = next((a for a in args if hasattr(a, "model_fields")), model)
    if field is None:
        return ""
    limits = [f"{word} {getattr(m, key):g}" for m in field.metadata for key, word in BOUNDS
              if getattr(m, key, None) is not None]
    return " and ".join(limits)


MAX_CONFIG_BYTES = 1 << 20
"""A wiring file is a few kB; anything past a MiB is not one (and is not read whole)."""


def load_config(path: str | Path) -> TableConfig:
    """Whatever bytes the file holds, the answer is a configuration or a ConfigError naming
    the problem: a daemon reloading it must never die of it (docs/daemon.md)."""
    return read_config(path)[0]


def read_config(path: str | Path) -> tuple[TableConfig, bytes]:
    """The configuration and the very bytes it was read from: the last good copy keeps those,
    never the file read again (which may have changed in between)."""
    p = Path(path)
    raw = read_settled(p)
    try:
        return parse_bytes(raw, p), raw
    except ConfigError:
        raise
    except Exception as exc:  # any other failure of a parser is still this file's fault
        raise ConfigError([f"{p}: cannot be read as a configuration: {one_line(exc)}"]) from None


SETTLE_S = 0.2
"""A file is read once it has been left alone this long: an editor that rewrites table.toml in
place (truncate, then write in pieces) leaves a shorter file between its writes, and one cut
before `[[screens]]` is still valid (issue: 889 of 1,806 reloads kept such a file)."""
SETTLE_WAIT_S = 3.0
"""How long a read waits for a file that keeps changing before refusing it."""


def _identity(st: os.stat_result) -> tuple[int, ...]:
    """What a write, a truncation, a rename over it or a chmod changes."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def read_settled(p: Path) -> bytes:
    """The bytes of `p` once it is settled: unchanged (same inode, size, mtime and ctime) for
    SETTLE_S before the read, the same before and after it, still the file `p` names, and read to
    its size. Unchanged for SETTLE_S means by its own time stamps when they are that old, else
    (just written, or stamped in the future by a clock set back) seen unchanged for SETTLE_S
    here. A file still changing after SETTLE_WAIT_S is a ConfigError naming it: never a wait
    without end, never half a file."""
    deadline = time.monotonic() + SETTLE_WAIT_S
    while True:
        try:  # O_NONBLOCK: opening a FIFO must not wait for a writer; then only a regular file is read
            fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            raise ConfigError([f"{p}: cannot read: {exc.strerror or exc}"]) from None
        try:
            before = os.fstat(fd)
            if not stat.S_ISREG(before.st_mode):
                raise ConfigError([f"{p}: not a regular file"])
            if before.st_size > MAX_CONFIG_BYTES:
                raise ConfigError([f"{p}: larger than {MAX_CONFIG_BYTES} bytes: not a configuration file"])
            age = time.time() - max(before.st_mtime_ns, before.st_ctime_ns) / 1e9
            quiet = SETTLE_S if age < 0 else SETTLE_S - age  # stamped in the future: watch it whole
            if quiet <= 0 or time.monotonic() + quiet <= deadline:
                if quiet > 0:
                    time.sleep(quiet)
                with open(fd, "rb", closefd=False) as f:
                    raw = f.read(MAX_CONFIG_BYTES + 1)
                after, named = os.fstat(fd), os.stat(p)
                if _identity(before) == _identity(after) == _identity(named) and len(raw) == after.st_size:
                    return raw
        except OSError as exc:
            raise ConfigError([f"{p}: cannot read: {exc.strerror or exc}"]) from None
        finally:
            os.close(fd)
        if time.monotonic() >= deadline:
            raise ConfigError([f"{p}: still being written: it changed while it was read, again and again "
                               f"for {SETTLE_WAIT_S:g} s; it is read once left alone for "
                               f"{SETTLE_S * 1000:.0f} ms"])
        time.sleep(SETTLE_S / 4)


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def parse_bytes(raw: bytes, p: Path) -> TableConfig:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError([f"{p}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                           f"{exc.start})"]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{p}: {exc}"]) from None
    except RecursionError:
        raise ConfigError([f"{p}: arrays or tables nested too deeply"]) from None
    except ValueError as exc:  # int(): a number past Python's limit on decimal digits
        raise ConfigError([huge_integer(text, p) or f"{p}: {one_line(exc)}"]) from None
    try:
        return parse_config(data, p.name, text)
    except RecursionError:
        raise ConfigError([f"{p}: arrays or tables nested too deeply"]) from None


def huge_integer(text: str, p: Path) -> str | None:
    """Where an integer too long for Python to read is (tomllib says only ValueError)."""
    limit = sys.get_int_max_str_digits()
    found = re.search(rf"\d[\d_]{{{limit},}}", text)
    if found is None:
        return None
    line = text.count("\n", 0, found.start()) + 1
    return f"{p}:{line}: an integer of more than {limit} digits"


WIRING = Path(__file__).parents[1] / "data" / "wiring"  # = hardware/wiring/


def build_file(seats: int) -> Path:
    """The wiring file of the build that has this many seats: the 4-seat box or the 12-seat one."""
    return WIRING / ("4-seat.toml" if seats <= 4 else "12-seat.toml")


def default_config(seats: int = 4) -> TableConfig:
    """The box as built (hardware/wiring/): the 4-seat build for up to 4 seats, the 12-seat
    build for more, with only the first `seats` seats connected. Emulation plays on it too,
    so a laptop runs the very pin map the schematic draws."""
    if not 2 <= seats <= 12:
        raise ConfigError([f"a table has 2 to 12 seats, not {seats}"])
    path = build_file(seats)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data["inputs"]["seats"] = data["inputs"]["seats"][:seats]
    used = {line.get("expander") for seat in data["inputs"]["seats"] for line in seat.values()
            if isinstance(line, dict)}
    data["inputs"]["expanders"] = [e for e in data["inputs"]["expanders"] if e["name"] in used]
    data["screens"] = data["screens"][:seats]
    muxes = {screen.get("mux") for screen in data["screens"]}
    data["i2c_muxes"] = [m for m in data["i2c_muxes"] if m["address"] in muxes]
    return parse_config(data, path.name)


def emulated_config(seats: int = 4) -> TableConfig:
    """The box as built with every part emulated: a laptop runs the very pin map the schematic draws."""
    return as_emulated(default_config(seats))


def as_emulated(config: TableConfig) -> TableConfig:
    return config.model_copy(update={"hardware": HardwareConfig(backend="emulated")})
