"""The Crazy bot: play every card it can rather than discard it, win piles with a 5 on a 4,
and set a pile up for its own finisher rather than for the quickest hand."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter

from ...engine.game import Policy
from ...table.bot_players import Bot, Level
from .rules import BOTTOM, TOP, CrazyAction, CrazyCard, DiscardCrazy, PlayCrazy
from .sight import CrazySight

FOUR = TOP - 1
PATIENCE = 2
"""Looks at a table that stood still before a seat with nothing worth playing discards. Waiting
none wins against the greedy player (`bench bots`: medium 66 of 100 rather than 2 of 20) but
breaks matches between bots: everyone discards at once, rounds end with totals near zero, and 19
of 100 two-seat medium matches had no end after 1,000 rounds (`simulate --sweep`)."""
WIN = 10.0
"""A run of hand cards that ends in a 5 on a 4 wins the pile: worth this plus the pile's cards."""
GIFT = 0.5
"""A run that leaves a 4 this seat cannot take: the quickest hand with a 5 takes the pile."""
SPENT = 0.6
"""A Crazy card laid down other than as a finisher: it could have finished a pile later."""

QUICK = 4
"""Cards one other seat lays within a second, seen between two of this seat's looks, that no
person manages but by luck (four reactions in a second): a masher hammering its button. From
then on, for `DENY_LOOKS` looks, this seat plays the eager way (`_deny`): that hand takes every 4
first."""
DENY_LOOKS = 300
"""How long a sighting of `QUICK` is remembered, in this seat's looks (a hard bot looks about 40
times a round). It was the whole match before issue 34; but a hard bot's quickest reactions
reach four in a second now and then (2 sightings in 447 rounds of hard bots, 2 to 5 players), so
a seat took its equal for a masher, discarded at once for the rest of the match, and the totals
sank for ever (issue 34 named 11 of 800 matches). A slap-masher is seen doing it about once a round (198
rounds: 0 in 81, 1 in 74, 2 in 37, 3 or more in 6), so against it the eager play goes on."""
SECOND = 1_000_000_000
_VALUE = attrgetter("value")
PLANNERS = (Level.MEDIUM,)
"""Levels that play the rest of a run at a routine move's pace (`Bot.plan`). Not hard: at its 300 ms
a run of three lands within a second often enough that other hard bots take it for a masher
(`QUICK`) and play the eager way: 43 of 400 hard matches ran past five times the median, 4 with no
end after 1,000 rounds (`simulate --sweep --matches 100`). Hard beats the greedy player without it
(40 of 40)."""


@dataclass(slots=True)
class Memory:
    """What a Crazy bot keeps between looks, over the whole match."""

    looks: int = 0  # looks in a row that found nothing worth playing
    laid: list[int] | None = None  # cards each seat had laid at its last look
    seen: int = 0  # when it last looked (ns)
    deny: int = 0  # looks left of eager play: a far quicker hand was seen at the table
    still: tuple[CrazySight, int] | None = None
    """The sight and its round's count of actions at the last look, when it found nothing worth
    playing (kept by a bot whose judgement draws nothing: `CrazyPlayer.steady`)."""

    @property
    def denying(self) -> bool:
        return self.deny > 0


class CrazyPlayer:
    """One bot's way of playing Crazy. What its level fixes is worked out once, when the bot
    first plays (`policy`), rather than at every look: a look is the most frequent thing the
    table does, and each `Level` member named costs a class lookup."""

    __slots__ = ("bot", "easy", "mem", "patience", "plans", "spoil", "steady", "watches")

    def __init__(self, bot: Bot) -> None:
        level = bot.level
        self.bot = bot
        self.mem: Memory = bot.memory.setdefault("crazy", Memory())
        self.easy = level is Level.EASY
        self.patience = 1 if self.easy else PATIENCE
        self.watches = level in (Level.MEDIUM, Level.HARD)
        """Whether it watches for a masher (`_watch`, `_deny`)."""
        self.spoil = 0.5 if level in (Level.HARD, Level.INSTANT) else 0.0
        """What laying a 3 on a 4 it cannot take adds to a run's worth."""
        self.plans = level in PLANNERS
        self.steady = not self.watches and not bot.skill.overlook
        """Whether its judgement of a table depends on the table alone (it draws nothing and
        keeps no watch): then a look at a table that has not changed since a look that found
        nothing worth playing finds nothing again, and is not worked out anew."""

    def play(self, s: CrazySight, now: int) -> CrazyAction | None:
        """A competent player's judgement: a discarded card is a point lost for certain, a card
        on a pile is lost only to whoever finishes it.

        Each pile (and a new one, if there is room) is judged by the best run of hand cards that
        can go onto it one after another: a run ending in a 5 on a 4 wins the pile; otherwise it
        is worth the cards it gets out of the hand, less a gift when it leaves a 4 for the others
        and less a little for each Crazy card spent as a bridge. The first card of the best run
        is played. With no run worth anything the seat waits a few looks for the others' plays to
        make a card fit, then discards the card least likely to be of use (a Crazy card last).
        Hard also lays a 3 on a 4 it cannot take, to spoil it. Easy gifts 4s, spends Crazy cards
        anywhere and waits only one look; every level but instant overlooks cards. Against a far
        quicker hand every level but easy plays the eager way instead (`_deny`)."""
        hand, piles, draw, room, actions = s.look()
        if not hand:
            return None
        bot, mem = self.bot, self.mem
        if self.watches:
            _watch(mem, s, now)
            if mem.denying:
                return _deny(bot, s, hand, now)
        last = draw == 0  # a card kept now scores as a discarded one
        still = mem.still
        if still is not None and still[0] is s and still[1] == actions:
            return self._wait(s, hand, piles, last, now)  # the same table: nothing worth playing again
        seat = s.seat
        if bot.skill.overlook:
            known = {a.card for a in bot.planned} if bot.planned else ()  # the rest of a run seen last look
            seen: Sequence[CrazyCard] = [c for c in hand if c in known or bot.sees()]
        else:
            seen = hand  # it overlooks nothing (and `sees` draws nothing)
        values = tuple(map(_VALUE, seen))
        # A pile won now beats a bigger one the others may take first (a plain 5 before a Crazy card).
        finisher = values.index(TOP) if TOP in values else values.index(0) if 0 in values else None
        if finisher is not None:
            for pid, (top, _) in piles.items():
                if top == FOUR:
                    card = seen[finisher]
                    return PlayCrazy(seat, card, pid, TOP if card.crazy else None, now)
        spoil, shallow = self.spoil, last or self.easy
        best: tuple[float, int, int | None, int] | None = None  # (worth, card's index, pile, value)
        for pid, (top, size) in piles.items():
            run = _first_run(values, top, size, shallow)
            if run is not None:
                worth, index, value = run
                if top == FOUR and value == FOUR - 1:
                    worth += spoil
                worth += 0.01 * size
                if worth > 0 and (best is None or worth > best[0]):
                    best = (worth, index, pid, value)
        if room > 0:  # a new pile, judged last
            run = _first_run(values, None, 0, shallow)
            if run is not None and run[0] > 0 and (best is None or run[0] > best[0]):
                best = (run[0], run[1], None, run[2])
        if best is None:
            if self.steady:
                mem.still = (s, actions)
            return self._wait(s, hand, piles, last, now)
        mem.looks, mem.still = 0, None
        _, index, pid, value = best
        card = seen[index]
        chosen = PlayCrazy(seat, card, pid, value if values[index] == 0 else None, now)
        if pid is not None and self.plans:  # the rest of its run: at a routine pace
            after = chosen.value if chosen.value is not None else card.value
            bot.plan(PlayCrazy(seat, c, pid, v if c.crazy else None)
                     for c in seen if c is not card for v in _values(c, after))
        return chosen

    def _wait(self, s: CrazySight, hand: Sequence[CrazyCard], piles: Mapping[int, tuple[int, int]],
              last: bool, now: int) -> CrazyAction | None:
        """Nothing worth playing. Each discard brings the round's end nearer for everyone, and the
        others' plays may soon make a card fit: wait a few looks (a second each), then discard."""
        mem = self.mem
        mem.looks += 1
        if mem.looks <= self.patience and not last:
            return None
        mem.looks = 0
        return DiscardCrazy(s.seat, _least_kept(hand, piles), now)


def _watch(mem: Memory, s: CrazySight, now: int) -> None:
    """Did another seat lay `QUICK` cards within a second since the last look?"""
    laid = s.laid()
    mem.deny = max(0, mem.deny - 1)
    if mem.laid is not None and 0 < now - mem.seen <= SECOND and any(
            seat != s.seat and count - then >= QUICK
            for seat, (then, count) in enumerate(zip(mem.laid, laid, strict=True))):
        mem.deny = DENY_LOOKS
    mem.laid, mem.seen = laid, now


def _deny(bot: Bot, s: CrazySight, hand: Sequence[CrazyCard], now: int) -> CrazyAction:
    """Play against a hand far quicker than ours: whatever we lay down it finishes, so make no 4,
    hold a 5 for the 4s it makes, spoil its 4s with 3s, and discard at once rather than wait
    (the round's end leaves it holding the cards it could not play)."""
    seat = s.seat
    tops = {pid: top for pid, (top, _) in s.piles().items()}
    finishers = sorted((c for c in hand if c.value == TOP or c.crazy), key=lambda c: c.crazy)
    # A 5 on a 4 wins the pile: always the best play (a plain 5 before a Crazy card).
    for pid, top in tops.items():
        if top == TOP - 1:
            for card in finishers:
                if bot.sees():
                    return PlayCrazy(seat, card, pid, TOP if card.crazy else None, now)
    best: tuple[float, PlayCrazy] | None = None
    for card in hand:
        if card.crazy or not bot.sees():
            continue
        for pid, top in tops.items():
            if abs(card.value - top) != 1:
                continue
            worth = _worth(bot, card, top, finishers)
            if best is None or worth > best[0]:
                best = (worth, PlayCrazy(seat, card, pid, None, now))
        if card.value == BOTTOM and s.pile_room() > 0 and (best is None or best[0] < 0.5):
            best = (0.5, PlayCrazy(seat, card, None, None, now))
    if best is not None and best[0] >= 0:
        return best[1]
    # Nothing worth playing: discard the card least likely to fit soon, keeping finishers.
    plain = [c for c in hand if not c.crazy]
    fives = [c for c in plain if c.value == TOP]
    if len(finishers) > 1 and fives:  # one finisher is enough to wait with
        return DiscardCrazy(seat, fives[0], now)
    spare = [c for c in plain if c.value != TOP] or plain
    if spare:
        worst = max(spare, key=lambda c: min((abs(c.value - t) for t in tops.values()), default=9))
        return DiscardCrazy(seat, worst, now)
    card = hand[0]  # only Crazy cards in hand: start a pile, or lay one down making no 4
    if s.pile_room() > 0:
        return PlayCrazy(seat, card, None, BOTTOM, now)
    for pid, top in tops.items():
        for value in (top - 1, top + 1):
            if BOTTOM <= value < TOP - 1 or (value == TOP - 1 == top + 1 and len(hand) > 1):
                return PlayCrazy(seat, card, pid, value, now)
    return DiscardCrazy(seat, card, now)


def _worth(bot: Bot, card: CrazyCard, top: int, finishers: list[CrazyCard]) -> float:
    """How good `card` on a pile showing `top` is against a quicker hand; below 0 is worse than
    discarding."""
    if card.value == TOP - 1:  # makes a 4: only worth it holding the 5 that takes it
        return -1.0
    if top == TOP - 1:  # a 3 onto a 4 we cannot take: spoils it for the others
        return 2.0 if bot.level in (Level.HARD, Level.INSTANT) else 0.2
    return 1.0 + 0.1 * card.value if card.value > top else 0.5


def _values(card: CrazyCard, top: int | None) -> list[int]:
    """The values `card` may take on a pile showing `top` (None: starting a pile)."""
    value = card.value  # 0: a Crazy card (`CrazyCard.crazy`, spelt out: this runs for every look)
    if top is None:
        return [BOTTOM] if value == 0 or value == BOTTOM else []
    if value:
        return [value] if value == top + 1 or value == top - 1 else []
    return [v for v in (top + 1, top - 1) if BOTTOM <= v <= TOP]


@lru_cache(maxsize=16384)
def _first_run(values: tuple[int, ...], top: int | None, size: int, last: bool
               ) -> tuple[float, int, int] | None:
    """The best run of cards of these values (in hand order; 0: a Crazy card) onto a pile
    showing `top` (None: a new pile) of `size` cards: (its worth, the index of its first card,
    the value that card takes), or None when no card goes there. The first card is the first in
    hand order of the best worth. Kept: a look asks it for every pile, and the same few hands of
    values come again and again."""
    best: tuple[float, int, int] | None = None
    for i, v in enumerate(values):
        for value in _values_of(v, top):
            spent = SPENT if v == 0 and value != TOP and not last else 0.0
            if value == TOP:
                worth = WIN + size + 1  # wins the pile (a 5 on a 4: the only way a 5 goes down)
            else:
                worth = _onward(tuple(sorted(values[:i] + values[i + 1:])), value, size, last)
            worth -= spent
            if best is None or worth > best[0]:
                best = (worth, i, value)
    return best


def _onward(rest: tuple[int, ...], value: int, size: int, last: bool) -> float:
    """The worth of laying a card as `value` (not a 5) on a pile of `size` cards, the hand's
    other cards (their values) `rest`: one card out, and the best run after it, less a gift
    when it leaves a 4 this hand cannot take."""
    after = _rest_worth(rest, value, size + 1, last) if rest else None
    stop = 1.0
    if value == FOUR and not last and not any(v == 0 or v == TOP for v in rest):
        stop -= GIFT  # leaves a 4 this hand cannot take
    return 1.0 + max(stop - 1.0, after if after is not None else stop - 1.0)


@lru_cache(maxsize=16384)
def _rest_worth(values: tuple[int, ...], top: int, size: int, last: bool) -> float | None:
    """`_first_run`'s worth for a hand of these card values (sorted; 0: a Crazy card), None when
    no card goes there. Kept: a look asks it for every pile, and the same few hands of
    values come again and again (values 0 to 5, a pile of at most a few dozen cards). Both
    caches are bounded: the daemon runs for a season."""
    best: float | None = None
    for i, v in enumerate(values):
        if i and values[i - 1] == v:
            continue  # a card of the same value is worth the same
        for value in _values_of(v, top):
            spent = SPENT if v == 0 and value != TOP and not last else 0.0
            if value == TOP:
                worth = WIN + size + 1
            else:
                worth = _onward(values[:i] + values[i + 1:], value, size, last)
            worth -= spent
            if best is None or worth > best:
                best = worth
    return best


def _values_of(value: int, top: int | None) -> list[int]:
    """`_values` for a card of this value (0: a Crazy card) on a pile showing `top`."""
    if top is None:
        return [BOTTOM] if value == 0 or value == BOTTOM else []
    if value:
        return [value] if value == top + 1 or value == top - 1 else []
    return [v for v in (top + 1, top - 1) if BOTTOM <= v <= TOP]


def _least_kept(hand: Sequence[CrazyCard], piles: Mapping[int, tuple[int, int]]) -> CrazyCard:
    """The hand card least worth keeping when one must go (the first of equals in hand order):
    Crazy cards are kept most; then a card by how few steps a pile is from taking it, a 5 or a
    4 held with its partner a step nearer."""
    tops = [top for top, _ in piles.values()]
    values = [c.value for c in hand]
    four = FOUR in values
    finisher = TOP in values or 0 in values
    least, worst = hand[0], 11.0
    for card, value in zip(hand, values, strict=True):
        if value == 0:
            keep = 10.0
        else:
            near = min([abs(abs(value - t) - 1) for t in tops]) if tops else value - BOTTOM
            keep = ((value == TOP and four) or (value == FOUR and finisher)) - near
        if keep < worst:
            least, worst = card, keep
    return least


def policy(bot: Bot, sight: CrazySight) -> Policy[CrazySight, CrazyAction]:
    """The bot's `CrazyPlayer`, made at its first look and kept for the match (`Bot.choose`
    asks for the policy at every look)."""
    player = bot.memory.get("crazy/player")
    if player is None:
        player = bot.memory["crazy/player"] = CrazyPlayer(bot)
    return player.play
