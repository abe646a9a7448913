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

import abc
import contextlib
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..table.cues import RESONANCE_HZ, TUNES, Cue, Note, tune_ms
from .parts import MISSING, NOT_TESTED, OK, UNEXPECTED, Check, Part

if TYPE_CHECKING:
    from ..config import BuzzerConfig, TableConfig

BEEP_WAIT_S = 2.0  # every tune is shorter than a second (the self-test waits this long for one)

LOUDEST_DUTY = 0.5
"""A square wave at ½ duty drives a transducer hardest (its datasheet's rating condition)."""


def duty_for(volume: float) -> float:
    """Volume 0..1 as the PWM duty 0..½. lgpio gets whole percents (gpiozero cuts the rest off),
    so any volume above 0 is at least 1 %, never a silent 0 %."""
    if volume <= 0:
        return 0.0
    return max(0.01, round(LOUDEST_DUTY * min(volume, 1.0), 2))


class Buzzer(Part):
    """Plays tunes on the buzzer's GPIO from its own thread; each kind of buzzer says how a note
    reaches its pin (`_sound`, `_silence`) and how its self-test line reads (`_how`).

    `play` returns at once; a tune asked for while another plays replaces it. Off
    (no `[buzzer]`, `enabled = false` or `volume = 0`): the pin is never touched. Every cue
    asked for is kept in `heard` (status, tests), played or not."""

    name = "buzzer"

    def __init__(self, config: BuzzerConfig | None, tunes: Mapping[str, tuple[Note, ...]] = TUNES,
                 on_error: Callable[[str], None] | None = None) -> None:
        self.config = config
        self.tunes = tunes
        self.heard: list[Cue] = []
        self.played: list[str] = []  # the tunes that reached the pin, in order
        self.muted = set(config.mute) if config is not None else set()
        self._problem = ""
        self._on_error = on_error
        self._device: Any = None
        self._cond = threading.Condition()
        self._next: str | None = None
        self._asked = 0  # counts the tunes asked for: a playing tune stops when this moves on
        self._busy = False
        self._closing = False
        self._thread: threading.Thread | None = None

    def _open(self, config: BuzzerConfig, device: Callable[[], Any]) -> None:
        """The pin, then the thread that plays on it; a pin that cannot be had is said, once."""
        try:
            self._device = device()
        except Exception as exc:  # a GPIO in use, no PWM: the table plays on, silent, and says why
            self._problem = f"buzzer on GPIO{config.gpio}: {exc}"
            self._device = None
            if self._on_error is not None:
                self._on_error(self._problem)
            return
        self._thread = threading.Thread(target=self._run, name="buzzer", daemon=True)
        self._thread.start()

    @property
    def problem(self) -> str:
        return self._problem

    @problem.setter
    def problem(self, text: str) -> None:
        self._problem = text

    @abc.abstractmethod
    def _how(self, name: str) -> str:
        """The self-test's words for a tune that played: what this kind of buzzer did with it."""

    @abc.abstractmethod
    def _sound(self, hz: float) -> None:
        """One note of `hz` on the pin (0: a rest), from the buzzer's thread."""

    @abc.abstractmethod
    def _silence(self) -> None:
        """The line at rest: the buzzer quiet, nothing running."""

    def probe(self, config: TableConfig) -> list[Check]:
        """Ask for a tune (its "go", one long note, unless the configuration mutes it) and wait
        for the end. Nobody can hear it but the builder: the report asks."""
        buzzer = self.config
        if buzzer is None:
            return [Check("buzzer", "-", NOT_TESTED, "no [buzzer] in the configuration")]
        check = Check("buzzer", f"GPIO{buzzer.gpio}")
        if not self.on:
            check.result = MISSING if self.problem else NOT_TESTED
            check.detail = self.problem or "switched off (enabled = false or volume = 0)"
            return [check]
        name = next((n for n in ("go", *self.tunes) if n not in self.muted), None)
        if name is None:
            check.result, check.detail = NOT_TESTED, "every sound is muted ([buzzer] mute)"
            return [check]
        self.play(name)
        done = self.wait_idle(BEEP_WAIT_S)
        if self.problem:
            check.result, check.detail = MISSING, self.problem
        elif not done:
            check.result, check.detail = UNEXPECTED, f"still playing {name!r} after {BEEP_WAIT_S:g} s"
        else:
            check.result, check.detail = OK, f"{self._how(name)}: did you hear it?"
        return [check]

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


class BuzzerPlayer(Buzzer):
    """A passive transducer (the box's CD-1206): each note a square wave of its pitch, as a
    gpiozero PWM output; the volume is the duty (0 .. ½)."""

    def __init__(self, config: BuzzerConfig | None, factory: Any,
                 tunes: Mapping[str, tuple[Note, ...]] = TUNES,
                 on_error: Callable[[str], None] | None = None) -> None:
        super().__init__(config, tunes, on_error)
        self.duty = duty_for(config.volume) if config is not None and config.enabled else 0.0
        if config is None or self.duty <= 0:
            return

        def device() -> Any:
            from gpiozero import PWMOutputDevice

            pwm = PWMOutputDevice(config.gpio, initial_value=0, frequency=RESONANCE_HZ, pin_factory=factory)
            pwm.pin.frequency = None  # silent and no PWM running until a tune plays
            return pwm

        self._open(config, device)

    def _how(self, name: str) -> str:
        return f"played {name!r} ({tune_ms(self.tunes[name])} ms, duty {self.duty:.0%})"

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


class OnOffBuzzer(Buzzer):
    """An active buzzer (`kind = "on-off"`: one with its own oscillator, sounding its one pitch
    while its line is high), as a gpiozero digital output: a note is the line high for its
    length, a rest the line low. Its pitch and loudness are its own; the volume only says on
    (above 0) or off (0)."""

    def __init__(self, config: BuzzerConfig | None, factory: Any,
                 tunes: Mapping[str, tuple[Note, ...]] = TUNES,
                 on_error: Callable[[str], None] | None = None) -> None:
        super().__init__(config, tunes, on_error)
        if config is None or not config.enabled or config.volume <= 0:
            return

        def device() -> Any:
            from gpiozero import DigitalOutputDevice

            return DigitalOutputDevice(config.gpio, initial_value=False, pin_factory=factory)

        self._open(config, device)

    def _how(self, name: str) -> str:
        return f"played {name!r} ({tune_ms(self.tunes[name])} ms, switched on and off: its own pitch)"

    def _sound(self, hz: float) -> None:
        try:
            self._device.value = 1 if hz > 0 else 0
        except Exception as exc:  # never let a buzzer fault take the thread down silently
            self._fault(exc)

    def _silence(self) -> None:
        device = self._device
        if device is None:
            return
        try:
            device.value = 0
        except Exception as exc:
            self._fault(exc)


BUZZERS: dict[str, type[BuzzerPlayer] | type[OnOffBuzzer]] = {"pwm": BuzzerPlayer, "on-off": OnOffBuzzer}
"""Each `[buzzer] kind` and its part: a new kind is a class here, and its own probe words."""


def open_buzzer(config: BuzzerConfig | None, factory: Any,
                on_error: Callable[[str], None] | None = None) -> Buzzer:
    """The buzzer the configuration names (an off one when there is no `[buzzer]`)."""
    kind = config.kind if config is not None else "pwm"
    return BUZZERS[kind](config, factory, on_error=on_error)
