"""Every registered game, the test game Tiny included, through everything a game must support:
its hooks (each by name), `simulate` and `simulate --sweep`, a scenario file, `watch`, the seat
and centre screens, the terminal's words and key help (with and without the direct buttons),
the live web state (its board in the page's vocabulary) and the page in Chromium (the board
drawn, every colour with its shape). A game that lacks a hook fails here with the hook's name
(docs/games.md lists them)."""

from __future__ import annotations

import json
import os
import random
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiny

from firmware_host.cli import host
from firmware_host.engine.game import Game, find, names, sight_of
from firmware_host.engine.round import RoundBase
from firmware_host.play.watch import watch
from firmware_host.table.bot_players import Bot, Level
from firmware_host.table.machine import Phase, Table, Timing
from firmware_host.table.words import game_name
from firmware_host.views.boards import LOOKS, TYPES
from firmware_host.views.centre import render_centre
from firmware_host.views.live import live_state
from firmware_host.views.readable import centre_words, key_help, seat_words
from firmware_host.views.seat import render_seat

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "firmware_host" / "web" / "static"
CHROMIUM = "/usr/bin/chromium"
S = 1_000_000_000
LETTERS = set("RGBYP")


def _registered_with_tiny() -> tuple[str, ...]:
    tiny.install()
    try:
        return names()
    finally:
        tiny.uninstall()


GAMES = _registered_with_tiny()
"""Every game the table registers, and Tiny (registered by this module's tests, then taken away)."""
ROUND_HOOKS = ("to_centre", "_unshare")
"""What a game's round must define beside its handlers (docs/games.md, "A round's hooks")."""


@pytest.fixture(autouse=True, scope="module")
def with_tiny() -> Iterator[None]:
    tiny.install()
    yield
    tiny.uninstall()


def scenario_files() -> dict[str, Path]:
    """Each game's first scenario file: the built-in games' in scenarios/, Tiny's beside it."""
    out: dict[str, Path] = {}
    for path in [*sorted((ROOT / "scenarios").glob("*.toml")), ROOT / "tests/games/tiny/scenario.toml"]:
        out.setdefault(tomllib.loads(path.read_text())["game"], path)
    return out


def playing(game: str, moves: int = 6) -> Table:
    """A table in play at the game's fewest players (seat 1 a person, the rest bots), each seat
    having made up to `moves` moves its instant bot chose, the round still on (fewer moves for a
    game whose round those would end)."""
    lo, _ = find(game).players
    table = Table(lo + 1, Timing(countdown_ns=3 * S))
    table.new(game)
    table._join(0)
    table.set_bots(lo - 1)
    table.start(0)
    table.tick(3 * S)
    assert table.phase is Phase.PLAYING
    match = table.match
    bots = [Bot(Level.INSTANT, random.Random(seat)) for seat in range(lo)]
    now = 3 * S
    for _ in range(moves):
        for seat in range(lo):
            action = bots[seat].choose(sight_of(match.round, seat), now)
            if action is not None:
                match.apply(action)
            if match.round.result is not None:
                return playing(game, moves - 1)
            now += 10_000_000
    return table


# ---------------------------------------------------------------- its hooks


@pytest.mark.parametrize("hook", Game.REQUIRED)
@pytest.mark.parametrize("game", GAMES)
def test_the_game_has_its_own(game: str, hook: str) -> None:
    assert hook not in type(find(game)).lacks(), f"{game} lacks {hook} (docs/games.md)"


@pytest.mark.parametrize("hook", ROUND_HOOKS)
@pytest.mark.parametrize("game", GAMES)
def test_the_games_round_has_its_own(game: str, hook: str) -> None:
    rnd = playing(game, 0).match.round
    assert getattr(type(rnd), hook) is not getattr(RoundBase, hook), f"{game} lacks {hook} (docs/games.md)"


@pytest.mark.parametrize("game", GAMES)
def test_it_says_when_a_seat_has_a_card_that_fits(game: str) -> None:
    """`playable` (the players' reaction times start from it, docs/players.md) is the game's own,
    and over a round its instant bots play it says yes and no, a bool each time."""
    entry = find(game)
    assert type(entry).playable is not Game.playable, f"{game} lacks playable (docs/games.md)"
    lo, _ = entry.players
    table = playing(game, 0)
    match = table.match
    bots = [Bot(Level.INSTANT, random.Random(seat)) for seat in range(lo)]
    seen: set[bool] = set()
    now = 3 * S
    for _ in range(60):
        for seat in range(lo):
            before = entry.playable(match.round, seat)
            assert type(before) is bool, f"{game}: playable said {before!r}"
            seen.add(before)
            action = bots[seat].choose(sight_of(match.round, seat), now)
            if action is not None and match.apply(action) is None and match.round.result is None:
                after = entry.playable(match.round, seat)
                seen.add(after)
            if match.round.result is not None:
                break
            now += 10_000_000
        if match.round.result is not None:
            break
    assert seen == {True, False}, f"{game}: playable always said {seen}"


def test_a_game_that_lacks_a_hook_is_told_which() -> None:
    class Boardless(tiny.TinyGame):
        name = "boardless"
        board = Game.board

    assert Boardless.lacks() == ["board"]
    with pytest.raises(NotImplementedError, match=r"^boardless lacks board \(docs/games.md\)$"):
        Boardless().board(None, [])
    assert Game.lacks() == list(Game.REQUIRED)  # the bare entry lacks every one

    class Unended(RoundBase):
        game = "unended"

    with pytest.raises(NotImplementedError, match=r"^unended lacks to_centre \(docs/games.md\)$"):
        Unended().to_centre()


def test_every_hook_is_in_the_docs() -> None:
    """docs/games.md lists every hook and class attribute of the entry."""
    text = (ROOT / "docs" / "games.md").read_text()
    hooks = [name for name in vars(Game) if not name.startswith("_") and name not in ("lacks", "lacking")]
    missing = [name for name in hooks if not re.search(rf"`{name}[`(]", text)]
    assert missing == []


def _round_ended(game: str) -> Any:
    """A round of the game's fewest players played by instant bots to its end."""
    table = playing(game, 0)
    match = table.match
    assert match is not None
    bots = [Bot(Level.INSTANT, random.Random(seat)) for seat in range(match.players)]
    now = 3 * S
    while match.round.result is None:
        now += 10_000_000
        acted = False
        for seat in range(match.players):
            action = bots[seat].choose(sight_of(match.round, seat), now)
            if action is not None and match.round.result is None:
                match.apply(action)
                acted = True
        if not acted:
            match.round.wake(now)
        assert now < 3 * S + 3600 * S, f"{game}: the round did not end"
    return match.round


@pytest.mark.parametrize("game", GAMES)
def test_a_scores_parts_add_up_to_it(game: str) -> None:
    """The round-end table shows each score in its parts (`score_parts`): in play and at the
    round's end they add up to the score, and a built-in game says them in its own words."""
    g = find(game)
    rnd = playing(game, 3).match.round
    standing = g.standing(rnd)
    assert [sum(points for _, points in seat) for seat in g.score_parts(rnd)] == list(standing)
    ended = _round_ended(game)
    parts = g.score_parts(ended)
    assert [sum(points for _, points in seat) for seat in parts] == list(ended.result.scores)
    assert all(words and isinstance(words, str) for seat in parts for words, _ in seat)
    if game != "tiny":
        assert type(g).score_parts is not Game.score_parts, f"{game} lacks score_parts (docs/games.md)"


@pytest.mark.parametrize("game", GAMES)
def test_a_replay_says_each_play_in_words(game: str) -> None:
    """A replay's step line says what the seat did (`said`): never `field=value` nor a bare
    `do` word for a built-in game (issue 31's plain words)."""
    g = find(game)
    rnd = _round_ended(game)
    said = {g.said(action) for action in rnd.journal if hasattr(action, "seat")}
    assert said and all(words and "=" not in words and "_" not in words for words in said)
    if game != "tiny":
        assert type(g).said is not Game.said, f"{game} lacks said (docs/games.md)"
        assert not said & set(g.actions), f"{game} says a bare action word: {said & set(g.actions)}"


# ---------------------------------------------------------------- the tools


@pytest.mark.parametrize("game", GAMES)
def test_simulate_plays_it(game: str, capsys: pytest.CaptureFixture[str]) -> None:
    lo, _ = find(game).players
    args = ["simulate", "--game", game, "--players", str(lo), "--rounds", "1", "--seed", "conformance"]
    assert host.main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["game"] == game and report["rounds_played"] == 1 and report["actions"] > 0
    assert 0.0 <= report["centre_share"] <= 1.0 and len(report["totals"]) == lo
    assert host.main(args) == 0
    assert "of the cards dealt reached the centre" in capsys.readouterr().out


@pytest.mark.parametrize("game", GAMES)
def test_simulate_sweeps_it(game: str, capsys: pytest.CaptureFixture[str]) -> None:
    sweep = ["simulate", "--sweep", "--game", game, "--seeds", "1", "--bots", "instant", "--json"]
    assert host.main(sweep) == 0
    report = json.loads(capsys.readouterr().out)
    lo, hi = find(game).players
    assert report["failures"] == [] and report["rounds"] >= hi - lo + 1


@pytest.mark.parametrize("game", GAMES)
def test_a_scenario_file_of_it_runs(game: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = scenario_files().get(game)
    assert path is not None, f"{game} has no scenario file (scenarios/, docs/scenarios.md)"
    assert host.main(["scenario", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"— {game}, " in out.splitlines()[0] and "round 1" in out and "totals: " in out


@pytest.mark.parametrize("game", GAMES)
def test_watch_shows_a_match_of_it(game: str) -> None:
    lines: list[str] = []
    now = [0.0]
    lo, _ = find(game).players
    report = watch(game, lo, "conformance", Level.MEDIUM, out=lines.append,
                   sleep=lambda s: now.__setitem__(0, now[0] + s), clock=lambda: now[0], pause_s=0.0)
    assert report["rounds"] >= 1 and len(report["totals"]) == lo
    assert lines[0] == "round 1" and lines[-1].startswith("winner")


# ---------------------------------------------------------------- the screens and the words


@pytest.mark.parametrize("game", GAMES)
def test_the_seat_and_centre_screens_draw_it(game: str) -> None:
    table = playing(game)
    match = table.match
    for controller in table.referee.seats:
        seat = render_seat(controller)
        assert seat.size == (128, 64)
        middle = seat.crop((0, 8, 128, 48))  # below the header, above the status line
        assert middle.getbbox() is not None, f"{game}: seat {controller.seat + 1}'s screen shows no game"
    for size in ((32, 16), (32, 32)):
        centre = render_centre(match, size)
        assert centre.size == size and centre.getbbox() is not None, f"{game}: the centre is blank at {size}"


@pytest.mark.parametrize("game", GAMES)
def test_the_terminal_says_it_in_words(game: str) -> None:
    table = playing(game)
    assert centre_words(table).plain.strip()
    assert seat_words(table, 0).plain.strip()
    plain, direct = key_help(table), key_help(table, direct=True)  # a keyboard seat has keys 1-5
    name = game_name(game)  # as players call it (table/words.py)
    assert plain.startswith(f"{name}: ") and len(plain) > len(name) + 2
    assert direct.startswith(f"{name}: ") and len(direct) >= len(plain)
    for rnd in (None, table.match.round):  # the lobby's help (no round yet), and the round's
        assert find(game).keys(rnd, False) and find(game).keys(rnd, True)


# ---------------------------------------------------------------- the web


def check_card(card: Any, where: str) -> None:
    if card is None:
        return
    assert isinstance(card, dict), where
    assert card.get("look") is None or card["look"] in LOOKS, f"{where}: look {card.get('look')!r}"
    if "c" in card:
        assert card["c"] in LETTERS and "v" in card, f"{where}: a card is a colour letter and a value"


def check_element(element: Any, where: str) -> None:
    kind = element.get("type")
    assert kind in TYPES, f"{where}: no element {kind!r} (views/boards.py)"
    if kind in ("piles", "cards"):
        for i, card in enumerate(element["cards"]):
            check_card(card, f"{where}.cards[{i}]")
    elif kind == "rows":
        for r, line in enumerate(element["rows"]):
            for i, card in enumerate(line):
                check_card(card, f"{where}.rows[{r}][{i}]")
    elif kind == "grid":
        assert element["cols"] >= 1
        for sq in element["squares"]:
            assert sq["c"] in LETTERS and {"r", "col"} <= set(sq), f"{where}: {sq}"
    elif kind == "tile":
        assert set(element["halves"]) <= LETTERS
    elif kind == "count":
        assert element["text"]


@pytest.mark.parametrize("game", GAMES)
def test_the_live_state_has_its_board_in_the_pages_words(game: str) -> None:
    table = playing(game)
    state = json.loads(json.dumps(live_state(table, 3 * S, "playing")))  # what the page gets
    board = state["board"]
    assert state["game"] == game and state["title"] == (find(game).title or game)
    assert isinstance(board["head"], str) and board["middle"], f"{game}: nothing in the middle"
    for i, element in enumerate(board["middle"]):
        check_element(element, f"middle[{i}]")
    seats = [s["seat"] for s in state["seats"]]
    assert sorted(h["seat"] for h in board["hands"]) == sorted(seats)  # every seat, numbered from 1
    for hand in board["hands"]:
        assert hand["holding"], f"{game}: seat {hand['seat']} holds nothing on the page"
        for i, element in enumerate(hand["holding"]):
            check_element(element, f"seat {hand['seat']}.holding[{i}]")


# Cards, dice, board squares and halves whose colour is shown with no shape beside it (a covered
# square shows its owner, a token square its token: the colour under them is out of play).
COLOUR_ALONE = """() => [...document.querySelectorAll('.card, .square, .half')]
  .filter(n => ['red', 'green', 'blue', 'yellow', 'purple'].some(c => n.classList.contains(c)))
  .filter(n => !n.classList.contains('covered') && !n.querySelector('.token'))
  .filter(n => !n.querySelector(':scope > .shape')).map(n => n.outerHTML.slice(0, 80))"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: `./dev test` installs it as root (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        yield chromium
        chromium.close()


def serve_page(route: Any) -> None:
    """The page's own files, as the web view serves them (nothing else is asked for)."""
    url = route.request.url
    name = url.rsplit("/", 1)[-1] if "/static/" in url else "index.html"
    kind = {"html": "text/html", "css": "text/css", "js": "text/javascript",
            "svg": "image/svg+xml"}[name.rsplit(".", 1)[1]]
    route.fulfill(body=(STATIC / name).read_bytes(), content_type=kind)


@pytest.mark.parametrize("game", GAMES)
def test_the_page_draws_its_board(browser: Any, game: str) -> None:
    table = playing(game)
    state = json.loads(json.dumps(live_state(table, 3 * S, "playing")))
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.add_init_script("window.WebSocket = function () { return {}; };")  # no table behind it
    try:
        page.route("http://table.test/**", serve_page)
        page.goto("http://table.test/")
        page.wait_for_function("() => typeof draw === 'function'")
        page.evaluate("(s) => draw(s)", state)
        assert errors == []
        assert page.text_content("#game") == state["title"]
        assert page.text_content("#board .board-head") == state["board"]["head"]
        assert page.locator("#board > *").count() > 1, f"{game}: the page drew nothing in the middle"
        assert page.locator(".seat").count() == len(state["seats"])
        assert page.locator(".seat .holding").count() == len(state["seats"])  # every seat's own
        assert page.evaluate(COLOUR_ALONE) == []  # every colour a person needs also has its shape
    finally:
        page.close()
