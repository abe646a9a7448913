"""The daemon: the loop that owns the game, its components and commands."""
