"""What `tablectl` and `table-host` print for a person: rich tables and plain words, never a
Python value (`None`, `False`, a dict's braces). `--json` prints the answers as they are; this
module is loaded only for human output, so that a script's `tablectl --json status` does not pay
for rich."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

NOTHING = "-"


def plain(value: Any) -> str:
    """A value in words: yes/no, a dash for nothing, lists and mappings without brackets."""
    if value is None:
        return NOTHING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Mapping):  # a list inside reads as it is typed: handicap 7,7,5,5
        return ", ".join(f"{words(k)} {','.join(map(plain, v)) if isinstance(v, list | tuple) else plain(v)}"
                         for k, v in value.items()) or "none"
    if isinstance(value, list | tuple):
        return ", ".join(plain(v) for v in value) or "none"
    return str(value)


def words(key: str) -> str:
    return str(key).replace("_", " ")


def seat_list(seats: Sequence[int]) -> str:
    return ", ".join(str(s) for s in seats) or "none"


def local_time(ts: float | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return NOTHING if ts is None else time.strftime(fmt, time.localtime(ts))


class Quiet(Console):
    """A reader gone away (`| head`) ends the command as the commands' own `quiet_broken_pipe`
    ends it (exit 141), not with rich's exit 1."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def console(stderr: bool = False) -> Console:
    """Nothing the daemon says is read as rich markup or emoji; long cells wrap, never cut."""
    return Quiet(stderr=stderr, highlight=False, markup=False, emoji=False, soft_wrap=False)


def cells(*values: Any) -> list[Text]:
    return [Text(plain(v)) for v in values]


def table(*columns: str, right: Iterable[str] = (), keep: Iterable[str] = ()) -> Table:
    """Columns named in `right` are numbers; those in `keep` are never wrapped."""
    t = Table(*columns, box=box.SIMPLE, pad_edge=False, show_edge=False)
    for column in t.columns:
        column.justify = "right" if column.header in set(right) else "left"
        column.no_wrap = column.header in set(keep)
        column.overflow = "fold"  # a long path or word breaks onto the next line, never cut short
    return t


def pairs(rows: Iterable[tuple[str, Any]]) -> Table:
    """A name and a value a line, the names in a column of their own."""
    t = Table(box=None, show_header=False, pad_edge=False)
    t.add_column(style="bold", no_wrap=True)
    t.add_column(overflow="fold")
    for name, value in rows:
        t.add_row(*cells(name, value))
    return t


def print_all(*things: Any, out: Console | None = None) -> None:
    out = out or console()
    for thing in things:
        if isinstance(thing, str):
            out.print(Text(thing))
        elif thing is not None:
            out.print(thing)


def as_text(*things: Any, width: int = 120) -> str:
    """What print_all would print, as a string (no colour): for tests and for callers that join."""
    import io

    out = Console(file=io.StringIO(), width=width, highlight=False, markup=False, emoji=False,
                  color_system=None)
    print_all(*things, out=out)
    return out.file.getvalue().rstrip("\n")  # type: ignore[attr-defined]


# ------------------------------------------------------------------ tablectl


def seat_totals(seats: Sequence[int], totals: Sequence[int], names: Sequence[str | None] = ()) -> str:
    """Each seat's total; a named seat by its player's name (docs/players.md)."""
    named = list(names) + [None] * (len(seats) - len(names))
    return ", ".join(f"{n} (seat {s}) {t:+d}" if n else f"seat {s} {t:+d}"
                     for s, t, n in zip(seats, totals, named, strict=False)) or NOTHING


def status_rows(answer: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """`tablectl status` (and the answers of new, bots, start, abort, next: the status after)."""
    rows: list[tuple[str, Any]] = []
    for key, value in answer.items():
        if key in ("ok", "seats"):
            continue
        if key == "options":
            value = plain(value) if value else "the game's defaults"
        elif key == "seats_joined":
            value = seat_list(value)
        elif key == "names":
            seats = answer.get("seats") or range(1, len(value) + 1)
            named = [f"seat {s} {n}" for s, n in zip(seats, value, strict=False) if n]
            value = ", ".join(named) or "none: guests"
        elif key == "totals":
            if value is None:
                continue
            value = seat_totals(answer.get("seats") or range(1, len(value) + 1), value)
        elif key == "round" and value is None:
            continue
        elif key == "hardware":
            value = {**value, "missing": value.get("missing") or "none"}
        elif key == "memory" and isinstance(value, Mapping):
            value = f"{value.get('rss_mb')} MB resident, {value.get('threads')} threads, " \
                    f"allocator {value.get('allocator')}"
        elif key == "web_view" and isinstance(value, Mapping):
            value = web_view_line(value)
        elif key == "version" and isinstance(value, Mapping):
            value = version_line(value)
        elif key == "led_controller" and isinstance(value, Mapping):
            value = led_controller_line(value)
        elif key == "priority" and isinstance(value, Mapping):
            value = "; ".join(f"{k} thread {v}" for k, v in value.items())
        rows.append((words(key), value))
    return rows


def version_line(build: Mapping[str, Any]) -> str:
    """`tablectl status`'s version: this build, the Python and the LED controller's firmware."""
    from ..system.build import commit_line

    led = build.get("led_firmware") or "not heard from yet"
    return f"table-host {build.get('version')}, {commit_line(build)}, Python {build.get('python')}, " \
           f"LED controller firmware {led}"


def led_controller_line(led: Mapping[str, Any]) -> str:
    """The LED controller in `tablectl status`: what answered, its firmware, and whether it is the
    firmware this table-host carries (if not, how to put it on)."""
    if led.get("paused"):
        return f"paused: tablectl firmware flash has the port ({led.get('problem') or 'flashing'})"
    if not led.get("online"):
        seen = f"; last seen with firmware {led['firmware']}" if led.get("firmware") else ""
        return f"offline: {led.get('problem') or 'not heard from yet'}{seen}"
    if led.get("current"):
        return f"{led.get('name')}: the firmware this table-host carries"
    return (f"{led.get('name')}: firmware {led.get('firmware')}, this table-host carries "
            f"{led.get('expected')}: sudo tablectl firmware flash")


def firmware_lines(report: Mapping[str, Any]) -> list[str]:
    """`tablectl firmware` and `tablectl firmware flash`, for a person."""
    lines = [f"LED controller: {report.get('controller') or 'no answer'}",
             f"this table-host carries: {report.get('expected')}"]
    if report.get("controller"):
        lines.append("the same: yes" if report.get("current") else
                     "the same: NO: sudo tablectl firmware flash")
    return [*(report.get("steps") or []), *lines]


WEB_REFUSED = {"full": "connections full", "per_address": "connections past an address's share",
               "network": "from outside the table's network (global IPv6)"}
WEB_REFUSED_BROWSERS = {"full": "browsers full", "per_address": "browsers past an address's share",
                        "host": "not the table's name (Host)", "origin": "another site's page (Origin)"}
WEB_CLOSED = {"head": "request head too slow", "idle": "idle", "unread": "answer unread"}


def web_view_line(report: Mapping[str, Any]) -> str:
    """The web view's limits and what met them (docs/web.md, "Limits"), on one line."""
    conn, seen = report.get("connections", {}), report.get("browsers", {})
    line = f"{conn.get('open')} connections of {conn.get('limit')} " \
           f"({conn.get('per_address')} from one address), {seen.get('clients')} browsers of " \
           f"{seen.get('limit')} ({seen.get('per_address')} from one address)"
    said = [f"{n} {WEB_REFUSED.get(k, words(k))}" for k, n in conn.get("refused", {}).items() if n]
    said += [f"{n} {WEB_REFUSED_BROWSERS.get(k, words(k))}" for k, n in seen.get("refused", {}).items() if n]
    line += "; refused: " + (", ".join(said) if said else "none")
    closed = [f"{n} {WEB_CLOSED.get(k, words(k))}" for k, n in conn.get("closed", {}).items() if n]
    line += "; closed: " + (", ".join(closed) if closed else "none")
    if conn.get("out_of_descriptors"):
        line += f"; out of descriptors {conn['out_of_descriptors']} times"
    return line


def seats_table(answer: Mapping[str, Any]) -> list[Any]:
    joined, bots = set(answer.get("joined") or ()), set(answer.get("bot_seats") or ())
    named = dict(zip(answer.get("joined") or (), answer.get("names") or (), strict=False))
    t = table("seat", "who", right=("seat",))
    for seat in range(1, int(answer.get("seats_wired") or 0) + 1):
        who = (named.get(seat) or "joined (guest)") if seat in joined else "bot" if seat in bots else "free"
        t.add_row(*cells(seat, who))
    return [f"{answer.get('seats_wired')} seats wired, {len(joined)} joined, {answer.get('bots', 0)} bots", t]


def _ms(ns: int | None, since: int) -> str:
    return NOTHING if ns is None else f"{(ns - since) / 1e6:.3f}"


def inputs_tables(answer: Mapping[str, Any]) -> list[Any]:
    """The input trace: each event's edge time in ms after the first one shown, how long the loop
    took to take it (an input) or the engine to decide it (a decision); then the arbiter's ties
    and late presses."""
    events = answer.get("events") or []
    start = min((e["ts_ns"] for e in events if e.get("ts_ns") is not None), default=0)
    head = (f"the last {len(events)} input events and decisions, oldest first (edge: ms after the first "
            "edge shown; after: ms until the loop took it, or the engine decided)")
    t = table("edge ms", "seat", "control", "what", "after ms", right=("edge ms", "seat", "after ms"))
    for e in events:
        seat = e.get("seat")
        seat_text = str(seat) if isinstance(seat, int) and seat >= 1 else NOTHING
        if "decided" in e:
            what = f"decided {e['decided']}" + (f": refused, {e['refused']}" if e.get("refused") else "")
            control, taken = e["decided"], e.get("decided_ns")
        else:
            what, control, taken = str(e.get("input")), e.get("control"), e.get("received_ns")
            if e.get("detail"):
                what += f": {e['detail']}"
        after = NOTHING if taken is None or e.get("ts_ns") is None else f"{(taken - e['ts_ns']) / 1e6:.3f}"
        t.add_row(*cells(_ms(e.get("ts_ns"), start), seat_text, control, what, after))
    out: list[Any] = [head, t]
    arbiter = answer.get("arbiter") or []
    if arbiter:
        out.append("this match's ties and late presses")
        a = table("kind", "apart ms", "presses", right=("apart ms",))
        for d in arbiter:
            presses = ", ".join(f"seat {p['seat']} {p['control']} at {_ms(p['ts_ns'], start)} ms"
                                for p in d.get("presses", []))
            a.add_row(*cells(d.get("kind"), f"{d.get('delta_ns', 0) / 1e6:.3f}", presses))
        out.append(a)
    else:
        out.append("no ties or late presses in this match")
    window, epsilon = answer.get("window_ns"), answer.get("epsilon_ns")
    if window is not None:
        out.append(f"arbiter window {window / 1e6:g} ms, ties within {epsilon / 1e6:g} ms drawn")
    return out


def history_table(matches: Sequence[Mapping[str, Any]]) -> Table | str:
    """One row per match, newest first, in local time; seats numbered from 1."""
    if not matches:
        return "no matches yet"
    t = table("match", "started", "game", "players", "rounds", "outcome", "totals",
              right=("match", "players", "rounds"), keep=("started", "game"))
    for m in matches:
        rounds = m.get("rounds") or []
        seats = m.get("seats") or list(range(1, m["players"] + 1))
        totals = [sum(r["scores"][p] for r in rounds) for p in range(m["players"])]
        if m.get("set_aside"):
            outcome = "aborted" if m["set_aside"] == "aborted" else f"set aside: {m['set_aside']}"
        elif m.get("ended") is None:
            outcome = "not finished"
        else:
            winners = m.get("winners") or []
            by_seat = dict(zip(seats, m.get("names") or [], strict=False))
            if any(by_seat.get(w) for w in winners):  # named as the table names a seat: "Ann (seat 2)"
                won = " and ".join(f"{by_seat[w]} (seat {w})" if by_seat.get(w) else f"seat {w}"
                                   for w in winners)
            else:
                won = f"seat{'s' if len(winners) != 1 else ''} {seat_list(winners)}"
            outcome = f"ended {local_time(m['ended'], '%H:%M')}, won by {won}"
        if m.get("damaged"):  # rounds the store could not read back (tablectl --json history says which)
            outcome += f"; damaged: {len(m['damaged'])} round{'s' if len(m['damaged']) != 1 else ''}"
        t.add_row(*cells(m["match"], local_time(m.get("started")), m["game"], m["players"], len(rounds),
                         outcome, seat_totals(seats, totals, m.get("names") or ()) if rounds else NOTHING))
    return t


def rounds_table(seats: Sequence[int], rounds: Sequence[Mapping[str, Any]], totals: Sequence[int]) -> Table:
    """A match round by round, a column per seat, and the totals: `tablectl scores` and
    `table-host simulate` alike."""
    heads = [f"seat {s}" for s in seats]
    t = table("round", "ending", *heads, right=("round", *heads), keep=heads)
    for i, r in enumerate(rounds):
        t.add_row(*cells(r.get("round", i + 1), words(str(r.get("ending"))),
                         *(f"{s:+d}" for s in r["scores"])))
    t.show_footer = True
    for column, total in zip(t.columns, ["total", "", *totals], strict=False):
        column.footer = Text(plain(total))
    return t


def winners_line(winners: Sequence[int], over: bool = True) -> str:
    if not over:
        return "not over yet"
    return f"winner{'s' if len(winners) != 1 else ''}: " + (", ".join(f"seat {s}" for s in winners) or "none")


def scores_tables(answer: Mapping[str, Any]) -> list[Any]:
    options = answer.get("options") or {}
    head = f"{answer.get('game')}, {answer.get('players')} players"
    head += f" ({plain(options)})" if options else ""
    seats = answer.get("seats") or list(range(1, int(answer.get("players") or 0) + 1))
    return [head, rounds_table(seats, answer.get("rounds") or [], answer.get("totals") or []),
            winners_line(answer.get("winners") or [], bool(answer.get("over")))]


def selftest_tables(report: Mapping[str, Any]) -> list[Any]:
    out: list[Any] = []
    parts = report.get("parts") or []
    if parts:
        out.append("parts")
        t = table("part", "where", "result", "detail")
        for p in parts:
            t.add_row(*cells(p.get("part"), p.get("where"), p.get("result"), p.get("detail") or ""))
        out.append(t)
    for seat in report.get("seats") or []:
        out.append(f"seat {seat['seat']}")
        t = table("control", "where", "result", "detail")
        for c in seat.get("controls") or []:
            t.add_row(*cells(c.get("part"), c.get("where"), c.get("result"), c.get("detail") or ""))
        out.append(t)
    return out + selftest_verdict(report)


def selftest_verdict(report: Mapping[str, Any]) -> list[str]:
    """The self-test's outcome after its log: the log has said each part already."""
    problems = report.get("problems") or []
    out = [f"{len(problems)} problem(s):" if problems else
           f"self-test {report.get('state')}: {'passed' if report.get('passed') else 'not passed'}"]
    return out + [f"  {line}" for line in problems]


def setting_lines(key: str, value: Any) -> list[str]:
    """`config get` as KEY = VALUE lines, each key one `config set` takes (the tables of an array
    counted from 1); values as TOML writes them."""
    import json

    if isinstance(value, dict):
        return [line for k, v in value.items() for line in setting_lines(f"{key}.{k}" if key else k, v)]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [line for i, v in enumerate(value) for line in setting_lines(f"{key}.{i + 1}", v)]
    if value is None:
        return [f"{key} = (not set)"]
    return [f"{key} = {json.dumps(value) if not isinstance(value, bool) else str(value).lower()}"]


def _history(answer: Mapping[str, Any], _action: str | None) -> list[Any]:
    if not isinstance(answer.get("matches"), list):
        return [pairs(status_rows(answer))]
    older = answer.get("next")
    return [history_table(answer["matches"]),
            *([f"older matches: tablectl history --before {older}"] if older else [])]


def _config(answer: Mapping[str, Any], action: str | None) -> list[Any]:
    if "value" in answer:
        return ["\n".join(setting_lines(str(answer.get("key") or ""), answer["value"])) or "(nothing)"]
    if action == "reload":
        return ["reloaded" if answer.get("reloaded") else "not reloaded: the running configuration stays"]
    return [pairs(status_rows(answer))]


def players_shown(answer: Mapping[str, Any], action: str | None) -> list[Any]:
    """`tablectl players`: the list as a table; a change as one line saying what it did."""
    done = answer.get("done")
    if done == "add":
        return [f"added {answer.get('name')}"]
    if done == "rename":
        return [f"{answer.get('was')} is called {answer.get('name')} now"]
    if done == "merge":
        return [f"{answer.get('merged')} merged into {answer.get('name')}: {answer.get('matches_moved')} "
                f"matches moved, both histories kept"]
    if done == "remove":
        return [f"removed {answer.get('name')}: no longer offered; their past matches keep the name"]
    listed = answer.get("players") or []
    if not listed:
        return ["no players yet: tablectl players add NAME, tablectl seat N NAME, or a seat's picker"]
    t = table("player", "matches", "added", right=("matches",))
    for p in listed:
        added = time.strftime("%Y-%m-%d", time.localtime(p.get("added") or 0))
        name = f"{p.get('name')} (removed)" if p.get("removed") else str(p.get("name"))
        t.add_row(*cells(name, p.get("matches"), added))
    return [t]


def _ratings(answer: Mapping[str, Any], action: str | None) -> list[Any]:
    """Each game's rated players, highest shown rating first; and how far the figuring has come."""
    out: list[Any] = []
    if action == "rebuild":
        out.append(f"figures emptied: {answer.get('waiting', 0)} matches to figure again, beside the game "
                   "(tablectl ratings says how far it has come)")
        return out
    for game, entries in (answer.get("games") or {}).items():
        shown = table("who", "rating", "mu", "sigma", "matches", right=("rating", "mu", "sigma", "matches"))
        shown.title = str(answer.get("titles", {}).get(game, game))
        for e in entries:
            shown.add_row(*cells(e["who"], f"{e['shown']:.1f}", f"{e['mu']:.1f}", f"{e['sigma']:.2f}",
                                 e["matches"]))
        out.append(shown)
    if not out:
        out.append("no ratings yet: a match with two or more players has to end first")
    waiting = answer.get("waiting", 0)
    out.append(f"{answer.get('figured', 0)} matches figured"
               + (f", {waiting} still to figure" if waiting else "")
               + (f"; not kept now: {answer['problem']}" if answer.get("problem") else ""))
    return out


PRINTERS: dict[str, Callable[[Mapping[str, Any], str | None], list[Any]]] = {
    "players": players_shown,
    "pairs": lambda answer, _action: [pairs(status_rows(answer))],
    "history": _history,
    "config": _config,
    "seats": lambda answer, _action: seats_table(answer),
    "inputs": lambda answer, _action: inputs_tables(answer),
    "scores": lambda answer, _action: scores_tables(answer),
    "selftest": lambda answer, _action: selftest_tables(answer["selftest"]),
    "firmware": lambda answer, _action: firmware_lines({**answer, "steps": answer.get("steps", [])}),
    "bundle": lambda answer, _action: [f"wrote {answer['file']}, holding {', '.join(answer['holds'])}"],
    "ratings": _ratings,
}
"""How `tablectl` shows each kind of answer, by the name a command's declaration gives
(control/protocol.py `Command.printer`; a test checks every command's is here)."""


def answer_shown(answer: Mapping[str, Any], cmd: str, action: str | None = None) -> list[Any]:
    """What `tablectl CMD` prints for the daemon's answer: its declaration's printer."""
    from ..control.protocol import BY_NAME

    command = BY_NAME.get(cmd)
    return PRINTERS[command.printer if command is not None else "pairs"](answer, action)


# ------------------------------------------------------------------ table-host


def centre_note(game: str) -> str:
    """What reaching the centre means for `game`, where it is not plain (`Game.centre_note`)."""
    from ..engine.game import get

    entry = get(game)
    return f" ({entry.centre_note})" if entry is not None and entry.centre_note else ""


def simulate_shown(r: Mapping[str, Any]) -> list[Any]:
    n = r["players"]
    head = f"{r['game']}, {n} players, seed {r['seed']}, {r['bots']} bots"
    return [head, rounds_table(list(range(1, n + 1)), r["rounds"], r["totals"]),
            winners_line(r["winners"]),
            "endings: " + plain(r["endings"]),
            f"{r['rounds_played']} rounds; {r['centre_share']:.0%} of the cards dealt reached the centre"
            + centre_note(r["game"]),
            f"actions {r['actions']}, refusals {r['refusals']}, "
            f"{r['rounds_per_s']} rounds/s, {r['actions_per_s']} actions/s"]
