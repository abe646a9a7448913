"""Ligretto, the card game: its entry (seat controls here; bot, screens, words, scenario beside).

The cursor runs over row places, the stack top and the discard top; slap plays the
card; alt turns 3 hand cards; with pro_row, up marks the row place under the cursor as
the destination of the next slap, down unmarks it, and down with nothing marked votes
that the round is stuck (arbitrated, as it changes the game).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...engine.classic import MoveToRow, PlayCard, TurnHand, VoteStuck
from ...engine.round import Refusal
from ...table.controls import steps
from ...table.kinds import register
from ..kind import FolderKind


class ClassicKind(FolderKind):
    name = "classic"
    scenario_keys: ClassVar[frozenset[str]] = frozenset({"seat", "pile"})
    routine: ClassVar[frozenset[type]] = frozenset({TurnHand})
    shared_board = False

    # ------------------------------------------------------------ controls

    def choices(self, c: Any) -> list[Any]:
        rnd = c.match.round
        st = rnd.seats[c.seat]
        places: list[Any] = [place[-1] if place else None for place in st.row]
        if not rnd.options.stack_face_down:
            places.append(st.stack[-1] if st.stack else None)
        places.append(st.discard[-1] if st.discard else None)
        return places

    def nav(self, c: Any, control: str) -> None:
        rnd = c.match.round
        if not rnd.options.pro_row:
            return
        row = len(rnd.seats[c.seat].row)
        if control == "up" and c.cursor < row:
            c.destination = c.cursor
            c.message = f"to row place {c.cursor + 1}"
        elif control == "down":
            c.destination = None
            c.message = ""

    def arbitrates(self, c: Any, control: str) -> bool:
        return control == "down" and c.match.round.options.pro_row and c.destination is None

    def action(self, c: Any, control: str, ts: int) -> Any:
        if control == "down":
            return VoteStuck(c.seat, ts)
        return super().action(c, control, ts)

    def alt(self, c: Any, ts: int) -> Any:
        return TurnHand(c.seat, ts)

    def slap(self, c: Any, choice: Any, ts: int) -> Any:
        if c.destination is not None:
            return MoveToRow(c.seat, choice, c.destination, ts)
        return PlayCard(c.seat, choice, ts)

    def after(self, c: Any, action: Any) -> None:
        if isinstance(action, VoteStuck):
            c.message = "voted: stuck"
        if isinstance(action, MoveToRow):
            c.destination = None

    def presses_for(self, c: Any, action: Any) -> list[str] | None:
        if isinstance(action, TurnHand):
            return ["alt"]
        if isinstance(action, VoteStuck):
            return ["down"] if c.destination is None else ["down", "down"]
        options = self.choices(c)
        if isinstance(action, MoveToRow):
            presses = [*steps(c.cursor, action.place, len(options)), "up"]
            try:
                index = options.index(action.card, len(c.match.round.seats[c.seat].row))
            except ValueError:
                return None
            return presses + steps(action.place, index, len(options)) + ["slap"]
        if isinstance(action, PlayCard):
            if action.card not in options:
                return None
            return [*steps(c.cursor, options.index(action.card), len(options)), "slap"]
        return None

    def explain(self, refusal: Refusal, action: Any, rnd: Any) -> str | None:
        if not isinstance(action, PlayCard | MoveToRow):
            return None
        card = action.card
        need = card.value + (1 if rnd.options.descending else -1)
        if rnd.options.alternate_colours:
            return f"doesn't fit: needs a {need} of another colour"
        return f"doesn't fit: needs {card.colour.letter}{need} out"

    # ------------------------------------------------------------ the rest, beside

    def scenario_options(self, options: dict[str, Any], rounds: int) -> dict[str, Any]:
        return {"rounds": rounds, **options}

    def scenario_setup(self, rnd: dict[str, Any], players: int, where: str, rng: Any,
                       options: dict[str, Any], match: Any) -> dict[str, Any]:
        from .scenario import setup

        return setup(rnd, players, where, rng)

    def sweep_options(self, players: int) -> list[dict[str, Any]]:
        return [{}, {"recycle": "turn_over"}, {"pro_row": True}, {"descending": True},
                {"alternate_colours": True}, {"stack_face_down": True},
                {"pro_row": True, "stack_face_down": True, "alternate_colours": True},
                {"recycle": "turn_over", "pro_row": True, "descending": True, "alternate_colours": True,
                 "stack_face_down": True}]


KIND = register(ClassicKind())
