"""What every layer may use: logs, paths, memory, real-time priority, bounded records."""
