"""Pure functions from table state to images: seat screens and the centre matrix."""
