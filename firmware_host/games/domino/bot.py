"""The Domino bot: lay the top card somewhere, jokers only when nothing else will do."""

from __future__ import annotations

from ...engine.codec import Action
from ...engine.game import Policy
from ...table.bot_players import Bot, Level
from .rules import DiscardDomino, DominoAction, PlaceDomino
from .sight import DominoSight

_tuple_new = tuple.__new__
"""An action made without a namedtuple's `__new__` or `_replace`, each a Python call (a bot makes
one at every card it turns up)."""


def policy(bot: Bot, sight: DominoSight) -> Policy[DominoSight, DominoAction]:
    """How this bot plays a round: what its level makes of cards and jokers is worked out once
    here, not at every card it turns up."""
    overlooks = bool(bot.skill.overlook)  # `sees` draws nothing for a bot that overlooks nothing
    # Jokers are scarce: only after a whole pass through the hand found nothing (two passes for
    # an easy bot, which is slow to think of them), or when the screen says the round waits for one.
    passes = 2 if bot.level == Level.EASY else 1

    def play(s: DominoSight, now_ns: int) -> Action | None:
        options = s.placements(now_ns)  # empty at once for a card that fits nowhere
        if options is None:  # no card turned up
            return None
        if options and overlooks:
            options = [p for p in options if bot.sees()]
        if options:
            chosen = bot.rng.choice(options) if len(options) > 1 else options[0]
            seat, card, token, near, far, _ = chosen
            return bot.played(_tuple_new(PlaceDomino, (seat, card, token, near, far, now_ns)))
        if s.jokers() and (bot.fruitless > passes * s.held() or s.joker_needed()):
            joker = s.joker_for_top(now_ns)
            if joker is not None:
                return bot.played(joker._replace(ts=now_ns))
        bot.fruitless += 1
        return _tuple_new(DiscardDomino, (s.seat, now_ns))

    return play
