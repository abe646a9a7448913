"""The history pages' data: the stored matches, one match step by step with its board, and its
races, read from the journal (service/journal.py). Functions over the store, no web server: the
routes (web/replays.py) serve what these return, the timelines and journals from a process of
their own (`timeline_gzipped`, `journal_text`).

A match is shown as the table would rebuild it on resume: its stored deal (seed, options, boards)
replayed through the rules with its journal (`Match.replaying`, the code `Store.resume` runs).
Seats are numbered from 1, as the players see them; the rules' `state` of each step keeps the
engine's own numbering (players from 0) and is exactly what `round.snapshot()` gives.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import sqlite3
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..engine.codec import from_dict, to_dict
from ..engine.game import find, title_of
from ..engine.match import Match
from ..service.journal import (
    Reader,
    Store,
    StoreError,
    read_match,
    read_only,
    read_seated,
    record_of,
    replay_arguments,
)
from ..system.children import die_with_parent
from ..system.logs import logger
from ..views.live import board_of

STEPS_MAX = 20_000
"""At most this many steps of one match are rebuilt for a page (a long Classic match has a few
thousand); the rest is said to be left out, never silently cut."""


def matches(store: Store | Reader, limit: int = 50, before: int | None = None) -> dict[str, Any]:
    """A page of the stored matches, newest first, as `tablectl history` lists them: `matches`,
    and `next` (the `before` of the page after it, None at the oldest). Read on the store's
    read-only connection, never the writer's (service/journal.py `history_page`). Each match
    says its game's `title` too, for the page."""
    page = store.history_page(limit, before)
    for match in page["matches"]:
        match["title"] = title_of(str(match["game"]))
    return page


def match_timeline(store: Store | Reader, match_id: int, boards: Any = None) -> dict[str, Any] | None:
    """One match: its stored facts, every step (each round's deal and each journal entry) with
    the rules' state after it, and its races; None when no such match is stored. `boards`:
    `(game, round, seats) -> picture data` for the page, added to each step as `board`."""
    record = store.match_record(match_id)
    return None if record is None else timeline_of(record, boards)


def timeline_of(record: dict[str, Any], boards: Any = None) -> dict[str, Any]:
    """`match_timeline` of a record `Store.match_record` gave."""
    seats = _seats(record["row"])
    out = _facts(record["row"], record["rounds"], seats)
    people = people_of(record, seats)
    out["people"] = people
    steps, problem = _steps(record["row"], record["journal"], seats, boards, people)
    out["steps"] = steps
    out["problem"] = problem
    out["races"] = [race_entry(r, seats, steps, people) for r in record["races"]]
    return out


def revision(record: dict[str, Any]) -> tuple[Any, ...]:
    """What changes whenever the match's timeline would: a cache's key."""
    row = record["row"]
    return (row["id"], len(record["journal"]), len(record["races"]), len(record["rounds"]), row["ended"],
            row["set_aside"])


def match_journal(store: Store | Reader, match_id: int) -> dict[str, Any] | None:
    """The match's journal as stored, for a JSON download: the match row, its rounds, every
    accepted action as the engine spells it (`seat` there is the player, from 0; `seats` maps
    players to the seats they sat at, from 1) and every race record."""
    record = store.match_record(match_id)
    return None if record is None else journal_of(record)


def journal_of(record: dict[str, Any]) -> dict[str, Any]:
    """`match_journal` of a record `Store.match_record` gave."""
    facts = _facts(record["row"], record["rounds"], _seats(record["row"]))
    return {
        "format": "table-host match journal", "version": 1,
        **facts,
        "journal": [{"n": n, "round": r + 1, "action": _json(a)} for n, r, a in record["journal"]],
        "races": [{"n": n, "round": r + 1, "after": after, **_json(race)}
                  for n, r, after, race in record["races"]],
    }


# ---------------------------------------------------------------- the match's facts


def _json(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return {"unreadable": str(text)[:200]}


def _seats(row: dict[str, Any]) -> list[int]:
    """Each player's seat (from 0), as stored; in order when the row has none."""
    players = row["players"] if isinstance(row["players"], int) else 0
    seats = _json(row["seats"] or "[]")
    if isinstance(seats, list) and len(seats) == players and all(isinstance(s, int) for s in seats):
        return seats
    return list(range(players))


def _seat(seats: list[int], player: Any) -> int | None:
    if not isinstance(player, int):
        return None
    return seats[player] + 1 if 0 <= player < len(seats) else player + 1


def people_of(record: dict[str, Any], seats: list[int]) -> list[dict[str, Any]]:
    """Who sat at each player's seat, in the players' order: `seat` (from 1), `kind` ("player",
    "guest" or "bot"), `name` (a player's as shown at that match, else None) and `id` (their
    page, /players/N; None for a guest, a bot, or a player the disk has not been given yet).
    A match stored before players were kept has guests and bots."""
    bots = _json(record["row"].get("bots") or "{}")
    by_player = {w["player"]: w for w in record.get("who", [])}
    out = []
    for player, seat in enumerate(seats):
        w = by_player.get(player)
        kind = w["kind"] if w else "bot" if isinstance(bots, dict) and str(player) in bots else "guest"
        named = kind == "player" and w is not None
        out.append({"seat": seat + 1, "kind": kind, "name": w["name"] if named else None,
                    "id": w["id"] if named else None})
    return out


Words = list[Any]
"""A line of the page in parts: text, and `{"seat": N}` where a seat is named (the page makes
it the player's name, linked to their page, as `said` makes it text)."""


def called(seat: int | None, people: list[dict[str, Any]]) -> str:
    """A seat as the players know it: "Ann (seat 2)", "bot (seat 3)", "seat 1" (a guest): the
    words of the live table (views/readable.py, table.js)."""
    person = next((p for p in people if p["seat"] == seat), None)
    if person is not None and person["name"]:
        return f"{person['name']} (seat {seat})"
    if person is not None and person["kind"] == "bot":
        return f"bot (seat {seat})"
    return f"seat {seat}"


def said(words: Words, people: list[dict[str, Any]]) -> str:
    """A line's parts as one text."""
    return "".join(called(w["seat"], people) if isinstance(w, dict) else str(w) for w in words)


def _facts(row: dict[str, Any], rounds: list[tuple[Any, ...]], seats: list[int]) -> dict[str, Any]:
    bots = _json(row["bots"] or "{}")
    winners = _json(row["winners"]) if row["winners"] else None
    return {
        "match": row["id"], "game": str(row["game"]), "title": title_of(str(row["game"])),
        "players": row["players"],
        "seats": [s + 1 for s in seats], "seed": row["seed"], "options": _json(row["options"]),
        "bots": {str(_seat(seats, int(p))): level for p, level in bots.items()
                 if str(p).isdigit()} if isinstance(bots, dict) else {},
        "started": row["started"], "ended": row["ended"],
        "winners": [_seat(seats, p) for p in winners] if isinstance(winners, list) else None,
        "set_aside": row["set_aside"],
        "rounds": [_round(r, seats) for r in rounds],
    }


def _round(row: tuple[Any, ...], seats: list[int]) -> dict[str, Any]:
    round_no, ending, finishers, scores = row[:4]
    done = _json(finishers)
    return {"round": round_no + 1, "ending": str(ending),
            "finishers": [_seat(seats, p) for p in done] if isinstance(done, list) else [],
            "scores": _json(scores)}


# ---------------------------------------------------------------- steps


def _steps(row: dict[str, Any], journal: list[tuple[Any, ...]], seats: list[int], boards: Any,
           people: list[dict[str, Any]] | None = None) -> tuple[list[dict[str, Any]], str | None]:
    """Each round's deal and each journal entry, with the state after it; and what stopped the
    rebuild, if something did. The journal is read one row at a time as the replay reaches it,
    so a row that does not read, or does not replay, stops the steps there: the ones before it
    are shown (it was: every row was read first, and one bad row left no step at all)."""
    steps: list[dict[str, Any]] = []
    decoded: list[tuple[int, Any]] = []
    at = 0  # the journal row being read or applied, from 1 as the page says it
    try:
        arguments = replay_arguments(row["game"], row["players"], row["seed"], row["options"],
                                     row["boards"], [])
        context = find(row["game"]).journal_context(row["players"], arguments["resources"])
    except Exception as exc:  # the match's own row: not even its deal can be shown
        return steps, f"the match's deal does not replay: {type(exc).__name__}: {exc}"

    def read() -> Any:
        nonlocal at
        for _, round_no, text in journal:
            at += 1
            decoded.append((round_no, from_dict(row["game"], json.loads(text), context)))
            yield decoded[-1]

    arguments["journal"] = read()
    try:
        for index, match in Match.replaying(**arguments):
            if len(steps) >= STEPS_MAX:
                return steps, f"only the first {STEPS_MAX} steps are shown"
            steps.append(_step(len(steps), index, match, decoded, seats, boards, people or []))
    except Exception as exc:  # a damaged row is named on the page, never a failed request
        why = f"{type(exc).__name__}: {exc}"
        if not steps:
            return steps, f"the match's deal does not replay: {why}"
        return steps, (f"the journal does not replay after step {len(steps) - 1}: "
                       f"row {at} of {len(journal)}: {why}")
    return steps, None


def _step(number: int, index: int | None, match: Match, journal: list[tuple[int, Any]], seats: list[int],
          boards: Any, people: list[dict[str, Any]]) -> dict[str, Any]:
    rnd = match.round
    step: dict[str, Any] = {"step": number, "round": match.round_no + 1, "journal": index,
                            "state": rnd.snapshot(), "totals": list(match.totals)}
    if index is None:
        step |= {"kind": "deal", "seat": None, "ts_ns": None, "text": "the cards are dealt"}
    else:
        action = to_dict(journal[index][1])
        seat = _seat(seats, action.get("seat"))
        words: Words = ["time ran on: a hold or a wait was over"] if seat is None else \
            [{"seat": seat}, " " + find(match.game).said(journal[index][1])]
        step |= {"kind": "wake" if action["do"] == "wake" else "action", "seat": seat,
                 "ts_ns": journal[index][1].ts, "action": action, "words": words, "text": said(words, people)}
    if rnd.result is not None:
        result = rnd.result
        step["result"] = {"ending": str(result.ending), "scores": list(result.scores),
                          "finishers": [_seat(seats, p) for p in result.finishers]}
    if boards is not None:
        step["board"] = boards(match.game, rnd, seats)
    return step


# ---------------------------------------------------------------- races


def _us(ns: int) -> str:
    """Nanoseconds as microseconds, exactly: 400000 -> "400", 100500 -> "100.5"."""
    return f"{ns / 1000:.3f}".rstrip("0").rstrip(".")


def race_entry(row: tuple[Any, ...], seats: list[int], steps: list[dict[str, Any]],
               people: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One stored race for the race view: both seats' kernel timestamps, Δ in microseconds, the
    window and ε in force, the arbiter's decision and its reason in words, and the step of the
    timeline it happened at (the last one before it)."""
    n, round_no, after, text = row
    race = _json(text)
    kind = str(race.get("kind", "?"))
    loser, winner = _seat(seats, race.get("loser")), _seat(seats, race.get("winner"))
    entry: dict[str, Any] = {
        "n": n + 1, "round": round_no + 1, "kind": kind, "seat": loser, "by_seat": winner,
        "control": race.get("control"), "action": race.get("action"),
        "loser_ts_ns": race.get("loser_ts"), "winner_ts_ns": race.get("winner_ts"),
        "window_us": _number_us(race.get("window_ns")), "epsilon_us": _number_us(race.get("epsilon_ns")),
        "seed": race.get("seed"), "decided_ns": race.get("decided_ns"),
        "step": _step_at(steps, round_no + 1, after),
    }
    loser_ts, winner_ts = race.get("loser_ts"), race.get("winner_ts")
    if isinstance(loser_ts, int) and isinstance(winner_ts, int):
        entry["delta_ns"] = loser_ts - winner_ts
        entry["delta_us"] = (loser_ts - winner_ts) / 1000
    if kind == "tie":
        entry |= {"draw": race.get("draw"), "draw_no": race.get("draw_no"),
                  "tied": [[_seat(seats, p), ts] for p, ts in race.get("tied", [])]}
    if kind == "late":  # the arbiter's figure: stamped this long before the newest press it had released
        entry["late_us"] = _number_us(race.get("late_ns"))
    if kind == "false_start":
        go = race.get("go_ns")
        entry["go_ns"] = go
        if isinstance(go, int) and isinstance(loser_ts, int):
            entry["delta_ns"] = loser_ts - go
            entry["delta_us"] = (loser_ts - go) / 1000
    entry["reason_words"] = _reason(entry, race)
    entry["reason"] = said(entry["reason_words"], people or [])
    return entry


def _number_us(ns: Any) -> float | None:
    return ns / 1000 if isinstance(ns, int) else None


def _reason(entry: dict[str, Any], race: dict[str, Any]) -> Words:
    """The arbiter's decision in the players' words, each seat named by who sat there."""
    kind, seat, by = entry["kind"], {"seat": entry["seat"]}, {"seat": entry["by_seat"]}
    delta = entry.get("delta_ns")
    if kind == "false_start":
        before = f"{_us(-delta)} µs before go" if isinstance(delta, int) and delta < 0 \
            else "within its lockout after go"
        return ["false start: ", seat, f" pressed {entry['control']} {before}, not counted"]
    if not isinstance(delta, int):
        return [by, " took it, ", seat, " too late"]
    if kind == "tie":
        epsilon = race.get("epsilon_ns", 0)
        return [f"tie: {_us(abs(delta))} µs apart, under ε {_us(epsilon)} µs, so the arbiter "
                f"drew the order by lot (its seed {race.get('seed')!r}, draw number {race.get('draw_no')}); ",
                by, " drawn first, ", seat, " too late"]
    if kind == "late":  # it reached the table after the window of the press it lost to had closed
        decided, closed = race.get("decided_ns"), race.get("winner_ts", 0) + race.get("window_ns", 0)
        when = [f" (taken {(decided - closed) / 1e6:.3f} ms after ", by, "'s window closed)"] \
            if isinstance(decided, int) else []
        return ["too late: ", seat, f" pressed {_us(-delta)} µs before ", by, ", but the press reached "
                "the table after ", by, "'s had been decided", *when]
    return ["first: ", by, f" pressed {_us(delta)} µs before ", seat, "; ", seat, " too late"]


def _step_at(steps: list[dict[str, Any]], round_no: int, after: int) -> int | None:
    """The last step before the race: of its round, before journal row `after`."""
    found = None
    for step in steps:
        if step["round"] > round_no or (step["journal"] is not None and step["journal"] >= after):
            break
        found = step["step"]
    return found


# ---------------------------------------------------------------- in the history's own process

KEPT = 8  # timelines kept gzipped (a long Classic match: about 1 MB of JSON, 30 kB gzipped)


def worker_start(parent: int) -> None:
    """The history's process, as it starts: it ends when the table that started it does (killed
    or not, it must not hold the state database for ever: system/children.py), then lowers its
    priority. It is a composition root of its own: it registers the built-in games."""
    from .. import games  # noqa: F401

    die_with_parent(signal.SIGKILL, parent)
    idle_priority()


def idle_priority() -> None:
    """The history's process runs only when nothing of the table wants a CPU (SCHED_IDLE, which
    the unit's system call filter allows: docs/web.md); if refused, it says so and runs as is."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except OSError as exc:
        logger("web").warning("the history's process keeps its priority: SCHED_IDLE refused (%s)",
                              exc.strerror or exc)


def board(game: str, rnd: Any, seats: list[int]) -> dict[str, Any]:
    """A step's board as the live page draws it (views/live.py), so a replay looks like the table."""
    return board_of(game, rnd, seats)



_connections: dict[str, sqlite3.Connection] = {}
_kept: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()


def _record(database: str, match_id: int) -> dict[str, Any] | None:
    try:
        db = _connections.get(database)
        if db is None:
            db = _connections[database] = read_only(Path(database))
        return record_of(match_id, read_match(db, match_id), (), read_seated(db, match_id))
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read match {match_id}: {exc}") from None


def timeline_gzipped(database: str, match_id: int) -> tuple[bytes, bool] | None:
    """The page's JSON of a match, gzipped, and whether it was rebuilt (else kept from before)."""
    record = _record(database, match_id)
    if record is None:
        return None
    key = revision(record)
    body = _kept.get(key)
    rebuilt = body is None
    if body is None:
        timeline = timeline_of(record, board)
        for step in timeline["steps"]:  # the page draws `board`; the rules' own state would double it
            del step["state"]
        body = gzip.compress(json.dumps(timeline, separators=(",", ":"), ensure_ascii=False).encode(), 6)
        _kept[key] = body
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    _kept.move_to_end(key)
    return body, rebuilt


def journal_text(database: str, match_id: int) -> str | None:
    record = _record(database, match_id)
    return None if record is None else json.dumps(journal_of(record), separators=(",", ":"),
                                                  ensure_ascii=False)
