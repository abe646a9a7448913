"""Bots press the emulated pins as people do: only while their match is played."""

from __future__ import annotations

import queue
import time
from pathlib import Path
from typing import Any

from firmware_host.config import emulated_config
from firmware_host.service.daemon import Daemon
from firmware_host.service.events import AbortAsked
from firmware_host.table.machine import Phase
from firmware_host.table.presses import Event, InputEvent

MS = 1_000_000
S = 1_000_000_000


def _taken(daemon: Daemon) -> list[Any]:
    """The events the pins put on the loop's queue since it was last emptied."""
    out = []
    while True:
        try:
            out.append(daemon.loop.events.get_nowait())
        except queue.Empty:
            return out


def _turn(daemon: Daemon, events: list[Any], now: int) -> None:
    """One turn of the loop at `now`, with these events, without its clock or its wait."""
    for event in events:
        daemon.loop.dispatch(event, now)
    daemon.loop.settle(now)


def _seat_1_and_bots_playing(daemon: Daemon, *levels: str) -> int:
    """Seat 1 slaps to join, bots at the given levels fill seats 2..; the match is played from
    the returned moment."""
    table = daemon.table
    t = time.monotonic_ns()
    daemon.buttons.tap(0, "slap", t, 40 * MS)  # seat 1 wakes the table and joins
    _turn(daemon, _taken(daemon), t)
    assert table.joined == [0]
    for level in levels:
        table.add_bot(level)
    table.start(t + 1 * S)
    t += 5 * S
    _turn(daemon, [], t)  # the match is written as it begins, with its bots
    assert table.phase is Phase.PLAYING
    return t


def test_a_bots_presses_after_an_abort_make_no_one_a_person(dirs: Path) -> None:
    """Seen once at the laptop: q, a restart, then x y, and the lobby showed a bot's seat as a
    joined person. The cause: a bot's turn (cursor moves, then a slap) was tapped on its pins all
    at once, stamped 80 ms apart into the future. An abort taken before those presses counted
    them in the lobby, stamped after it opened: the bot's slap joined its seat as a person."""
    daemon = Daemon(emulated_config(4))
    try:
        table = daemon.table
        t = _seat_1_and_bots_playing(daemon, "medium", "medium", "medium")
        end = t + 60 * S
        while True:  # until a bot is in the middle of a turn: presses of it still to come
            t += 10 * MS
            assert t < end, "no bot ever took a turn of more than one press"
            events = _taken(daemon)
            ahead = [e for e in events if isinstance(e, InputEvent) and e.kind is Event.PRESS and e.ts > t]
            if ahead or any(getattr(daemon.bots, "pending", {}).values()):
                break
            _turn(daemon, events, t)
        _turn(daemon, [AbortAsked()], t + 1 * MS)  # x y, taken before the bot's presses
        assert table.phase is Phase.LOBBY
        for step in range(1, 40):  # the next second of the loop: the bots' pins fall quiet
            _turn(daemon, events if step == 1 else _taken(daemon), t + step * 25 * MS)
        assert table.joined == [0] and sorted(table.bots) == [1, 2, 3]
        late = [e for e in table.trace if e.get("input") == str(Event.PRESS) and e["seat"] != 1
                and e["ts_ns"] > t + 1 * MS]
        assert late == []  # no bot pressed anything once its match was over
    finally:
        daemon.close()


def test_a_resumed_match_keeps_its_bots_bots_after_an_abort(dirs: Path) -> None:
    """The other half of that report: q, a restart, x y. The resumed match and the lobby after
    its abort seat the same person and bots as the match that was left."""
    daemon = Daemon(emulated_config(4))
    try:
        _seat_1_and_bots_playing(daemon, "hard", "easy")
    finally:
        daemon.close()  # q: the loop stops, the match stays unfinished in the store
    again = Daemon(emulated_config(4))
    try:
        table = again.table
        assert table.match is not None and table.joined == [0]
        assert {p: str(b.level) for p, b in table.bots.items()} == {1: "hard", 2: "easy"}
        t = time.monotonic_ns()
        _turn(again, [AbortAsked()], t)  # x y
        assert table.phase is Phase.LOBBY and table.joined == [0]
        assert {p: str(b.level) for p, b in table.bots.items()} == {1: "hard", 2: "easy"}
        assert table.seat_of_player == [0, 1, 2]
    finally:
        again.close()


def test_no_edge_reaches_the_table_before_the_moment_it_carries(dirs: Path) -> None:
    """It was: a bot's release was put on its pins with its press, stamped 35 ms ahead, so the
    loop took it before it happened and `tablectl inputs` showed a negative "after". Now the
    buttons are let go by the loop's timer once the hold is over: each release comes."""
    daemon = Daemon(emulated_config(4))
    try:
        table = daemon.table
        t = _seat_1_and_bots_playing(daemon, "medium", "medium", "medium")
        for _ in range(600):  # six seconds of the loop, a turn each 10 ms
            t += 10 * MS
            _turn(daemon, _taken(daemon), t)
        inputs = [e for e in table.trace if "input" in e and e["seat"] != 1]
        pressed = [e for e in inputs if e["input"] == str(Event.PRESS)]
        released = [e for e in inputs if e["input"] == str(Event.RELEASE)]
        assert len(pressed) >= 10 and len(released) >= len(pressed) - 3  # the last ones still held
        early = [e for e in inputs if e["received_ns"] < e["ts_ns"]]
        assert early == []
        for seat in (2, 3, 4):  # each press let go 35 ms after it, in the order pressed
            down = sorted(e["ts_ns"] for e in pressed if e["seat"] == seat)
            up = sorted(e["ts_ns"] for e in released if e["seat"] == seat)
            assert [u - d for d, u in zip(down, up, strict=False)] == [35 * MS] * len(up), seat
    finally:
        daemon.close()


def test_a_bot_presses_its_reaction_time_after_the_look_that_chose_the_action(dirs: Path) -> None:
    """The table's bots time their presses as `simulate` does: a look, a choice, and the first
    press the delay drawn for that action later (a planned play at the routine pace); the next
    look only once the turn is pressed. It was: the press at the look, the delay after it."""
    daemon = Daemon(emulated_config(4))
    try:
        table = daemon.table
        t = _seat_1_and_bots_playing(daemon, "medium", "medium", "medium")
        looks: dict[int, list[tuple[int, Any, int]]] = {}  # seat (from 1) -> (look at, action, delay)
        for player, bot in table.bots.items():
            seat = table.seat_of_player[player] + 1
            choose, delay = bot.choose, bot.delay_ns
            asked: list[Any] = []

            def chose(sight: Any, now: int, seat: int = seat, choose: Any = choose,
                      asked: list[Any] = asked) -> Any:
                action = choose(sight, now)
                asked.append((now, action))
                return action

            def drew(action: Any, seat: int = seat, delay: Any = delay, asked: list[Any] = asked) -> int:
                assert action is not None and asked and asked[-1][1] == action  # the action just chosen
                ns = delay(action)
                looks.setdefault(seat, []).append((asked[-1][0], action, ns))
                return ns

            bot.choose, bot.delay_ns = chose, drew  # type: ignore[method-assign]
        for _ in range(1000):  # ten seconds of the loop, a turn each 10 ms
            t += 10 * MS
            _turn(daemon, _taken(daemon), t)
        pressed = [e for e in table.trace if e.get("input") == str(Event.PRESS) and e["seat"] != 1]
        checked = 0
        for seat, made in looks.items():
            mine = sorted(e["ts_ns"] for e in pressed if e["seat"] == seat)
            for (at, _action, ns), (later, _, _) in zip(made, [*made[1:], (None, None, None)], strict=True):
                first = [ts for ts in mine if ts >= at]
                if later is None or not first:
                    continue
                # The first press after the look comes once the delay has passed (to the loop's
                # 10 ms turn), and the next look only after it.
                assert at + ns <= first[0] < at + ns + 10 * MS + 1, (seat, at, ns, first[0])
                assert later > first[0]
                checked += 1
        assert checked >= 6
    finally:
        daemon.close()
