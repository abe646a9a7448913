"""The table's sounds: each cue to the buzzer (its own thread plays it) and to the attached
frontends' ring; a line in the log, INFO where a terminal shows the log (standing for the
sound), DEBUG headless."""

from __future__ import annotations

import logging
from typing import Any

from ..devices.buzzer import Cue
from ..system.logs import logger
from .frontend import Frontends
from .table_feed import Step

log = logger("sounds")


class Sounds:
    def __init__(self, buzzer: Any, frontends: Frontends, terminal: bool) -> None:
        self.buzzer, self.frontends, self.terminal = buzzer, frontends, terminal

    def after_step(self, step: Step) -> None:
        for cue in step.cues:
            self.play(cue)

    def play(self, cue: Cue) -> None:
        self.buzzer.play(cue)
        log.log(logging.INFO if self.terminal else logging.DEBUG, "%s", cue.describe())
        self.frontends.ring(cue)
