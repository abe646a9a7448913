"""The command lines, table-host and tablectl: the one composition root."""
