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
from typing import Any, TypedDict

from ..engine.codec import to_dict
from ..engine.game import JsonDict, RawDict, Setup, find
from ..engine.match import Match
from ..engine.options import GAMES, SPECS, check_game, parse_options
from ..engine.round import Ending, Reason, Refusal, RulesError, is_whole
from ..engine.setups import check_keys, fail, listed, parsed, seat_no
from ..system.errors import ScenarioError
from ..table.arbiter import Arbiter, Decision, Press
from ..table.matches import new_match
from ..table.referee import Referee

TOP_KEYS = {"game", "players", "seed", "names", "options", "round", "expect_totals",
            "expect_winners", "title", "source", "arbiter"}
ARBITER_KEYS = {"window_ms", "epsilon_ms", "seed"}
ROUND_KEYS = {"actions", "expect_scores", "expect_ending", "expect_finishers"}
"""Every game's [[round]] keys; each game adds its own (`Game.scenario_keys`)."""


class ArbiterSpec(TypedDict):
    """A file's `[arbiter]`, read: presses go through the real arbiter with these."""

    window_ns: int
    epsilon_ns: int
    seed: int | str


Timed = tuple[float, int, int, RawDict, str, tuple[str | None, str | None], float]
"""An action of the file as read: (at ms, its index, seat from 0, its table, where it is, (its
expect, its told), arrives ms)."""
Ordered = tuple[float, int, int, RawDict, str, tuple[str | None, str | None], float, Press]
"""A `Timed` with the press the arbiter released for it, in the order it released them."""


@dataclass(slots=True)
class ActionReport:
    round: int
    at_ms: float
    seat: int
    action: JsonDict
    refusal: Refusal | None
    expected: str | None = None

    @property
    def outcome(self) -> str:
        return "ok" if self.refusal is None else self.refusal.reason.name.lower()

    @property
    def told(self) -> str:
        """What the seat is told: "ok", or the refusal in the table's words."""
        return "ok" if self.refusal is None else str(self.refusal)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"round": self.round, "at_ms": self.at_ms, "seat": self.seat,
                               "action": self.action, "outcome": self.outcome, "told": self.told}
        if self.refusal is not None:
            out["refusal"] = _seats_from_one(self.refusal.to_dict())
        return out


def _numbered_from_one(state: dict[str, Any]) -> dict[str, Any]:
    """A round snapshot as people number things: piles and seats from 1. (A snapshot's keys and
    values are its game's own, read here as the games write them: `Any`.)"""
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
        out["stuck_votes"] = [s + 1 for s in state["stuck_votes"]]
    if "tokens" in state:
        out["tokens"] = [{k: (v + 1 if k in ("reserved_by", "blocked_for") and v is not None and v >= 0
                              else v) for k, v in t.items()} for t in state["tokens"]]
    if "covered" in state:
        out["covered"] = [[sq, seat + 1, card] for sq, seat, card in state["covered"]]
    return out


def _seats_from_one(d: dict[str, object]) -> dict[str, object]:
    by_seat = d.get("by_seat")
    if isinstance(by_seat, int):  # a refusal's, when it names one
        d["by_seat"] = by_seat + 1
    return d


@dataclass(slots=True)
class ScenarioRun:
    match: Match
    names: list[str]
    title: str
    actions: list[ActionReport] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    states: list[dict[str, object]] = field(default_factory=list)
    arbiter: ArbiterSpec | None = None  # presses go through it
    decisions: list[str] = field(default_factory=list)  # the arbiter's log: ties drawn, late presses
    wakes: list[tuple[int, float]] = field(default_factory=list)  # (round, ms): the table woke the round
    notes: list[str] = field(default_factory=list)  # what the referee noted for the table's log
    after_end: JsonDict | None = None  # the last ended round, once its end effects are done

    def to_dict(self) -> dict[str, object]:
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
            "after_end": self.after_end,
            "expectations_failed": self.failures,
            **({"wakes": [{"round": r, "at_ms": at} for r, at in self.wakes]} if self.wakes else {}),
            **({"arbiter": self.decisions} if self.arbiter is not None else {}),
        }


# ---------------------------------------------------------------- running


def load(path: str | Path) -> RawDict:
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


def run(data: RawDict, name: str = "scenario") -> ScenarioRun:
    """Run a parsed scenario; raises ScenarioError naming the place of any problem."""
    try:
        return _run(data, name)
    except RulesError as exc:
        raise ScenarioError(f"{name}: {exc}") from None


def _run(data: RawDict, name: str) -> ScenarioRun:
    check_keys(data, TOP_KEYS, name)
    game = data.get("game")
    players = data.get("players")
    if not isinstance(game, str):
        raise fail(name, "missing game = " + " | ".join(f'"{g}"' for g in GAMES))
    if not isinstance(players, int) or isinstance(players, bool):
        raise fail(name, "missing players = N")
    seed = data.get("seed", 0)
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise fail(f"{name}.options", "expected a table of options")
    rounds = data.get("round", [])
    if not isinstance(rounds, list) or not rounds:
        raise fail(name, "no [[round]] given")
    try:
        check_game(game, players)  # before anything is built per player: players may be 10**17
    except RulesError as exc:
        raise fail(f"{name}.{'players' if game in SPECS else 'game'}", str(exc)) from None
    # Ligretto and Domino: as many rounds as the file has; Dice keeps its 3 per player and
    # Crazy its target unless the file's options say otherwise.
    kind = find(game)
    options = kind.scenario_options(options, len(rounds))
    for key, value in options.items():  # each option on its own, so the error names its line
        try:
            parse_options(game, players, {key: value})
        except RulesError as exc:
            raise fail(f"{name}.options.{key}", str(exc)) from None
    _check_match_expects(data, players, name)
    names = data.get("names") or [f"seat {i + 1}" for i in range(players)]
    if not isinstance(names, list) or len(names) != players:
        raise fail(f"{name}.names", f"give {players} names")

    setups = []
    for r, rnd in enumerate(rounds):
        where = f"{name}.round[{r + 1}]"
        if not isinstance(rnd, dict):
            raise fail(where, "expected a table")
        _check_round_keys(rnd, game, where)
        _check_round_expects(rnd, players, where, game)
        setups.append((where, rnd))

    def setup_for(r: int, where: str, rnd: RawDict, match: Match | None) -> Setup:
        # What the file leaves out, per round; keyed by the round counted from 0 (as paths once
        # were), so that files keep the cards they were written against.
        rng = random.Random(f"{seed}/scenario/{name}.round[{r}]")
        return kind.scenario_setup(rnd, players, where, rng, options, match)

    try:
        first = setup_for(0, *setups[0], None)
        match = new_match(game, players, seed, options, setup=first or None)
    except RulesError as exc:
        raise fail(setups[0][0], str(exc)) from None
    result = ScenarioRun(match, [str(n) for n in names], str(data.get("title", name)),
                         arbiter=_arbiter_spec(data.get("arbiter"), f"{name}.arbiter"))

    for r, (where, rnd) in enumerate(setups):
        if r > 0:
            if match.is_over:
                raise fail(where, "the match is already over")
            try:
                match.next_round(setup_for(r, where, rnd, match) or None)
            except RulesError as exc:
                raise fail(where, str(exc)) from None
        _run_actions(match, rnd.get("actions", []), where, r, players, result)
        result.states.append(match.round.snapshot())
        if match.round.result is not None:  # its end effects are done: totals, player boards
            result.after_end = {"round": r + 1, "totals": list(match.totals),
                                "boards": [[str(c) for c in b] for b in match.boards]}
        _check_round(match, rnd, where, r, result)
    _check_match(match, data, name, result)
    return result


def _check_round_keys(rnd: RawDict, game: str, where: str) -> None:
    """A key of another game's rounds is refused by name, not ignored."""
    allowed = ROUND_KEYS | find(game).scenario_keys
    for key in rnd:
        if key in allowed:
            continue
        owners = " or ".join(g for g in GAMES if g != game and key in find(g).scenario_keys)
        known = ", ".join(sorted(allowed))
        if owners:
            raise fail(where, f"{key!r} belongs to a {owners} round, not {game} (known: {known})")
        raise fail(where, f"unknown key {key!r} (known: {known})")


def _seat_list(value: object, players: int, where: str, empty: bool) -> None:
    """`expect_finishers`, `expect_winners`: seats from 1, each once."""
    if not isinstance(value, list) or (not value and not empty):
        raise fail(where, f"a list of seats (1 to {players}), not {value!r}"
                   + ("" if empty else ": someone always wins"))
    for seat in value:
        if not is_whole(seat) or not 1 <= seat <= players:
            raise fail(where, f"seats are 1 to {players}, not {seat!r}")
    if len(set(value)) != len(value):
        raise fail(where, f"each seat once, not {value!r}")


def _per_seat(value: object, players: int, where: str) -> None:
    """`expect_scores`, `expect_totals`: one whole number per seat."""
    if not isinstance(value, list) or len(value) != players or not all(is_whole(x) for x in value):
        raise fail(where, f"a list of {players} whole numbers, one per seat, not {value!r}")


def _check_round_expects(rnd: RawDict, players: int, where: str, game: str) -> None:
    """An expectation that no round could meet is a mistake in the file: refused before running."""
    if "expect_scores" in rnd:
        _per_seat(rnd["expect_scores"], players, f"{where}.expect_scores")
    if "expect_finishers" in rnd:
        _seat_list(rnd["expect_finishers"], players, f"{where}.expect_finishers", empty=True)
    if "expect_boards" in rnd:
        boards = rnd["expect_boards"]
        w = f"{where}.expect_boards"
        if not isinstance(boards, list) or len(boards) != players:
            raise fail(w, f"a list of {players} player boards, one per seat, not {boards!r}")
        rnd["expect_boards"] = [parsed(b, f"{w}[{s + 1}]", lambda t: str(find(game).carried_card(t)))
                                for s, b in enumerate(boards)]
    if "expect_ending" in rnd and rnd["expect_ending"] not in {e.value for e in Ending}:
        raise fail(f"{where}.expect_ending", f"one of {', '.join(e.value for e in Ending)}, "
                   f"not {rnd['expect_ending']!r}")
    ending = rnd.get("expect_ending")
    endings = find(game).endings
    if ending is not None and ending not in endings:
        owners = " or ".join(g for g in GAMES if ending in find(g).endings)
        raise fail(f"{where}.expect_ending", f"{ending!r} ends a {owners} round, not a {game} one "
                   f"({game} rounds end: {', '.join(e.value for e in Ending if e in endings)})")


def _check_match_expects(data: RawDict, players: int, name: str) -> None:
    if "expect_totals" in data:
        _per_seat(data["expect_totals"], players, f"{name}.expect_totals")
    if "expect_winners" in data:
        _seat_list(data["expect_winners"], players, f"{name}.expect_winners", empty=False)


def _arbiter_spec(value: object, where: str) -> ArbiterSpec | None:
    """`[arbiter]`: run the presses through the real arbiter with this window and epsilon."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise fail(where, "expected a table like {window_ms = 5.0, epsilon_ms = 0.2, seed = 1}")
    check_keys(value, ARBITER_KEYS, where)
    times: dict[str, int] = {}
    for key, default in (("window_ms", 5.0), ("epsilon_ms", 0.2)):
        x = value.get(key, default)
        if not isinstance(x, int | float) or isinstance(x, bool) or not math.isfinite(x) or x < 0:
            raise fail(f"{where}.{key}", f"a time in milliseconds, not {x!r}")
        times[key] = round(x * 1e6)
    if not times["window_ms"] > times["epsilon_ms"]:
        raise fail(where, "window_ms must be more than epsilon_ms")
    seed = value.get("seed", 0)
    if not (is_whole(seed) or isinstance(seed, str)):
        raise fail(f"{where}.seed", f"a number or a word, not {seed!r}")
    return ArbiterSpec(window_ns=times["window_ms"], epsilon_ns=times["epsilon_ms"], seed=seed)


def _referee(match: Match, spec: ArbiterSpec | None, result: ScenarioRun) -> Referee:
    """The table's own referee for one round's presses: a fresh arbiter per round, as the file
    gives it (or the table's defaults), whose decisions the report lists."""
    arbiter = Arbiter(spec["window_ns"], spec["epsilon_ns"], spec["seed"]) if spec else Arbiter()
    referee = Referee(match, arbiter, log=lambda text, level=0: result.notes.append(text))
    told = arbiter.on_decision

    def log(decision: Decision) -> None:
        result.decisions.append(decision.describe())
        if told is not None:
            told(decision)

    arbiter.on_decision = log
    return referee


def _arbitrated(timed: list[Timed], referee: Referee) -> list[Ordered]:
    """Each action with its press, in the order the real arbiter releases the presses as they
    arrive (`arrive_ms`): draws and late presses are logged to the referee that settles them."""
    arbiter = referee.arbiter
    out: list[Ordered] = []

    def take(presses: list[Press]) -> None:
        out.extend((*timed[int(p.control.split()[1]) - 1], p) for p in presses)

    for k in sorted(range(len(timed)), key=lambda k: (timed[k][6], timed[k][1])):
        arrive_ns = round(timed[k][6] * 1e6)
        take(arbiter.release(arrive_ns))  # everything due before this press arrives
        arbiter.push(timed[k][2], f"action {k + 1}", round(timed[k][0] * 1e6))
    take(arbiter.flush())
    return out


_OUTCOMES = {"ok"} | {r.name.lower() for r in Reason}


def _run_actions(match: Match, actions: object, where: str, r: int, players: int,
                 result: ScenarioRun) -> None:
    timed = []
    for i, a in enumerate(listed(actions, f"{where}.actions")):
        w = f"{where}.actions[{i + 1}]"
        if not isinstance(a, dict):
            raise fail(w, "expected a table like {at_ms = 1.5, seat = 1, do = \"play\", card = \"R1\"}")
        at = a.get("at_ms", 0.0)
        if not isinstance(at, int | float) or isinstance(at, bool) or not math.isfinite(at) or at < 0:
            raise fail(f"{w}.at_ms", f"a time in milliseconds, not {at!r}")
        seat = seat_no(a.get("seat"), players, f"{w}.seat")
        expect = a.get("expect")
        if expect is not None and expect not in _OUTCOMES:
            raise fail(f"{w}.expect", f"\"ok\" or a refusal reason such as \"too_late\", not {expect!r}")
        told = a.get("told")
        if told is not None and (not isinstance(told, str) or not told):
            raise fail(f"{w}.told", f"the words the seat is told, such as \"too late (seat 2 was 0.4 ms "
                       f"earlier)\", or \"ok\", not {told!r}")
        arrive = a.get("arrive_ms", at)
        if not isinstance(arrive, int | float) or isinstance(arrive, bool) or not math.isfinite(arrive) \
                or arrive < at:
            raise fail(f"{w}.arrive_ms", f"when the press reached the Pi, at or after at_ms, not {arrive!r}")
        if "arrive_ms" in a and result.arbiter is None:
            raise fail(f"{w}.arrive_ms", "only with an [arbiter] table")
        timed.append((float(at), i, seat, a, w, (expect, told), float(arrive)))
    referee = _referee(match, result.arbiter, result)
    if result.arbiter is not None:
        ordered = _arbitrated(timed, referee)
    else:  # the arbiter's order with no window: time, then file order
        ordered = [(*t, Press(round(t[0] * 1e6), t[1], t[2], "scenario"))
                   for t in sorted(timed, key=lambda t: (t[0], t[1]))]
    for at, _, seat, a, w, (expect, told), _, press in ordered:
        _wake(match, round(at * 1e6), r, result)
        raw = {k: v for k, v in a.items() if k not in ("at_ms", "expect", "told", "arrive_ms")}
        raw["seat"] = seat
        raw["ts"] = round(at * 1e6)
        try:
            action = find(match.game).scenario_action(match, raw, w)
        except RulesError as exc:
            raise fail(w, str(exc)) from None
        refusal = referee.settle(press, press.ts, action).refusal
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
        if told is not None and told != report.told:
            result.failures.append(f"{w}.told: expected {told!r}, the seat was told {report.told!r}")
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


def _check_round(match: Match, rnd: RawDict, where: str, r: int, result: ScenarioRun) -> None:
    res = match.results[r] if r < len(match.results) else None
    for key, actual in (
        ("expect_scores", list(res.scores) if res else None),
        ("expect_ending", str(res.ending) if res else None),
        ("expect_finishers", [s + 1 for s in res.finishers] if res else None),
        ("expect_boards", [[str(c) for c in b] for b in match.boards] if res else None),
    ):
        if key in rnd and rnd[key] != actual:
            got = "the round still running" if res is None else repr(actual)
            result.failures.append(f"{where}.{key}: expected {rnd[key]!r}, got {got}")


def _check_match(match: Match, data: RawDict, name: str, result: ScenarioRun) -> None:
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
    want_round, part, index = int(found[1]) - 1, found[2], found[3]
    counts: dict[str, int] = {}
    round_no, line = -1, None
    for header in _HEADER.finditer(text):
        at = text.count("\n", 0, header.start()) + 1
        if header[2] is None:
            round_no, counts = round_no + 1, {}
            if round_no == want_round and part is None:
                line = at
        elif round_no == want_round and header[2] == part:
            if counts.get(part, 0) == int(index) - 1:
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
