"""Everything players read says the table's words (issue 33, item 4): in every phase of every game,
the terminal's table and hand panes, its keys line, the players' log and the web page's text
never show the code's names ("round_result", "ligretto_stop", "classic") or a raw clock stamp."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from firmware_host.engine.game import names
from firmware_host.play.simulate import make_bots, play_round
from firmware_host.table.machine import Phase, Table, Timing
from firmware_host.views.live import live_state
from firmware_host.views.readable import centre_words, key_help, seat_words

S = 1_000_000_000
INTERNAL = re.compile(r"round_result|match_result|\battract\b|ligretto_stop|last_die|no_placement|stuck_vote|"
                      r"deadlock|\bclassic\b|allocator|arena")
STAMP = re.compile(r"\b\d{7,}\b")  # a clock's nanoseconds (or microseconds) as they are kept
CODE_KEYS = {"type", "phase", "game", "games", "ending", "refused", "control", "look"}
"""The web state's keys the page matches on, never shows (table.js)."""


def shown_on_the_page(value: Any, key: str = "") -> list[str]:
    """The web state's text the page can show: every string but the keys it only matches on and
    the stamps it only subtracts."""
    if key in CODE_KEYS or key.endswith("_ns"):
        return []
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in shown_on_the_page(v, k)]
    if isinstance(value, list):
        return [t for v in value for t in shown_on_the_page(v, key)]
    return [value] if isinstance(value, str) else []


def what_players_read(table: Table, now: int) -> list[str]:
    texts = [centre_words(table).plain, key_help(table), *table.notices]
    texts += [seat_words(table, seat).plain for seat in range(table.seats)]
    texts += shown_on_the_page(live_state(table, now, ""))
    return texts


def check(table: Table, now: int, where: str) -> None:
    for text in what_players_read(table, now):
        found = INTERNAL.search(text) or STAMP.search(text)
        assert found is None, f"{where}: {found[0]!r} in {text!r}"


@pytest.mark.parametrize("game", names())
def test_no_internal_name_or_raw_stamp_in_any_phase(game: str) -> None:
    table = Table(4, Timing(countdown_ns=3 * S))
    check(table, 0, f"{game}, attract")
    table.new(game, {"rounds": 2})
    table._join(0)
    table.set_bots(2)
    check(table, 0, f"{game}, lobby")
    now = S
    table.start(now)
    check(table, now, f"{game}, countdown")
    seen = set()
    for _ in range(2):
        now += 4 * S
        table.tick(now)
        assert table.phase is Phase.PLAYING
        check(table, now, f"{game}, playing")
        play_round(table.match, make_bots(3, "instant", 0), random.Random(0))
        now += S
        table.tick(now)
        seen.add(table.phase)
        check(table, now, f"{game}, {table.phase}")
        if table.phase is Phase.ROUND_RESULT:
            now += 11 * S
            table.tick(now)
    assert seen == {Phase.ROUND_RESULT, Phase.MATCH_RESULT}
    now += 31 * S
    table.tick(now)
    assert table.phase is Phase.ATTRACT  # after the podium (issue 31)
    check(table, now, f"{game}, attract after the match")


def test_the_check_finds_what_it_looks_for() -> None:
    """The patterns catch what the issue saw."""
    for said in ("round_result, classic", "Round 7 over (ligretto_stop)", "(last_die, finished: seat 1)",
                 "memory: allocator malloc, 2 C arenas", "seat 2 pressed at 1834526671234"):
        assert INTERNAL.search(said) or STAMP.search(said), said
    assert json.dumps(shown_on_the_page({"phase": "attract", "phase_name": "waiting for players"})) == \
        '["waiting for players"]'
