"""The hardware: the board, pins, expanders, screens, the LED link, the buzzer."""
