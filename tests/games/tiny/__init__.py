"""Tiny: a game that lives only in the tests, to show that a game is one folder and two
registrations, with nothing changed elsewhere (docs/architecture.md, "Adding a game")."""

from __future__ import annotations

from firmware_host.engine import game as rules_kinds
from firmware_host.table import kinds

from .kind import TinyKind
from .rules import TinyRules


def install() -> None:
    """Register Tiny's rules and its entry: from now on the table offers it."""
    rules_kinds.register(TinyRules())
    kinds.register(TinyKind())


def uninstall() -> None:
    kinds.unregister("tiny")
    rules_kinds.unregister("tiny")
