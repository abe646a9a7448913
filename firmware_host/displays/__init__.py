"""Display devices: seat OLEDs, the centre LED matrix link, terminal and PNG capture."""
