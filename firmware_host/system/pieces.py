"""JSON for a large answer, written a piece at a time, so that no other thread waits on it.

`json.dumps` is one call into C that holds Python's lock (the GIL) until the whole text is
made: for a page of 100 stored matches, milliseconds, and the game thread, woken on time to
decide a press, waits that long whatever its priority (docs/fairness.md, "Under load"). Here
each item of a list and each value of an object, down to DEPTH, is its own call: between them
the interpreter hands the lock over when another thread asks for it. The text is the same as
`json.dumps`'s with the same arguments.
"""

from __future__ import annotations

import json
from typing import Any

DEPTH = 3  # containers this deep are written a piece at a time; deeper ones by one call each


def dumps(value: Any, depth: int = DEPTH, **options: Any) -> str:
    """`json.dumps(value, **options)`, made one item at a time down to `depth` levels. Options
    that change the text's shape (indent, sort_keys, default) are passed to one call."""
    if depth <= 0 or options.get("indent") is not None or options.get("sort_keys") or "default" in options:
        return json.dumps(value, **options)
    item, key = options.get("separators") or (", ", ": ")
    if isinstance(value, (list, tuple)):
        return "[" + item.join(dumps(v, depth - 1, **options) for v in value) + "]"
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return "{" + item.join(json.dumps(k, **options) + key + dumps(v, depth - 1, **options)
                               for k, v in value.items()) + "}"
    return json.dumps(value, **options)
