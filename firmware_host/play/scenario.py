"""Scenario files: a match from explicit cards, dice or board, and timed seat actions.

The format is documented in docs/scenarios.md. Seats are numbered from 1 in
files and output, as on the table. Actions run in (time, file order) order
through the real match layer; `expect` fields turn a scenario into a check.
"""

from __future__ import annotations

import math
import random
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..game.arbiter import Arbiter, Decision
from ..game.catalog import new_match
from ..rules.classic import DECK, STACK_SIZE, Card, Deal, row_size
from ..rules.codec import from_dict, to_dict
from ..rules.common import Refusal, RulesError, is_digits, is_whole
from ..rules.crazy import CrazyCard, CrazyColour, CrazyRound, CrazySetup, DiscardCrazy, PlayCrazy
from ..rules.dice import DICE_PER_COLOUR, FACES, DiceOptions, Die, DieColour, dice_counts
from ..rules.domino import SET, DominoCard
from ..rules.match import Match
from ..rules.options import SPECS, check_game, parse_options
from ..system.errors import ScenarioError

TOP_KEYS = {"game", "players", "seed", "names", "options", "round", "expect_totals",
            "expect_winners", "title", "source", "arbiter"}
ARBITER_KEYS = {"window_ms", "epsilon_ms", "seed"}
ROUND_KEYS = {"seat", "pile", "board", "tokens", "actions", "expect_scores", "expect_ending",
              "expect_finishers"}


@dataclass(slots=True)
class ActionReport:
    round: int
    at_ms: float
    seat: int
    action: dict[str, Any]
    refusal: Refusal | None
    expected: str | None = None

    @property
    def outcome(self) -> str:
        return "ok" if self.refusal is None else self.refusal.reason.name.lower()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"round": self.round, "at_ms": self.at_ms, "seat": self.seat,
                               "action": self.action, "outcome": self.outcome}
        if self.refusal is not None:
            out["refusal"] = _seats_from_one(self.refusal.to_dict())
        return out


def _numbered_from_one(state: dict[str, Any]) -> dict[str, Any]:
    """A round snapshot as people number things: piles and seats from 1."""
    out = dict(state)
    piles = []
    for pile in state.get("piles", []):
        pile = dict(pile)
        if "id" in pile:
            pile["id"] += 1
        for key in ("owners", "players"):
            if key in pile:
                pile[key] = [s + 1 for s in pile[key]]
        piles.append(pile)
    if "piles" in state:
        out["piles"] = piles
    if "stuck_votes" in state:
        out["stuck_votes"] = [s + 1 for s in state["stuck_votes"]]  # type: ignore[union-attr]
    if "tokens" in state:
        out["tokens"] = [{k: (v + 1 if k in ("reserved_by", "blocked_for") and v is not None and v >= 0
                              else v) for k, v in t.items()} for t in state["tokens"]]
    if "covered" in state:
        out["covered"] = [[sq, seat + 1, card] for sq, seat, card in state["covered"]]
    return out


def _seats_from_one(d: dict[str, Any]) -> dict[str, Any]:
    if "by_seat" in d:
        d["by_seat"] += 1
    return d


@dataclass(slots=True)
class ScenarioRun:
    match: Match
    names: list[str]
    title: str
    actions: list[ActionReport] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    states: list[dict[str, Any]] = field(default_factory=list)
    arbiter: dict[str, Any] | None = None  # window_ns, epsilon_ns, seed: presses go through it
    decisions: list[str] = field(default_factory=list)  # the arbiter's log: ties drawn, late presses
    wakes: list[tuple[int, float]] = field(default_factory=list)  # (round, ms): the table woke the round

    def to_dict(self) -> dict[str, Any]:
        summary = self.match.summary()
        for r in summary["rounds"]:
            r["finishers"] = [s + 1 for s in r["finishers"]]
        summary["winners"] = [s + 1 for s in summary["winners"]]
        return {
            "title": self.title,
            "names": self.names,
            **summary,
            "actions": [a.to_dict() for a in self.actions],
            "final_state": _numbered_from_one(self.states[-1]) if self.states else {},
            "expectations_failed": self.failures,
            **({"wakes": [{"round": r, "at_ms": at} for r, at in self.wakes]} if self.wakes else {}),
            **({"arbiter": self.decisions} if self.arbiter is not None else {}),
        }


# ---------------------------------------------------------------- parsing helpers


def _fail(where: str, problem: str) -> ScenarioError:
    return ScenarioError(f"{where}: {problem}" if where else problem)


def _list(value: Any, where: str) -> list[Any]:
    if isinstance(value, str):
        return value.split()
    if not isinstance(value, list):
        raise _fail(where, f"expected a list, not {value!r}")
    return value


def _cards(value: Any, where: str, parse: Any) -> list[Any]:
    out = []
    for i, item in enumerate(_list(value, where)):
        try:
            out.append(parse(str(item)))
        except RulesError as exc:
            raise _fail(f"{where}[{i}]", str(exc)) from None
    return out


def _seat_no(value: Any, players: int, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= players:
        raise _fail(where, f"seat must be 1 to {players}, not {value!r}")
    return value - 1


def _seats(rnd: dict[str, Any], players: int, where: str, keys: set[str]) -> list[dict[str, Any]] | None:
    """The round's [[round.seat]] tables, one per player, each with only known keys."""
    seats = rnd.get("seat")
    if seats is None:
        return None
    if not isinstance(seats, list) or len(seats) != players:
        raise _fail(f"{where}.seat", f"give all {players} seats")
    for s, seat in enumerate(seats):
        if not isinstance(seat, dict):
            raise _fail(f"{where}.seat[{s}]", "expected a table")
        _check_keys(seat, keys, f"{where}.seat[{s}]")
    return seats


def _check_keys(d: dict[str, Any], allowed: set[str], where: str) -> None:
    for key in d:
        if key not in allowed:
            raise _fail(where, f"unknown key {key!r} (known: {', '.join(sorted(allowed))})")


# ---------------------------------------------------------------- set-ups per game


def _pile_cards(rnd: dict[str, Any], players: int) -> list[set[Card]]:
    """Cards the file lays on centre piles, per seat (leniently: errors are reported later)."""
    out: list[set[Card]] = [set() for _ in range(players)]
    piles = rnd.get("pile")
    for pile in piles if isinstance(piles, list) else []:
        for token in pile.split() if isinstance(pile, str) else pile if isinstance(pile, list) else []:
            seat_text, _, card_text = str(token).partition(":")
            try:
                if is_digits(seat_text) and 1 <= int(seat_text) <= players:
                    out[int(seat_text) - 1].add(Card.parse(card_text))
            except RulesError:
                pass
    return out


def _classic_setup(rnd: dict[str, Any], players: int, where: str, rng: random.Random) -> dict[str, Any]:
    setup: dict[str, Any] = {}
    seats = _seats(rnd, players, where, {"row", "stack", "hand", "discard"})
    if seats is not None:
        deals = []
        on_piles = _pile_cards(rnd, players)
        for s, seat in enumerate(seats):
            w = f"{where}.seat[{s}]"
            row = []
            for i, place in enumerate(_list(seat.get("row", []), f"{w}.row")):
                cards = _cards(place if isinstance(place, list) else [place], f"{w}.row[{i}]", Card.parse)
                row.append(cards)
            stack = _cards(seat.get("stack", []), f"{w}.stack", Card.parse)
            hand = _cards(seat.get("hand", []), f"{w}.hand", Card.parse)
            discard = _cards(seat.get("discard", []), f"{w}.discard", Card.parse)
            # Left out: dealt from the seed, from what the file has not placed, as at the table.
            given = {c for place in row for c in place} | set(stack) | set(hand) | set(discard) | on_piles[s]
            rest = [c for c in DECK if c not in given]
            rng.shuffle(rest)
            if "row" not in seat:
                row, rest = [[c] for c in rest[:row_size(players)]], rest[row_size(players):]
            if "stack" not in seat:
                stack, rest = rest[:STACK_SIZE], rest[STACK_SIZE:]
            if "hand" not in seat:
                hand = rest
            deals.append(Deal(row=row, stack=stack[::-1], hand=hand[::-1], discard=discard[::-1]))
        setup["deals"] = deals
    piles = rnd.get("pile")
    if piles is not None:
        used: list[set[tuple[int, Card]]] = [set() for _ in range(players)]
        for s, deal in enumerate(setup.get("deals", [])):
            used[s] = {(s, c) for c in deal.cards()}
        out = []
        for p, pile in enumerate(_list(piles, f"{where}.pile")):
            w = f"{where}.pile[{p}]"
            cards = []
            for i, token in enumerate(_list(pile, w)):
                seat_text, sep, card_text = str(token).partition(":")
                if not sep or not is_digits(seat_text):
                    raise _fail(f"{w}[{i}]", f"write seat:card, e.g. 1:R5, not {token!r}")
                seat = _seat_no(int(seat_text), players, f"{w}[{i}]")
                try:
                    card = Card.parse(card_text)
                except RulesError as exc:
                    raise _fail(f"{w}[{i}]", str(exc)) from None
                if (seat, card) in used[seat]:
                    raise _fail(f"{w}[{i}]", f"seat {seat + 1} has only one {card}")
                used[seat].add((seat, card))
                cards.append((seat, card))
            out.append(cards)
        setup["piles"] = out
    for s, deal in enumerate(setup.get("deals", [])):
        cards = deal.cards()
        dupes = {str(c) for c in cards if cards.count(c) > 1}
        if dupes:
            raise _fail(f"{where}.seat[{s}]", f"a deck holds each card once: {', '.join(sorted(dupes))}")
    return setup


def _dice_setup(rnd: dict[str, Any], players: int, where: str, rng: random.Random,
                options: dict[str, Any]) -> dict[str, Any]:
    setup: dict[str, Any] = {}
    board = rnd.get("board")
    if board is not None:
        if not isinstance(board, dict):
            raise _fail(f"{where}.board", "give placed faces per colour, e.g. {yellow = 2}")
        faces = [0] * len(DieColour)
        for name, n in board.items():
            try:
                colour = DieColour[name.upper()]
            except KeyError:
                raise _fail(f"{where}.board", f"unknown colour {name!r}") from None
            if not is_whole(n) or not 0 <= n <= 6:
                raise _fail(f"{where}.board.{name}", "placed faces must be 0 to 6")
            faces[colour] = n
        setup["board"] = faces
    seats = _seats(rnd, players, where, {"dice"})
    if seats is not None:
        dice: list[list[Die] | None] = []
        for s, seat in enumerate(seats):
            given = seat.get("dice")
            dice.append(None if given is None else _cards(given, f"{where}.seat[{s}].dice", Die.parse))
        # Left out: drawn from what the bag still holds, as many as the seat starts with.
        counts = dice_counts(players, DiceOptions(options.get("handicap", ())))
        placed = setup.get("board", [0] * len(DieColour))
        bag = [c for c in DieColour for _ in range(DICE_PER_COLOUR - placed[c]
                                                   - sum(d.colour == c for h in dice if h for d in h))]
        rng.shuffle(bag)
        for s, hand in enumerate(dice):
            if hand is None:
                drawn, bag = bag[:counts[s]], bag[counts[s]:]
                dice[s] = [Die(c, rng.randint(1, FACES)) for c in drawn]
        setup["dice"] = dice
    return setup


def _domino_setup(rnd: dict[str, Any], players: int, where: str, rng: random.Random,
                  aside: list[list[DominoCard]]) -> dict[str, Any]:
    setup: dict[str, Any] = {}
    tokens = rnd.get("tokens")
    if tokens is not None:
        squares = []
        for i, sq in enumerate(_list(tokens, f"{where}.tokens")):
            if not (isinstance(sq, list) and len(sq) == 2 and all(is_whole(x) for x in sq)):
                raise _fail(f"{where}.tokens[{i}]", "a square is [row, column]")
            squares.append((sq[0], sq[1]))
        setup["tokens"] = squares
    seats = _seats(rnd, players, where, {"hand", "jokers"})
    if seats is not None:
        hands, jokers = [], []
        for s, seat in enumerate(seats):
            w = f"{where}.seat[{s}]"
            if "hand" in seat:
                hand = _cards(seat["hand"], f"{w}.hand", DominoCard.parse)
            else:  # left out: the seat's 15 cards less its player board, shuffled from the seed
                hand = [c for c in SET if c not in aside[s]]
                rng.shuffle(hand)
            dupes = {str(c) for c in hand if hand.count(c) > 1}
            if dupes:
                raise _fail(f"{w}.hand", f"a player has each card once: {', '.join(sorted(dupes))}")
            hands.append(hand[::-1])
            n = seat.get("jokers", 2)
            if not is_whole(n) or not 0 <= n <= 2:
                raise _fail(f"{w}.jokers", f"0 to 2 jokers, not {n!r}")
            jokers.append(n)
        setup["hands"] = hands
        setup["jokers"] = jokers
    return setup


def _crazy_spec(text: str) -> tuple[CrazyColour | None, int, str | None]:
    """`R3`, `R3p` (style initial), `R*` (Crazy), or just `3` / `*` for the seat's own colour."""
    t = text.strip().upper()
    colour = None
    for c in CrazyColour:
        if t.startswith(c.letter) and len(t) > 1:
            colour, t = c, t[1:]
            break
    if t == "*":
        return colour, 0, None
    if is_digits(t[:1]) and 1 <= int(t[0]) <= 5 and len(t) <= 2:
        style = t[1].lower() if len(t) == 2 else None
        if style is not None and style not in "ptdwf":
            raise RulesError(f"unknown style letter in {text!r} (p t d w f)")
        return colour, int(t[0]), style
    raise RulesError(f"not a Crazy card: {text!r} (write e.g. R3, R3p, R*)")


def _crazy_setup(rnd: dict[str, Any], players: int, where: str, match_deck: Any,
                 rng: random.Random | None = None) -> dict[str, Any]:
    rng = rng or random.Random(f"{where}/crazy")
    seats = _seats(rnd, players, where, {"hand", "draw", "discard"})
    if seats is None:
        return {}
    setups = []
    for s, seat in enumerate(seats):
        w = f"{where}.seat[{s}]"
        pool = match_deck.cards(CrazyColour(s))

        def take(text: str, pool: list[CrazyCard] = pool, seat_no: int = s) -> CrazyCard:
            colour, value, style = _crazy_spec(text)
            if colour is not None and colour != seat_no:
                raise RulesError(f"seat {seat_no + 1} plays {CrazyColour(seat_no).name.lower()}")
            for card in pool:
                if card.value == value and (style is None or card.style[0] == style):
                    pool.remove(card)
                    return card
            raise RulesError(f"no {text} left in seat {seat_no + 1}'s 36 cards")

        hand = _cards(seat.get("hand", []), f"{w}.hand", take)
        draw = _cards(seat.get("draw", []), f"{w}.draw", take)
        discard = _cards(seat.get("discard", []), f"{w}.discard", take)
        if "draw" not in seat:  # left out: the rest of the seat's cards, shuffled from the seed
            draw = list(pool)
            rng.shuffle(draw)
        setups.append(CrazySetup(hand=hand, draw=draw[::-1], discard=discard[::-1]))
    return {"setups": setups}


# ---------------------------------------------------------------- running


def load(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{p}: not UTF-8 text") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{p}: {exc}") from None


def run(data: dict[str, Any], name: str = "scenario") -> ScenarioRun:
    """Run a parsed scenario; raises ScenarioError naming the place of any problem."""
    try:
        return _run(data, name)
    except RulesError as exc:
        raise ScenarioError(f"{name}: {exc}") from None


def _run(data: dict[str, Any], name: str) -> ScenarioRun:
    _check_keys(data, TOP_KEYS, name)
    game = data.get("game")
    players = data.get("players")
    if not isinstance(game, str):
        raise _fail(name, "missing game = \"classic\" | \"dice\" | \"domino\" | \"crazy\"")
    if not isinstance(players, int) or isinstance(players, bool):
        raise _fail(name, "missing players = N")
    seed = data.get("seed", 0)
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise _fail(f"{name}.options", "expected a table of options")
    rounds = data.get("round", [])
    if not isinstance(rounds, list) or not rounds:
        raise _fail(name, "no [[round]] given")
    try:
        check_game(game, players)  # before anything is built per player: players may be 10**17
    except RulesError as exc:
        raise _fail(f"{name}.{'players' if game in SPECS else 'game'}", str(exc)) from None
    # Ligretto and Domino: as many rounds as the file has; Dice keeps its 3 per player and
    # Crazy its target unless the file's options say otherwise.
    options = {"rounds": len(rounds), **options} if game in ("classic", "domino") else options
    for key, value in options.items():  # each option on its own, so the error names its line
        try:
            parse_options(game, players, {key: value})
        except RulesError as exc:
            raise _fail(f"{name}.options.{key}", str(exc)) from None
    names = data.get("names") or [f"seat {i + 1}" for i in range(players)]
    if not isinstance(names, list) or len(names) != players:
        raise _fail(f"{name}.names", f"give {players} names")

    setups = []
    for r, rnd in enumerate(rounds):
        where = f"{name}.round[{r}]"
        if not isinstance(rnd, dict):
            raise _fail(where, "expected a table")
        _check_keys(rnd, ROUND_KEYS, where)
        setups.append((where, rnd))

    def setup_for(where: str, rnd: dict[str, Any], match: Match | None) -> dict[str, Any]:
        rng = random.Random(f"{seed}/scenario/{where}")  # what the file leaves out, per round
        if game == "classic":
            return _classic_setup(rnd, players, where, rng)
        if game == "dice":
            return _dice_setup(rnd, players, where, rng, parse_options(game, players, options))
        if game == "domino":
            aside = match.boards if match is not None else [[] for _ in range(players)]
            return _domino_setup(rnd, players, where, rng, aside)
        from ..game.catalog import crazy_deck

        return _crazy_setup(rnd, players, where, crazy_deck(), rng)

    try:
        first = setup_for(*setups[0], None)
        match = new_match(game, players, seed, options, setup=first or None)
    except RulesError as exc:
        raise _fail(setups[0][0], str(exc)) from None
    result = ScenarioRun(match, [str(n) for n in names], str(data.get("title", name)),
                         arbiter=_arbiter_spec(data.get("arbiter"), f"{name}.arbiter"))

    for r, (where, rnd) in enumerate(setups):
        if r > 0:
            if match.is_over:
                raise _fail(where, "the match is already over")
            try:
                match.next_round(setup_for(where, rnd, match) or None)
            except RulesError as exc:
                raise _fail(where, str(exc)) from None
        _run_actions(match, rnd.get("actions", []), where, r, players, result)
        result.states.append(match.round.snapshot())
        _check_round(match, rnd, where, r, result)
    _check_match(match, data, name, result)
    return result


def _arbiter_spec(value: Any, where: str) -> dict[str, Any] | None:
    """`[arbiter]`: run the presses through the real arbiter with this window and epsilon."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _fail(where, "expected a table like {window_ms = 5.0, epsilon_ms = 0.2, seed = 1}")
    _check_keys(value, ARBITER_KEYS, where)
    spec: dict[str, Any] = {}
    for key, default in (("window_ms", 5.0), ("epsilon_ms", 0.2)):
        x = value.get(key, default)
        if not isinstance(x, int | float) or isinstance(x, bool) or not math.isfinite(x) or x < 0:
            raise _fail(f"{where}.{key}", f"a time in milliseconds, not {x!r}")
        spec[key.replace("_ms", "_ns")] = round(x * 1e6)
    if not spec["window_ns"] > spec["epsilon_ns"]:
        raise _fail(where, "window_ms must be more than epsilon_ms")
    seed = value.get("seed", 0)
    if not (is_whole(seed) or isinstance(seed, str)):
        raise _fail(f"{where}.seed", f"a number or a word, not {seed!r}")
    spec["seed"] = seed
    return spec


def _arbitrated(timed: list[tuple[Any, ...]], spec: dict[str, Any],
                result: ScenarioRun) -> list[tuple[Any, ...]]:
    """The order the real arbiter releases the presses in, as they arrive (`arrive_ms`)."""

    def log(decision: Decision) -> None:
        result.decisions.append(decision.describe())

    arbiter = Arbiter(spec["window_ns"], spec["epsilon_ns"], spec["seed"], on_decision=log)
    out: list[tuple[Any, ...]] = []

    def take(presses: list[Any]) -> None:
        out.extend(timed[int(p.control.split()[1]) - 1] for p in presses)

    for k in sorted(range(len(timed)), key=lambda k: (timed[k][6], timed[k][1])):
        arrive_ns = round(timed[k][6] * 1e6)
        take(arbiter.release(arrive_ns))  # everything due before this press arrives
        arbiter.push(timed[k][2], f"action {k + 1}", round(timed[k][0] * 1e6))
    take(arbiter.flush())
    return out


def _run_actions(match: Match, actions: Any, where: str, r: int, players: int,
                 result: ScenarioRun) -> None:
    timed = []
    for i, a in enumerate(_list(actions, f"{where}.actions")):
        w = f"{where}.actions[{i}]"
        if not isinstance(a, dict):
            raise _fail(w, "expected a table like {at_ms = 1.5, seat = 1, do = \"play\", card = \"R1\"}")
        at = a.get("at_ms", 0.0)
        if not isinstance(at, int | float) or isinstance(at, bool) or not math.isfinite(at) or at < 0:
            raise _fail(f"{w}.at_ms", f"a time in milliseconds, not {at!r}")
        seat = _seat_no(a.get("seat"), players, f"{w}.seat")
        expect = a.get("expect")
        if expect is not None and not isinstance(expect, str):
            raise _fail(f"{w}.expect", "\"ok\" or a refusal reason such as \"too_late\"")
        arrive = a.get("arrive_ms", at)
        if not isinstance(arrive, int | float) or isinstance(arrive, bool) or not math.isfinite(arrive) \
                or arrive < at:
            raise _fail(f"{w}.arrive_ms", f"when the press reached the Pi, at or after at_ms, not {arrive!r}")
        if "arrive_ms" in a and result.arbiter is None:
            raise _fail(f"{w}.arrive_ms", "only with an [arbiter] table")
        timed.append((float(at), i, seat, a, w, expect, float(arrive)))
    if result.arbiter is not None:
        timed = _arbitrated(timed, result.arbiter, result)
    else:
        timed.sort(key=lambda t: (t[0], t[1]))  # the arbiter's order: time, then arrival
    for at, _, seat, a, w, expect, _ in timed:
        _wake(match, round(at * 1e6), r, result)
        raw = {k: v for k, v in a.items() if k not in ("at_ms", "expect", "arrive_ms")}
        raw["seat"] = seat
        raw["ts"] = round(at * 1e6)
        if match.game == "domino" and "token" in raw:  # tokens from 1 in files, as on the seat screens
            if not is_whole(raw["token"]) or not 1 <= raw["token"] <= 4:
                raise _fail(f"{w}.token", f"a token is 1 to 4, not {raw['token']!r}")
            raw["token"] -= 1
        try:
            action = _crazy_action(match, raw) if match.game == "crazy" else from_dict(match.game, raw)
        except RulesError as exc:
            raise _fail(w, str(exc)) from None
        refusal = match.apply(action)
        shown = to_dict(action)
        shown["seat"] = seat + 1
        if shown.get("pile") is not None:
            shown["pile"] += 1  # as written in the file
        if "token" in shown:
            shown["token"] += 1
        shown.pop("ts", None)
        report = ActionReport(r + 1, at, seat + 1, shown, refusal, expect)
        result.actions.append(report)
        if expect is not None and expect != report.outcome:
            result.failures.append(f"{w}: expected {expect}, got {report.outcome}"
                                   + (f" ({refusal})" if refusal else ""))
    _wake(match, None, r, result)  # nobody presses any more: time runs on, as at the table


def _wake(match: Match, before_ns: int | None, r: int, result: ScenarioRun) -> None:
    """Do what the round has due before `before_ns` (a joker's hold lapsing, a wait for a
    joker running out), or all it has due when None, as the table's wake does between presses."""
    rnd = match.round
    for _ in range(10_000):
        due = rnd.deadline()
        if due is None or (before_ns is not None and due >= before_ns) or not rnd.wake(due):
            return
        result.wakes.append((r + 1, due / 1e6))
    raise ScenarioError(f"round {r + 1}: the round kept something due after 10000 wakes")


def _crazy_action(match: Match, raw: dict[str, Any]) -> PlayCrazy | DiscardCrazy:
    """Crazy cards are named by kind (R3, R*); the seat's first such hand card is meant."""
    rnd = match.round
    assert isinstance(rnd, CrazyRound)
    text = raw.get("card")
    if not isinstance(text, str):
        raise RulesError("missing 'card'")
    colour, value, style = _crazy_spec(text)
    seat = raw["seat"]
    card = next((c for c in rnd.seats[seat].hand
                 if c.value == value and (style is None or c.style[0] == style)
                 and (colour is None or c.colour == colour)), None)
    if card is None:
        card = CrazyCard(CrazyColour(colour if colour is not None else seat), value, "?", -1)
    do = raw.get("do")
    allowed = {"do", "seat", "ts", "card"} | ({"pile", "value"} if do == "play" else set())
    unknown = sorted(set(raw) - allowed)
    if unknown and do in ("play", "discard"):
        raise RulesError(f"unknown field {unknown[0]!r} in a {do} action (known: "
                         f"{', '.join(sorted(allowed - {'do', 'ts'}))})")
    if do == "discard":
        return DiscardCrazy(seat, card, raw["ts"])
    if do != "play":
        raise RulesError(f"unknown action do={do!r} for crazy (known: play, discard)")
    pile = raw.get("pile")
    if pile is not None and (not isinstance(pile, int) or isinstance(pile, bool)):
        raise RulesError("'pile' is a pile number (from 1), or leave it out to start a pile")
    value_as = raw.get("value")
    if value_as is not None and not is_whole(value_as):
        raise RulesError("'value' is what a Crazy card counts as")
    return PlayCrazy(seat, card, None if pile is None else pile - 1, value_as, raw["ts"])


def _check_round(match: Match, rnd: dict[str, Any], where: str, r: int, result: ScenarioRun) -> None:
    res = match.results[r] if r < len(match.results) else None
    for key, actual in (
        ("expect_scores", list(res.scores) if res else None),
        ("expect_ending", str(res.ending) if res else None),
        ("expect_finishers", [s + 1 for s in res.finishers] if res else None),
    ):
        if key in rnd and rnd[key] != actual:
            got = "the round still running" if res is None else repr(actual)
            result.failures.append(f"{where}.{key}: expected {rnd[key]!r}, got {got}")


def _check_match(match: Match, data: dict[str, Any], name: str, result: ScenarioRun) -> None:
    if "expect_totals" in data and data["expect_totals"] != list(match.totals):
        result.failures.append(f"{name}.expect_totals: expected {data['expect_totals']!r}, "
                               f"got {list(match.totals)!r}")
    if "expect_winners" in data:
        got = [s + 1 for s in match.winners] if match.is_over else None
        if data["expect_winners"] != got:
            result.failures.append(f"{name}.expect_winners: expected {data['expect_winners']!r}, got {got!r}")


_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*(round(?:\.(\w+))?)\s*\]\]", re.MULTILINE)
_PLACE = re.compile(r"round\[(\d+)\](?:\.(\w+)\[(\d+)\])?")


_TOP = re.compile(r"\.(players|game|options)(?:\.(\w+))?:")


def _top_line(text: str, key: str, option: str | None) -> int | None:
    """The line of a top-level key, or of an option in `options = {...}` or `[options]`."""
    section = ""
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[] \t")
            continue
        if option is None and not section and re.match(rf"{key}\s*=", stripped):
            return n
        if option is not None:
            if section == "options" and re.match(rf"{option}\s*=", stripped):
                return n
            if not section and stripped.startswith("options") and re.search(rf"\b{option}\s*=", stripped):
                return n
    return None


def locate(text: str, message: str) -> str:
    """Add the line to a message that names a place like round[1].actions[3], when that
    place was written as a [[round]] / [[round.actions]] table of its own, or a top-level
    key such as players or an option."""
    top = _TOP.search(message)
    if top is not None:
        line = _top_line(text, top[1], top[2])
        return message if line is None else f"{message} (line {line})"
    found = _PLACE.search(message)
    if found is None:
        return message
    want_round, part, index = int(found[1]), found[2], found[3]
    round_no, counts, line = -1, {}, None
    for header in _HEADER.finditer(text):
        at = text.count("\n", 0, header.start()) + 1
        if header[2] is None:
            round_no, counts = round_no + 1, {}
            if round_no == want_round and part is None:
                line = at
        elif round_no == want_round and header[2] == part:
            if counts.get(part, 0) == int(index):
                line = at
            counts[part] = counts.get(part, 0) + 1
    return message if line is None else f"{message} (line {line})"


def run_file(path: str | Path) -> ScenarioRun:
    data = load(path)
    try:
        return run(data, Path(path).name)
    except ScenarioError as exc:
        raise ScenarioError(locate(Path(path).read_text(encoding="utf-8"), str(exc))) from None


def render(run_: ScenarioRun) -> str:
    """The human report: each action's outcome, each round's scores, the standings."""
    m = run_.match
    names = run_.names
    lines = [f"{run_.title} — {m.game}, {m.players} players"]
    current = 0
    events = sorted([(a.round, a.at_ms, 0, i) for i, a in enumerate(run_.actions)]
                    + [(r, at, 1, -1) for r, at in run_.wakes])
    for rnd, at, _, i in events:
        if rnd != current:
            current = rnd
            lines.append(f"round {current}")
        if i < 0:
            lines.append(f"  {at:9.3f} ms  {'table':<10} {'time is up: the round is woken':<32} ok")
            continue
        a = run_.actions[i]
        what = " ".join(f"{k}={v}" for k, v in a.action.items() if k not in ("seat",))
        outcome = "ok" if a.refusal is None else f"refused: {a.refusal}"
        lines.append(f"  {a.at_ms:9.3f} ms  {names[a.seat - 1]:<10} {what:<32} {outcome}")
    for i, res in enumerate(m.results):
        who = ", ".join(names[s] for s in res.finishers) or "nobody"
        scores = ", ".join(f"{names[s]} {res.scores[s]:+d}" for s in range(m.players))
        lines.append(f"round {i + 1} ended ({res.ending}, finished: {who}): {scores}")
    if m.round.result is None:
        lines.append(f"round {m.round_no + 1} still running")
    totals = ", ".join(f"{names[s]} {t}" for s, t in enumerate(m.totals))
    lines.append(f"totals: {totals}")
    if m.is_over:
        lines.append("winner" + ("s" if len(m.winners) > 1 else "") + ": "
                     + ", ".join(names[s] for s in m.winners))
    for d in run_.decisions:
        lines.append(f"arbiter: {d}")
    for f in run_.failures:
        lines.append(f"EXPECTATION FAILED {f}")
    return "\n".join(lines)
