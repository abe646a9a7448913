"""The table as data, for the web view: every game's board, the seats, the phase and the last
decisions, as plain JSON-able values (docs/web.md, "The snapshot").

Built on the table's thread from the rules state and the seat controllers (never from pixels),
then handed to the web server's thread, which only serialises it. A browser needs the cards'
colours and values, not the frames the OLEDs were sent. Seats are numbered from 1, as the
players see them; colours are the games' letters (R, G, B, Y, P).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..engine.options import GAMES, PLAYERS
from .address import qr_rows

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
    state: dict[str, Any] = {
        "type": "table",
        "phase": phase,
        "game": match.game if in_match and match is not None else table.game,
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
            if item["ts_ns"] == contest.loser_ts and item["seat"] == _seat_no(seats, contest.loser):
                item.update(delta_us=round(contest.delta_ns / 1000, 1), tie=contest.tie,
                            by_seat=_seat_no(seats, contest.winner))
                break
    return out[-DECISIONS:]


def _seat_no(seats: list[int], player: int) -> int:
    return seats[player] + 1 if player < len(seats) else player + 1


# ---------------------------------------------------------------- the boards


def card(letter: str, value: int | str) -> dict[str, Any]:
    return {"c": letter, "v": value}


def board(table: Table) -> dict[str, Any] | None:
    """The game's board in play: what lies in the middle and what each seat holds."""
    match = table.match
    if match is None:
        return None
    rnd, seats = match.round, table.seat_of_player
    build = BOARDS.get(match.game)
    out: dict[str, Any] = {"kind": match.game}
    if build is not None:
        out.update(build(rnd, seats))
    return out


def _classic(rnd: Any, seats: list[int]) -> dict[str, Any]:
    complete = {int(top) for top in rnd.complete_tops()}  # a pile that takes no more cards
    piles = []
    for pile in rnd.piles:
        owner, top = pile[-1]
        piles.append({**card(top.colour.letter, top.value), "size": len(pile),
                      "seat": _seat_no(seats, owner), "complete": int(top) in complete})
    hands = []
    for player, st in enumerate(rnd.seats):
        stack_top = st.stack[-1] if st.stack and not rnd.options.stack_face_down else None
        hands.append({"seat": _seat_no(seats, player),
                      "row": [_classic_card(place[-1]) if place else None for place in st.row],
                      "stack": len(st.stack), "stack_top": _classic_card(stack_top),
                      "discard": len(st.discard), "discard_top": _classic_card(st.discard[-1] if st.discard
                                                                             else None),
                      "hand": len(st.hand)})
    return {"piles": piles, "hands": hands, "descending": rnd.options.descending}


def _classic_card(c: Any) -> dict[str, Any] | None:
    return None if c is None else card(c.colour.letter, c.value)


def _dice(rnd: Any, seats: list[int]) -> dict[str, Any]:
    from ..engine.dice import FACES, DieColour

    rows = [{"c": colour.letter, "placed": rnd.board[colour], "faces": FACES} for colour in DieColour]
    hands = [{"seat": _seat_no(seats, p), "dice": [card(d.colour.letter, d.face) for d in dice]}
             for p, dice in enumerate(rnd.dice)]
    return {"rows": rows, "hands": hands}


def _domino(rnd: Any, seats: list[int]) -> dict[str, Any]:
    from ..engine.domino import JOKER

    colours = rnd.board.colours
    rows = max(r for r, _ in colours) + 1
    cols = max(c for _, c in colours) + 1
    tokens = {tok.square: i for i, tok in enumerate(rnd.tokens)}
    squares = []
    for (r, c), colour in sorted(colours.items()):
        square: dict[str, Any] = {"r": r, "col": c, "c": colour.letter}
        covered = rnd.covered.get((r, c))
        if covered is not None:
            square["by"] = _seat_no(seats, covered[0]) if covered[0] >= 0 else None
            square["joker"] = covered[1] == JOKER
        if (r, c) in tokens:
            tok = rnd.tokens[tokens[(r, c)]]
            square["token"] = tokens[(r, c)] + 1
            square["held"] = tok.reserved_by is not None
        squares.append(square)
    hands = []
    for p, st in enumerate(rnd.seats):
        top = rnd.top_card(p)
        hands.append({"seat": _seat_no(seats, p), "hand": len(st.hand), "discard": len(st.discard),
                      "jokers": st.jokers, "placed": st.placed,
                      "top": None if top is None else [top.a.letter, top.b.letter]})
    return {"rows": rows, "cols": cols, "squares": squares, "hands": hands}


def _crazy(rnd: Any, seats: list[int]) -> dict[str, Any]:
    piles = []
    for pile in rnd.piles.values():
        owner, top, value = pile.cards[-1]
        piles.append({**card(top.colour.letter, value), "crazy": top.crazy, "size": len(pile.cards),
                      "seat": _seat_no(seats, owner)})
    hands = [{"seat": _seat_no(seats, p),
              "hand": [card(c.colour.letter, "*" if c.crazy else c.value) for c in st.hand],
              "draw": len(st.draw), "won": len(st.score), "discard": len(st.discard)}
             for p, st in enumerate(rnd.seats)]
    return {"piles": piles, "limit": rnd.pile_limit, "hands": hands}


BOARDS = {"classic": _classic, "dice": _dice, "domino": _domino, "crazy": _crazy}
