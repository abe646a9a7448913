"""What the live page is given between plays (views/live.py): the round's end ranked with each
score's parts, its closest race and the time to the next round; the match's podium; a race in
words; the attract screen's leaderboard and highlights, the podium's rating changes and the
match's fastest reaction from what the statistics last said (views/standings.py)."""

from __future__ import annotations

import random

from firmware_host.engine.game import find, sight_of
from firmware_host.table.bot_players import Bot, Level
from firmware_host.table.machine import Phase, Table, Timing
from firmware_host.table.referee import Contest
from firmware_host.views.live import live_state, margin_words, player_name, seat_name
from firmware_host.views.standings import highlights, leaderboard

S = 1_000_000_000


def _to_round_end(rounds: int) -> tuple[Table, int]:
    """Seat 1 a person, seat 2 a bot, a Dice match of `rounds` played to its first round's end."""
    table = Table(3, Timing(countdown_ns=3 * S, round_result_ns=10 * S))
    table.new("dice", {"rounds": rounds})
    table._join(0)
    table.set_bots(1)
    table.start(0)
    table.tick(3 * S)
    assert table.phase is Phase.PLAYING and table.match is not None
    match = table.match
    bots = [Bot(Level.INSTANT, random.Random(seat)) for seat in range(2)]
    now = 3 * S
    while match.round.result is None:
        now += 10_000_000
        for seat in range(2):
            action = bots[seat].choose(sight_of(match.round, seat), now)
            if action is not None and match.round.result is None:
                match.apply(action)
    table.tick(now)
    return table, now


def test_the_round_end_ranks_the_round_with_each_scores_parts_and_counts_down() -> None:
    table, now = _to_round_end(2)
    assert table.phase is Phase.ROUND_RESULT
    state = live_state(table, now + 2 * S + 1, "")
    match = table.match
    assert match is not None
    scores = list(match.results[-1].scores)
    end = state["round_end"]
    assert end["round"] == 1 and end["next_in"] == 8  # 10 s to the next round, 2 s and a bit gone
    assert [r["points"] for r in end["ranked"]] == sorted(scores, reverse=True)
    assert [r["place"] for r in end["ranked"]] == [1, 2]
    for row in end["ranked"]:
        assert sum(p["points"] for p in row["parts"]) == row["points"]
        assert row["total"] == row["points"]  # the first round
    first = end["ranked"][0]
    held = [len(hand) for hand in match.round.dice]
    assert first["parts"] == [{"words": f"out first: the others' {sum(held)} dice", "points": sum(held)}]
    assert {r["name"] for r in end["ranked"]} == {"seat 1", "bot"}
    assert end["closest"] is None and end["fastest"] is None  # no race in this round
    assert state["board"] == find("dice").board(match.round, table.seat_of_player)  # the final board stays
    assert state["podium"] is None


def test_the_closest_race_of_the_round_and_the_newest_race_in_words() -> None:
    table, now = _to_round_end(2)
    assert table.referee is not None
    go = table.gate.go_ts
    assert go is not None
    table.referee.contests.extend([Contest(0, 1, go + S, go + S + 800_000),
                                   Contest(1, 0, go + 2 * S, go + 2 * S + 40_000, tie=True)])
    state = live_state(table, now, "")
    closest = state["round_end"]["closest"]
    assert closest == {"winner": 2, "loser": 1, "winner_name": "bot", "loser_name": "seat 1", "tie": True,
                       "margin_ns": 40_000, "margin": "40 µs", "ts_ns": go + 2 * S + 40_000}
    assert state["race"] == closest  # the newest
    table.referee.contests.append(Contest(0, 1, go - S, go - S + 1))  # before this round's go
    assert live_state(table, now, "")["round_end"]["closest"] == closest


def test_margins_in_words() -> None:
    assert [margin_words(n) for n in (400_000, 800_000, 1_250_000, 40_000, -400_000)] == \
        ["0.4 ms", "0.8 ms", "1.2 ms", "40 µs", "0.4 ms"]


def test_the_match_end_has_a_podium_by_totals() -> None:
    table, now = _to_round_end(1)
    assert table.phase is Phase.MATCH_RESULT
    match = table.match
    assert match is not None
    state = live_state(table, now, "")
    podium = state["podium"]
    assert [p["total"] for p in podium] == sorted(match.totals, reverse=True)
    assert podium[0]["place"] == 1 and podium[0]["seat"] == table.seat_of_player[match.winners[0]] + 1
    assert all(p["rating"] is None for p in podium)  # no figures yet (views/standings.py)
    assert state["round_end"]["next_in"] is None  # no next round


def test_the_attract_screen_has_the_leaderboard_and_highlights_places() -> None:
    table = Table(4, Timing())
    state = live_state(table, 0, "", "http://192.168.1.23/")
    assert state["phase"] == "attract"
    assert state["leaderboard"] == {"tonight": [], "all_time": []} and state["highlights"] == []
    assert state["qr"] and state["reachable"] and state["race"] is None and state["round_end"] is None
    for here in ("http://127.0.0.1:8080/", "http://[::1]:8080/", "http://localhost/", ""):
        state = live_state(table, 0, "", here)
        assert state["qr"] is None and not state["reachable"], here  # a phone cannot open it
    assert live_state(table, 0, "", "http://table.local/")["reachable"]


STANDINGS = {  # as the statistics' keeper makes it (service/statistics.py, Figurer.standings)
    "leaderboard": {"since": 0.0, "titles": {"dice": "Dice"},
                    "tonight": [{"player": 2, "name": "Ben", "matches": 3, "wins": 2, "rounds": 9,
                                 "points_per_round": 1.5},
                                {"player": 1, "name": "Ana", "matches": 3, "wins": 1, "rounds": 9,
                                 "points_per_round": 0.5}],
                    "all_time": {"dice": [{"player": 1, "name": "Ana", "shown": 7.25, "mu": 30.0,
                                           "sigma": 7.5, "matches": 40}],
                                 "classic": [{"player": 2, "name": "Ben", "shown": 3.0, "mu": 25.0,
                                              "sigma": 7.33, "matches": 2}]}},
    "highlights": {"match": 7, "game": "dice",
                   "closest_race": {"margin_ms": 0.04, "seat": 2, "name": "bot (hard)"},
                   "fastest_reaction": {"ms": 212.4, "seat": 1, "name": "Ana"}},
    "changes": {"match": 7, "seats": {1: 1.25, 2: -0.5}},
    "round": {"match": 7, "round": 1, "fastest_reaction": {"ms": 230.5, "seat": 1, "name": "Ana"},
              "problem": None},
}


def test_the_attract_screen_shows_the_statistics_leaderboard_and_highlights() -> None:
    table = Table(4, Timing())
    table.game = "dice"
    state = live_state(table, 0, "", "", STANDINGS, None)
    assert state["leaderboard"] == {
        "tonight": [{"player": 2, "name": "Ben", "rating": None, "wins": 2, "matches": 3},  # unrated in dice
                    {"player": 1, "name": "Ana", "rating": 7.25, "wins": 1, "matches": 3}],
        "all_time": [{"player": 1, "name": "Ana", "rating": 7.25, "wins": None, "matches": 40}]}  # dice's
    assert state["highlights"] == ["bot (hard) won a race by 40 µs", "Ana reacted fastest: 212 ms"]
    table.game = "classic"
    assert [e["name"] for e in live_state(table, 0, "", "", STANDINGS)["leaderboard"]["all_time"]] == ["Ben"]
    assert leaderboard(None, "tonight", "dice") == [] and highlights(None) == []  # not looked yet
    guest = {"highlights": {**STANDINGS["highlights"], "fastest_reaction": None,
                            "closest_race": {"margin_ms": 1.25, "seat": 3, "name": "guest"}}}
    assert highlights(guest) == ["seat 3 won a race by 1.2 ms"]


def test_the_podium_and_the_last_round_show_the_figures_of_this_match_only() -> None:
    table, now = _to_round_end(1)
    assert table.phase is Phase.MATCH_RESULT and table.seat_of_player == [0, 1]
    state = live_state(table, now, "", "", STANDINGS, 7)
    assert {p["seat"]: p["rating"] for p in state["podium"]} == {1: 1.25, 2: -0.5}
    assert state["round_end"]["fastest"] == {"seat": 1, "name": "Ana", "ms": 230.5}  # the round's: not 212.4
    for other in (6, None):  # another match's figures (this one's are not made yet): nothing shown
        state = live_state(table, now, "", "", STANDINGS, other)
        assert all(p["rating"] is None for p in state["podium"]) and state["round_end"]["fastest"] is None


def test_every_rounds_end_shows_that_rounds_fastest_reaction_once_it_is_figured() -> None:
    """Issue 31: not only the match's last round: round 1 of 2 shows round 1's fastest reaction,
    and nothing of another round or match, nor before the statistics have replayed it."""
    table, now = _to_round_end(2)
    assert table.phase is Phase.ROUND_RESULT and table.match is not None and not table.match.is_over
    state = live_state(table, now, "", "", STANDINGS, 7)
    assert state["round_end"]["fastest"] == {"seat": 1, "name": "Ana", "ms": 230.5}
    assert state["podium"] is None
    guest = {"round": {**STANDINGS["round"], "fastest_reaction": {"ms": 98.0, "seat": 2, "name": "guest"}}}
    assert live_state(table, now, "", "", guest, 7)["round_end"]["fastest"] == {"seat": 2, "name": "seat 2",
                                                                                "ms": 98.0}
    bot = {"round": {**STANDINGS["round"], "fastest_reaction": {"ms": 1.0, "seat": 2, "name": "bot (hard)"}}}
    assert live_state(table, now, "", "", bot, 7)["round_end"]["fastest"] == {"seat": 2, "name": "bot",
                                                                              "ms": 1.0}
    for standings, match_id in (({"round": {**STANDINGS["round"], "round": 2}}, 7), (STANDINGS, 8),
                                (None, 7), ({"round": {**STANDINGS["round"], "fastest_reaction": None}}, 7)):
        assert live_state(table, now, "", "", standings, match_id)["round_end"]["fastest"] is None


def test_one_function_names_a_seat_for_every_place_on_the_page() -> None:
    table, now = _to_round_end(1)  # seat 1 a person, seat 2 a bot
    table.names[0] = "Ana"
    assert (player_name(table, 0), seat_name(table, 0)) == ("Ana", "Ana")
    assert (player_name(table, 1), seat_name(table, 1)) == (None, "bot")
    state = live_state(table, now, "")
    assert [s["name"] for s in state["seats"]] == [None if p else "Ana" for p in (0, 1)]  # the banner's
    assert {r["seat"]: r["name"] for r in state["round_end"]["ranked"]} == {1: "Ana", 2: "bot"}
    assert {p["seat"]: p["name"] for p in state["podium"]} == {1: "Ana", 2: "bot"}
    del table.names[0]
    assert (player_name(table, 0), seat_name(table, 0)) == (None, "seat 1")  # a guest


def test_the_terminal_says_the_rounds_closest_race_and_fastest_reaction() -> None:
    """Issue 31: the terminal's round end says both, in the web's words, under the totals."""
    from firmware_host.service.frontend import Sight
    from firmware_host.ui.words import words
    from firmware_host.views.live import round_moments

    table, now = _to_round_end(2)
    table.names[0] = "Ana"
    assert table.referee is not None and table.gate.go_ts is not None
    go = table.gate.go_ts
    table.referee.contests.extend([Contest(1, 0, go + S, go + S + 800_000), Contest(0, 1, go + 2 * S,
                                                                                     go + 2 * S + 400_000)])
    assert round_moments(table) == ["Closest race: Ana (seat 1) beat bot (seat 2) by 0.4 ms"]
    moments = round_moments(table, STANDINGS, 7)
    assert moments == ["Closest race: Ana (seat 1) beat bot (seat 2) by 0.4 ms",
                       "Fastest reaction: Ana (seat 1), 230 ms"]
    shown = words(Sight(table, now, "", standings=STANDINGS, match_id=7)).centre
    assert shown is not None and shown.plain.endswith("\n" + "\n".join(moments))
    assert "totals:" in shown.plain.split("Closest race")[0]
    table.referee.contests.clear()
    shown = words(Sight(table, now, "", standings=None, match_id=7)).centre
    assert shown is not None and "Closest race" not in shown.plain and "Fastest" not in shown.plain
