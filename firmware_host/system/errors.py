"""The root of the table's own errors: whatever the table refuses, with a message that names
the problem in one line (the command line prints it and exits 2)."""

from __future__ import annotations


class TableError(Exception):
    """Every error of the table's own derives from this."""
