"""Makes `main-journal-v2.sql`: a state database written by the code before players were kept
(schema version 2), dumped as SQL. Run from a checkout of that code:
`python tests/service/data/make_main_journal.py OUT.sql` (tests/helpers.py on the path)."""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path.cwd() / "tests"))
from helpers import play_recorded

import firmware_host.games  # noqa: F401  (registers the games)
from firmware_host.service.journal import Store
from firmware_host.table.matches import new_match

with tempfile.TemporaryDirectory() as tmp:
    db = Path(tmp) / "table.db"
    store = Store(db)
    for game, players, seats, bots, rounds in (("classic", 3, [0, 2, 4], {2: "hard"}, 2),
                                              ("dice", 2, [1, 3], {}, 2), ("domino", 4, [], {}, 1),
                                              ("crazy", 3, [5, 0, 1], {0: "easy"}, None)):
        match = new_match(game, players, 7, {"rounds": rounds} if rounds else {})
        mid = store.begin_match(match, seats, bots)
        play_recorded(store, mid, match, 400 if game != "crazy" else 120)
    store.close()
    with sqlite3.connect(db) as raw, open(sys.argv[1], "w", encoding="utf-8") as out:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 2
        out.write("".join(f"{line}\n" for line in raw.iterdump()))
        out.write("PRAGMA user_version=2;\n")  # not in iterdump's text
