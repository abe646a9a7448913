"""A table left on for weeks: what it records per event stays bounded (docs/daemon.md, soak)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from firmware_host.bench import soak
from firmware_host.bench.harness import emulated_daemon
from firmware_host.bench.soak import Driver, slope_per_hour
from firmware_host.config import BuzzerConfig
from firmware_host.devices.buzzer import BuzzerPlayer
from firmware_host.devices.displays.oled import DisplaySpec
from firmware_host.devices.emulated.controllers import model_for
from firmware_host.devices.emulated.oled import RECORDED, RecordingInterface, open_recorded
from firmware_host.devices.emulated.pins import HISTORY, emulated_factory
from firmware_host.game.cues import Note
from firmware_host.service.store import KEPT_COUNTS, Store
from firmware_host.system import memory
from firmware_host.system.recent import Recent

EVENTS = 5000


def test_recent_keeps_its_head_and_its_newest_and_stays_a_list() -> None:
    kept = Recent(range(10), keep=3, head=2)
    assert kept == [0, 1, 7, 8, 9] and isinstance(kept, list)
    kept.append(10)
    assert kept == [0, 1, 8, 9, 10] and kept[-2:] == [9, 10]


def test_an_emulated_pin_remembers_its_newest_edges_only() -> None:
    factory = emulated_factory()
    pin = factory.pin(5)
    pin.function = "input"
    pin.pull = "up"
    for n in range(EVENTS):
        pin.press(2 * n)
        pin.release(2 * n + 1)
    assert len(pin.states) <= HISTORY + 1  # the old code kept all 10,001
    assert pin.states[0].timestamp == 0.0 and pin.states[-1].state is True  # the first and the newest


def test_an_emulated_pin_remembers_its_newest_pwm_settings_only() -> None:
    factory = emulated_factory()
    pin = factory.pin(18)
    pin.function = "output"
    for n in range(EVENTS):
        pin.frequency = 1000 + n % 7
        pin.state = 0.5
    assert len(pin.pwm) <= HISTORY
    assert pin.pwm[-1] == (1000 + (EVENTS - 1) % 7, 50)


def test_a_recording_display_keeps_its_start_up_and_newest_frames_and_still_shows_the_newest() -> None:
    for kind, offset in (("ssd1306", 0), ("sh1106", 2)):
        interface = RecordingInterface()
        device = open_recorded(DisplaySpec(0, kind), interface)
        for n in range(300):
            frame = Image.new("1", (128, 64))
            frame.putpixel((n % 128, n % 64), 1)
            device.display(frame)
        assert len(interface.transfers) <= interface.transfers.head + RECORDED
        model = model_for(kind)
        model.feed(interface.transfers)  # the start-up commands, then the newest transfers
        assert model.on and model.image(offset=offset).tobytes() == frame.tobytes()


def test_the_buzzer_remembers_the_newest_tunes_it_played() -> None:
    factory = emulated_factory()
    player = BuzzerPlayer(BuzzerConfig(gpio=18), factory, tunes={"tick": (Note(2000, 0),)})
    try:
        for _ in range(300):
            player.play("tick")
            assert player.wait_idle()
        assert 0 < len(player.played) <= 200 and len(player.heard) <= 200
    finally:
        player.close()


def test_the_store_forgets_the_action_counts_of_old_matches(tmp_path) -> None:
    from firmware_host.game.catalog import new_match

    store = Store(tmp_path / "table.db")
    try:
        for n in range(KEPT_COUNTS + 20):
            match_id = store.begin_match(new_match("classic", 2, n, {"rounds": 1}))
            store.abort(match_id)
        assert len(store._counts) <= KEPT_COUNTS
        assert match_id in store._counts  # the newest match still counts its actions
    finally:
        store.close()


# ------------------------------------------------------------ the soak's arithmetic and driving


def test_growth_is_the_least_squares_slope_in_mb_an_hour() -> None:
    assert slope_per_hour([(0.0, 50.0), (1800.0, 50.5), (3600.0, 51.0)]) == 1.0
    assert slope_per_hour([(0.0, 50.0)]) is None


def test_the_driver_plays_each_game_once_short_then_in_turn_and_skips_round_results() -> None:
    """The warm-up is over when each game has been played short, then whole: memory holds the
    largest match's journal only once a whole match of each game has been played."""
    phases = iter(["attract"] + ["countdown", "playing", "round_result", "match_result"] * 9)
    asked: list[dict] = []

    def ask(body: dict) -> dict:
        asked.append(body)
        return {"ok": True, "phase": next(phases)} if body["cmd"] == "status" else {"ok": True}

    driver = Driver(ask)
    for _ in range(17):
        driver.step()
    news = [(b["game"], b["options"]) for b in asked if b["cmd"] == "new"]
    assert news[:5] == [("classic", {"rounds": 1}), ("dice", {"rounds": 1}), ("domino", {"rounds": 1}),
                        ("crazy", {"rounds": 1}), ("classic", {})]
    assert driver.played == {"classic": 1, "dice": 1, "domino": 1, "crazy": 1}
    assert sum(b["cmd"] == "next" for b in asked) == 4
    for _ in range(12):  # whole classic, dice and domino
        driver.step()
    assert not driver.warm and driver.whole_to_play == {"crazy"}
    for _ in range(4):
        driver.step()
    assert driver.warm and driver.played == {"classic": 2, "dice": 2, "domino": 2, "crazy": 2}


def test_the_screens_text_masks_stay_bounded_however_many_different_numbers_they_show() -> None:
    from PIL import Image as PILImage

    from firmware_host.views import font

    img = PILImage.new("1", (128, 64))
    for n in range(EVENTS):  # scores, counts, places: a new string each
        font.draw_text(img, (0, 0), f"TOTAL {n}")
    assert font._line.cache_info().currsize <= 256 and font.width.cache_info().currsize <= 256


# ------------------------------------------------------------ the allocator for a season (memory.py)


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


def test_table_host_run_starts_itself_again_on_malloc_with_two_arenas(monkeypatch) -> None:
    """pymalloc kept raising its high-water mark over a soak (memory.py): `table-host run`, however it
    is started, runs on the C library's malloc with two arenas, in the same process, and says so."""
    monkeypatch.delenv("PYTHONMALLOC", raising=False)
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    with emulated_daemon() as daemon:
        env = _environ(daemon.proc.pid)  # the process started is the one that answers
        assert (env.get("PYTHONMALLOC"), env.get("MALLOC_ARENA_MAX")) == ("malloc", "2")
        status = daemon.ask({"cmd": "status"})
        assert status["memory"]["allocator"] == "malloc, 2 C arenas"
        assert 10 < status["memory"]["rss_mb"] < 500
        assert status["memory"]["threads"] == memory.threads(daemon.proc.pid) >= 9  # the 8 handlers


def test_an_allocator_the_operator_chose_is_kept(monkeypatch) -> None:
    monkeypatch.setenv("PYTHONMALLOC", "pymalloc")
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    with emulated_daemon() as daemon:
        env = _environ(daemon.proc.pid)
        assert (env.get("PYTHONMALLOC"), env.get("MALLOC_ARENA_MAX")) == ("pymalloc", "2")
        assert daemon.ask({"cmd": "status"})["memory"]["allocator"] == "pymalloc, 2 C arenas"


def test_the_service_chooses_the_same_allocator_itself() -> None:
    """The unit sets what `table-host run` would otherwise start itself again for."""
    unit = (Path(__file__).resolve().parents[2] / "systemd" / "table-host.service").read_text()
    chosen = dict(item.split("=", 1) for line in unit.splitlines() if line.startswith("Environment=")
                  for item in line.removeprefix("Environment=").split())
    assert {k: chosen.get(k) for k in memory.ALLOCATOR} == memory.ALLOCATOR
    assert memory.missing(chosen) == {}
    assert memory.missing({"PYTHONMALLOC": "pymalloc_debug"}) == {"MALLOC_ARENA_MAX": "2"}
    assert memory.missing({"PYTHONMALLOC": "", "MALLOC_ARENA_MAX": "2"}) == {"PYTHONMALLOC": "malloc"}
    assert memory.describe({}) == "pymalloc (Python's default), C arenas by default"


class _FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _table_where_whole_matches_last(seconds: float, clock: _FakeClock):
    """A table answering the driver: a one-round match is over at once, a whole one after `seconds`."""
    state = {"phase": "attract", "ends": 0.0}

    def ask(body: dict) -> dict:
        if body["cmd"] == "new":
            state["ends"] = clock.now + (0.0 if body["options"] else seconds)
        if body["cmd"] == "start":
            state["phase"] = "playing"
        if body["cmd"] == "status" and state["phase"] == "playing" and clock.now >= state["ends"]:
            state["phase"] = "match_result"
        return {"ok": True, "phase": state["phase"]}

    return ask


def test_a_soak_is_judged_only_when_its_warm_up_ended_before_measuring_began(monkeypatch) -> None:
    clock = _FakeClock()
    monkeypatch.setattr(soak, "time", clock)
    flat = soak.soak(300, _table_where_whole_matches_last(30, clock), lambda: 50.0)
    assert flat["warm_up_done"] and 120 <= flat["warm_up_s"] <= 125  # four whole matches of 30 s
    assert flat["growth_mb_per_hour"] == 0 and flat["meets_target"]
    assert "PASS" in soak.soak_text({**flat, "allocator": "malloc, 2 C arenas"})

    clock.now = 0.0  # whole matches of 40 s: the warm-up ends at 160 s, after half of 300 s
    short = soak.soak(300, _table_where_whole_matches_last(40, clock), lambda: 50.0)
    assert 150 <= short["warm_up_s"] < 151 and not short["warm_up_done"]
    assert not short["meets_target"]  # flat, but measured from inside the warm-up
    assert "NOT JUDGED" in soak.soak_text({**short, "allocator": "malloc, 2 C arenas"})
