"""The buzzer's player: the table's tunes (table/cues.py) on a GPIO, one for each moment the players
must hear.

The table notes a `Cue` when something happens (table/machine.py); the service hands each cue to the
`BuzzerPlayer` in one place. The player plays on its own thread, so the
game's loop never waits for a tune, and a newer cue cuts off the tune still playing: the table
only ever says what is happening now.

The buzzer is a magnetic transducer (hardware/README.md: CUI CD-1206, rated 2400 Hz, 5 V
square wave at ½ duty) switched by an NPN from a Pi GPIO. The tunes stay between 1.6 and
3.2 kHz, around its resonance where it is loudest. On the Pi the PWM is lgpio's software PWM,
which any GPIO can do up to 10 kHz (lgpio.h, lgTxPwm) with whole-microsecond periods, so a
2400 Hz note is played as 2398 Hz (417 µs) — nobody hears the difference.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..table.cues import RESONANCE_HZ, TUNES, Cue, Note

if TYPE_CHECKING:
    from ..config import BuzzerConfig

LOUDEST_DUTY = 0.5
"""A square wave at ½ duty drives a transducer hardest (its datasheet's rating condition)."""


def duty_for(volume: float) -> float:
    """Volume 0..1 as the PWM duty 0..½. lgpio gets whole percents (gpiozero cuts the rest off),
    so any volume above 0 is at least 1 %, never a silent 0 %."""
    if volume <= 0:
        return 0.0
    return max(0.01, round(LOUDEST_DUTY * min(volume, 1.0), 2))


class BuzzerPlayer:
    """Plays tunes on the buzzer's GPIO as a gpiozero PWM output, from its own thread.

    `play` returns at once; a tune asked for while another plays replaces it. Off
    (no `[buzzer]`, `enabled = false` or `volume = 0`): the pin is never touched, no PWM
    at all. Every cue asked for is kept in `heard` (status, tests), played or not."""

    def __init__(self, config: BuzzerConfig | None, factory: Any,
                 tunes: Mapping[str, tuple[Note, ...]] = TUNES,
                 on_error: Callable[[str], None] | None = None) -> None:
        self.tunes = tunes
        self.heard: list[Cue] = []
        self.played: list[str] = []  # the tunes that reached the pin, in order
        self.duty = duty_for(config.volume) if config is not None and config.enabled else 0.0
        self.muted = set(config.mute) if config is not None else set()
        self.problem = ""
        self._on_error = on_error
        self._device: Any = None
        self._cond = threading.Condition()
        self._next: str | None = None
        self._asked = 0  # counts the tunes asked for: a playing tune stops when this moves on
        self._busy = False
        self._closing = False
        self._thread: threading.Thread | None = None
        if config is None or self.duty <= 0:
            return
        from gpiozero import PWMOutputDevice

        try:
            self._device = PWMOutputDevice(config.gpio, initial_value=0, frequency=RESONANCE_HZ,
                                           pin_factory=factory)
            self._device.pin.frequency = None  # silent and no PWM running until a tune plays
        except Exception as exc:  # a GPIO in use, no PWM: the table plays on, silent, and says why
            self.problem = f"buzzer on GPIO{config.gpio}: {exc}"
            self._device = None
            if on_error is not None:
                on_error(self.problem)
            return
        self._thread = threading.Thread(target=self._run, name="buzzer", daemon=True)
        self._thread.start()

    @property
    def on(self) -> bool:
        return self._device is not None

    def play(self, cue: Cue | str) -> None:
        """Start `cue`'s tune now, cutting off any still playing. Never blocks."""
        cue = cue if isinstance(cue, Cue) else Cue(cue, None, 0)
        if cue.sound not in self.tunes:
            raise KeyError(f"no sound {cue.sound!r} (sounds: {', '.join(self.tunes)})")
        self.heard.append(cue)
        del self.heard[:-200]
        if self._device is None or cue.sound in self.muted:
            return
        with self._cond:
            self._next = cue.sound
            self._asked += 1
            self._busy = True
            self._cond.notify()

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Until no tune plays (tests, closing): True when idle."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._busy, timeout)

    @property
    def busy(self) -> bool:
        with self._cond:
            return self._busy

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._next is not None or self._closing)
                if self._closing:
                    return
                name, asked, self._next = self._next, self._asked, None
            assert name is not None
            self.played.append(name)
            del self.played[:-200]
            cut = False
            for note in self.tunes[name]:
                self._sound(note.hz)
                with self._cond:
                    cut = self._cond.wait_for(lambda a=asked: self._asked != a or self._closing,
                                              note.ms / 1000)
                if cut:
                    break
            with self._cond:
                replaced = self._next is not None and not self._closing
                if not replaced:
                    self._silence()
                    self._busy = False
                    self._cond.notify_all()

    def _sound(self, hz: float) -> None:
        """A note: the frequency first, then the duty (gpiozero starts lgpio's PWM at 0 %)."""
        device = self._device
        try:
            if hz <= 0:
                device.value = 0
                return
            device.pin.frequency = hz
            device.value = self.duty
        except Exception as exc:  # never let a buzzer fault take the thread down silently
            self._fault(exc)

    def _silence(self) -> None:
        """Duty 0, then PWM stopped: the line rests low, the transistor off."""
        device = self._device
        if device is None:
            return
        try:
            device.value = 0
            device.pin.frequency = None
        except Exception as exc:
            self._fault(exc)

    def _fault(self, exc: Exception) -> None:
        problem = f"buzzer: {exc}"
        if problem != self.problem:
            self.problem = problem
            if self._on_error is not None:
                self._on_error(problem)

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._device is not None:
            with contextlib.suppress(Exception):
                self._silence()
                self._device.close()
            self._device = None
