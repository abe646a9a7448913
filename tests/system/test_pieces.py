"""JSON written a piece at a time (system/pieces.py) is the very text `json.dumps` writes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_host.system import pieces

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=5)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=5)
                      | st.dictionaries(st.integers(), inner, max_size=3), max_leaves=40)
OPTIONS: list[dict[str, Any]] = [{}, {"separators": (",", ":"), "ensure_ascii": False},
                                 {"ensure_ascii": False}, {"sort_keys": True}, {"indent": 2}]


@settings(max_examples=300, deadline=None)
@given(VALUES, st.sampled_from(OPTIONS))
def test_the_text_is_json_dumps_text(value: Any, options: dict[str, Any]) -> None:
    assert pieces.dumps(value, **options) == json.dumps(value, **options)


def test_a_history_page_is_written_an_item_at_a_time(monkeypatch) -> None:
    """Each match of a page is its own call into the encoder: between two of them another
    thread may take Python's lock (the game thread, woken to decide a press)."""
    page = {"ok": True, "matches": [{"match": n, "rounds": [{"round": r, "scores": [1, 2]} for r in range(3)]}
                                    for n in range(100)], "next": None}
    calls: list[Any] = []
    real = json.dumps
    monkeypatch.setattr(json, "dumps", lambda v, **o: calls.append(v) or real(v, **o))
    text = pieces.dumps(page)
    assert text == real(page)
    assert page not in calls and page["matches"] not in calls  # never the whole page, nor the list
    assert max(len(real(v)) for v in calls) < len(text) / 50
