"""What comes to the service's loop besides button edges (InputEvent) and control requests
(Request): one frozen dataclass a kind, dispatched by type (loop.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..table.presses import InputEvent


@dataclass(frozen=True)
class Key:
    """A key a frontend read: `q`, `b`/`B`, or one that presses seat 1's emulated pins."""

    name: str


@dataclass(frozen=True)
class Signal:
    """A Unix signal, as the loop should take it: "term" stops the table, "hup" reloads."""

    name: str


@dataclass(frozen=True)
class Wake:
    """Nothing to do but wake: a signal came, and its Python handler runs once the loop's thread
    runs again (system/signals.py)."""


@dataclass(frozen=True)
class AbortAsked:
    """A frontend's confirmed way back to the lobby."""


@dataclass(frozen=True)
class SeatClaimed:
    """A phone claims a seat with the one-time token of its QR code (web/claim.py): `answer` is
    called on the table's thread with {"ok": True, "seat", "name"} or {"ok": False, "error"}."""

    seat: int  # from 0
    token: str
    name: str
    answer: Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class ConfigRead:
    """The reload thread read the file: a TableConfig, a ConfigError, or None (no file);
    `request` is the control request to answer with the outcome, if one asked."""

    read: Any
    request: Any = None


@dataclass(frozen=True)
class Probed:
    """The self-test's probe thread is done: the walk can begin."""


@dataclass(frozen=True)
class FrontendTrouble:
    """A frontend (the web view) stopped serving: the status line says so, the table plays on."""

    name: str
    problem: str


@dataclass(frozen=True)
class StandingsMade:
    """The statistics' keeper made new standings (`Figurer.standings`): the screens that show them
    are drawn again (the loop is woken; nothing waits)."""


@dataclass(frozen=True)
class FrontendReady:
    """A frontend began serving (the web view, on its own thread): show it the table now."""

    name: str


ORDER: Mapping[type, tuple[str, ...]] = {
    InputEvent: ("selftest", "table"),
    Signal: ("reload", "stop"),
    StandingsMade: ("screens", "frontends"),
}
"""The kinds of event more than one component handles, and the order their handlers run in
(each until one takes the event), declared here, never implied by which was built first:

- a press: the self-test's walk takes every press while it runs (selftest.py), else the table
  takes it (table_feed.py); the screens draw what it changed after the step, with the rest
  (screen_feed.py `after_decisions`), once;
- a signal: SIGHUP reloads the configuration (configuration.py), SIGTERM and SIGINT stop the loop;
- new statistics: the seats redraw a round's end with its fastest reaction (screen_feed.py), then
  the frontends are woken (frontend.py), which takes it.

Every other kind has one handler; a second one is refused until its order is declared here."""
