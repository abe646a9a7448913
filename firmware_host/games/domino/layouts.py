"""Ligretto Domino's boards, from files: the sections and the layouts made of them.

Kept out of the rules, which stay free of I/O. Layouts live in `data/layouts/*.toml` beside
this module (plus any directory named in `TABLE_HOST_LAYOUTS`), so a new board needs a file,
not code.
"""

from __future__ import annotations

import os
import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ...engine.round import RulesError
from .rules import Board, DominoColour, Square

DATA = resources.files(__package__) / "data"


def _toml(path: Path | Any) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{path}: {exc}") from None


@cache
def sections() -> dict[str, list[str]]:
    data = _toml(DATA / "sections.toml")
    out: dict[str, list[str]] = {}
    for name, sec in data.get("section", {}).items():
        rows = sec.get("rows")
        if not (isinstance(rows, list) and len(rows) == 4 and all(len(r) == 4 for r in rows)):
            raise RulesError(f"sections.toml: section {name} needs 4 rows of 4 letters")
        out[name] = rows
    return out


def _turn(rows: list[str], degrees: int) -> list[str]:
    grid = [list(r) for r in rows]
    for _ in range(degrees // 90):
        grid = [list(row) for row in zip(*grid[::-1], strict=True)]
    return ["".join(r) for r in grid]


def _layout_files() -> list[Any]:
    files = sorted((DATA / "layouts").iterdir(), key=lambda p: p.name)
    extra = os.environ.get("TABLE_HOST_LAYOUTS")
    if extra:
        files += sorted(Path(extra).glob("*.toml"))
    return [f for f in files if f.name.endswith(".toml")]


def load_layout(path: Path | Any) -> tuple[Board, tuple[int, ...], str]:
    """A layout file into a Board, the player counts it suits, and its title.

    Recommended layouts come first in `layouts()`, so they are the defaults.
    """
    data = _toml(path)
    where = f"{path.name}"
    secs = sections()
    colours: dict[Square, DominoColour] = {}
    try:
        name = str(data["name"])
        for i, placed in enumerate(data["sections"]):
            rows = secs.get(placed["section"])
            if rows is None:
                raise RulesError(f"{where}: sections[{i}]: unknown section {placed['section']!r}")
            turn = int(placed.get("turn", 0))
            if turn not in (0, 90, 180, 270):
                raise RulesError(f"{where}: sections[{i}]: turn must be 0, 90, 180 or 270")
            r0, c0 = placed["at"]
            for r, row in enumerate(_turn(rows, turn)):
                for c, letter in enumerate(row):
                    sq = (r0 + r, c0 + c)
                    if sq in colours:
                        raise RulesError(f"{where}: sections[{i}] overlaps another at {list(sq)}")
                    colours[sq] = DominoColour.parse(letter)
        tokens = tuple((int(r), int(c)) for r, c in data["tokens"])
        players = tuple(int(p) for p in data.get("players", (2, 3, 4)))
    except KeyError as exc:
        raise RulesError(f"{where}: missing {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        raise RulesError(f"{where}: {exc}") from None
    title = str(data.get("title", name)) + (" *" if data.get("recommended") else "")
    return Board(name, colours, tokens), players, title


@cache
def layouts() -> dict[str, tuple[Board, tuple[int, ...], str]]:
    loaded = [load_layout(path) for path in _layout_files()]
    loaded.sort(key=lambda item: not item[2].endswith(" *"))
    out: dict[str, tuple[Board, tuple[int, ...], str]] = {}
    for board, players, title in loaded:
        if board.name in out:
            raise RulesError(f"two layouts are named {board.name!r}")
        out[board.name] = (board, players, title)
    return out


def board_for(players: int, name: str | None = None) -> Board:
    """The named layout, or the first recommended one that suits the player count."""
    known = layouts()
    if name is not None:
        check_layout_name(name)
        board, suits, _ = known[name]
        if players not in suits:
            raise RulesError(f"layout {name!r} is for {', '.join(map(str, suits))} players")
        return board
    for board, suits, _ in known.values():
        if players in suits:
            return board
    raise RulesError(f"no layout for {players} players")


def check_layout_name(name: str) -> None:
    """A layout of that name exists (for some player count)."""
    known = layouts()
    if name not in known:
        raise RulesError(f"unknown layout {name!r} (known: {', '.join(sorted(known))})")
