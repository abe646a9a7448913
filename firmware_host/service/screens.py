"""After every engine decision: render the affected views and queue them to their displays.

Rendering and queueing run on the table's thread and return at once; the
buses are the workers' business (oled.SeatDisplays, ledlink.LedLink).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, Protocol

from PIL import Image

from ..game.controls import SeatController
from ..game.kinds import find
from ..views.centre import render_centre
from ..views.seat import render_seat


class SeatSink(Protocol):
    def show(self, seat: int, frame: Image.Image) -> bool: ...


class CentreSink(Protocol):
    def show(self, frame: Image.Image) -> None: ...


class TableScreens:
    def __init__(self, seats: list[SeatController], seat_sink: SeatSink | None,
                 centre_sink: CentreSink | None, size: tuple[int, int] = (32, 16),
                 brightness: float = 1.0) -> None:
        self.seats = seats
        self.seat_sink = seat_sink
        self.centre_sink = centre_sink
        self.size = size
        self.brightness = brightness
        self.blink = True
        self.last_seats: dict[int, Image.Image] = {}
        self.last_centre: Image.Image | None = None
        self._centre_key: bytes | None = None

    def forget_centre(self) -> None:
        """Something else was on the matrix (a countdown): send the piles again."""
        self._centre_key = None

    def affected(self, acting: Iterable[int]) -> list[int]:
        """Whose screen a decision can change: in Ligretto only the acting seats' (until the
        round ends); in the other games the shared board or piles show on every seat."""
        match = self.seats[0].match
        if not find(match.round.game).shared_board and match.round.result is None:
            return sorted(set(acting))
        return list(range(len(self.seats)))

    def refresh(self, seats: Iterable[int], centre: bool = True) -> int:
        """Render and queue; returns how many frames were queued (unchanged ones are not)."""
        queued = 0
        for seat in seats:
            frame = render_seat(self.seats[seat])
            self.last_seats[seat] = frame
            if self.seat_sink is not None and self.seat_sink.show(seat, frame):
                queued += 1
        if centre:
            frame = render_centre(self.seats[0].match, self.size, self.brightness, self.blink,
                                  self._candidates())
            self.last_centre = frame
            key = frame.tobytes()
            if key != self._centre_key:
                self._centre_key = key
                if self.centre_sink is not None:
                    self.centre_sink.show(frame)
                queued += 1
        return queued

    def after_decisions(self, acting: Iterable[int]) -> tuple[int, float]:
        """(frames queued, seconds taken) after the engine decided for these seats."""
        started = time.perf_counter()
        queued = self.refresh(self.affected(acting))
        return queued, time.perf_counter() - started

    def _candidates(self) -> dict[int, Any]:
        """What each seat has selected that the centre shows (Domino: the placement)."""
        out = {}
        for controller in self.seats:
            mark = controller.kind.mark(controller)
            if mark is not None:
                out[controller.seat] = mark
        return out
