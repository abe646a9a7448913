"""The terminal names a named seat wherever it shows one: the seats panel and the table in words."""

from __future__ import annotations

from firmware_host.service.frontend import score_lines
from firmware_host.table.machine import Phase, Table
from firmware_host.views.readable import centre_words


def test_a_named_seat_is_its_name_in_the_terminal() -> None:
    table = Table(4, phase=Phase.LOBBY, joined=[1, 2])
    table.names = {2: "[b]Zoë[/b]"}  # markup in a name is its characters
    assert score_lines(table) == ["seat  2 player", "seat  3 [b]Zoë[/b]"]
    words = centre_words(table).plain
    assert "players: 2 (2 to 12): seat 2, [b]Zoë[/b] (seat 3)" in words
