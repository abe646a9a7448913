"""A player's name: what the table accepts and how it compares, in one place, so that the seat's
picker, `tablectl players`, the phone's claim and the journal agree on what a name is.

A name is Unicode text, NFC-normalised (so that "é" typed two ways is one name), with the
surrounding spaces dropped and inner runs of white space made one space; 1 to NAME_MAX
characters after that; no control, format, surrogate, private-use or unassigned characters
(they would draw nothing, or move the text around it). Two names are the same player when
their case-folded forms are equal ("Ann" and "ANN"). "guest" and "bot" are the table's own
words for who has no name, so they are not names."""

from __future__ import annotations

import unicodedata

from ..system.errors import TableError

NAME_MAX = 16
"""Characters (code points) after NFC normalisation: fits a seat's OLED line at the small font
and a seat card on the web."""
RESERVED = ("guest", "bot")
"""The table's own words for a seat without a name: never a player's name."""
_REFUSED = {"Cc": "a control character", "Cf": "a format character", "Cs": "a surrogate",
            "Co": "a private-use character", "Cn": "an unassigned character",
            "Zl": "a line separator", "Zp": "a paragraph separator"}


class NameRefused(TableError, ValueError):
    """The name is not one the table can keep; the message says why, in the player's words."""


def clean(name: object) -> str:
    """`name` as the table keeps it, or NameRefused saying what is wrong with it."""
    if not isinstance(name, str):
        raise NameRefused(f"a name is text, not {type(name).__name__}")
    text = " ".join(unicodedata.normalize("NFC", name).split())
    if not text:
        raise NameRefused("a name needs at least one letter")
    for ch in text:
        kind = unicodedata.category(ch)
        if kind in _REFUSED:
            raise NameRefused(f"a name cannot hold {_REFUSED[kind]} (U+{ord(ch):04X})")
    if len(text) > NAME_MAX:
        raise NameRefused(f"a name is at most {NAME_MAX} characters, not {len(text)}: {text[:NAME_MAX]}…")
    if key(text) in RESERVED:
        raise NameRefused(f"{text!r} is the table's word for a seat without a name: choose another")
    return text


def key(name: str) -> str:
    """What two names are compared by: one player whatever the case."""
    return unicodedata.normalize("NFC", name.casefold())
