"""Between the plays the seats and the matrix speak for the table: join, choose, 3-2-1, scores."""

from __future__ import annotations

import time
from pathlib import Path

from PIL import Image

from firmware_host.config import emulated_config
from firmware_host.engine.options import GAMES
from firmware_host.engine.round import Ending, RoundResult
from firmware_host.table.machine import Phase, Table
from firmware_host.table.matches import new_match
from firmware_host.views.centre import render_word
from firmware_host.views.font import LARGE, draw_centred, draw_text, width
from firmware_host.views.phases import WARNING, countdown_left, phase_centre, phase_seat
from firmware_host.views.seat import (
    render_banner,
    render_countdown,
    render_match_result,
    render_menu,
    render_round_result,
)

S = 1_000_000_000
SIZE = (32, 16)


def same(a: Image.Image | None, b: Image.Image) -> bool:
    return a is not None and a.tobytes() == b.tobytes()


def test_at_rest_every_seat_invites_a_slap() -> None:
    table = Table(4)
    assert all(same(phase_seat(table, s, 0), render_banner("slap to play", big="LIGRETTO")) for s in range(4))
    assert same(phase_centre(table, 0, SIZE, 1.0), render_word("ligretto", (255, 255, 255), SIZE))


def test_the_lobby_shows_seat_1_the_game_menu_and_the_others_where_they_stand() -> None:
    table = Table(4, phase=Phase.LOBBY, joined=[0, 2])
    table.menu, table.game = 1, GAMES[1]
    menu = render_menu("choose the game", list(GAMES), 1, "ALT: START  UP: NAME")
    assert same(phase_seat(table, 0, 0), menu)
    assert same(phase_seat(table, 2, 0), render_banner("seat 3 joined", "game: dice", "players: 2",
                                                       "seat 1 starts", "up or down: your name", big="READY"))
    invite = render_banner("game: dice", "players: 2", "slap to join", "up or down: your name", big="JOIN?")
    assert same(phase_seat(table, 1, 0), invite)
    guest = phase_seat(table, 2, 0)
    table.names[2] = "Zoë"  # a named seat: its name on top, in its own case, as the font can
    named = phase_seat(table, 2, 0)
    assert guest is not None and named is not None
    assert guest.crop((0, 0, 128, 8)).getbbox() is None and named.crop((0, 0, 128, 8)).getbbox() is not None
    assert same(named.crop((0, 8, 128, 64)), guest.crop((0, 8, 128, 64)))


def test_the_countdown_counts_whole_seconds_down_to_go() -> None:
    table = Table(3, phase=Phase.LOBBY, joined=[0, 1, 2])
    table.start(10 * S)
    assert [countdown_left(table, 10 * S + t) for t in (0, S // 2, S, 2 * S + 1, 3 * S)] == [3, 3, 2, 1, 0]
    assert same(phase_seat(table, 1, 11 * S + 1), render_countdown(2, "classic"))
    assert same(phase_centre(table, 11 * S + 1, SIZE, 0.5), render_word("2", (255, 255, 255), SIZE, 0.5))
    table.tick(13 * S)
    assert table.phase is Phase.PLAYING
    assert phase_seat(table, 1, 13 * S) is None and phase_centre(table, 13 * S, SIZE, 1.0) is None


def test_results_show_each_player_their_own_line() -> None:
    table = Table(2, phase=Phase.LOBBY, joined=[1, 0])  # seat 2 joined first: it is player 0
    table.start(0)
    match = table.match
    assert match is not None
    match.results.append(RoundResult(Ending.LIGRETTO, (0,), (7, -3)))
    table.phase = Phase.ROUND_RESULT
    assert same(phase_seat(table, 1, 0), render_round_result(match, 0))
    assert same(phase_seat(table, 0, 0), render_round_result(match, 1))
    table.names[1] = "Ana"  # seat 2, player 0: named on its round end
    assert same(phase_seat(table, 1, 0), render_round_result(match, 0, "Ana"))
    assert not same(phase_seat(table, 1, 0), render_round_result(match, 0))
    table.phase = Phase.MATCH_RESULT
    assert same(phase_seat(table, 0, 0), render_match_result(match, 1))


def top_line(text: str) -> bytes:
    """The seat's top 9 rows as they are with `text` centred there in the 8-pixel font, alone."""
    img = Image.new("1", (128, 9), 0)
    draw_centred(img, 0, text, LARGE)
    return img.tobytes()


def test_the_match_end_names_the_winner_and_a_guest_by_its_seat() -> None:
    """Issue 31: "Zoë wins" on every other seat, drawn as the OLED's font can ("Zoe"); a guest
    who wins is the seat it sat at (seat 1 here is player 1: the player's number is not the seat's)."""
    table = Table(3, phase=Phase.LOBBY, joined=[2, 0, 1])  # seat 3 is player 0, seat 1 player 1
    table.names[2] = "Zoë"
    table.start(0)
    match = table.match
    assert match is not None
    table.phase = Phase.MATCH_RESULT
    match._totals = (9, 4, 1)
    for seat in (0, 1):
        img = phase_seat(table, seat, 0)
        assert img is not None and img.crop((0, 0, 128, 9)).tobytes() == top_line("Zoe WINS")
    assert same(phase_seat(table, 0, 0), render_match_result(match, 1, {0: "Zoë"}, [2, 0, 1]))
    assert not same(phase_seat(table, 0, 0), render_match_result(match, 1))  # "SEAT 1 WINS" no more
    won = phase_seat(table, 2, 0)
    assert won is not None and won.crop((0, 0, 128, 9)).tobytes() == top_line("YOU WIN!")
    match._totals = (1, 9, 4)  # the guest at seat 1 wins
    img = phase_seat(table, 2, 0)
    assert img is not None and img.crop((0, 0, 128, 9)).tobytes() == top_line("SEAT 1 WINS")
    match._totals = (9, 9, 4)  # shared: both named as they sat, on seat 2 (player 2), who lost
    img = phase_seat(table, 1, 0)
    assert img is not None and img.crop((0, 0, 128, 9)).tobytes() == top_line("Zoe & SEAT 1 WIN")


def test_a_long_winners_name_is_cut_to_the_screen_and_a_wide_shared_win_counted() -> None:
    from firmware_host.views.seat import winners_line

    match = new_match("dice", 4, 1, {"rounds": 1})
    match._totals = (1, 9, 4, 2)
    line = winners_line(match, {1: "Maximilian-Alexa"}, [0, 1, 2, 3])
    assert line.endswith(" WINS") and "Maximilian-Alexa".startswith(line[:-5]) and len(line) < 21
    assert width(line, LARGE) <= 128 < width("Maximilian-Alexa WINS", LARGE)
    match._totals = (9, 9, 9, 2)
    assert winners_line(match, {0: "Maximilian", 1: "Alexandra"}, [0, 1, 2, 3]) == "3 SHARE THE WIN"


def test_a_broken_configuration_is_on_every_seat_between_plays() -> None:
    table = Table(2)
    img = phase_seat(table, 0, 0, warning=True)
    plain = phase_seat(table, 0, 0)
    assert img is not None and plain is not None
    bar = img.crop((0, 56, 128, 64))
    assert img.crop((0, 0, 128, 56)).tobytes() == plain.crop((0, 0, 128, 56)).tobytes()
    lit = bar.convert("L").histogram()[255]
    assert 0.6 * 128 * 8 < lit < 128 * 8  # an inverted bar: mostly lit, with dark letters
    assert WARNING == "CONFIG INVALID: TABLECTL"


def test_the_daemon_sends_the_phase_screens_to_the_real_display_drivers(dirs: Path) -> None:
    from firmware_host.service.daemon import Daemon

    daemon = Daemon(emulated_config(2))
    try:
        daemon.config_problem = "configuration invalid, running the last good one: x"
        daemon.screens.show_phase(0)
        expected = phase_seat(daemon.table, 1, 0, warning=True)
        assert same(daemon.screens.phase_seats[1], expected)
        end = time.monotonic() + 10
        while daemon.oleds.status()[1]["frames_sent"] < 1:  # the bus worker wrote it out
            assert time.monotonic() < end, "the seat display never got its frame"
            time.sleep(0.01)
    finally:
        daemon.close()


def _round_end_of_two(names: dict[int, str]) -> Table:
    """Two seats (seat 2 joined first: player 0) at the end of round 1 of 2, seat 1 won a race."""
    from firmware_host.table.referee import Contest

    table = Table(2, phase=Phase.LOBBY, joined=[1, 0])
    table.names.update(names)
    table.start(0)
    match = table.match
    assert match is not None and table.referee is not None
    table.gate.go_ts = 0
    table.referee.contests.append(Contest(1, 0, S, S + 400_000))  # player 1 (seat 1) by 0.4 ms
    match.results.append(RoundResult(Ending.LIGRETTO, (0,), (7, -3)))
    table.phase = Phase.ROUND_RESULT
    return table


def test_a_seats_round_end_says_the_closest_race_and_fastest_reaction_where_there_is_room() -> None:
    """Issue 31: up to 3 players the rows under the scores are free: the closest race (at once)
    and the fastest reaction (once the statistics made it), in the OLED's font."""
    from firmware_host.views.phases import seat_moments

    table = _round_end_of_two({0: "Zoë"})
    assert seat_moments(table) == ["CLOSEST 0.4 MS: Zoe"]
    fastest = {"seat": 2, "name": "seat 2", "ms": 230.4}
    assert seat_moments(table, fastest) == ["CLOSEST 0.4 MS: Zoe", "FASTEST 230 MS: SEAT 2"]
    match = table.match
    assert match is not None
    img = phase_seat(table, 1, 0, fastest=fastest)
    assert same(img, render_round_result(match, 0, None, ["CLOSEST 0.4 MS: Zoe", "FASTEST 230 MS: SEAT 2"]))
    plain = render_round_result(match, 0)
    assert img is not None and img.crop((0, 0, 128, 50)).tobytes() == plain.crop((0, 0, 128, 50)).tobytes()
    for row, line in ((50, "CLOSEST 0.4 MS: Zoe"), (57, "FASTEST 230 MS: SEAT 2")):  # rows 3 and 4
        want = Image.new("1", (128, 7), 0)
        draw_text(want, (2, 0), line)
        assert img.crop((0, row, 128, row + 7)).tobytes() == want.tobytes(), line
    assert plain.crop((0, 50, 128, 64)).getbbox() is None  # without them those rows are dark
    four = new_match("dice", 4, 1, {"rounds": 2})
    four.results.append(RoundResult(Ending.LIGRETTO, (0,), (7, -3, 1, 0)))
    assert same(render_round_result(four, 0, None, ["CLOSEST 0.4 MS: Zoe"]), render_round_result(four, 0))


def test_new_figures_redraw_a_round_end_on_the_seats(dirs: Path) -> None:
    """The statistics' new standings reach the seats' OLEDs at a round's end (StandingsMade), as
    they reach the page: nothing waits for them."""
    from firmware_host.service.daemon import Daemon
    from firmware_host.service.events import StandingsMade

    daemon = Daemon(emulated_config(2))
    try:
        table = daemon.table
        table.phase, table.joined = Phase.LOBBY, [1, 0]
        table.start(0)
        match = table.match
        assert match is not None
        match.results.append(RoundResult(Ending.LIGRETTO, (0,), (7, -3)))
        table.phase = Phase.ROUND_RESULT
        daemon.screens.show_phase(0)
        before = daemon.screens.phase_seats[1]
        assert same(before, render_round_result(match, 0))
        daemon.binding.match_id = 5
        daemon.figurer.standings = {"round": {"match": 5, "round": 1, "problem": None,
                                              "fastest_reaction": {"ms": 99.6, "seat": 2, "name": "guest"}}}
        daemon.screens.standings_made(StandingsMade(), 1)
        shown = render_round_result(match, 0, None, ["FASTEST 100 MS: SEAT 2"])
        assert same(daemon.screens.phase_seats[1], shown) and not same(before, shown)
    finally:
        daemon.close()
