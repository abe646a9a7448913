"""Frontends in a terminal: the plain one and the Textual one."""
