"""The table's game: the state machine, referee, arbiter, bots, seat controls, input events."""
