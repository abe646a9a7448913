"""Matches without a table: bot simulation, watching, scenario files."""
