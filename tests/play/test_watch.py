"""`table-host watch` shows a match at the table's pace: each action when its time comes."""

from __future__ import annotations

import pytest

from firmware_host.play.watch import watch
from firmware_host.table.bot_players import Level


class FakeClock:
    """Time that passes only by sleeping, so the pacing is checked exactly and nothing waits."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.mark.parametrize("speed", [1.0, 50.0])
def test_watch_waits_for_each_action_as_long_as_the_table_would(speed: float) -> None:
    fake = FakeClock()
    lines: list[str] = []
    report = watch("dice", 2, 3, Level.MEDIUM, speed, out=lines.append, sleep=fake.sleep,
                   clock=fake.clock, pause_s=10.0)
    assert report["rounds"] == 6 and lines[-1].startswith("winner")
    # The whole match took as long as its rounds and the result pauses between them, sped up.
    assert fake.now - 100.0 == pytest.approx(report["table_seconds"] / speed, abs=0.01)
    assert report["table_seconds"] > 6 * 5  # medium bots take seconds a round, not milliseconds
    first = next(i for i, line in enumerate(lines) if line.startswith("  "))
    assert lines[0] == "round 1" and "seat" in lines[first]
    at = float(lines[first].split()[0])
    assert fake.slept[0] == pytest.approx(at / speed, abs=0.01 / speed)  # nobody acts at once
    assert sum(line.startswith("round ") and " over after " in line for line in lines) == 6


def test_watch_refuses_a_speed_that_is_not_above_zero() -> None:
    with pytest.raises(ValueError, match="speed"):
        watch("dice", 2, 3, Level.MEDIUM, 0.0)


def test_each_play_is_shown_in_the_players_words_as_the_game_says_it() -> None:
    lines: list[str] = []
    fake = FakeClock()
    watch("classic", 2, 3, Level.MEDIUM, 1000.0, out=lines.append, sleep=fake.sleep, clock=fake.clock,
          pause_s=0.0)
    plays = [line.split(None, 4)[4] for line in lines if line.startswith("  ") and " seat " in line]
    said = {p.split("  (")[0] for p in plays}  # a refusal is shown after two spaces, in brackets
    assert any(s.startswith("played ") and s.endswith(" to the centre") for s in said)
    assert "turned up the next three cards from the hand" in said
    assert not any("=" in p for p in plays)  # never an engine's `card=R3`
