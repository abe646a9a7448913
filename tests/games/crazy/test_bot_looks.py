"""A Crazy bot's look, made cheaper, still decides as a fresh look does: the instant bot does not
work out again a table that has not changed since it found nothing worth playing there
(`CrazyPlayer.steady`); whatever it would have done, it does."""

from __future__ import annotations

import random
from typing import Any

import pytest

from firmware_host.games.crazy import bot
from firmware_host.games.crazy.bot import CrazyPlayer, policy
from firmware_host.play.simulate import make_bots, play_round
from firmware_host.table.bot_players import Level
from firmware_host.table.matches import new_match


def played(players: int, seed: int, steady: bool) -> list[Any]:
    """Every action of a 3-round match of instant bots, each bot's steadiness as given."""
    bots = make_bots(players, Level.INSTANT, seed)
    for one in bots:
        player = CrazyPlayer(one)
        player.steady = steady
        one.memory["crazy/player"] = player
    match = new_match("crazy", players, f"looks/{seed}", {"rounds": 3})
    order = random.Random(seed)
    actions: list[Any] = []
    while True:
        play_round(match, bots, order)
        actions.extend(match.round.journal)
        if match.is_over:
            return actions
        match.next_round()


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_a_steady_bot_plays_as_one_that_looks_afresh_every_time(
        players: int, monkeypatch: pytest.MonkeyPatch) -> None:
    worked = []  # runs judged onto a pile: only a look worked out anew judges any
    runs = bot._first_run
    monkeypatch.setattr(bot, "_first_run", lambda *a: worked.append(1) or runs(*a))
    fresh = played(players, players, steady=False)
    fresh_looks = len(worked)
    worked.clear()
    assert played(players, players, steady=True) == fresh
    assert 0 < len(worked) < fresh_looks  # some looks were skipped: the check can fail


def test_only_the_instant_bot_is_steady_and_its_player_is_kept() -> None:
    bots = {level: make_bots(1, level, 1)[0] for level in Level}
    assert {level for level, bot in bots.items() if CrazyPlayer(bot).steady} == {Level.INSTANT}
    hard = bots[Level.HARD]
    assert policy(hard, None).__self__ is policy(hard, None).__self__  # made once, at the first look
