"""Button edges from the Pi's pins and the MCP23017 expanders."""
