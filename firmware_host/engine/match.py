"""The match: rounds, totals, each game's end, and replay from the journal.

A match is fully determined by (game, players, seed, options, set-ups) and the
ordered list of accepted actions. Round k draws its randomness from its own
generator seeded with (seed, game, k), so a round can be rebuilt from its own
journal without replaying earlier rounds' dice and shuffles.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from .codec import Action
from .game import find
from .options import parse_options
from .round import Refusal, RoundBase, RoundResult, RulesError, Seat, winners

Round = RoundBase
"""Any game's round: its entry's `new_round` (engine/game.py) makes it."""


class JournalEntry(NamedTuple):
    round: int
    action: Action


def round_rng(seed: int | str, game: str, round_no: int) -> random.Random:
    return random.Random(f"{seed}/{game}/{round_no}")


class Match:
    def __init__(
        self,
        game: str,
        players: int,
        seed: int | str,
        options: Mapping[str, Any] | None = None,
        resources: Any = None,
        boards: Sequence[Sequence[Any]] | None = None,
        setup: Mapping[str, Any] | None = None,
    ) -> None:
        self.game = game
        self.players = players
        self.seed = seed
        self.options = parse_options(game, players, options)
        self.resources = resources
        """What the game's entry loaded for the match (`Game.resources`: a board, a deck), unopened."""
        self.entry = find(game)
        """The game's entry (engine/game.py), whose hooks the match calls."""
        self.entry.check_resources(resources)
        self.boards: list[list[Any]] = (
            [list(b) for b in boards] if boards is not None else [[] for _ in range(players)]
        )
        """Cards put aside per player, carried from round to round, and on to the next match where
        the game says so (`Game.round_over`, `carried_over`): the player boards."""
        self.results: list[RoundResult] = []
        self._totals = (0,) * players  # kept as rounds end: `totals` is asked after every action
        self._ended: list[tuple[Any, ...]] = []
        """The ended rounds' journals, packed by their round (`RoundBase.pack_journal`): the
        collector need not walk every action of a long match on every full collection."""
        self.setups: dict[int, dict[str, Any]] = {}
        self.round_no = 0
        self.round: Round = self._new_round(setup)

    # ------------------------------------------------------------ rounds

    def _new_round(self, setup: Mapping[str, Any] | None) -> Round:
        rng = round_rng(self.seed, self.game, self.round_no)
        setup = dict(setup or {})
        if setup:
            self.setups[self.round_no] = setup
        rnd: Round = self.entry.new_round(self, rng, setup)
        if rnd.result is not None:
            self._round_over(rnd)
        else:
            rnd.on_end = self._round_over
        return rnd

    def next_round(self, setup: Mapping[str, Any] | None = None) -> Round:
        """Start the next round; `setup` fixes its cards, dice or board (scenarios)."""
        if self.round.result is None:
            raise RulesError("the round in progress has not ended")
        if self.is_over:
            raise RulesError("the match is over")
        self.round_no += 1
        self.round = self._new_round(setup)
        return self.round

    def apply(self, action: Action) -> Refusal | None:
        """Hand the action to the round in progress, which journals it if taken.

        The round tells the match when it ends (`on_end`), so calling the
        round's own `apply` is the same thing, one call shorter.
        """
        return self.round.apply(action)  # type: ignore[arg-type]

    @property
    def journal(self) -> list[JournalEntry]:
        """Every accepted action of the match so far, with its round number."""
        unpack = type(self.round).unpack_journal
        entries = [JournalEntry(i, a) for i, packed in enumerate(self._ended) for a in unpack(packed)]
        if self.round.result is None:
            entries += [JournalEntry(self.round_no, a) for a in self.round.journal]
        return entries

    def _round_over(self, rnd: Round) -> None:
        """The round ended: its result counts, its journal is kept packed, and its undo entries
        go (no race reaches back into an ended round: `apply` answers "round is over" first)."""
        assert rnd.result is not None
        self._ended.append(rnd.pack_journal(rnd.journal))
        rnd._undo.clear()
        self.results.append(rnd.result)
        self._totals = tuple(t + s for t, s in zip(self._totals, rnd.result.scores, strict=True))
        self.entry.round_over(self, rnd)

    # ------------------------------------------------------------ standings

    @property
    def totals(self) -> tuple[int, ...]:
        return self._totals

    @property
    def rounds_played(self) -> int:
        return len(self.results)

    @property
    def is_over(self) -> bool:
        if self.round.result is None:
            return False
        return self.entry.is_over(self)

    def boards_for_next_match(self) -> list[list[Any]] | None:
        """Once over: what the next match starts from (`Game.carried_over`), or None."""
        return self.entry.carried_over(self)

    @property
    def winners(self) -> tuple[Seat, ...]:
        """Seats sharing the highest total (only meaningful once the match is over)."""
        return winners(self.totals)

    def summary(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "players": self.players,
            "seed": self.seed,
            "options": {k: list(v) if isinstance(v, tuple) else v for k, v in self.options.items()},
            "rounds": [r.to_dict() for r in self.results],
            "totals": list(self.totals),
            "over": self.is_over,
            "winners": list(self.winners) if self.is_over else [],
        }

    # ------------------------------------------------------------ replay

    @classmethod
    def replay(cls, *args: Any, **kwargs: Any) -> Match:
        """Rebuild a match, round in progress included, from its accepted actions (the
        arguments of `replaying`)."""
        return deque(cls.replaying(*args, **kwargs), maxlen=1)[0][1]

    @classmethod
    def replaying(
        cls,
        game: str,
        players: int,
        seed: int | str,
        options: Mapping[str, Any] | None,
        journal: Iterable[tuple[int, Action]],
        resources: Any = None,
        setups: Mapping[int, Mapping[str, Any]] | None = None,
        boards: Sequence[Sequence[Any]] | None = None,
    ) -> Iterator[tuple[int | None, Match]]:
        """`replay` one step at a time, for a history to show each: the match, live, after each
        round is dealt (None) and after each journal entry (its index)."""
        setups = setups or {}
        match = cls(game, players, seed, options, resources, boards, setups.get(0))
        yield None, match
        apply = match.round.apply
        for i, (round_no, action) in enumerate(journal):
            if round_no != match.round_no:
                while match.round_no < round_no:
                    match.next_round(setups.get(match.round_no + 1))
                    yield None, match
                apply = match.round.apply
            refusal = apply(action)  # the round tells the match when it ends
            if refusal is not None:
                raise RulesError(f"journal does not replay: round {round_no}, {action}: {refusal}")
            yield i, match
