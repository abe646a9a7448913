"""The table as data, for the web view: the game's board, the seats, the phase and the last
decisions, as plain JSON-able values (docs/web.md, "The snapshot").

Built on the table's thread from the rules state and the seat controllers (never from pixels),
then handed to the web server's thread, which only serialises it. A browser needs the cards'
colours and values, not the frames the OLEDs were sent. The board is the game's own hook's, in
the page's vocabulary (views/boards.py). Seats are numbered from 1, as the players see them;
colours are the games' letters (R, G, B, Y, P).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, TypedDict, cast
from urllib.parse import urlsplit

from ..engine.game import JsonDict, find, title_of
from ..engine.options import GAMES, PLAYERS
from ..engine.round import RoundBase
from ..table.words import ended_by, ending_name, phase_name
from .address import qr_rows
from .boards import seat_no
from .standings import Standings, highlights, leaderboard, rating_changes, round_reaction

if TYPE_CHECKING:
    from ..table.machine import Table
    from ..table.referee import Contest

S = 1_000_000_000
DECISIONS = 8  # the last decisions a page shows


class Race(TypedDict):
    """A race as the page shows it (`closest_race`): seats from 1."""

    winner: int
    loser: int
    winner_name: str
    loser_name: str
    tie: bool
    margin_ns: int
    margin: str
    ts_ns: int


def _json(race: Race | None) -> JsonDict | None:
    """A race in the snapshot: a Race holds only JSON values (its fields say so), though mypy
    does not take a TypedDict for a JsonDict."""
    return cast("JsonDict | None", race)


def live_state(table: Table, now: int, status: str, address: str = "",
               standings: Standings = None, match_id: int | None = None) -> JsonDict:
    """One snapshot of the whole table; `address` is where the web view is reached; `standings`
    what the statistics last said (views/standings.py) and `match_id` the journal's number of
    the match on the table, whose figures the podium and the round's end show once made."""
    match = table.match
    phase = str(table.phase)
    in_match = match is not None and phase not in ("lobby", "attract")
    seats = table.seat_of_player
    game = match.game if in_match and match is not None else table.game
    state: JsonDict = {
        "type": "table",
        "phase": phase,
        "phase_name": phase_name(phase),
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
        "qr": list(qr_rows(address)) if reachable(address) and phase in ("attract", "lobby") else None,
        "reachable": reachable(address),
        "round_end": None, "podium": None, "race": _json(_race(table)),
        "leaderboard": None, "highlights": [],
    }
    if phase in ("attract", "lobby"):
        state["leaderboard"] = {"tonight": leaderboard(standings, "tonight", table.game),
                                "all_time": leaderboard(standings, "all time", table.game)}
        state["highlights"] = highlights(standings)
    if match is not None and in_match:
        state["round"] = match.round_no + 1
        state["rounds"] = match.options.get("rounds")
        state["target"] = match.options.get("target")
        state["results"] = [{"round": n + 1, "ending": str(r.ending), "ending_name": ending_name(r.ending),
                             "how": ended_by(r.ending, [f"seat {seats[p] + 1}" for p in r.finishers
                                                        if p < len(seats)]),
                             "scores": list(r.scores),
                             "finishers": [seats[p] + 1 for p in r.finishers if p < len(seats)]}
                            for n, r in enumerate(match.results)]
        if match.is_over:
            state["winners"] = [seats[p] + 1 for p in match.winners if p < len(seats)]
        if phase in ("playing", "round_result", "match_result"):
            state["board"] = board(table)  # the final board stays on screen at the round's end
        if phase in ("round_result", "match_result") and match.results:
            state["round_end"] = _round_end(table, now, standings, match_id)
        if phase == "match_result":
            state["podium"] = _podium(table, rating_changes(standings, match_id))
    return state


def reachable(address: str) -> bool:
    """A phone on the network can open `address`: not this machine's own loopback (127.0.0.1,
    [::1], localhost), which on a phone is the phone itself."""
    host = urlsplit(address).hostname or ""
    if not host:
        return False
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True  # a name: table.local, [web] url's


def player_name(table: Table, player: int) -> str | None:
    """The name of the player at a player's seat (the names part: `Table.names`); None for a
    guest or a bot. The one place the live page's words (the banner, the seats, the round's end,
    the podium, the races) take a name from."""
    seat = table.seat_of_player[player] if player < len(table.seat_of_player) else player
    return None if player in table.bots else table.names.get(seat)


def seat_name(table: Table, player: int) -> str:
    """Who sits at a player's seat, in words a person reads: their name ("Ann"), else "bot" or
    "seat 3" (a guest)."""
    seat = table.seat_of_player[player] if player < len(table.seat_of_player) else player
    if player in table.bots:
        return "bot"
    return player_name(table, player) or f"seat {seat + 1}"


def margin_words(ns: int) -> str:
    """A race's margin as a person says it: "0.8 ms", "40 µs"."""
    ns = abs(ns)
    return f"{ns / 1000:.0f} µs" if ns < 100_000 else f"{ns / 1_000_000:.1f} ms"


def _round_end(table: Table, now: int, standings: Standings, match_id: int | None) -> JsonDict:
    """The round just ended, ranked: each score with its parts, the round's closest race (the
    referee's, at once) and fastest reaction (the statistics', a second or two later), and how
    long until the next round starts by itself."""
    match = table.match
    assert match is not None
    result = match.results[-1]
    parts = find(match.game).score_parts(match.round)
    seats = table.seat_of_player
    order = sorted(range(match.players), key=lambda p: (-result.scores[p], -match.totals[p], seats[p]))
    ranked: list[JsonDict] = []
    for p in order:
        ranked.append({"place": 1 + sum(result.scores[q] > result.scores[p] for q in range(match.players)),
                       "seat": seats[p] + 1, "name": seat_name(table, p), "points": result.scores[p],
                       "parts": [{"words": w, "points": n} for w, n in parts[p]],
                       "total": match.totals[p]})
    next_in = None
    if str(table.phase) == "round_result":
        left = table.phase_since + table.timing.round_result_ns - now
        next_in = max(0, -(-left // S))
    return {"round": len(match.results), "ranked": ranked, "closest": _json(_closest(table)),
            "fastest": round_reaction(standings, match_id, len(match.results)),
            "next_in": next_in}


def round_moments(table: Table, standings: Standings = None, match_id: int | None = None) -> list[str]:
    """The round just ended's closest race (the referee's) and fastest reaction (the statistics',
    once made) in words, as the web's round end says them, for the terminal: "Closest race: Ann
    (seat 2) beat seat 3 by 0.4 ms", "Fastest reaction: Ann (seat 2), 250 ms"."""
    match = table.match
    if match is None or not match.results:
        return []
    out = []
    race = _closest(table)
    if race is not None:
        winner, loser = called(race["winner"], race["winner_name"]), called(race["loser"], race["loser_name"])
        out.append(f"Closest race: {winner} and {loser} tied within {race['margin']}: drawn for seat "
                   f"{race['winner']}" if race["tie"] else
                   f"Closest race: {winner} beat {loser} by {race['margin']}")
    quick = round_reaction(standings, match_id, len(match.results))
    if quick is not None:
        out.append(f"Fastest reaction: {called(quick['seat'], quick['name'])}, {quick['ms']:.0f} ms")
    return out


def called(seat: int, name: str) -> str:
    """A seat as the page's `who` says it: "Ann (seat 2)", "bot (seat 3)", "seat 1" (a guest)."""
    return name if name == f"seat {seat}" else f"{name} (seat {seat})"


def _race_of(table: Table, contest: Contest) -> Race:
    seats = table.seat_of_player
    winner, loser = seat_no(seats, contest.winner), seat_no(seats, contest.loser)
    return {"winner": winner, "loser": loser, "winner_name": seat_name(table, contest.winner),
            "loser_name": seat_name(table, contest.loser), "tie": contest.tie,
            "margin_ns": abs(contest.delta_ns), "margin": margin_words(contest.delta_ns),
            "ts_ns": contest.loser_ts}


def _round_contests(table: Table) -> list[Contest]:
    """The contests of the round in play (or just ended): those after its "go"."""
    go = table.gate.go_ts
    if table.referee is None or go is None:  # None: counting down to the next round
        return []
    return [c for c in table.referee.contests if c.loser_ts >= go]


def closest_race(table: Table) -> Race | None:
    """The round's (in play or just ended) closest race: the referee's contest of the smallest
    margin since its "go", as the page's race: winner and loser seats (from 1) and names, `tie`,
    the margin in ns and in words. None: no contest this round."""
    return _closest(table)


def _closest(table: Table) -> Race | None:
    contests = _round_contests(table)
    if not contests:
        return None
    return _race_of(table, min(contests, key=lambda c: abs(c.delta_ns)))


def _race(table: Table) -> Race | None:
    """The newest race of the round: the page shows a new one large for a few seconds."""
    contests = _round_contests(table)
    return _race_of(table, contests[-1]) if contests else None


def _podium(table: Table, changes: dict[int, float]) -> list[JsonDict]:
    """The match's places by total, with each seat's rating change (None until its figures are
    made, and for a guest, whom no rating follows)."""
    match = table.match
    assert match is not None
    seats = table.seat_of_player
    order = sorted(range(match.players), key=lambda p: (-match.totals[p], seats[p]))
    return [{"place": 1 + sum(match.totals[q] > match.totals[p] for q in range(match.players)),
             "seat": seats[p] + 1, "name": seat_name(table, p), "total": match.totals[p],
             "rating": changes.get(seats[p] + 1)} for p in order]


def _countdown(table: Table, now: int) -> int:
    left = table.phase_since + table.timing.countdown_ns - now
    return max(0, -(-left // S))


def _seat(table: Table, player: int, seat: int, in_match: bool) -> JsonDict:
    bot = table.bots.get(player)
    match = table.match
    out: JsonDict = {
        "seat": seat + 1,
        "who": f"bot ({bot.level})" if bot is not None else "player",
        "name": player_name(table, player),  # None: a guest or a bot (the page says which)
        "bot": bot is not None,
        "total": match.totals[player] if in_match and match is not None and player < match.players else None,
        "message": "",
    }
    referee = table.referee
    if in_match and referee is not None and player < len(referee.seats):
        out["message"] = referee.seats[player].message
    return out


def _decisions(table: Table) -> list[JsonDict]:
    """The last decisions the engine took, newest last, and the contested ones with their Δ."""
    out: list[JsonDict] = []
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


def board(table: Table) -> JsonDict | None:
    """The game's board in play: what lies in the middle and what each seat holds."""
    match = table.match
    if match is None:
        return None
    return board_of(match.game, match.round, table.seat_of_player)


def board_of(game: str, rnd: RoundBase, seats: list[int]) -> JsonDict:
    """A round's board as its game draws it for the page (`Game.board`)."""
    return find(game).board(rnd, seats)
