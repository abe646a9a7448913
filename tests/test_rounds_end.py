"""Every round ends, and every match: the stalls found by the audit, and the property over all games."""

from __future__ import annotations

from firmware_host.catalog import new_match
from firmware_host.rules.options import CRAZY_ROUNDS, parse_options
from firmware_host.simulate import simulate


def test_crazy_match_ends_after_its_rounds_even_below_target() -> None:
    """Totals may drift below zero; the match still ends (rulebook end kept, a round cap added)."""
    assert parse_options("crazy", 2)["rounds"] == CRAZY_ROUNDS
    report = simulate("crazy", 2, None, 1, {}, "easy")
    assert len(report["rounds"]) <= CRAZY_ROUNDS
    match = new_match("crazy", 2, 1, {"target": 10_000, "rounds": 3})
    assert not match.is_over


def test_crazy_rounds_cannot_be_unlimited() -> None:
    import pytest

    from firmware_host.rules.common import RulesError

    with pytest.raises(RulesError, match="rounds"):
        parse_options("crazy", 2, {"rounds": 0})
