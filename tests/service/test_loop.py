"""The service's loop: typed events dispatched by type, timers owned by who registered them."""

from __future__ import annotations

import ast
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from plumbing import wait_for

from firmware_host.service.events import Key, Signal
from firmware_host.service.loop import Loop

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Ping:
    n: int


@dataclass(frozen=True)
class LoudPing(Ping):
    pass


class Clock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def test_events_go_to_the_handlers_of_their_type_in_order_until_one_takes_it() -> None:
    loop = Loop(Clock(), order={Key: ("first", "second")})
    seen: list[tuple[str, object, int]] = []
    loop.on(Ping, lambda e, now: seen.append(("ping", e.n, now)))
    loop.on(Key, lambda e, now: seen.append(("second", e.name, now)), at="second")  # built first: runs second
    loop.on(Key, lambda e, now: seen.append(("first", e.name, now)) or e.name == "q", at="first")
    loop.dispatch(Ping(1), 5)
    loop.dispatch(LoudPing(2), 6)  # a subclass goes to its base's handlers
    loop.dispatch(Key("x"), 7)  # not taken by the first: the second sees it too
    loop.dispatch(Key("q"), 8)  # taken: the second never sees it
    loop.dispatch(Signal("term"), 9)  # nobody handles it: dropped, said in the log
    assert seen == [("ping", 1, 5), ("ping", 2, 6), ("first", "x", 7), ("second", "x", 7), ("first", "q", 8)]


def test_a_second_handler_needs_a_declared_order_and_its_place_in_it() -> None:
    loop = Loop(Clock(), order={Key: ("first", "second")})
    loop.on(Ping, lambda e, now: None)
    with pytest.raises(ValueError, match=r"Ping has no declared order of handlers: declare it"):
        loop.on(Ping, lambda e, now: None)
    with pytest.raises(ValueError, match=r"Key's handlers take the places first, second, not None"):
        loop.on(Key, lambda e, now: None)
    with pytest.raises(ValueError, match=r"Key's handlers take the places first, second, not 'third'"):
        loop.on(Key, lambda e, now: None, at="third")
    loop.on(Key, lambda e, now: None, at="second")
    with pytest.raises(ValueError, match=r"Key has a handler at 'second' already"):
        loop.on(Key, lambda e, now: None, at="second")


def test_a_press_goes_to_the_self_test_then_the_table_whichever_was_built_first() -> None:
    """The order of a press's handlers is declared (events.py ORDER), not the order the daemon
    happened to build the components in."""
    from firmware_host.service.events import ORDER
    from firmware_host.table.presses import Event, InputEvent

    assert ORDER[InputEvent] == ("selftest", "table")
    loop = Loop(Clock())
    seen: list[str] = []
    loop.on(InputEvent, lambda e, now: seen.append("table"), at="table")
    loop.on(InputEvent, lambda e, now: seen.append("selftest") or e.seat == 1, at="selftest")
    loop.dispatch(InputEvent(Event.PRESS, 0, "slap", 1), 1)
    loop.dispatch(InputEvent(Event.PRESS, 1, "slap", 2), 2)  # the walk takes it: the table never sees it
    assert seen == ["selftest", "table", "selftest"]


def test_a_timer_runs_when_due_and_its_return_is_its_next_wake() -> None:
    clock = Clock()
    loop = Loop(clock)
    ran: list[int] = []

    def every_10(now: int) -> int | None:
        ran.append(now)
        return now + 10 if len(ran) < 3 else None

    timer = loop.register_timer(every_10, 10)
    other = loop.register_timer(lambda now: None)
    assert loop.next_wake() == 10
    loop.settle(9)
    assert ran == []
    loop.settle(10)
    assert ran == [10] and loop.next_wake() == 20
    loop.update_timer(other, 15)  # the owner moves its own timer: the loop wakes for it first
    assert loop.next_wake() == 15
    loop.settle(25)
    assert ran == [10, 25] and timer.when == 35 and other.when is None
    loop.settle(35)
    assert ran == [10, 25, 35] and loop.next_wake() is None  # it asked for no more


def test_after_each_hooks_follow_the_timers_in_the_order_registered() -> None:
    loop = Loop(Clock())
    order: list[str] = []
    loop.register_timer(lambda now: order.append("timer") and None, 0)
    loop.after_each(lambda now: order.append("first"))
    loop.after_each(lambda now: order.append("second"))
    loop.settle(0)
    assert order == ["timer", "first", "second"]


def test_the_loop_sleeps_until_the_earliest_timer_and_wakes_for_an_event() -> None:
    """Real time: no timer means waiting for an event; a timer 50 ms out wakes it then."""
    import time

    loop = Loop()
    woke: list[int] = []
    due = time.monotonic_ns() + 50_000_000
    loop.register_timer(lambda now: woke.append(now) and None, due)
    loop.on(Signal, lambda e, now: loop.stop(), at="stop")
    thread = threading.Thread(target=loop.run, daemon=True)  # a failed check must not hang pytest
    thread.start()
    wait_for(lambda: woke, timeout=30)
    loop.put(Signal("term"))
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert len(woke) == 1 and woke[0] >= due  # once, and never before it was due


def test_the_service_never_imports_a_frontend() -> None:
    """Only the composition root (cli/) imports ui/: the service talks to frontends through
    service/frontend.py."""
    offenders = []
    for path in sorted((ROOT / "firmware_host" / "service").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                target = "." * node.level + (node.module or "")
                if target.startswith("..ui") or target.startswith("firmware_host.ui"):
                    offenders.append(f"{path.name}: {target}")
            elif isinstance(node, ast.Import):
                offenders += [f"{path.name}: {a.name}" for a in node.names
                              if a.name.startswith("firmware_host.ui")]
    assert offenders == []
