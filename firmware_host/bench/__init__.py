"""Benchmarks: each prints its figures and exits 1 when a target is missed."""
