"""The games the table plays, one folder each: seat controls, bot, screens, readable table,
scenario set-up and key help, registered with `game.kinds` when the folder is imported.

Each game's rules are in `rules/<game>.py`, registered with `rules.kinds`. A new game is a
folder like these plus its rules, and nothing else changes (docs/architecture.md).
"""

from . import classic, crazy, dice, domino  # noqa: F401  (each registers itself)
