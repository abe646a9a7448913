"""One seat's controls: a cursor moved at once by the navigation buttons, and the
selection turned into an engine action when `slap` (or `alt`, or a direct
`selectN`) is released by the arbiter, carrying that button's timestamp.

What the controls mean per game (docs/rules.md describes each game):
- Ligretto: the cursor runs over row places, the stack top and the discard top;
  slap plays the card; alt turns 3 hand cards; with pro_row, up marks the row
  place under the cursor as the destination of the next slap, down unmarks it,
  and down with nothing marked votes that the round is stuck (arbitrated, as it
  changes the game).
- Dice: the cursor runs over your dice; slap places one; alt rerolls them all.
- Domino: the cursor cycles the legal placements of your top card; slap lays it;
  alt discards it; up switches to joker squares, down back.
- Crazy: left/right pick a hand card, up/down its target (a pile, or a new pile,
  and a Crazy card's value); slap plays it; alt discards it face down.
A refusal leaves the selection where it was and says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..rules.classic import ClassicRound, MoveToRow, PlayCard, TurnHand, VoteStuck
from ..rules.codec import Action
from ..rules.common import Reason, Refusal
from ..rules.crazy import CrazyRound, DiscardCrazy, PlayCrazy
from ..rules.dice import FACES, DiceRound, DieColour, PlaceDie, Reroll
from ..rules.domino import DiscardDomino, DominoRound, PlaceDomino, PlayJoker
from ..rules.match import Match


@dataclass(slots=True)
class SeatController:
    seat: int
    match: Match
    cursor: int = 0
    target: int = 0  # Crazy: which pile/value for the selected card
    joker_mode: bool = False  # Domino
    destination: int | None = None  # Ligretto pro_row: the row place for the next slap
    message: str = ""  # the last refusal or hint, for the seat's display

    # ------------------------------------------------------------ what the cursor runs over

    def choices(self) -> list[Any]:
        rnd = self.match.round
        if isinstance(rnd, ClassicRound):
            st = rnd.seats[self.seat]
            places: list[Any] = [place[-1] if place else None for place in st.row]
            if not rnd.options.stack_face_down:
                places.append(st.stack[-1] if st.stack else None)
            places.append(st.discard[-1] if st.discard else None)
            return places
        if isinstance(rnd, DiceRound):
            return list(rnd.dice[self.seat])
        if isinstance(rnd, DominoRound):
            if self.joker_mode:
                return [(i, sq) for i in range(len(rnd.tokens)) for sq in rnd.joker_squares(i)]
            top = rnd.top_card(self.seat)
            return [] if top is None else list(rnd.placements(self.seat, top))
        if isinstance(rnd, CrazyRound):
            return list(rnd.seats[self.seat].hand)
        return []

    def targets(self) -> list[tuple[int | None, int | None]]:
        """Crazy: where the selected card may go (pile id or None for a new pile, value)."""
        rnd = self.match.round
        hand = self.choices()
        if not isinstance(rnd, CrazyRound) or not hand:
            return []
        return list(rnd.placements(hand[self.cursor % len(hand)]))

    def selected(self) -> Any:
        options = self.choices()
        return options[self.cursor % len(options)] if options else None

    # ------------------------------------------------------------ buttons

    def nav(self, control: str) -> None:
        """left/right/up/down: local, immediate, never arbitrated."""
        n = len(self.choices())
        rnd = self.match.round
        if control in ("left", "right") and n:
            self.cursor = (self.cursor + (1 if control == "right" else -1)) % n
            self.target = 0
        elif isinstance(rnd, CrazyRound) and control in ("up", "down"):
            count = len(self.targets())
            if count:
                self.target = (self.target + (1 if control == "down" else -1)) % count
        elif isinstance(rnd, DominoRound) and control in ("up", "down"):
            self.joker_mode = control == "up"
            self.cursor = 0
        elif isinstance(rnd, ClassicRound) and rnd.options.pro_row:
            row = len(rnd.seats[self.seat].row)
            if control == "up" and self.cursor < row:
                self.destination = self.cursor
                self.message = f"to row place {self.cursor + 1}"
            elif control == "down":
                self.destination = None
                self.message = ""

    def arbitrates(self, control: str) -> bool:
        """A navigation button that changes the game here: pro_row's stuck vote (down, nothing marked)."""
        rnd = self.match.round
        return (control == "down" and isinstance(rnd, ClassicRound) and rnd.options.pro_row
                and self.destination is None)

    def action(self, control: str, ts: int) -> Action | None:
        """slap, alt or selectN, released by the arbiter: the engine action it means."""
        if control.startswith("select"):
            self.cursor = int(control[6:]) - 1
            control = "slap"
        rnd = self.match.round
        seat = self.seat
        if control == "down" and isinstance(rnd, ClassicRound):
            return VoteStuck(seat, ts)
        if control == "alt":
            if isinstance(rnd, ClassicRound):
                return TurnHand(seat, ts)
            if isinstance(rnd, DiceRound):
                return Reroll(seat, ts)
            if isinstance(rnd, DominoRound):
                return DiscardDomino(seat, ts) if rnd.top_card(seat) is not None else None
            card = self.selected()
            return DiscardCrazy(seat, card, ts) if card is not None else None
        if control != "slap":
            return None
        choice = self.selected()
        if choice is None:
            self.message = "nothing there"
            return None
        if isinstance(rnd, ClassicRound):
            if self.destination is not None:
                return MoveToRow(seat, choice, self.destination, ts)
            return PlayCard(seat, choice, ts)
        if isinstance(rnd, DiceRound):
            return PlaceDie(seat, choice.colour, choice.face, ts)
        if isinstance(rnd, DominoRound):
            if self.joker_mode:
                token, square = choice
                return PlayJoker(seat, token, square, ts)
            return choice._replace(ts=ts)
        targets = self.targets()
        if not targets:
            self.message = "no place for it"
            return None
        pile, value = targets[self.target % len(targets)]
        return PlayCrazy(seat, choice, pile, value, ts)

    def result(self, action: Action, refusal: Refusal | None) -> None:
        """The engine's answer: a refusal is shown and the selection stays."""
        if refusal is not None:
            self.message = explain(refusal, action, self.match.round)
            return
        self.message = "voted: stuck" if isinstance(action, VoteStuck) else ""
        if isinstance(action, MoveToRow):
            self.destination = None
        if isinstance(action, PlayJoker | PlaceDomino):
            self.joker_mode = False
            self.cursor = 0
        n = len(self.choices())
        self.cursor = self.cursor % n if n else 0

    # ------------------------------------------------------------ for bots

    def presses_for(self, action: Action) -> list[str] | None:
        """The buttons a player would press, from the current cursor, to make `action`.

        Bots play through these, so emulated bots go pins → arbiter → engine too.
        """
        if isinstance(action, TurnHand | Reroll | DiscardDomino):
            return ["alt"]
        if isinstance(action, VoteStuck):
            return ["down"] if self.destination is None else ["down", "down"]
        presses: list[str] = []
        rnd = self.match.round
        if isinstance(rnd, DominoRound):
            want_joker = isinstance(action, PlayJoker)
            if want_joker != self.joker_mode:
                presses.append("up" if want_joker else "down")
            options = self._options_in_mode(want_joker)
            key = (action.token, action.square) if isinstance(action, PlayJoker) else \
                action._replace(ts=0)  # type: ignore[union-attr]
            start = 0 if want_joker != self.joker_mode else self.cursor
            if key not in options:
                return None
            presses += _steps(start, options.index(key), len(options))
            return [*presses, "slap"]
        options = self.choices()
        if isinstance(action, MoveToRow):
            presses += [*_steps(self.cursor, action.place, len(options)), "up"]
            cursor = action.place
            try:
                index = options.index(action.card, len(rnd.seats[self.seat].row))  # type: ignore[union-attr]
            except ValueError:
                return None
            return presses + _steps(cursor, index, len(options)) + ["slap"]
        if isinstance(action, PlayCard):
            if action.card not in options:
                return None
            return [*_steps(self.cursor, options.index(action.card), len(options)), "slap"]
        if isinstance(action, PlaceDie):
            wanted = next((i for i, d in enumerate(options)
                           if d.colour == action.colour and d.face == action.face), None)
            if wanted is None:
                return None
            return [*_steps(self.cursor, wanted, len(options)), "slap"]
        if isinstance(action, PlayCrazy | DiscardCrazy):
            if action.card not in options:
                return None
            index = options.index(action.card)
            presses = _steps(self.cursor, index, len(options))
            if isinstance(action, DiscardCrazy):
                return [*presses, "alt"]
            targets = list(rnd.placements(action.card))  # type: ignore[union-attr]
            if (action.pile, action.value) not in targets:
                return None
            start = self.target if index == self.cursor % max(len(options), 1) else 0
            wanted = targets.index((action.pile, action.value))
            return presses + _steps(start, wanted, len(targets), ("up", "down")) + ["slap"]
        return None

    def _options_in_mode(self, joker: bool) -> list[Any]:
        saved = self.joker_mode
        self.joker_mode = joker
        try:
            options = self.choices()
        finally:
            self.joker_mode = saved
        return [o._replace(ts=0) if isinstance(o, PlaceDomino) else o for o in options]


def explain(refusal: Refusal, action: Action, rnd: Any) -> str:
    """A refusal in a line a player can act on: who was faster, or what would have fitted."""
    if refusal.reason is not Reason.NO_FIT:
        return refusal.short()
    if isinstance(rnd, ClassicRound) and isinstance(action, PlayCard | MoveToRow):
        card = action.card
        step = 1 if rnd.options.descending else -1
        need = card.value + step
        if rnd.options.alternate_colours:
            return f"doesn't fit: needs a {need} of another colour"
        return f"doesn't fit: needs {card.colour.letter}{need} out"
    if isinstance(rnd, DiceRound) and isinstance(action, PlaceDie):
        placed = rnd.board[action.colour]
        if placed >= FACES:
            return f"doesn't fit: {DieColour(action.colour).name.lower()} row is full"
        return f"doesn't fit: {DieColour(action.colour).letter}{placed + 1} goes next"
    if refusal.detail:
        return f"doesn't fit: {refusal.detail}"
    return refusal.short()


def _steps(start: int, goal: int, n: int, keys: tuple[str, str] = ("left", "right")) -> list[str]:
    """The shorter way round from `start` to `goal` on a ring of `n` places."""
    if n == 0:
        return []
    start %= n
    forward = (goal - start) % n
    backward = (start - goal) % n
    return [keys[1]] * forward if forward <= backward else [keys[0]] * backward
