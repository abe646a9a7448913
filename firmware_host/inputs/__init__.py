"""Seat inputs: button edges with kernel timestamps, cleaned, on their way to the arbiter."""
