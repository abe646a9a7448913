"""Small builders so tests can lay out a table the way the rulebook describes it."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

from firmware_host.engine.codec import to_dict
from firmware_host.engine.game import sight_of
from firmware_host.engine.match import Match
from firmware_host.games.classic.rules import Card, ClassicOptions, ClassicRound, Deal
from firmware_host.games.dice.rules import DieColour, PlaceDie, Reroll
from firmware_host.games.domino.rules import Board, DominoCard, DominoColour, DominoOptions, DominoRound
from firmware_host.play.simulate import make_bots
from firmware_host.service.journal import Store
from firmware_host.table.arbiter import Arbiter
from firmware_host.table.presses import Event, InputEvent
from firmware_host.table.referee import Referee

OTHER_STACK = "R10 G10 B10 Y10 R9 G9 B9 Y9 R8 G8"


def cards(text: str) -> list[Card]:
    return [Card.parse(t) for t in text.split()]


def deal(row: str = "", stack: str = OTHER_STACK, hand: str = "", discard: str = "",
         rows: list[str] | None = None) -> Deal:
    """Row cards left to right; stack, hand and discard listed top first."""
    places = [cards(p) for p in rows] if rows is not None else [[c] for c in cards(row)]
    return Deal(row=places, stack=cards(stack)[::-1], hand=cards(hand)[::-1],
                discard=cards(discard)[::-1])


def classic(*deals: Deal, piles: list[str] = (), seed: int = 1, **options: Any) -> ClassicRound:
    """A round from explicit deals; piles as 'seat:card' runs with seats from 0."""
    laid = []
    for pile in piles:
        laid.append([(int(t.split(":")[0]), Card.parse(t.split(":")[1])) for t in pile.split()])
    return ClassicRound(len(deals), ClassicOptions(**options), random.Random(seed), list(deals), laid)


US = 1_000
K = DominoCard.parse


def waiting_domino_round(**kw: object) -> DominoRound:
    """Nothing fits anywhere, but a joker on (0, 1) would let RB go on (1, 1)+(1, 2)."""
    rows = ["RYGBPR", "YRBGYP", "GBRPRY", "BPYRGB"]
    colours = {(r, c): DominoColour.parse(ch) for r, row in enumerate(rows) for c, ch in enumerate(row)}
    b = Board("test", colours, ((0, 0), (0, 5), (3, 0), (3, 5)))
    return DominoRound(2, DominoOptions(**kw), random.Random(1), b,  # type: ignore[arg-type]
                       hands=[[K("RB")], [K("RB")]], jokers=[1, 0])


def race_for_b2(seed: int) -> tuple[Referee, list]:
    """Both seats hold a B2 at the left of their row; a B1 pile waits for it.

    Seat 1 presses first, seat 2 only 0.1 ms later: less than epsilon, a tie."""
    deals = [deal("B2 G6 G7", hand="R3 R4 R1"), deal("B2 Y5 Y8", hand="G3 G4 G1")]
    setup = {"deals": deals, "piles": [[(0, Card.parse("B1"))]]}
    match = Match("classic", 2, 1, {"rounds": 1}, setup=setup)
    referee = Referee(match, Arbiter(window_ns=5_000 * US, epsilon_ns=200 * US, seed=seed))
    referee.on_input(InputEvent(Event.PRESS, 0, "slap", 1_000 * US))
    referee.on_input(InputEvent(Event.PRESS, 1, "slap", 1_100 * US))
    return referee, referee.decide(10_000 * US)


def seed_where_the_later_press_wins() -> int:
    for seed in range(100):
        _, outcomes = race_for_b2(seed)
        if outcomes[0].press.seat == 1:
            return seed
    raise AssertionError("no draw put the later press first")  # pragma: no cover


def play_dice_round(match) -> None:
    from firmware_host.games.dice.rules import PlaceDie, Reroll

    while match.round.result is None:
        for seat in range(match.players):
            fit = next((d for d in match.round.dice[seat] if match.round.fits(d)), None)
            match.apply(PlaceDie(seat, fit.colour, fit.face) if fit else Reroll(seat))
            if match.round.result is not None:
                break


def play_recorded(store: Store, match_id: int, match, actions: int, seed: int = 1,
                  rounds: int | None = None) -> int:
    """Bots play `actions` accepted actions (or until `rounds` rounds have ended), each
    recorded; rounds recorded as they end."""
    bots = make_bots(match.players, "hard", seed)
    rng = random.Random(seed)
    done = 0
    now = 0
    while done < actions and not match.is_over and (rounds is None or len(match.results) < rounds):
        if match.round.result is not None:
            match.next_round()
        seat = rng.randrange(match.players)
        action = bots[seat].choose(sight_of(match.round, seat), now)
        now += 1_000_000
        if action is None or match.apply(action) is not None:
            continue
        store.record(match_id, match.round_no, action)
        done += 1
        if match.round.result is not None:
            store.round_over(match_id, match)
    return done


# ---------------------------------------------------------------- players' statistics

MS = 1_000_000

# Two Dice matches stored as the table stores them, whose stamps give each figure by hand
# (tests/service/test_statistics.py works them out; tests/web/test_standings.py shows them).
R, B, Y = DieColour.RED, DieColour.BLUE, DieColour.YELLOW
OPTIONS = json.dumps({"rounds": 1, "handicap": [2, 2]})
# Seed 4 deals seat 1 red 2 and blue 2, seat 2 blue 3 and yellow 6: nothing fits at the deal.
MATCH_A = [  # Ben (seat 2) wins
    Reroll(1, 1000 * MS, (1, 1)),  # Ben's blue 1 and yellow 1 fit: his clock starts at 1000 ms
    PlaceDie(1, B, 1, 1300 * MS),  # Ben: 300 ms; Ana's blue 2 fits: her clock starts at 1300 ms
    PlaceDie(0, B, 2, 1350 * MS),  # Ana: 50 ms
    PlaceDie(1, Y, 1, 1400 * MS),  # fitted all along: no reaction; Ben's last die ends it
]
MATCH_B = [  # Ana (seat 1) wins
    Reroll(0, 500 * MS, (1, 1)),  # Ana's red 1 and blue 1 fit: her clock starts at 500 ms
    PlaceDie(0, R, 1, 510 * MS),  # Ana: 10 ms
    PlaceDie(0, B, 1, 600 * MS),  # no clock running; her last die ends the round
]
RACES_A = [{"kind": "first", "winner": 1, "winner_ts": 1300 * MS, "loser": 0,
            "loser_ts": 1300 * MS + 800_000}]
RACES_B = [{"kind": "tie", "winner": 0, "winner_ts": 510 * MS + 40_000, "loser": 1, "loser_ts": 510 * MS},
           {"kind": "false_start", "loser": 1, "loser_ts": 1 * MS, "go_ns": 2 * MS}]


StoredMatch = tuple[int, float, list[Any], list[dict[str, Any]], list[int], list[int]]


def stored_dice_matches(db: Path, matches: list[StoredMatch],
                        seated: dict[int, list[tuple[int, str, int | None]]],
                        names: dict[int, str] | None = None) -> None:
    """Finished Dice matches, as the table writes them: (id, start, actions, races, scores,
    winners); `seated[id]` each player's (seat from 1, kind, player id)."""
    Store(db).close()
    with sqlite3.connect(db) as raw:
        names = names or {1: "Ana", 2: "Ben"}
        raw.executemany("INSERT OR IGNORE INTO players VALUES (?, ?, ?, 0, NULL, NULL)",
                        [(pid, name, name.casefold()) for pid, name in names.items()])
        for mid, started, actions, races, scores, winners in matches:
            raw.execute("INSERT INTO matches (id, game, players, seed, options, boards, started, ended, "
                        "winners, seats, bots) VALUES (?, 'dice', 2, '4', ?, '[]', ?, ?, ?, '[0, 1]', '{}')",
                        (mid, OPTIONS, started, started + 60, json.dumps(winners)))
            raw.execute("INSERT INTO rounds VALUES (?, 0, 'last_die', ?, ?, ?)",
                        (mid, json.dumps(winners), json.dumps(scores), started + 60))
            raw.executemany("INSERT INTO journal VALUES (?, ?, 0, ?)",
                            [(mid, n, json.dumps(to_dict(a))) for n, a in enumerate(actions)])
            raw.executemany("INSERT INTO races VALUES (?, ?, 0, 0, ?)",
                            [(mid, n, json.dumps(r)) for n, r in enumerate(races)])
            raw.executemany("INSERT INTO match_players VALUES (?, ?, ?, ?, ?, ?, ?)",
                            [(mid, p, seat, kind, pid, pid,
                              names.get(pid or 0, "bot (hard)" if kind == "bot" else kind))
                             for p, (seat, kind, pid) in enumerate(seated[mid])])


NOW = 1_800_000_000.0


