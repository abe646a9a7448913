"""`--ui plain`: a plain terminal, drawn to its width, and `q` that asks during a match."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from firmware_host.config import emulated_config
from firmware_host.service.daemon import Daemon
from firmware_host.service.events import Key
from firmware_host.table.machine import Phase
from firmware_host.ui.plain import QUESTION, TerminalUI

S = 1_000_000_000
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def said(out: io.StringIO) -> str:
    """The last screen's words, whitespace (and where lines wrapped) aside."""
    return " ".join(" ".join(screen(out)).split())


ASKED = " ".join(QUESTION.split())


def screen(out: io.StringIO) -> list[str]:
    """The last screen drawn, as a person sees it (colours and cursor moves taken out)."""
    last = out.getvalue().rsplit("\x1b[H\x1b[2J", 1)[-1]
    return ANSI.sub("", last).split("\n")


@pytest.mark.parametrize("game", ["classic", "domino"])
@pytest.mark.parametrize("size", [(80, 24), (100, 30), (40, 20)])
def test_every_line_fits_the_terminal(dirs: Path, game: str, size: tuple[int, int]) -> None:
    """It was: the OLED drawn 128 columns wide and the help line 104, wrapped by an 80-column
    terminal into a mess."""
    columns, rows = size
    daemon = Daemon(emulated_config(4), terminal=True)
    out = io.StringIO()
    ui = TerminalUI(out, size)
    try:
        table = daemon.table
        table.new(game)
        table._join(0)
        table.set_bots(2)
        ui.show(daemon.view(ui.VIEWS))
        lobby = screen(out)
        assert len(lobby) <= rows and all(cell_len(line) <= columns for line in lobby), lobby
        assert any("l next bot: medium" in line for line in lobby) or columns < 60
        table.start(0)
        table.tick(3 * S)
        assert table.phase is Phase.PLAYING
        ui.show(daemon.view(ui.VIEWS))
        shown = screen(out)
        assert len(shown) <= rows and all(cell_len(line) <= columns for line in shown), shown
        assert shown[0].startswith("table-host: playing")
        assert shown[-1].endswith("q quit") or columns < 60
        if columns >= 64 and rows >= 32:
            assert any("\u2800" <= ch <= "\u28ff" for line in shown for ch in line)  # the OLED, in braille
        elif game == "domino":
            assert any(line.startswith(" 1 ") for line in shown)  # the board in words, rows numbered
    finally:
        daemon.close()


def test_q_during_a_match_asks_first(dirs: Path) -> None:
    daemon = Daemon(emulated_config(4), terminal=True)
    out = io.StringIO()
    ui = TerminalUI(out, (80, 24))
    put: list[object] = []
    ui.start(put.append)
    try:
        table = daemon.table
        table.new("classic")
        table._join(0)
        table.set_bots(1)
        ui.show(daemon.view(ui.VIEWS))
        ui.key("q")  # in the lobby: quits at once
        assert put == [Key("q")]
        put.clear()
        table.start(0)
        ui.show(daemon.view(ui.VIEWS))
        ui.key("q")
        assert put == [] and ASKED in said(out)
        ui.key("n")  # anything but y: no, and the question goes
        assert put == [] and ASKED not in said(out) and said(out).endswith("q quit")
        ui.key("right")
        assert put == [Key("right")]
        ui.key("q")
        ui.key("y")
        assert put == [Key("right"), Key("q")]
    finally:
        daemon.close()
