"""The games the table plays, one package each: its entry (a `Game` subclass, engine/game.py)
in its `__init__`, its pure rules and sight beside it, then its bot, screens, words, scenario
set-up and board. Importing this package registers the built-in games, in the order menus list
them; the composition roots import it once (docs/games.md)."""

from ..engine.game import register
from .classic import ClassicGame
from .crazy import CrazyGame
from .dice import DiceGame
from .domino import DominoGame

BUILT_IN = (ClassicGame(), DiceGame(), DominoGame(), CrazyGame())
"""In menu order."""

for _game in BUILT_IN:
    register(_game)
