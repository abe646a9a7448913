"""The buzzer: distinct short tunes, played on a PWM pin as gpiozero drives lgpio, never blocking
the game; the table's moments become sounds, end to end through the emulated daemon."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from gpiozero import PWMOutputDevice
from gpiozero.exc import PinInvalidState
from helpers import play_dice_round
from plumbing import table_box, wait_for

from firmware_host.config import BuzzerConfig, ConfigError, build_file, emulated_config, load_config
from firmware_host.devices.buzzer import BuzzerPlayer, duty_for
from firmware_host.devices.emulated.pins import emulated_factory
from firmware_host.engine.round import Reason, Refusal
from firmware_host.table.arbiter import Press
from firmware_host.table.cues import LONGEST_MS, SOUNDS, TUNES, Cue, Note, tune_ms
from firmware_host.table.machine import Phase, Timing
from firmware_host.table.referee import Outcome

S = 1_000_000_000
MS = 1_000_000
GPIO = 18


# ------------------------------------------------------------ the tunes


def test_every_moment_has_its_own_short_tune_in_the_buzzers_band() -> None:
    assert set(TUNES) == set(SOUNDS)
    tunes = list(TUNES.values())
    assert len(set(tunes)) == len(tunes), "two moments sound the same"
    for name, tune in TUNES.items():
        assert 0 < tune_ms(tune) <= LONGEST_MS, name
        assert tune[0].hz > 0 and tune[-1].hz > 0, f"{name} starts or ends on a rest"
        # around the transducer's 2400 Hz resonance, and inside lgpio's 0.1-10000 Hz PWM
        assert all(n.hz == 0 or 1600 <= n.hz <= 3200 for n in tune), name


def test_volume_is_the_duty_cycle_up_to_one_half() -> None:
    assert duty_for(1.0) == 0.5 and duty_for(0.5) == 0.25 and duty_for(0) == 0
    assert duty_for(0.001) == 0.01  # never a silent 0 % once lgpio cuts it to whole percents


def test_buzzer_settings_are_checked_and_name_their_line(tmp_path: Path) -> None:
    text = build_file(4).read_text().replace("volume = 1.0  # 0..1: the PWM duty, 0..50 %", "volume = 1.5")
    text = text.replace('mute = []  # sounds not to play, e.g. ["count"]', 'mute = ["count", "beep"]')
    path = tmp_path / "table.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    line = text.splitlines().index("volume = 1.5") + 1
    problems = caught.value.problems
    said = "buzzer.volume: 1.5 is out of range: it must be at least 0 and at most 1"
    assert f"table.toml:{line}: {said}" in problems
    assert any(p.startswith(f"table.toml:{line + 1}: buzzer.mute[2]: Input should be 'count'")
               for p in caught.value.problems)
    buzzer = load_config(build_file(4)).buzzer
    assert buzzer == BuzzerConfig(gpio=18, enabled=True, volume=1.0, mute=[])


# ------------------------------------------------------------ the PWM pin (lgpio's model)


def test_the_emulated_pin_does_pwm_as_gpiozero_drives_lgpio() -> None:
    factory = emulated_factory()
    device = PWMOutputDevice(GPIO, frequency=2400, initial_value=0, pin_factory=factory)
    pin = factory.pin(GPIO)
    device.value = 0.29  # LGPIOPin sends int(0.29 * 100): 28 %, cut down, not rounded
    device.pin.frequency = 2000
    with pytest.raises(PinInvalidState, match=r"lgpio takes 0\.1 to 10000 Hz"):
        device.pin.frequency = 12_000  # lgTxPwm refuses it (LG_BAD_PWM_FREQ)
    device.close()
    assert pin.pwm == [(2400, 0), (2400, 0), (2400, 28), (2000, 28), (0, 0)]


def test_input_pins_closing_make_no_edge() -> None:
    factory = emulated_factory()
    pin = factory.pin(5)
    pin.function = "input"
    pin.pull = "up"
    before = list(pin.states)
    pin.close()
    assert [s.state for s in pin.states] == [s.state for s in before] and pin.pwm == []


# ------------------------------------------------------------ the player


def notes(pwm: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """What was heard: the (Hz, duty %) lgpio was given with a duty above 0, repeats folded."""
    folded = [e for i, e in enumerate(pwm) if i == 0 or pwm[i - 1] != e]
    return [e for e in folded if e[1] > 0]


def test_a_tune_plays_its_notes_at_the_volumes_duty_then_stops_the_pwm() -> None:
    factory = emulated_factory()
    player = BuzzerPlayer(BuzzerConfig(gpio=GPIO, volume=0.5), factory)
    pin = factory.pin(GPIO)
    assert pin.pwm[-1] == (0, 0)  # opened, silent, no PWM running
    start = len(pin.pwm)
    player.play(Cue("false_start", 1, 0))
    assert player.wait_idle()
    tune = pin.pwm[start:]
    assert notes(tune) == [(1600, 25), (1600, 25)]  # two buzzes, a rest between
    assert (1600, 0) in tune[1:-2]  # the rest: duty 0, the frequency kept
    assert tune[-2:] == [(1600, 0), (0, 0)]  # then duty 0 and PWM stopped: the line rests low
    assert player.played == ["false_start"] and player.heard == [Cue("false_start", 1, 0)]
    player.close()


def test_play_returns_at_once_and_a_newer_tune_cuts_the_playing_one() -> None:
    factory = emulated_factory()
    tunes = {"go": (Note(2000, 10_000), Note(2200, 10_000)), "count": (Note(3000, 20),)}
    player = BuzzerPlayer(BuzzerConfig(gpio=GPIO), factory, tunes=tunes)
    pin = factory.pin(GPIO)
    player.play("go")  # twenty seconds of tune: the call comes straight back
    assert player.busy
    wait_for(lambda: (2000, 50) in pin.pwm)
    player.play("count")
    assert player.wait_idle(), "the long tune was not cut off"
    assert notes(pin.pwm) == [(2000, 50), (3000, 50)]  # 2200 Hz never came
    assert pin.pwm[-1] == (0, 0) and player.played == ["go", "count"]
    player.play("go")
    player.close()  # closing mid-tune stops it and the PWM
    assert pin.pwm[-1] == (0, 0) and pin.frequency is None


@pytest.mark.parametrize("config", [None, BuzzerConfig(gpio=GPIO, enabled=False),
                                    BuzzerConfig(gpio=GPIO, volume=0)])
def test_off_means_no_pwm_at_all(config: BuzzerConfig | None) -> None:
    factory = emulated_factory()
    player = BuzzerPlayer(config, factory)
    player.play(Cue("go", None, 0))
    assert not player.busy and player.played == [] and [c.sound for c in player.heard] == ["go"]
    assert not any(info.name == f"GPIO{GPIO}" for info in factory.pins), "the buzzer's pin was opened"
    player.close()


def test_muted_sounds_are_heard_but_not_played() -> None:
    factory = emulated_factory()
    player = BuzzerPlayer(BuzzerConfig(gpio=GPIO, mute=["count"]), factory)
    player.play("count")
    player.play("go")
    assert player.wait_idle()
    assert player.played == ["go"] and [c.sound for c in player.heard] == ["count", "go"]
    player.close()


def test_a_buzzer_pin_already_in_use_is_reported_and_the_table_plays_on() -> None:
    factory = emulated_factory()
    said: list[str] = []
    taken = PWMOutputDevice(GPIO, pin_factory=factory)
    player = BuzzerPlayer(BuzzerConfig(gpio=GPIO), factory, on_error=said.append)
    assert not player.on and said and said[0].startswith("buzzer on GPIO18: ") and player.problem
    player.play("go")  # silent, no crash
    taken.close()


# ------------------------------------------------------------ the table's cues


@pytest.fixture
def box():
    return table_box(Timing(countdown_ns=3 * S))


def test_the_countdown_ticks_each_second_then_go_and_a_false_start_names_its_seat(box) -> None:
    table, tap = box
    tap(0, "slap", 1 * S)
    tap(2, "slap", 2 * S)
    tap(0, "alt", 10 * S)  # start: 10 s to 13 s
    tap(2, "slap", 10 * S + 500 * MS)  # seat 3 jumps the start
    assert table.deadline() == 11 * S
    table.tick(11 * S)
    table.tick(11 * S + 300 * MS)  # between two ticks: nothing
    assert table.deadline() == 12 * S
    table.tick(12 * S)
    assert table.deadline() == 13 * S
    table.tick(13 * S)
    assert table.phase is Phase.PLAYING
    assert table.take_cues() == [Cue("count", None, 10 * S), Cue("false_start", 2, 10 * S + 500 * MS),
                                 Cue("count", None, 11 * S), Cue("count", None, 12 * S),
                                 Cue("go", None, 13 * S)]
    assert table.take_cues() == []


def test_a_late_tick_sounds_once_not_a_burst(box) -> None:
    table, tap = box
    tap(0, "slap", 1 * S)
    tap(1, "slap", 2 * S)
    tap(0, "alt", 10 * S)
    table.take_cues()
    table.tick(12 * S + 500 * MS)  # the loop slept through the 11 s tick
    assert [c.sound for c in table.take_cues()] == ["count"] and table.deadline() == 13 * S


def test_the_loser_of_a_race_hears_too_late(box) -> None:
    table, tap = box
    tap(3, "slap", 1 * S)
    tap(1, "slap", 2 * S)  # players: 0 = seat 4, 1 = seat 2
    table.start(3 * S)
    table.tick(6 * S)
    table.take_cues()
    late = Outcome(Press(7 * S, 1, 1, "slap"), None, Refusal(Reason.TOO_LATE, by_seat=0, delta_ns=MS), 7 * S)
    table.referee.decide = lambda now: [late]
    table.tick(7 * S)
    assert table.take_cues() == [Cue("too_late", 1, 7 * S)]


def test_round_end_and_the_match_winner_sound(box) -> None:
    table, tap = box
    table.new("dice", {"rounds": 2})
    tap(0, "slap", 1 * S)
    tap(1, "slap", 2 * S)
    table.start(3 * S)
    table.tick(6 * S)
    play_dice_round(table.match)
    table.take_cues()
    table.tick(7 * S)
    assert [c.sound for c in table.take_cues()] == ["round_end"]
    table.next(8 * S)
    table.tick(11 * S)
    play_dice_round(table.match)
    table.take_cues()
    table.tick(12 * S)
    (cue,) = table.take_cues()
    winner = table.match.winners
    assert cue.sound == "match_won" and cue.seat == (winner[0] if len(winner) == 1 else None)


# ------------------------------------------------------------ end to end: the emulated daemon


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(name, str(tmp_path / name))
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    return tmp_path


def test_the_daemon_sounds_countdown_go_false_start_and_round_end_on_the_buzzer_pin(
        dirs: Path, caplog: pytest.LogCaptureFixture) -> None:
    from firmware_host.service.daemon import Daemon

    caplog.set_level(logging.DEBUG, logger="table_host")
    daemon = Daemon(emulated_config(2))
    assert daemon.buttons is not None
    pin = daemon.board.factory.pin(GPIO)

    def at(now: int) -> None:
        while not daemon.events.empty():
            daemon.loop.dispatch(daemon.events.get(), now)
        daemon.inputs.tick(now)
        daemon.loop.settle(now)

    try:
        daemon.table.new("dice", {"rounds": 2})
        for seat, control, when in ((0, "slap", 1 * S), (1, "slap", 2 * S), (0, "alt", 3 * S),
                                    (1, "slap", 3 * S + 400 * MS)):
            daemon.buttons.tap(seat, control, when, 50 * MS)
            at(when + 60 * MS)
        start = daemon.table.phase_since  # the countdown began when the loop saw the press
        for second in (1, 2, 3):
            at(start + second * S)
        assert daemon.table.phase is Phase.PLAYING
        play_dice_round(daemon.table.match)
        at(start + 4 * S)
        assert daemon.table.phase is Phase.ROUND_RESULT
        heard = [(c.sound, c.seat) for c in daemon.buzzer.heard]
        assert heard == [("count", None), ("false_start", 1), ("count", None), ("count", None),
                         ("go", None), ("round_end", None)]
        assert daemon.buzzer.wait_idle()
        assert notes(pin.pwm)[-2:] == [(2800, 50), (2000, 50)]  # round_end reached the pin
        assert ("table_host.sounds", logging.DEBUG, "♪ false start (seat 2)") in caplog.record_tuples
    finally:
        daemon.close()
    assert pin.pwm[-1] == (0, 0)


def test_a_terminal_ui_logs_each_sound_and_rings_its_bell(dirs: Path) -> None:
    import io

    from firmware_host.service.daemon import Daemon
    from firmware_host.ui.plain import TerminalUI

    class Rings:  # a frontend that only listens
        def __init__(self) -> None:
            self.rung: list[Cue] = []

        def start(self, put: Any) -> None: ...
        def show(self, view: Any) -> None: ...
        def ring(self, cue: Cue) -> None:
            self.rung.append(cue)

        def stop(self) -> None: ...

    daemon = Daemon(emulated_config(2), terminal=True)
    out = io.StringIO()
    daemon.attach(TerminalUI(out))
    listener = Rings()
    daemon.attach(listener)
    rung = listener.rung
    try:
        daemon.sounds.play(Cue("too_late", 1, 0))
        assert daemon.view().notices[-1] == "♪ too late (seat 2)"  # the log pane's line
        assert out.getvalue() == "\a" and rung == [Cue("too_late", 1, 0)]
    finally:
        daemon.close()


# ------------------------------------------------------------ the Pi path: gpiozero's LGPIOPin


class RecordingLgpio:
    """lgpio's calls as the Pi path makes them; tx_pwm checks its arguments as lgTxPwm does
    (lg lgGpio.c: frequency 0 = off or 0.1-10000 Hz, duty 0-100 %)."""

    def __init__(self) -> None:
        self.tx: list[tuple[float, float]] = []
        self.modes: dict[int, int] = {}

    def gpiochip_open(self, chip: int) -> int:
        return 7

    def gpiochip_close(self, handle: int) -> None:
        pass

    def gpio_claim_input(self, handle: int, gpio: int, flags: int = 0) -> None:
        self.modes[gpio] = 0

    def gpio_claim_output(self, handle: int, gpio: int, level: int = 0) -> None:
        self.modes[gpio] = 2  # GPIO_IS_OUT

    def gpio_get_mode(self, handle: int, gpio: int) -> int:
        return self.modes.get(gpio, 0)

    def gpio_write(self, handle: int, gpio: int, level: int) -> None:
        self.tx.append(("write", level))  # type: ignore[arg-type]

    def gpio_free(self, handle: int, gpio: int) -> None:
        pass

    def tx_pwm(self, handle: int, gpio: int, freq: float, duty: float, offset: int = 0,
               cycles: int = 0) -> int:
        assert gpio == GPIO
        assert freq == 0 or 0.1 <= freq <= 10_000, f"LG_BAD_PWM_FREQ ({freq})"
        assert 0 <= duty <= 100 and duty == int(duty), f"LG_BAD_PWM_DUTY ({duty})"
        self.tx.append((freq, duty))
        return 1


def test_on_the_pi_the_player_makes_the_same_tx_pwm_calls_the_emulated_pin_records(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import gpiozero.pins.lgpio as pins_lgpio

    fake = RecordingLgpio()
    for name in ("gpiochip_open", "gpiochip_close", "gpio_claim_input", "gpio_claim_output",
                 "gpio_get_mode", "gpio_write", "gpio_free", "tx_pwm"):
        monkeypatch.setattr(pins_lgpio.lgpio, name, getattr(fake, name), raising=False)

    class Pi4Factory(pins_lgpio.LGPIOFactory):
        def _get_revision(self) -> int:
            return 0xC03114  # a Pi 4 B

    pi = Pi4Factory(chip=0)
    emulated = emulated_factory()
    players = [BuzzerPlayer(BuzzerConfig(gpio=GPIO, volume=0.5), f) for f in (pi, emulated)]
    for player in players:
        player.play("too_late")
        assert player.wait_idle()
        player.close()
    tx = [e for e in fake.tx if e[0] != "write"]
    assert tx == emulated.pin(GPIO).pwm  # the model records exactly what lgpio is handed
    assert notes(tx) == [(2400, 25), (1800, 25)] and tx[-1] == (0, 0)
    pi.close()
