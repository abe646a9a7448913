"""Emulated hardware, each model following its datasheet (as gpiozero's pins/mock.py)."""
