"""The screens between the plays: attract, lobby, countdown, round and match results.

During play each seat shows its game (views/seat.py); around it the table
speaks to everyone: who joined, which game seat 1 chose, 3-2-1-GO, scores.
A configuration warning rides on the bottom bar of these screens, so whoever
stands at the table sees it, never during a round.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from PIL import Image

from ..engine.options import GAMES
from .address import render_attract
from .centre import render_winner, render_word, seat_colour
from .font import draw_centred, drawable
from .live import closest_race
from .seat import (
    SIZE,
    bottom_bar,
    fitted,
    render_banner,
    render_countdown,
    render_match_result,
    render_menu,
    render_picker,
    render_round_result,
)

if TYPE_CHECKING:
    from ..table.machine import Table

S = 1_000_000_000
WARNING = "CONFIG INVALID: TABLECTL"
WHITE = (255, 255, 255)


def claim_url(address: str, seat: int, token: str | None) -> str:
    """The one-time address a seat's QR code holds (web/claim.py answers it): short, so that the
    code stays large on a 64-pixel screen. "" when there is no web view or no token."""
    if not address or not token:
        return ""
    return f"{address.rstrip('/')}/c/{seat + 1}/{token}"


def countdown_left(table: Table, now: int) -> int:
    """Whole seconds still to count (3, 2, 1), 0 at go."""
    left = table.phase_since + table.timing.countdown_ns - now
    return max(0, -(-left // S))


def seat_moments(table: Table, fastest: Mapping[str, Any] | None = None) -> list[str]:
    """The round just ended's closest race (the referee's) and fastest reaction (`fastest`:
    views/standings.py `round_reaction`, once the statistics made it) as a seat's OLED says
    them: "CLOSEST 0.4 MS: Ana", "CLOSEST 40 US: TIE" (µ is not in the font), "FASTEST 230 MS:
    SEAT 2"; a name as the font draws it, a guest or a bot by its seat."""
    out = []
    race = closest_race(table)
    if race is not None:
        who = "TIE" if race["tie"] else _label(race["winner"], race["winner_name"])
        out.append(f"CLOSEST {race['margin'].replace('µs', 'us').upper()}: {who}")
    if fastest is not None:
        out.append(f"FASTEST {fastest['ms']:.0f} MS: {_label(fastest['seat'], fastest['name'])}")
    return out


def _label(seat: int, name: str) -> str:
    """A name as the OLED's font draws it; a guest or a bot ("seat 2", "bot (hard)") by its seat."""
    return f"SEAT {seat}" if name == f"seat {seat}" or name.startswith("bot") else drawable(name)


def phase_seat(table: Table, seat: int, now: int, warning: bool = False, address: str = "",
               qr: bool = True, fastest: Mapping[str, Any] | None = None) -> Image.Image | None:
    """A physical seat's screen outside play; None while its game is on screen. `address`: where
    the web view is watched, shown on the attract screen (as a QR code too, if `qr`); `fastest`:
    the round just ended's fastest reaction, once the statistics have made it."""
    phase = str(table.phase)
    match = table.match
    player = table.player_of(seat)
    if phase == "playing":
        return None
    if phase == "countdown" and match is not None:
        img = render_countdown(countdown_left(table, now), table.game)
        if player is None:
            img = render_banner("a round is on", "wait for the lobby", big=table.game)
    elif phase == "round_result" and match is not None and match.results:
        img = render_round_result(match, player, table.names.get(seat), seat_moments(table, fastest)) \
            if player is not None else \
            render_banner(f"round {len(match.results)} over", big=table.game)
    elif phase == "match_result" and match is not None:
        seats = table.seat_of_player
        names = {p: n for p, n in enumerate(table.player_names()) if n}
        img = render_match_result(match, player, names, seats) if player is not None else \
            render_banner("match over", big=table.game)
    elif phase == "lobby":
        name = table.names.get(seat)
        if seat in table.pickers:
            img = render_picker(table.pickers[seat], seat, claim_url(address, seat, table.tokens.get(seat)))
        elif seat in table.joined and seat == table._chooser():
            img = render_menu("choose the game", list(GAMES), table.menu, "ALT: START  UP: NAME")
        elif seat in table.joined:
            img = render_banner(f"seat {seat + 1} joined", f"game: {table.game}", f"players: {table.players}",
                                f"seat {table._chooser() + 1} starts", "up or down: your name",
                                big="READY")
        else:
            img = render_banner(f"game: {table.game}", f"players: {table.players}", "slap to join",
                                "up or down: your name", big="JOIN?")
        if name and seat not in table.pickers:  # the player's name, in its own case, on top
            img.paste(0, (0, 0, SIZE[0], 8))
            draw_centred(img, 0, fitted(drawable(name), SIZE[0]))
    elif address:
        img = render_attract(address, qr)
    else:
        img = render_banner("slap to play", big="LIGRETTO")
    if warning:
        bottom_bar(img, WARNING)
    return img


def phase_centre(table: Table, now: int, size: tuple[int, int],
                 brightness: float) -> Image.Image | None:
    """The matrix outside play; None while the piles are on it."""
    phase = str(table.phase)
    match = table.match
    if phase == "playing":
        return None
    if phase == "countdown":
        left = countdown_left(table, now)
        return render_word(str(left) if left else "GO", WHITE, size, brightness)
    if phase in ("round_result", "match_result") and match is not None and match.results:
        best = max(range(match.players), key=lambda p: (match.results[-1].scores[p]
                                                        if phase == "round_result" else match.totals[p]))
        seat = table.seat_of_player[best] if best < len(table.seat_of_player) else best
        return render_winner(seat, min(size) // 2 - 1, size, brightness)
    if phase == "lobby":
        return render_word(table.game, seat_colour(table._chooser()), size, brightness)
    return render_word("ligretto", WHITE, size, brightness)
