"""One seat's controls: a cursor moved at once by the navigation buttons, and the
selection turned into an engine action when `slap` (or `alt`, or a direct
`selectN`) is released by the arbiter, carrying that button's timestamp.

What the buttons mean is the game's (its entry's controls hooks, engine/game.py; each game's
`__init__` says it in words, docs/rules.md describes each game). left/right move the cursor over
the game's choices for every game. A refusal leaves the selection where it was and says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..engine.codec import Action
from ..engine.game import AnyGame, find
from ..engine.match import Match
from ..engine.round import Reason, Refusal, RoundBase


@dataclass(slots=True)
class SeatController:
    seat: int
    match: Match
    cursor: int = 0
    # What a game's controls keep between presses (its hooks read and set them):
    target: int = 0  # which of the selected choice's targets (`Game.targets`) up/down picked
    joker_mode: bool = False  # the cursor runs over the second kind of choice (up switches, down back)
    destination: int | None = None  # where the next slap puts the selected choice, when marked
    message: str = ""  # the last refusal or hint, for the seat's display

    @property
    def entry(self) -> AnyGame:
        """The game's entry, which says what each button means in it."""
        return find(self.match.round.game)

    # ------------------------------------------------------------ what the cursor runs over

    def choices(self) -> Sequence[object]:
        """What the cursor runs over: the game's choices (`Game.choices`; None: an empty place)."""
        choices: Sequence[object] = self.entry.choices(self)
        return choices

    def targets(self) -> list[tuple[int | None, int | None]]:
        """Where the selected choice may go (`Game.targets`: a pile, say, and a value)."""
        return self.entry.targets(self)

    def selected(self) -> object:
        options = self.choices()
        return options[self.cursor % len(options)] if options else None

    # ------------------------------------------------------------ buttons

    def nav(self, control: str) -> None:
        """left/right/up/down: local, immediate, never arbitrated."""
        if control in ("left", "right"):
            n = len(self.choices())
            if n:
                self.cursor = (self.cursor + (1 if control == "right" else -1)) % n
                self.target = 0
                return
        self.entry.nav(self, control)

    def arbitrates(self, control: str) -> bool:
        """A navigation button that changes the game here (pro_row's stuck vote)."""
        return self.entry.arbitrates(self, control)

    def action(self, control: str, ts: int) -> Action | None:
        """slap, alt or selectN, released by the arbiter: the engine action it means."""
        if control.startswith("select"):
            self.cursor = int(control[6:]) - 1
            control = "slap"
        return self.entry.action(self, control, ts)

    def result(self, action: Action, refusal: Refusal | None) -> None:
        """The engine's answer: a refusal is shown and the selection stays."""
        if refusal is not None:
            self.message = explain(refusal, action, self.match.round)
            return
        self.message = ""
        self.entry.after(self, action)
        n = len(self.choices())
        self.cursor = self.cursor % n if n else 0

    # ------------------------------------------------------------ for bots

    def presses_for(self, action: Action) -> list[str] | None:
        """The buttons a player would press, from the current cursor, to make `action`.

        Bots play through these, so emulated bots go pins → arbiter → engine too.
        """
        return self.entry.presses_for(self, action)


def explain(refusal: Refusal, action: Action, rnd: RoundBase) -> str:
    """A refusal in a line a player can act on: who was faster, or what would have fitted."""
    if refusal.reason is not Reason.NO_FIT:
        return refusal.short()
    said = find(rnd.game).explain(refusal, action, rnd)
    if said is not None:
        return said
    if refusal.detail:
        return f"doesn't fit: {refusal.detail}"
    return refusal.short()


def steps(start: int, goal: int, n: int, keys: tuple[str, str] = ("left", "right")) -> list[str]:
    """The shorter way round from `start` to `goal` on a ring of `n` places."""
    if n == 0:
        return []
    start %= n
    forward = (goal - start) % n
    backward = (start - goal) % n
    return [keys[1]] * forward if forward <= backward else [keys[0]] * backward
