"""The Crazy bot's run of hand cards, worked out from the cards' values and kept, is the run the
plain search over the cards finds: the same worth, the same first card, the same value."""

from __future__ import annotations

import random

from firmware_host.games.crazy.bot import FOUR, GIFT, SPENT, WIN, _first_run
from firmware_host.games.crazy.rules import BOTTOM, TOP


def _values(value: int, top: int | None) -> list[int]:
    if top is None:
        return [BOTTOM] if value in (0, BOTTOM) else []
    if value:
        return [value] if abs(value - top) == 1 else []
    return [v for v in (top + 1, top - 1) if BOTTOM <= v <= TOP]


def _search(hand: list[int], top: int | None, size: int, last: bool) -> tuple[float, int, int] | None:
    """Every order of the cards tried, as the bot did before its runs were kept."""
    best: tuple[float, int, int] | None = None
    for i, v in enumerate(hand):
        for value in _values(v, top):
            spent = SPENT if v == 0 and value != TOP and not last else 0.0
            if value == TOP:
                worth = WIN + size + 1
            else:
                rest = hand[:i] + hand[i + 1:]
                after = _search(rest, value, size + 1, last) if rest else None
                stop = 1.0
                if value == FOUR and not last and not any(c in (0, TOP) for c in rest):
                    stop -= GIFT
                worth = 1.0 + max(stop - 1.0, after[0] if after is not None else stop - 1.0)
            worth -= spent
            if best is None or worth > best[0]:
                best = (worth, i, value)
    return best


def test_kept_runs_are_the_searched_ones() -> None:
    rng = random.Random(34)
    found = 0
    for _ in range(3000):
        hand = tuple(rng.choice((0, 1, 2, 3, 4, 5)) for _ in range(rng.randint(1, 6)))
        top = rng.choice((None, 1, 2, 3, 4, 5))
        size, last = rng.randint(0, 12), rng.random() < 0.2
        expected = _search(list(hand), top, size, last)
        assert _first_run(hand, top, size, last) == expected, (hand, top, size, last)
        assert _first_run(hand, top, size, last) == expected  # asked again: the kept answer
        found += expected is not None
    assert found > 1000
