"""A table left on for weeks: what it records per event stays bounded (docs/daemon.md, soak)."""

from __future__ import annotations

from pathlib import Path

import pytest
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
from firmware_host.service.journal import KEPT_COUNTS, Store
from firmware_host.system import memory
from firmware_host.system.errors import PathError
from firmware_host.system.recent import Recent
from firmware_host.table.cues import Note

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
    from firmware_host.table.matches import new_match

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
    # 0.4 MB/h under a saw-tooth of +-0.3 MB (pages and arenas come and go): the fit finds the trend
    noisy = [(t, 50.0 + 0.4 * t / 3600 + (0.3 if n % 2 else -0.3)) for n, t in enumerate(range(0, 7200, 2))]
    assert abs((slope_per_hour(noisy) or 0) - 0.4) < 0.001


def _samples(rise_mb_per_hour: dict[str, float], warm_s: float, seconds: float) -> list[soak.Sample]:
    """Every 2 s: each part rises 6 MB in the warm-up, then at its own rate."""
    out = []
    for t in range(0, int(seconds) + 1, 2):
        after = max(0.0, t - warm_s) / 3600
        out.append((float(t), {part: 10.0 + 6.0 * min(t, warm_s) / warm_s + rate * after
                               for part, rate in rise_mb_per_hour.items()}))
    return out


def test_each_part_of_rss_gets_its_own_slope_measured_after_the_warm_up_only() -> None:
    rates = {"VmRSS": 0.75, "RssAnon": 0.5, "RssFile": 0.25, "RssShmem": 0.0}
    samples = _samples(rates, 900.0, 2700.0)
    assert [s[0] for s in soak.measured(samples, 900.0)][:2] == [900.0, 902.0]
    for part, rate in rates.items():
        f = soak.part_figures(samples, 900.0, part)
        assert f["growth_mb_per_hour"] == rate, part  # 24 MB/h in the warm-up, none of it counted
        assert f["start_mb"] == 10.0 and f["warm_mb"] == 16.0
        assert f["end_minus_warm_mb_per_hour"] == rate
    # measured from the start instead, the warm-up's rise is what the slope would show
    assert (soak.part_figures(samples, 0.0, "RssShmem")["growth_mb_per_hour"] or 0) > 5


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
        collector = status["memory"]["collector"]  # start-up's objects out of the collector's way
        assert collector["frozen_objects"] > 20_000 and len(collector["longest_pause_ms"]) == 3


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


def _rising(clock: _FakeClock, **rate: float):
    """RSS's parts as a daemon's: 50 MB each, rising `rate` MB an hour from 15 minutes in."""
    def sample() -> dict[str, float]:
        after = max(0.0, clock.now - 900) / 3600
        return {part: 50.0 + rate.get(part, 0.0) * after for part in memory.RSS_PARTS}
    return sample


def test_a_soak_judges_anonymous_memory_after_its_warm_up_and_reports_file_pages_apart(monkeypatch) -> None:
    clock = _FakeClock()
    monkeypatch.setattr(soak, "time", clock)
    table = _table_where_whole_matches_last(30, clock)
    flat = soak.soak(2700, table, _rising(clock, RssFile=5.0, VmRSS=5.0))
    assert flat["judged"] and flat["warm_up_done"] and flat["games_whole_by_warm_up"]
    assert 900 <= flat["warm_up_s"] < 900.3 and 1799 < flat["measured_s"] <= 1800.3
    assert flat["rss"]["RssAnon"]["growth_mb_per_hour"] == 0 and flat["meets_target"]
    assert abs(flat["rss"]["RssFile"]["growth_mb_per_hour"] - 5.0) < 0.01  # shown, not judged
    text = soak.soak_text({**flat, "allocator": "malloc, 2 C arenas"})
    assert "PASS" in text and "RssFile" in text and "+5.00 MB/h" in text

    clock.now = 0.0
    growing = soak.soak(2700, table, _rising(clock, RssAnon=1.5))
    assert abs(growing["rss"]["RssAnon"]["growth_mb_per_hour"] - 1.5) < 0.01
    assert growing["judged"] and not growing["meets_target"]
    assert "FAIL" in soak.soak_text({**growing, "allocator": "malloc, 2 C arenas"})

    clock.now = 0.0  # a shared-memory leak is judged too
    assert not soak.soak(2700, table, _rising(clock, RssShmem=1.5))["meets_target"]


def test_a_soak_too_short_for_its_warm_up_and_fifteen_minutes_more_gives_no_verdict(monkeypatch) -> None:
    clock = _FakeClock()
    monkeypatch.setattr(soak, "time", clock)
    table = _table_where_whole_matches_last(30, clock)
    short = soak.soak(1200, table, _rising(clock))  # 20 minutes: the warm-up cut at 10
    assert 600 <= short["warm_up_s"] < 600.3 and not short["warm_up_done"] and not short["judged"]
    assert not short["meets_target"]  # flat, but measured from inside the warm-up
    assert "NOT JUDGED" in soak.soak_text({**short, "allocator": "malloc, 2 C arenas"})

    clock.now = 0.0  # a 5-minute warm-up, then 15 minutes: judged
    five = soak.soak(1200, table, _rising(clock), warm_up_s=300)
    assert five["warm_up_done"] and five["judged"] and five["meets_target"]
    assert 300 <= five["warm_up_s"] < 300.3

    clock.now = 0.0  # the whole warm-up, but only 10 minutes after it
    assert not soak.soak(1200, table, _rising(clock), warm_up_s=600)["judged"]


def test_the_daemons_memory_is_read_in_its_parts_from_proc_status() -> None:
    text = ("Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nVmRSS:\t   51720 kB\n"
            "RssAnon:\t   31900 kB\nRssFile:\t   19820 kB\nRssShmem:\t       0 kB\n"
            "Threads:\t22\nUid:\t0\t0\t0\t0\nCpus_allowed_list:\t0-1\n")
    fields = memory.parse_status(text)
    assert {k: fields[k] for k in memory.RSS_PARTS} == {"VmRSS": 51720, "RssAnon": 31900, "RssFile": 19820,
                                                        "RssShmem": 0}
    assert fields["Threads"] == 22 and fields["Uid"] == 0 and "Name" not in fields and "State" not in fields
    parts = memory.rss_parts_mb()  # this process, as the kernel counts it: the parts add up
    assert parts["VmRSS"] > 1
    assert abs(parts["VmRSS"] - parts["RssAnon"] - parts["RssFile"] - parts["RssShmem"]) < 0.01
    gone = 2**22 + 1  # above the kernel's largest process ID
    assert memory.rss_parts_mb(gone) == {} and memory.proc_status(gone, "VmRSS") == 0


def test_a_diagnosis_names_the_line_whose_objects_grew_between_two_snapshots(tmp_path) -> None:
    import tracemalloc

    assert memory.trace_if_asked({}) is None  # no directory named: nothing traced
    (tmp_path / "a-file").write_text("")
    unmakeable = r"^TABLE_HOST_TRACEMALLOC=.*a-file/x: cannot make the directory: Not a directory$"
    with pytest.raises(PathError, match=unmakeable):
        memory.trace_if_asked({memory.TRACE: str(tmp_path / "a-file" / "x")})
    assert not tracemalloc.is_tracing()
    tracemalloc.start(memory.TRACE_FRAMES)
    try:
        tracemalloc.take_snapshot().dump(str(tmp_path / "00000060.tracemalloc"))
        kept = [bytes(1000) + bytes([n % 256]) for n in range(2000)]  # about 2 MB, held
        tracemalloc.take_snapshot().dump(str(tmp_path / "00000120.tracemalloc"))
    finally:
        tracemalloc.stop()
    taken = memory.snapshots(tmp_path)
    assert [at for at, _ in taken] == [60.0, 120.0]
    lines = memory.snapshot_growth(taken[0][1], taken[1][1])
    assert lines[0].startswith("Python objects: +") and len(kept) == 2000
    grown = lines[1].split()
    assert 1900 < float(grown[0]) < 2300 and grown[1] == "KiB" and int(grown[2]) >= 2000
    assert "test_soak.py" in grown[4]  # the line above, the innermost frame
