"""The service's event loop: one queue of typed events, handlers by type, timers.

Events (events.py, InputEvent, Request) come from other threads through `put`;
the loop's thread dispatches each to the handlers registered for its type.
Timers belong to the component that registered them (as Klipper's reactor
has them: `register_timer(callback, when)`, `update_timer(timer, when)`): a
callback gets the time it runs at and returns when it wants to run next, or
None for not until updated. Between events the loop sleeps until the earliest
timer and never polls. After every wake the `after_each` hooks run, in the
order they were registered: the table decides, then the components follow it.
The handlers of one kind of event run in the order events.py's ORDER declares.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..system.logs import logger
from .events import ORDER, Wake

log = logger("daemon")

TimerCallback = Callable[[int], "int | None"]
Handler = Callable[[Any, int], "bool | None"]


class Timer:
    """One component's wake-up; `when` is None while it has nothing due."""

    __slots__ = ("callback", "when")

    def __init__(self, callback: TimerCallback, when: int | None) -> None:
        self.callback = callback
        self.when = when


class Loop:
    def __init__(self, clock: Callable[[], int] = time.monotonic_ns,
                 order: Mapping[type, tuple[str, ...]] = ORDER) -> None:
        """`order`: for each kind of event with several handlers, their places in order."""
        self.events: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.clock = clock
        self.stopping = False
        self.order = order
        self._handlers: dict[type, list[Handler]] = {}
        self._places: dict[type, list[str]] = {}
        self._timers: list[Timer] = []
        self._after: list[Callable[[int], None]] = []
        self._before_sleep: list[Callable[[], None]] = []
        self.on(Wake, lambda _event, _now: True)  # it has done its part by waking the loop

    # ------------------------------------------------------------ registration

    def put(self, event: Any) -> None:
        """From any thread."""
        self.events.put(event)

    def on(self, kind: type, handler: Handler, at: str | None = None) -> None:
        """`handler(event, now)` for every event of `kind` (or a subclass). Several handlers run in
        their declared order (`order`: `at` names the handler's place) until one returns True
        (taken: the rest do not see it). Who registers first changes nothing."""
        declared = self.order.get(kind)
        handlers, places = self._handlers.setdefault(kind, []), self._places.setdefault(kind, [])
        if declared is None:
            if at is not None or handlers:
                raise ValueError(f"{kind.__name__} has no declared order of handlers: declare it "
                                 "(service/events.py ORDER) before a second handler or a place")
            handlers.append(handler)
            return
        if at not in declared:
            raise ValueError(f"{kind.__name__}'s handlers take the places {', '.join(declared)}, "
                             f"not {at!r} (service/events.py ORDER)")
        if at in places:
            raise ValueError(f"{kind.__name__} has a handler at {at!r} already")
        index = sum(1 for place in places if declared.index(place) < declared.index(at))
        places.insert(index, at)
        handlers.insert(index, handler)

    def register_timer(self, callback: TimerCallback, when: int | None = None) -> Timer:
        timer = Timer(callback, when)
        self._timers.append(timer)
        return timer

    def update_timer(self, timer: Timer, when: int | None) -> None:
        timer.when = when

    def after_each(self, hook: Callable[[int], None]) -> None:
        self._after.append(hook)

    def before_sleep(self, hook: Callable[[], None]) -> None:
        """Runs before each wait (a frontend redraws what changed)."""
        self._before_sleep.append(hook)

    # ------------------------------------------------------------ running

    def next_wake(self) -> int | None:
        return min((t.when for t in self._timers if t.when is not None), default=None)

    def dispatch(self, event: Any, now: int) -> None:
        for kind in type(event).__mro__:
            handlers = self._handlers.get(kind)
            if handlers is not None:
                for handler in list(handlers):
                    if handler(event, now):
                        return
                return
        log.warning("no handler for %s: dropped", type(event).__name__)

    def settle(self, now: int) -> None:
        """Due timers, then every `after_each` hook."""
        for timer in list(self._timers):
            if timer.when is not None and timer.when <= now:
                timer.when = timer.callback(now)
        for hook in self._after:
            hook(now)

    def run_once(self) -> None:
        for hook in self._before_sleep:
            hook()
        due = self.next_wake()
        timeout = None if due is None else max(0.0, (due - self.clock()) / 1e9)
        try:
            event = self.events.get(timeout=timeout)
        except queue.Empty:
            event = None
        now = self.clock()
        if event is not None:
            self.dispatch(event, now)
        self.settle(now)

    def run(self) -> None:
        while not self.stopping:
            self.run_once()

    def stop(self, *_: Any) -> None:
        self.stopping = True
