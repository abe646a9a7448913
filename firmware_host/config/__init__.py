"""The configuration file: its schema (schema.py), what no schema can see (checks.py), reading
it with line numbers (load.py), and the file on disk: which one runs, the last good copy, one
setting changed in place (files.py). Importers take the names from here."""

from ..system.errors import ConfigError
from .checks import SPI_PINS, boot_config, bus_pins, semantic_problems
from .files import choose_config, config_path, last_good_path, remember_good, set_config
from .load import (
    MAX_CONFIG_BYTES,
    WIRING,
    as_emulated,
    build_file,
    default_config,
    dotted,
    emulated_config,
    key_lines,
    line_of,
    load_config,
    parse_config,
    undotted,
)
from .schema import (
    BACKENDS,
    ArbiterConfig,
    BuzzerConfig,
    CentreConfig,
    ControlConfig,
    Expander,
    HardwareConfig,
    I2CMux,
    InputsConfig,
    Line,
    SeatScreen,
    SeatWiring,
    TableConfig,
    pin_index,
)

__all__ = [
    "BACKENDS", "MAX_CONFIG_BYTES", "SPI_PINS", "WIRING", "ArbiterConfig", "BuzzerConfig", "CentreConfig",
    "ConfigError", "ControlConfig", "Expander", "HardwareConfig", "I2CMux", "InputsConfig", "Line",
    "SeatScreen", "SeatWiring", "TableConfig", "as_emulated", "boot_config", "build_file", "bus_pins",
    "choose_config", "config_path", "default_config", "dotted", "emulated_config", "key_lines",
    "last_good_path", "line_of", "load_config", "parse_config", "pin_index", "remember_good",
    "semantic_problems", "set_config", "undotted",
]
