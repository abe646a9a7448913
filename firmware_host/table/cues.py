"""The table's sounds as data: which moments have a sound, and each sound's tune.

The table notes a `Cue` when something happens (table/machine.py); the service hands each cue to the
buzzer's player (devices/buzzer.py), which plays the tune on the GPIO. Nothing here touches a pin,
so the game and its tests import it without gpiozero.

The tunes stay between 1.6 and 3.2 kHz, around the transducer's resonance, where it is loudest
(hardware/README.md: CUI CD-1206, rated 2400 Hz).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NamedTuple, get_args

Sound = Literal["count", "go", "false_start", "too_late", "ligretto", "round_end", "match_won"]
SOUNDS: tuple[str, ...] = get_args(Sound)

RESONANCE_HZ = 2400
"""The transducer's rated frequency (CUI CD-1206 datasheet): where it is loudest."""
LONGEST_MS = 600
"""No tune is longer: a sound marks a moment and must never cover the next one."""


class Note(NamedTuple):
    hz: float  # 0: a rest
    ms: int


def _tune(*notes: tuple[float, int]) -> tuple[Note, ...]:
    return tuple(Note(hz, ms) for hz, ms in notes)


TUNES: Mapping[str, tuple[Note, ...]] = {
    # each second of the countdown: a short tick below the resonance
    "count": _tune((2000, 70)),
    # go: one long note right on the resonance, the loudest the buzzer has
    "go": _tune((2400, 350)),
    # a press before go: two low buzzes
    "false_start": _tune((1600, 110), (0, 50), (1600, 110)),
    # lost a race for the same spot: a quick fall
    "too_late": _tune((2400, 60), (1800, 100)),
    # a player called Ligretto (emptied their stack): a rising run
    "ligretto": _tune((2000, 80), (2400, 80), (2800, 80), (3200, 200)),
    # a round ended another way (nobody can play, the dice ran out, …): a falling pair
    "round_end": _tune((2800, 150), (0, 30), (2000, 250)),
    # the match is won: a fanfare
    "match_won": _tune((2400, 90), (0, 30), (2400, 90), (0, 30), (3200, 320)),
}


def tune_ms(tune: tuple[Note, ...]) -> int:
    return sum(note.ms for note in tune)


class Cue(NamedTuple):
    """A sound the table asks for: what, for which seat (0-based; None: the whole table), when."""

    sound: str
    seat: int | None
    at: int  # ns, the table's clock

    def describe(self) -> str:
        text = self.sound.replace("_", " ")
        text = {"ligretto": "Ligretto!", "match won": "match won", "count": "countdown"}.get(text, text)
        return f"♪ {text}" + (f" (seat {self.seat + 1})" if self.seat is not None else "")
