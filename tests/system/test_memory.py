"""The cycle collector kept out of a press's way (system/memory.py, Collector)."""

from __future__ import annotations

import gc

from firmware_host.system.memory import Collector


def test_every_collection_is_counted_with_its_longest_pause() -> None:
    collector = Collector().watch()
    try:
        before = list(collector.collections)
        gc.collect(2)
        gc.collect(0)
    finally:
        collector.stop()
    assert collector.collections[2] == before[2] + 1 and collector.collections[0] >= before[0] + 1
    assert collector.longest_ns[2] > 0
    figures = collector.figures()
    assert figures["collections"] == collector.collections
    assert figures["longest_pause_ms"][2] == round(collector.longest_ns[2] / 1e6, 3)
    gc.collect(2)  # not watched any more
    assert collector.collections[2] == before[2] + 1


def test_what_is_frozen_is_not_walked_by_a_full_collection() -> None:
    junk = [[i] for i in range(200_000)]  # a start-up's worth of objects
    try:
        assert Collector().freeze() >= len(junk)
        frozen = gc.get_freeze_count()
        collected = gc.collect(2)
        assert gc.get_freeze_count() == frozen and collected >= 0
        walked = {id(o) for o in gc.get_objects(generation=2)}
        assert id(junk[0]) not in walked  # out of the collector's way
    finally:
        gc.unfreeze()


def test_the_figures_do_not_count_the_frozen_objects_again(monkeypatch) -> None:
    """`gc.get_freeze_count` walks every frozen object (9.5 ms for the daemon's 63,000 here), and
    `tablectl status` asks for the figures on the game thread: a decision due meanwhile was that
    late. They are counted once, when frozen."""
    collector = Collector()
    try:
        frozen = collector.freeze()
        counted: list[int] = []
        real = gc.get_freeze_count
        monkeypatch.setattr(gc, "get_freeze_count", lambda: counted.append(1) or real())
        assert collector.figures()["frozen_objects"] == frozen > 0
        assert counted == []
    finally:
        gc.unfreeze()
