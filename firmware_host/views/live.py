"""The table as data, for the web view: the game's board, the seats, the phase and the last
decisions, as plain JSON-able values (docs/web.md, "The snapshot").

Built on the table's thread from the rules state and the seat controllers (never from pixels),
then handed to the web server's thread, which only serialises it. A browser needs the cards'
colours and values, not the frames the OLEDs were sent. The board is the game's own hook's, in
the page's vocabulary (views/boards.py). Seats are numbered from 1, as the players see them;
colours are the games' letters (R, G, B, Y, P).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..engine.game import find, title_of
from ..engine.options import GAMES, PLAYERS
from .address import qr_rows
from .boards import seat_no

if TYPE_CHECKING:
    from ..table.machine import Table

S = 1_000_000_000
DECISIONS = 8  # the last decisions a page shows


def live_state(table: Table, now: int, status: str, address: str = "") -> dict[str, Any]:
    """One snapshot of the whole table; `address` is where the web view is reached."""
    match = table.match
    phase = str(table.phase)
    in_match = match is not None and phase not in ("lobby", "attract")
    seats = table.seat_of_player
    game = match.game if in_match and match is not None else table.game
    state: dict[str, Any] = {
        "type": "table",
        "phase": phase,
        "game": game,
        "title": title_of(game),
        "games": list(GAMES),
        "players_range": list(PLAYERS[table.game]),
        "status": status,
        "address": address,
        "seats_wired": table.seats,
        "seats": [_seat(table, player, seat, in_match) for player, seat in enumerate(seats)],
        "countdown": _countdown(table, now) if phase == "countdown" else None,
        "round": None, "rounds": None, "target": None,
        "board": None, "results": [], "winners": [], "decisions": _decisions(table),
        "notices": table.notices[-6:],
        "qr": list(qr_rows(address)) if address and phase in ("attract", "lobby") else None,
    }
    if match is not None and in_match:
        state["round"] = match.round_no + 1
        state["rounds"] = match.options.get("rounds")
        state["target"] = match.options.get("target")
        state["results"] = [{"round": n + 1, "ending": str(r.ending), "scores": list(r.scores),
                             "finishers": [seats[p] + 1 for p in r.finishers if p < len(seats)]}
                            for n, r in enumerate(match.results)]
        if match.is_over:
            state["winners"] = [seats[p] + 1 for p in match.winners if p < len(seats)]
        if phase == "playing":
            state["board"] = board(table)
    return state


def _countdown(table: Table, now: int) -> int:
    left = table.phase_since + table.timing.countdown_ns - now
    return max(0, -(-left // S))


def _seat(table: Table, player: int, seat: int, in_match: bool) -> dict[str, Any]:
    bot = table.bots.get(player)
    match = table.match
    out: dict[str, Any] = {
        "seat": seat + 1,
        "who": f"bot ({bot.level})" if bot is not None else "player",
        "name": None if bot is not None else table.names.get(seat),  # None: a guest (the page says so)
        "bot": bot is not None,
        "total": match.totals[player] if in_match and match is not None and player < match.players else None,
        "message": "",
    }
    referee = table.referee
    if in_match and referee is not None and player < len(referee.seats):
        out["message"] = referee.seats[player].message
    return out


def _decisions(table: Table) -> list[dict[str, Any]]:
    """The last decisions the engine took, newest last, and the contested ones with their Δ."""
    out: list[dict[str, Any]] = []
    contests = list(table.referee.contests)[-DECISIONS:] if table.referee is not None else []
    seats = table.seat_of_player
    for entry in list(table.trace)[-40:]:
        if "decided" in entry:
            out.append({"seat": entry["seat"], "control": entry["decided"], "refused": entry["refused"],
                        "ts_ns": entry["ts_ns"], "decided_ns": entry["decided_ns"], "delta_us": None,
                        "by_seat": None, "tie": False})
    for contest in contests:  # the losing press: how far behind the winner it was
        for item in reversed(out):
            if item["ts_ns"] == contest.loser_ts and item["seat"] == seat_no(seats, contest.loser):
                item.update(delta_us=round(contest.delta_ns / 1000, 1), tie=contest.tie,
                            by_seat=seat_no(seats, contest.winner))
                break
    return out[-DECISIONS:]


# ---------------------------------------------------------------- the board


def board(table: Table) -> dict[str, Any] | None:
    """The game's board in play: what lies in the middle and what each seat holds."""
    match = table.match
    if match is None:
        return None
    return board_of(match.game, match.round, table.seat_of_player)


def board_of(game: str, rnd: Any, seats: list[int]) -> dict[str, Any]:
    """A round's board as its game draws it for the page (`Game.board`)."""
    return find(game).board(rnd, seats)
