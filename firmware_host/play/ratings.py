"""Ratings per game: openskill's Plackett-Luce model (Weng and Lin's Bayesian approximation, as
the openskill package implements it), updated after each match from the players' totals.

A rating is a belief: `mu` the skill it expects, `sigma` how unsure it is. What a person is shown
is the conservative `shown` value, mu - 3 sigma (openskill's `ordinal`): a newcomer starts at 0
and climbs as the table learns them, rather than leading the board after one lucky match.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
"""openskill's defaults: mu 25, sigma 25/3, beta 25/6."""


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = MODEL.mu
    sigma: float = MODEL.sigma

    @property
    def shown(self) -> float:
        """The conservative value a person is shown: mu - 3 sigma."""
        return self.mu - 3 * self.sigma


def rate(ratings: dict[Hashable, Rating], who: Sequence[Hashable | None],
         totals: Sequence[int]) -> list[Rating]:
    """One match: each player's rating after it, `who[p]` the player's key (None: a guest, who
    starts from the default and is kept nowhere), `totals[p]` their points (more is better, equal
    totals share a place). `ratings` is updated for every keyed player."""
    before = [ratings.get(key, Rating()) if key is not None else Rating() for key in who]
    teams = [[MODEL.create_rating([r.mu, r.sigma])] for r in before]
    rated = MODEL.rate(teams, scores=[float(t) for t in totals])
    after = [Rating(team[0].mu, team[0].sigma) for team in rated]
    for key, rating in zip(who, after, strict=True):
        if key is not None:
            ratings[key] = rating
    return after
