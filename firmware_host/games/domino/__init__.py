"""Ligretto Domino: its entry. The cursor cycles the legal placements of your top card; slap
lays it; alt discards it; up switches to joker squares, down back."""

from __future__ import annotations

from typing import Any, ClassVar

from ...engine.domino import DiscardDomino, PlaceDomino, PlayJoker, score_round
from ...engine.match import Resources
from ...table.catalog import board_for, layouts
from ...table.controls import steps
from ...table.kinds import register
from ..kind import FolderKind


class DominoKind(FolderKind):
    name = "domino"
    scenario_keys: ClassVar[frozenset[str]] = frozenset({"seat", "tokens"})
    routine: ClassVar[frozenset[type]] = frozenset({DiscardDomino})

    def resources(self, players: int, options: dict[str, Any]) -> Resources:
        return Resources(board=board_for(players, options.get("layout")))

    # ------------------------------------------------------------ controls

    def choices(self, c: Any) -> list[Any]:
        rnd = c.match.round
        if c.joker_mode:
            return [(i, sq) for i in range(len(rnd.tokens)) for sq in rnd.joker_squares(i)]
        top = rnd.top_card(c.seat)
        return [] if top is None else list(rnd.placements(c.seat, top))

    def nav(self, c: Any, control: str) -> None:
        if control in ("up", "down"):
            c.joker_mode = control == "up"
            c.cursor = 0

    def alt(self, c: Any, ts: int) -> Any:
        return DiscardDomino(c.seat, ts) if c.match.round.top_card(c.seat) is not None else None

    def slap(self, c: Any, choice: Any, ts: int) -> Any:
        if c.joker_mode:
            token, square = choice
            return PlayJoker(c.seat, token, square, ts)
        return choice._replace(ts=ts)

    def after(self, c: Any, action: Any) -> None:
        if isinstance(action, PlayJoker | PlaceDomino):
            c.joker_mode = False
            c.cursor = 0

    def presses_for(self, c: Any, action: Any) -> list[str] | None:
        if isinstance(action, DiscardDomino):
            return ["alt"]
        presses: list[str] = []
        want_joker = isinstance(action, PlayJoker)
        if want_joker != c.joker_mode:
            presses.append("up" if want_joker else "down")
        options = self._options_in_mode(c, want_joker)
        key = (action.token, action.square) if want_joker else action._replace(ts=0)
        start = 0 if want_joker != c.joker_mode else c.cursor
        if key not in options:
            return None
        presses += steps(start, options.index(key), len(options))
        return [*presses, "slap"]

    def _options_in_mode(self, c: Any, joker: bool) -> list[Any]:
        saved = c.joker_mode
        c.joker_mode = joker
        try:
            options = self.choices(c)
        finally:
            c.joker_mode = saved
        return [o._replace(ts=0) if isinstance(o, PlaceDomino) else o for o in options]

    # ------------------------------------------------------------ screens

    def mark(self, c: Any) -> Any:
        choice = c.selected()
        return choice if isinstance(choice, PlaceDomino) else None

    # ------------------------------------------------------------ scenario files and tools

    def scenario_options(self, options: dict[str, Any], rounds: int) -> dict[str, Any]:
        return {"rounds": rounds, **options}

    def scenario_setup(self, rnd: dict[str, Any], players: int, where: str, rng: Any,
                       options: dict[str, Any], match: Any) -> dict[str, Any]:
        from .scenario import setup

        aside = match.boards if match is not None else [[] for _ in range(players)]
        return setup(rnd, players, where, rng, aside)

    def scenario_action(self, match: Any, raw: dict[str, Any], where: str) -> Any:
        from .scenario import action

        return action(match, raw, where)

    def sweep_options(self, players: int) -> list[dict[str, Any]]:
        """The usual option sets, and every other layout for this many players."""
        usual = board_for(players).name
        return [{}, {"tokens": "random"}, {"joker_hold_s": 0.0}, {"joker_hold_s": 60.0, "joker_wait_s": 0.0},
                {"tokens": "random", "joker_wait_s": 60.0},
                *({"layout": name} for name, (_, counts, _) in layouts().items()
                  if players in counts and name != usual)]

    def standing(self, rnd: Any) -> tuple[int, ...]:
        """Scored as if nobody could place any more: those who placed most finished."""
        placed = [st.placed for st in rnd.seats]
        finishers = tuple(s for s, n in enumerate(placed) if n == max(placed))
        return score_round(rnd.players, finishers, rnd.held_counts())[0]


KIND = register(DominoKind())
