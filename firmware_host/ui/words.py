"""The terminal frontends' own view of the table: the centre and each hand in words and coloured
cards, and the keys that do something now. Asked for in their `VIEWS`, so it is made (on the
table's thread) only while a terminal watches; a headless table never builds it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.text import Text

    from ..service.frontend import Sight, TableView


@dataclass(frozen=True)
class Words:
    centre: Text | None = None  # the centre in words and coloured cards (views/readable.py)
    hands: dict[int, Text] = field(default_factory=dict)  # physical seat -> its cards as cards
    keys: str = ""  # the keys that do something now, in this game


def words(sight: Sight) -> Words:
    from ..views.live import round_moments
    from ..views.readable import centre_words, key_help, seat_words  # rich: only when watched

    table = sight.table
    ended = str(table.phase) == "round_result"
    moments = round_moments(table, sight.standings, sight.match_id) if ended else []
    return Words(centre_words(table, moments),
                 {seat: seat_words(table, seat) for seat in table.seat_of_player},
                 key_help(table, sight.direct, sight.level))


VIEWS: dict[str, Any] = {"words": words}
"""What a terminal frontend asks the service for (service/frontend.py `Frontend.VIEWS`)."""


def words_of(view: TableView) -> Words:
    """The words in `view` (none made: empty, as before the first match)."""
    made = view.made.get("words")
    return made if isinstance(made, Words) else Words()
