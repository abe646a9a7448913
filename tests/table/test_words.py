"""The players' words (table/words.py): every game, phase and ending has its own, never the code's."""

from __future__ import annotations

import pytest

from firmware_host.engine.game import names
from firmware_host.engine.round import Ending
from firmware_host.table.machine import Phase
from firmware_host.table.words import ended_by, ending_name, game_name, phase_name, seconds


def test_each_game_names_itself_as_players_call_it() -> None:
    assert [game_name(g) for g in names()] == ["Ligretto", "Ligretto Dice", "Ligretto Domino",
                                                "Ligretto Crazy"]


def test_every_phase_and_every_ending_has_words_without_the_codes_underscores() -> None:
    assert [phase_name(p) for p in Phase] == ["waiting for players", "lobby", "get ready", "playing",
                                              "round over", "match over"]
    for ending in Ending:
        words = ending_name(ending)
        assert "_" not in words
        assert words != str(ending) or ending is Ending.LIGRETTO


def test_a_round_is_ended_by_someone_never_won_by_them() -> None:
    """It was: Crazy's "Round 7 won by seat 1 … scores seat 1 -1": the seat that ends a round need
    not score the most. And Domino said "(ligretto stop)" in one pane, "(out of cards)" in another."""
    assert ended_by(Ending.LIGRETTO_STOP, ["seat 1"]) == "seat 1 ran out of cards"
    assert ended_by("ligretto_stop", ["bot at seat 3"]) == "bot at seat 3 ran out of cards"
    assert ended_by(Ending.LIGRETTO, ["seat 2"]) == "seat 2 called Ligretto (their Ligretto stack is empty)"
    assert ended_by(Ending.DEADLOCK, []) == "nobody can play any more"
    assert ending_name(Ending.LIGRETTO_STOP) == "out of cards"
    assert ended_by("a_new_ending", []) == "a new ending"  # a game's own ending shows, unhidden


@pytest.mark.parametrize(("ns", "said"), [(837_000_000, "837 ms"), (1_500_000_000, "1.5 s"),
                                          (30_000_000_000, "30 s"), (45_000, "45 µs"), (-2_000_000, "2 ms")])
def test_a_span_is_said_in_seconds_milliseconds_or_microseconds(ns: int, said: str) -> None:
    assert seconds(ns) == said
