"""`bench engine` takes each game's runs in turn with the others' (a slow minute on a shared
machine then slows one run of every game, not every run of one game)."""

from __future__ import annotations

from typing import Any

import pytest

from firmware_host.bench import engine


def test_the_runs_go_round_the_games_and_each_figure_is_its_games_best(
        monkeypatch: pytest.MonkeyPatch) -> None:
    played: list[tuple[int, str]] = []
    seconds = iter([0.5, 0.25, 0.75, 0.125, 0.5, 1.0, 0.25, 0.5, 0.5] * 2)

    def play(rounds: int, game: str, players: int) -> tuple[list[Any], int, float]:
        played.append((rounds, game))
        return [], 100 * rounds, next(seconds) if rounds == 10 else 0.0

    monkeypatch.setattr(engine, "_play", play)
    monkeypatch.setattr(engine, "_replay", lambda matches: 0.1)
    figures = engine.bench_games(10, ("classic", "dice", "domino"), repeats=3, journal=False)
    games = ["classic", "dice", "domino"]
    assert played == [(5, g) for g in games] + [(10, g) for g in games] * 3  # warm-ups, then the passes
    # classic's runs took 0.5, 0.125 and 0.25 s: its best is the second pass's
    assert figures["classic"]["with_bots_rounds_per_s_all_runs"] == [20.0, 80.0, 40.0]
    assert figures["classic"]["with_bots_us_per_action"] == round(0.125 / 1000 * 1e6, 3)
    assert figures["dice"]["with_bots_rounds_per_s_all_runs"] == [40.0, 20.0, 20.0]
    assert figures["domino"]["with_bots_rounds_per_s_all_runs"] == [round(10 / 0.75, 1), 10.0, 20.0]
