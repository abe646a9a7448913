"""Small builders so tests can lay out a table the way the rulebook describes it."""

from __future__ import annotations

import random
from typing import Any

from firmware_host.engine.game import sight_of
from firmware_host.engine.match import Match
from firmware_host.games.classic.rules import Card, ClassicOptions, ClassicRound, Deal
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
