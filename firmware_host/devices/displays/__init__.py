"""Real display drivers: the seat OLEDs (luma.oled) and the LED controller link."""
