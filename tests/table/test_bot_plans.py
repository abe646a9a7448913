"""Medium and hard bots make a play they saw at their last look at a routine move's pace (issue 34:
that is what beats a greedy player of their own pace); easy bots, and unplanned plays, do not."""

from __future__ import annotations

import random

import firmware_host.games  # noqa: F401  (registers the games: routine actions)
from firmware_host.games.classic.rules import Card, Colour, PlayCard, TurnHand
from firmware_host.table.bot_players import CHAIN, Bot, Level

R3, R4, R5, R6 = (PlayCard(0, Card(Colour.RED, v)) for v in (3, 4, 5, 6))


def delays(level: Level, plan: list[PlayCard], plays: list[PlayCard], routine: list[bool]) -> None:
    """Each of `plays`, made one look after another with `plan` planned at the first, takes what
    a routine move (True) or a fresh reaction (False) takes, drawn from the same generator."""
    bot, twin = Bot(level, random.Random(7)), Bot(level, random.Random(7))
    bot.plan(plan)
    for play, quick in zip(plays, routine, strict=True):
        bot.look()
        bot.plan(plan)  # it still sees them: only the bound stops the quick pace
        expected = twin.delay_ns(TurnHand(0) if quick else play)
        assert bot.delay_ns(play._replace(ts=123)) == expected, (play, quick)


def test_a_planned_play_takes_a_routine_moves_time() -> None:
    delays(Level.MEDIUM, [R4], [R4], [True])
    delays(Level.HARD, [R4], [R4], [True])


def test_an_unplanned_play_is_a_fresh_reaction() -> None:
    delays(Level.MEDIUM, [R4], [R5], [False])


def test_an_easy_bot_plans_nothing() -> None:
    delays(Level.EASY, [R4], [R4], [False])


def test_at_most_chain_planned_plays_in_a_row() -> None:
    assert CHAIN == 2
    delays(Level.MEDIUM, [R3, R4, R5, R6], [R3, R4, R5, R6], [True, True, False, True])


def test_a_bots_first_look_at_a_round_with_plays_still_planned_is_a_fresh_reaction() -> None:
    """It was: at round 2 a medium or hard bot still held round 1's plan, its hands asked the
    delay of no action (`delay_ns(None)`), and the daemon died (AttributeError), in `bench web`."""
    for level in (Level.MEDIUM, Level.HARD):
        bot, twin = Bot(level, random.Random(7)), Bot(level, random.Random(7))
        bot.plan([R4])
        bot.look()
        assert bot.planned
        assert bot.delay_ns(None) == twin.delay_ns(R5)  # drawn as a fresh reaction
