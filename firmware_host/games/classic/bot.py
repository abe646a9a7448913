"""The Ligretto bot: stack first, then the row; with pro_row it fills the row and votes stuck."""

from __future__ import annotations

from types import MethodType

from ...engine.codec import Action
from ...engine.game import Policy
from ...table.bot_players import Bot, Level
from .rules import ClassicAction, MoveToRow, PlayCard, TurnHand, VoteStuck
from .sight import ClassicSight


def policy(bot: Bot, sight: ClassicSight) -> Policy[ClassicSight, ClassicAction]:
    """The instant bot without pro_row takes the one-glance path; every other bot `play`."""
    if bot.level == Level.INSTANT and not sight.options.pro_row:
        return _instant_classic
    return MethodType(play, bot)


def play(bot: Bot, s: ClassicSight, now: int) -> Action | None:
    seat = s.seat
    overlook = bot.skill.overlook
    # Stack first (it scores -2 a card), then the row (which refills from the stack).
    if not overlook:
        card = s.first_fitting()
        if card is not None:
            bot.fruitless = 0
            return PlayCard(seat, card, now)
    else:
        needs = s.needs
        planned = bot.planned  # seen at the last look: not overlooked now
        seen = [card for card in s.playable() if needs[card] > 0 and (
            (planned and PlayCard(seat, card) in planned) or bot.rng.random() >= overlook)]
        seen.sort(key=lambda card: not (planned and PlayCard(seat, card) in planned))
        if seen:
            bot.fruitless = 0
            # The others it saw, and any it holds that this play makes fit (a run: R4 then R5).
            after = s.takes_after(seen[0])
            bot.plan(PlayCard(seat, card) for card in s.playable()
                     if card != seen[0] and (card in seen or card in after))
            return PlayCard(seat, seen[0], now)
    if s.options.pro_row:
        stack_top, discard_top = s.stack_top(), s.discard_top()
        for i, top in enumerate(s.row_tops()):
            if top is None:
                continue
            for card in (stack_top, discard_top):
                if card is not None and s.row_takes(top, card) and bot.sees():
                    return bot.played(MoveToRow(seat, card, i, now))
        passes = s.hand_size() // 3 + 3
        # A seat with nothing left to turn votes at once: it must never hold up the vote.
        if (bot.fruitless > passes or not s.can_turn()) and not s.voted_stuck():
            return VoteStuck(seat, now)
    if s.can_turn():
        bot.fruitless += 1
        return TurnHand(seat, now)
    return None


_tuple_new = tuple.__new__


def _instant_classic(s: ClassicSight, now: int) -> Action | None:
    """The instant bot without pro_row: play the first card that fits, else turn 3 cards.

    The same choice `play` makes when nothing is overlooked, in one glance.
    Simulation and the engine benchmark spend most of their time here, so the
    actions are built with tuple's own constructor (a namedtuple's `__new__` is
    a Python function); the result is an ordinary PlayCard or TurnHand.
    """
    st = s._st  # `first_fitting` and `can_turn`, in one call: two in three actions turn cards
    needs = s.needs
    stack = st.stack
    if stack and not s._face_down:
        card = stack[-1]
        if needs[card] > 0:
            return _tuple_new(PlayCard, (s.seat, card, now))  # type: ignore[return-value]
    for place in st.row:
        if place:
            card = place[-1]
            if needs[card] > 0:
                return _tuple_new(PlayCard, (s.seat, card, now))  # type: ignore[return-value]
    discard = st.discard
    if discard:
        card = discard[-1]
        if needs[card] > 0:
            return _tuple_new(PlayCard, (s.seat, card, now))  # type: ignore[return-value]
    if st.hand or discard:
        return _tuple_new(TurnHand, (s.seat, now))  # type: ignore[return-value]
    return None

