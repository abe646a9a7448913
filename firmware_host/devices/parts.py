"""A part of the table (the GPIO chip, the seat inputs, the seat screens, the LED link, the
buzzer, and whatever comes) is one object that `board.py` builds, as a Klipper extra is one
object the printer loads from its config section (klippy/extras: it registers its own timers
with the reactor, answers `get_status`, and its shutdown handler runs at the end).

The service never lists the parts by hand: `tablectl status`'s missing parts, the self-test's
probe (`tablectl selftest`), the debug bundle and shutdown each iterate `Parts`. A part says
its own probe, so a new kind of part cannot inherit another's ("duty 50 %" for a buzzer that
is only switched on and off): `probe` is abstract.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..config import TableConfig

OK, MISSING, UNEXPECTED = "ok", "missing", "unexpected"
MISWIRED, NOT_PRESSED, NOT_TESTED, WAITING = "miswired", "not pressed", "not tested", "waiting"
PROBLEMS = (MISSING, UNEXPECTED, MISWIRED, NOT_PRESSED)


@dataclass
class Check:
    """One part or one seat's control, and what the self-test found."""

    part: str  # "expander nav1", "seat 2 left"
    where: str  # "bus 1, 0x20", "nav1:B0"
    result: str = WAITING
    detail: str = ""

    def line(self) -> str:
        label = self.result.upper() if self.result in PROBLEMS else self.result
        text = f"{label:<12} {self.part:<17} {self.where}"
        return text + (f": {self.detail}" if self.detail else "")

    def as_dict(self) -> dict[str, str]:
        return {"part": self.part, "where": self.where, "result": self.result, "detail": self.detail}


class Timers(Protocol):
    """What a part may ask of the service's loop (service/loop.py), as an extra asks the reactor."""

    def register_timer(self, callback: Callable[[int], int | None], when: int | None = None) -> Any: ...

    def update_timer(self, timer: Any, when: int | None) -> None: ...

    def after_each(self, hook: Callable[[int], None]) -> None: ...


class Part(abc.ABC):
    """One part of the table. Built (opened) by board.py; a part that cannot open says why in
    `problem` and the table runs on without it."""

    name = "part"

    @property
    def problem(self) -> str:
        """Why the part is not working now ("" when it is, or when nothing was tried yet)."""
        return ""

    def start(self, timers: Timers) -> None:  # noqa: B027 (most parts have no timer)
        """Register the part's own timers with the loop (most parts run on threads of their own)."""

    def missing(self) -> list[str]:
        """What of it was tried and does not answer now (`tablectl status`, STATUS=)."""
        return [self.name] if self.problem else []

    @abc.abstractmethod
    def probe(self, config: TableConfig) -> list[Check]:
        """The self-test's look at this part (on the self-test's thread, never the loop's):
        each kind of part says what it tried and what answered, in its own words."""

    def report(self) -> dict[str, Any]:
        """What the debug bundle holds of it, by the bundle's key ({}: nothing)."""
        return {}

    def why_silent(self, expander: str) -> str:
        """Why a button wired through `expander` may never have arrived, if this part can
        tell ("": it cannot, or nothing is wrong): the self-test's walk asks when one times out."""
        return ""

    @abc.abstractmethod
    def close(self) -> None:
        """Let go of the hardware (shutdown); never raises for a part already gone."""


class Parts:
    """Every part the board built, in the order they are probed; closed in the reverse order."""

    def __init__(self, *parts: Part) -> None:
        self._parts = list(parts)

    def __iter__(self) -> Iterator[Part]:
        return iter(self._parts)

    def add(self, part: Part) -> None:
        """One more part (probed after the others, closed before them)."""
        self._parts.append(part)

    def start(self, timers: Timers) -> None:
        for part in self._parts:
            part.start(timers)

    def missing(self) -> list[str]:
        return [name for part in self._parts for name in part.missing()]

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for part in self._parts:
            out |= part.report()
        return out

    def probe(self, config: TableConfig, found: Callable[[Check], None]) -> None:
        """Each part's checks, handed to `found` as they come (the report grows while it probes)."""
        for part in self._parts:
            for check in part.probe(config):
                found(check)

    def why_silent(self, expander: str) -> str:
        return "; ".join(why for part in self._parts if (why := part.why_silent(expander)))

    def close(self) -> None:
        for part in reversed(self._parts):
            with contextlib.suppress(Exception):  # shutting down: the rest must close too
                part.close()
