"""What the players read, in their words: each game's name, each phase, each round's ending, who
ended it, and a moment of play. One place, so the terminal, the web page, `watch`, the seats'
screens and the players' log never show the code's words ("round_result", "ligretto_stop",
"classic") and never say the same thing two ways (issue 33). The code's words stay the keys:
the journal, the control socket and the JSON answers keep them.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.game import title_of
from ..engine.round import Ending

S = 1_000_000_000

PHASES = {
    "attract": "waiting for players",
    "lobby": "lobby",
    "countdown": "get ready",
    "playing": "playing",
    "round_result": "round over",
    "match_result": "match over",
}
"""Each phase of the table (table/machine.py's `Phase`) as a headline says it."""

ENDINGS = {
    Ending.LIGRETTO: "Ligretto",
    Ending.LIGRETTO_STOP: "out of cards",
    Ending.LAST_DIE: "last die placed",
    Ending.DEADLOCK: "nobody can play any more",
    Ending.STUCK_VOTE: "every seat agreed it is stuck",
    Ending.NO_PLACEMENT: "nobody can place a card",
}
"""How a round ended, in a few words (a result's heading, a seat's screen, the page)."""

_ENDED_BY = {
    Ending.LIGRETTO: "{who} called Ligretto (their Ligretto stack is empty)",
    Ending.LIGRETTO_STOP: "{who} ran out of cards",
    Ending.LAST_DIE: "{who} placed their last die",
    Ending.NO_PLACEMENT: "nobody can place a card; most placed: {who}",
}
"""Who ended the round and how: never "won", since the seat that ends a round need not score
the most (in Crazy it can score below zero)."""


def game_name(game: str) -> str:
    """The game as players call it ("Ligretto Dice"), for the code's name ("dice")."""
    return title_of(game)


def phase_name(phase: object) -> str:
    """The table's phase as players say it; an unknown one as itself, never hidden."""
    return PHASES.get(str(phase), str(phase).replace("_", " "))


def ending_name(ending: object) -> str:
    """A round's ending in a few words."""
    try:
        return ENDINGS[Ending(str(ending))]
    except ValueError:  # a game's own ending this module does not know yet: its words, unspaced
        return str(ending).replace("_", " ")


def ended_by(ending: object, finishers: Sequence[str]) -> str:
    """How the round ended, naming who ended it (`finishers`: their names, "seat 2")."""
    try:
        known = Ending(str(ending))
    except ValueError:
        known = None
    if finishers and known in _ENDED_BY:
        return _ENDED_BY[known].format(who=" and ".join(finishers))
    return ending_name(ending)


def seconds(ns: int) -> str:
    """A span of play, as a person reads it ("0.84 s", "12 ms", "45 µs"): never a raw stamp."""
    ns = abs(ns)
    if ns >= S:
        return f"{round(ns / S, 2):g} s"
    if ns >= 1_000_000:
        return f"{ns / 1_000_000:.0f} ms"
    return f"{ns / 1000:.0f} µs"
