"""The configuration file: its schema, its checks, reading it and keeping it."""
