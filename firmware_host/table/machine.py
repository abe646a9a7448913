"""The table's life: attract → lobby → countdown → playing → round result → match result → attract.

The match's result is its podium: it stays `Timing.podium_hold_ns` whatever anyone slaps, then a
slap takes the same seats back to the lobby for another match; untouched, the table goes to the
attract screen after `Timing.match_result_ns` (the seats free, the leaderboard on show).

One owner of the game state. Inputs arrive as clean events (inputs/pins.py),
commands from `tablectl` as method calls; time comes in as `now` (ns, the
inputs' clock), so the whole machine is pure and testable. Physical seats that
join become players 0, 1, … in joining order; bots take the seats asked for.
The input layer must share `gate` (TableInputs.gate = table.gate): the table
arms it for each countdown and opens it at "go", so presses before go are
false starts. What the players must hear is noted as sound cues (`take_cues`):
each second of the countdown and go, a false start, a race lost ("too late"),
a Ligretto or another round end, the match won; the daemon plays them. What
the players would say happened (a match started, a round won, the scores) is
logged at INFO on `table_host.table`, seats numbered from 1 (firmware_host/system/logs.py).
"""

from __future__ import annotations

import logging
import secrets
from collections import deque
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from ..engine.game import names
from ..engine.match import Match
from ..engine.options import GAMES, PLAYERS, check_options
from ..engine.round import Ending, Reason, RulesError, Wake
from ..system.logs import escape, logger
from .arbiter import Arbiter
from .bot_players import Bot, Level
from .cues import Cue
from .matches import new_match
from .names import clean, key
from .picker import Picker
from .presses import Event, InputEvent, StartGate
from .referee import Outcome, Referee
from .words import ended_by, game_name

S = 1_000_000_000
TRACE_LEN = 500  # what reached the engine lately; full within the first minutes of play (bench soak)

log = logger("table")
inputs_log = logger("inputs")


class BadOptions(RulesError):
    """Options for `new` that the game's start would refuse: a bad command, said at once."""


class FalseStart(NamedTuple):
    """A press before "go" (or within a jumper's lockout after it): kept for the race view."""

    player: int
    control: str
    ts: int  # the edge's kernel timestamp
    go_ns: int  # when "go" was (or will be) given, on the same clock


class Phase(StrEnum):
    ATTRACT = "attract"
    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    PLAYING = "playing"
    ROUND_RESULT = "round_result"
    MATCH_RESULT = "match_result"


@dataclass(frozen=True, slots=True)
class Timing:
    countdown_ns: int = 3 * S
    round_result_ns: int = 10 * S  # then the next round starts by itself
    match_result_ns: int = 30 * S  # the podium; then the attract screen, the seats free
    result_hold_ns: int = 3 * S  # a round's result stays at least this long, however hard anyone slaps
    podium_hold_ns: int = 10 * S  # the match's podium stays at least this long (issue 31: 10 s)
    idle_ns: int = 300 * S  # a lobby nobody touches goes back to attract


@dataclass
class Table:
    seats: int  # physical seats wired
    timing: Timing = Timing()
    seed: int = 0
    window_ns: int = 5_000_000
    epsilon_ns: int = 200_000
    phase: Phase = Phase.ATTRACT
    game: str = field(default_factory=lambda: next(iter(names()), ""))  # the first in the menu
    options: dict[str, Any] = field(default_factory=dict)
    joined: list[int] = field(default_factory=list)  # physical seats, in joining order
    names: dict[int, str] = field(default_factory=dict)  # physical seat -> its player's name (none: a guest)
    known: tuple[str, ...] = ()
    pickers: dict[int, Picker] = field(default_factory=dict)  # physical seat -> its open name picker
    tokens: dict[int, str] = field(default_factory=dict)
    """Physical seat -> the one-time token of its QR code (a phone's claim), until used or the start."""
    """The known players' names, for the seats' pickers: set by the service from the journal
    (never looked up here), and the names of each match that starts added."""
    bots: dict[int, Bot] = field(default_factory=dict)  # player index -> bot
    menu: int = 0  # seat 1's game menu cursor
    match: Match | None = None
    referee: Referee | None = None
    gate: StartGate = field(default_factory=StartGate)
    phase_since: int = 0  # a lobby press moves it on: the idle timer starts again
    entered: int = 0  # when the phase began
    matches_played: int = 0
    notices: list[str] = field(default_factory=list)
    cues: list[Cue] = field(default_factory=list)  # sounds asked for, oldest first, until taken
    next_count: int | None = None  # when the countdown's next second ticks
    woken: list[Wake] = field(default_factory=list)  # rounds woken by time, for the journal, until taken
    false_starts: list[FalseStart] = field(default_factory=list)  # for the journal, until taken
    trace: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=TRACE_LEN))
    """The last input events and decisions, with their times (`tablectl inputs`, the virtual Pi)."""
    traced: int = 0
    """How many entries the trace has been given since start: a reader's cursor (`decisions_since`)."""

    # ------------------------------------------------------------ who plays

    @property
    def players(self) -> int:
        return len(self.joined) + len(self.bots)

    @property
    def seat_of_player(self) -> list[int]:
        """Physical seat of each player: the joined seats, then free seats for the bots."""
        free = [s for s in range(self.seats) if s not in self.joined]
        return self.joined + free[: len(self.bots)]

    def player_names(self) -> list[str | None]:
        """Each player's name, in the players' order (None: a guest or a bot)."""
        return [None if p in self.bots else self.names.get(s) for p, s in enumerate(self.seat_of_player)]

    def name_seat(self, seat: int, name: str | None, now: int) -> str | None:
        """Seat `seat` (from 0) joins with `name` (None: as a guest), in the lobby: as its slap
        would, and named. A known player's name is spelled as the table knows it. Returns the
        name as kept, or RulesError saying why not (another seat has it, the match started)."""
        if not 0 <= seat < self.seats:
            raise RulesError(f"no seat {seat + 1}: {self.seats} seats are wired")
        if self.phase not in (Phase.ATTRACT, Phase.LOBBY, Phase.MATCH_RESULT):
            raise RulesError("names are chosen in the lobby, before the match starts")
        if name is not None:
            name = clean(name)
            name = next((k for k in self.known if key(k) == key(name)), name)
            other = next((s for s, n in self.names.items() if key(n) == key(name) and s != seat), None)
            if other is not None:
                raise RulesError(f"{name} sits at seat {other + 1} already")
        if self.phase is not Phase.LOBBY:
            self._enter(Phase.LOBBY, now)
        self.phase_since = now  # someone is here: not idle
        if seat not in self.joined:
            if self.players >= PLAYERS[self.game][1]:
                raise RulesError(f"{self.game} is full: {PLAYERS[self.game][1]} players")
            self._join(seat)
        if name is None:
            self.names.pop(seat, None)
        else:
            self.names[seat] = name
        return name

    def player_of(self, seat: int) -> int | None:
        seats = self.seat_of_player
        return seats.index(seat) if seat in seats else None

    # ------------------------------------------------------------ inputs

    def on_input(self, event: InputEvent, now: int) -> None:
        """A clean input event from a physical seat."""
        entry = {"input": str(event.kind), "seat": event.seat + 1, "control": event.control,
                 "ts_ns": event.ts, "received_ns": now}
        self._trace(entry | {"detail": event.detail} if event.detail else entry)
        if event.seat < 0:  # an expander fault or recovery: say it, keep going
            level = logging.WARNING if event.kind == "fault" else logging.INFO
            self._note(event.detail, level, inputs_log)
            return
        if self.phase in (Phase.COUNTDOWN, Phase.PLAYING):
            player = self.player_of(event.seat)
            if player is not None and self.referee is not None:
                if event.kind is Event.FALSE_START:
                    self._cue("false_start", event.seat, now)
                    go = self.gate.go_ts if self.gate.go_ts is not None \
                        else self.phase_since + self.timing.countdown_ns
                    self.false_starts.append(FalseStart(player, event.control, event.ts, go))
                    del self.false_starts[:-50]  # nobody takes them (a bare table in a test)
                self.referee.on_input(event._replace(seat=player))
            return
        if event.kind is not Event.PRESS:
            return
        if event.ts < self.entered:
            # Pressed before this phase began, taken after (a stalled loop, a bot's presses still
            # settling): it was meant for the round that ended, and must not join a seat.
            return
        if self.phase is Phase.ATTRACT:
            self._enter(Phase.LOBBY, now)
            self._join(event.seat)
        elif self.phase is Phase.LOBBY:
            self._lobby_press(event.seat, event.control, now)
        elif self.phase in (Phase.ROUND_RESULT, Phase.MATCH_RESULT) and event.control == "slap":
            hold = self.timing.result_hold_ns if self.phase is Phase.ROUND_RESULT \
                else self.timing.podium_hold_ns
            if now - self.phase_since < hold:
                return  # a slap meant for the last card must not skip the result, nor the podium
            if self.phase is Phase.ROUND_RESULT:
                self._next_round(now)
            else:  # another match, the same seats and names
                self._enter(Phase.LOBBY, now)

    def _lobby_press(self, seat: int, control: str, now: int) -> None:
        self.phase_since = now  # someone is here: not idle
        if seat in self.pickers:
            self._pick(seat, control, now)
        elif control in ("up", "down"):  # the seat's name picker (views/seat.py draws it)
            taken = {key(n) for s, n in self.names.items() if s != seat}
            self.pickers[seat] = Picker(tuple(n for n in self.known if key(n) not in taken))
        elif control == "slap":
            self._join(seat)
        elif seat == self._chooser() and control in ("left", "right"):
            self.menu = (self.menu + (1 if control == "right" else -1)) % len(GAMES)
            self.game = GAMES[self.menu]
        elif seat == self._chooser() and control == "alt":
            try:
                self.start(now)
            except RulesError as exc:
                self._note(f"Seat {seat + 1} cannot start: {exc}")

    def _pick(self, seat: int, control: str, now: int) -> None:
        picker = self.pickers[seat]
        chose = picker.press(control)
        if picker.mode == "qr" and seat not in self.tokens:
            self.tokens[seat] = secrets.token_urlsafe(12)
        if chose is None:
            return
        what, name = chose
        if what == "close":
            del self.pickers[seat]
            return
        try:
            self.name_seat(seat, name, now)
        except ValueError as exc:  # another seat has it, a name the table cannot keep
            picker.message = str(exc)
            return
        del self.pickers[seat]

    def claim(self, seat: int, token: str, name: str, now: int) -> str:
        """A phone claims `seat` (from 0) with the token of its QR code: the seat is named, the
        token used up. RulesError, in the phone's words, for a token of another seat, one used
        already, or after the start; NameRefused for a name the table cannot keep."""
        if self.phase not in (Phase.ATTRACT, Phase.LOBBY, Phase.MATCH_RESULT):
            raise RulesError("the match has started: names are chosen in the lobby")
        mine = self.tokens.get(seat)
        if mine is None or not secrets.compare_digest(mine, token):
            other = next((s for s, t in self.tokens.items() if secrets.compare_digest(t, token)), None)
            if other is not None:
                raise RulesError(f"this code is seat {other + 1}'s, not seat {seat + 1}'s")
            raise RulesError(f"this code for seat {seat + 1} is used or no longer valid: show the "
                             "seat's code again")
        kept = self.name_seat(seat, name, now)
        del self.tokens[seat]
        self.pickers.pop(seat, None)
        return kept or ""

    def _chooser(self) -> int:
        """Seat 1 chooses the game; if seat 1 has not joined, the first seat that did."""
        return 0 if 0 in self.joined or not self.joined else self.joined[0]

    def _join(self, seat: int) -> None:
        if seat not in self.joined and self.players < PLAYERS[self.game][1]:
            self.joined.append(seat)
            # Bots are players after the people: renumber them, and a person takes a bot's seat
            # when the table is full.
            room = max(0, self.seats - len(self.joined))
            self.bots = {len(self.joined) + i: bot for i, bot in enumerate(list(self.bots.values())[:room])}

    # ------------------------------------------------------------ commands (tablectl)

    def new(self, game: str, options: dict[str, Any] | None = None, now: int = 0) -> None:
        """Choose the next game and its options; back to the lobby."""
        if game not in GAMES:
            raise RulesError(f"unknown game {game!r} (choose {', '.join(GAMES)})")
        if self.phase in (Phase.COUNTDOWN, Phase.PLAYING) or (
                self.phase is Phase.ROUND_RESULT and self.match is not None and not self.match.is_over):
            # Between rounds too: left behind unfinished, the match would come back at a restart.
            raise RulesError("a match is running: abort it first")
        try:  # in the words `start` would use, for the players at the table now (if any)
            check_options(game, options, self.players or None)
        except RulesError as exc:
            raise BadOptions(str(exc)) from None
        self.game, self.options = game, dict(options or {})
        self.menu = GAMES.index(game)
        self._enter(Phase.LOBBY, now)

    def set_bots(self, count: int, level: str = "medium") -> None:
        if self.phase in (Phase.COUNTDOWN, Phase.PLAYING):
            raise RulesError("bots join between matches")
        room = max(0, self.seats - len(self.joined))  # a bot needs a seat, as a person does
        if count > room:
            raise RulesError(f"at most {room} bots: {self.seats} seats are wired, {len(self.joined)} joined")
        self.bots = {len(self.joined) + i: Bot(Level(level), _rng(self.seed, i)) for i in range(count)}

    def add_bot(self, level: str = "medium") -> None:
        """One more bot at `level`; the others keep theirs (a lobby's `b`)."""
        self._set_levels([*self._levels(), level])

    def remove_bot(self) -> None:
        """The bot added last leaves (a lobby's `B`); the others keep their levels."""
        self._set_levels(self._levels()[:-1])

    def _levels(self) -> list[str]:
        return [str(bot.level) for _, bot in sorted(self.bots.items())]

    def _set_levels(self, levels: list[str]) -> None:
        self.set_bots(len(levels))  # its checks: between matches, a seat for each
        self.bots = {len(self.joined) + i: Bot(Level(lv), _rng(self.seed, i)) for i, lv in enumerate(levels)}

    def start(self, now: int) -> None:
        """From the lobby: build the match and count down."""
        if self.phase is not Phase.LOBBY:
            raise RulesError(f"nothing to start in {self.phase}")
        self.bots = {len(self.joined) + i: bot for i, bot in enumerate(self.bots.values())}
        lo, hi = PLAYERS[self.game]
        if not lo <= self.players <= hi:
            raise RulesError(f"{self.game} needs {lo} to {hi} players, {self.players} joined")
        if self.players > self.seats:
            raise RulesError(f"{self.players} players, but only {self.seats} seats are wired")
        before = self.match
        kept = None  # Domino keep_boards: the last match's player boards, same players, same game
        if before is not None and before.game == self.game and before.players == self.players:
            kept = before.boards_for_next_match()
        self.match = new_match(self.game, self.players, f"{self.seed}/{self.matches_played}", self.options,
                               boards=kept)
        self.matches_played += 1
        self.names = {s: n for s, n in self.names.items() if s in self.joined}
        self.pickers.clear()
        self.tokens.clear()  # a phone's code is for the lobby: gone at the start
        self.known = tuple(sorted({*self.known, *self.names.values()}, key=key))  # the writer adds them
        self.referee = Referee(self.match, Arbiter(self.window_ns, self.epsilon_ns, self.seed),
                               log=self._note, seats=self.seat_of_player)
        options = "".join(f", {escape(k)}={escape(v)}" for k, v in sorted(self.options.items()))
        self._note(f"Match started: {game_name(self.game)}{options}, {self.players} players: "
                   + ", ".join(self._who(p) for p in range(self.players)))
        self._countdown(now)

    def resume(self, match: Match, now: int, seats: list[int] | None = None,
               bots: dict[int, str] | None = None, names: dict[int, str] | None = None) -> None:
        """Pick up a match rebuilt from the journal after a crash, with the same seats, bots and
        names (by player): its round counts down again."""
        self.game, self.match = match.game, match
        bots = bots or {}
        seats = seats if seats and len(seats) == match.players else list(range(match.players))
        self.joined = [s for p, s in enumerate(seats) if p not in bots]
        self.names = {seats[p]: n for p, n in (names or {}).items() if 0 <= p < len(seats) and p not in bots}
        self.bots = {p: Bot(Level(level), _rng(self.seed, p)) for p, level in sorted(bots.items())}
        self.matches_played += 1
        self.referee = Referee(match, Arbiter(self.window_ns, self.epsilon_ns, self.seed), log=self._note,
                               seats=self.seat_of_player)
        self._note(f"Match resumed: {game_name(match.game)}, round {match.round_no + 1}, "
                   f"{self.players} players: "
                   + ", ".join(self._who(p) for p in range(self.players)))
        self._clock_restarted(match, now)
        if match.round.result is not None:
            self._enter(Phase.MATCH_RESULT if match.is_over else Phase.ROUND_RESULT, now)
        else:
            self._countdown(now)

    def _clock_restarted(self, match: Match, now: int) -> None:
        """The journal is stamped on the clock of the run that crashed. Stamps later than `now`
        mean that clock started again (a reboot): a joker's hold or a wait for a joker stamped
        on it would last as long as that run had played, so what the round has pending falls
        due at once (journaled as wakes), and the round counts down afresh."""
        rnd = match.round
        last = max((a.ts for a in rnd.journal), default=0)
        while last > now and rnd.result is None and (due := rnd.deadline()) is not None and rnd.wake(due):
            self.woken.append(rnd.journal[-1])

    def next(self, now: int) -> None:
        """Skip the rest of the round result: the next round counts down now."""
        if self.phase is not Phase.ROUND_RESULT:
            raise RulesError(f"no round result to skip in {self.phase}")
        self._next_round(now)

    def abort(self, now: int) -> None:
        if self.match is None:
            raise RulesError("no match to abort")
        self._note("Match aborted")
        self.match, self.referee = None, None
        self._enter(Phase.LOBBY, now)

    # ------------------------------------------------------------ time

    def deadline(self) -> int | None:
        """When `tick` next has work: the end of a countdown or a result, or a due press."""
        due = {
            Phase.COUNTDOWN: min(self.phase_since + self.timing.countdown_ns, self.next_count or 1 << 62),
            Phase.ROUND_RESULT: self.phase_since + self.timing.round_result_ns,
            Phase.MATCH_RESULT: self.phase_since + self.timing.match_result_ns,
            Phase.LOBBY: self.phase_since + self.timing.idle_ns,
        }.get(self.phase)
        if self.phase is Phase.PLAYING and self.referee is not None:
            due = self.referee.next_deadline()
            woke = self._round_due()
            if woke is not None:
                due = woke if due is None else min(due, woke)
        return due

    def _round_due(self) -> int | None:
        """When the round has something due by itself (a joker's hold, a wait for a joker), plus
        the arbiter's window, so presses stamped before that time reach the engine first."""
        due = self.match.round.deadline() if self.match is not None else None
        return None if due is None else due + self.window_ns

    def tick(self, now: int) -> list[Outcome]:
        """Advance to `now`: release due presses, end phases whose time is up."""
        outcomes: list[Outcome] = []
        if self.phase is Phase.COUNTDOWN and now >= self.phase_since + self.timing.countdown_ns:
            go = self.phase_since + self.timing.countdown_ns
            self.gate.go(go)
            self._enter(Phase.PLAYING, go)
            self.next_count = None
            self._cue("go", None, now)
        elif self.phase is Phase.COUNTDOWN and self.next_count is not None and now >= self.next_count:
            self._cue("count", None, now)  # one tick however late we are: never a burst
            self._count_after(now)
        if self.phase is Phase.PLAYING and self.referee is not None and self.match is not None:
            outcomes = self._decided(self.referee.decide(now), now)
            due = self._round_due()
            if due is not None and now >= due and self.match.round.wake(now):
                self.woken.append(self.match.round.journal[-1])
            if self.match.round.result is not None:
                outcomes += self._decided(self.referee.close_round(now), now)
                self._say_round_over()
                self._round_over_cue(now)
                self._enter(Phase.MATCH_RESULT if self.match.is_over else Phase.ROUND_RESULT, now)
        elif self.phase is Phase.ROUND_RESULT and now >= self.phase_since + self.timing.round_result_ns:
            self._next_round(now)
        elif (self.phase is Phase.MATCH_RESULT and now >= self.phase_since + self.timing.match_result_ns) or (
                self.phase is Phase.LOBBY and now >= self.phase_since + self.timing.idle_ns):
            self._to_attract(now)  # the podium's time is up, or the lobby was left alone
        return outcomes

    def _decided(self, outcomes: list[Outcome], now: int) -> list[Outcome]:
        """Each decision traced (`tablectl inputs`, `decisions`), a press too late cued."""
        seats = self.seat_of_player
        for outcome in outcomes:
            self._trace({"decided": outcome.press.control, "seat": seats[outcome.press.seat] + 1,
                         "ts_ns": outcome.press.ts, "decided_ns": outcome.decided_ns,
                         "refused": str(outcome.refusal.reason) if outcome.refusal else None})
            if outcome.refusal is not None and outcome.refusal.reason is Reason.TOO_LATE:
                self._cue("too_late", seats[outcome.press.seat], now)
        return outcomes

    def _to_attract(self, now: int) -> None:
        """Nobody is at the table: the seats are free for whoever slaps next (the bots stay)."""
        self.joined.clear()
        self.names.clear()
        self.pickers.clear()
        self.tokens.clear()
        self.bots = {i: bot for i, bot in enumerate(self.bots.values())}  # players after no people
        self._enter(Phase.ATTRACT, now)

    def _next_round(self, now: int) -> None:
        assert self.match is not None
        self.match.next_round()
        if self.referee is not None:
            self.referee.new_round()
        self._countdown(now)

    def _countdown(self, now: int) -> None:
        self.gate.arm()
        self._enter(Phase.COUNTDOWN, now)
        self._cue("count", None, now)
        self._count_after(now)

    def _count_after(self, now: int) -> None:
        """The next whole second of the countdown after `now`, if it comes before go."""
        due = self.phase_since + ((now - self.phase_since) // S + 1) * S
        self.next_count = due if due < self.phase_since + self.timing.countdown_ns else None

    def _who(self, player: int) -> str:
        seat = self.seat_of_player[player]
        if player in self.bots:
            return f"bot at seat {seat + 1}"
        name = self.names.get(seat)
        return f"{escape(name)} at seat {seat + 1}" if name else f"seat {seat + 1}"

    def _say_round_over(self) -> None:
        """The round's result and, at the end, the match's, as the players count them."""
        match = self.match
        assert match is not None and match.round.result is not None
        result, seats = match.round.result, self.seat_of_player
        how = ended_by(result.ending, [self._who(p) for p in result.finishers])
        head = f"Round {match.round_no + 1} over: {how}"
        scores = ", ".join(f"seat {seats[p] + 1} {score:+d}" for p, score in enumerate(result.scores))
        totals = ", ".join(f"seat {seats[p] + 1} {total}" for p, total in enumerate(match.totals))
        self._note(f"{head}. Scores {scores}; totals {totals}")
        if match.is_over:
            best = match.winners
            names = " and ".join(self._who(p) for p in best)
            verb = "wins" if len(best) == 1 else "share the win"
            self._note(f"Match over: {names} {verb} with {match.totals[best[0]]} after "
                       f"{match.rounds_played} rounds")

    def _round_over_cue(self, now: int) -> None:
        assert self.match is not None
        result = self.match.round.result
        assert result is not None
        seats = self.seat_of_player
        if self.match.is_over:
            winners = self.match.winners
            self._cue("match_won", seats[winners[0]] if len(winners) == 1 else None, now)
        elif result.ending in (Ending.LIGRETTO, Ending.LIGRETTO_STOP):
            self._cue("ligretto", seats[result.finishers[0]] if result.finishers else None, now)
        else:
            self._cue("round_end", None, now)

    def _cue(self, sound: str, seat: int | None, now: int) -> None:
        self.cues.append(Cue(sound, seat, now))
        del self.cues[:-50]  # nobody takes them (a bare table in a test): keep the newest

    def take_wakes(self) -> list[Wake]:
        """The rounds woken by time since the last call (they go into the journal after the
        actions decided in the same tick)."""
        woken, self.woken = self.woken, []
        return woken

    def take_false_starts(self) -> list[FalseStart]:
        """The false starts since the last call, oldest first."""
        taken, self.false_starts = self.false_starts, []
        return taken

    def take_cues(self) -> list[Cue]:
        """The sounds asked for since the last call, oldest first."""
        cues, self.cues = self.cues, []
        return cues

    def _enter(self, phase: Phase, now: int) -> None:
        self.phase = phase
        self.phase_since = self.entered = now

    def _note(self, text: str, level: int = logging.INFO, to: logging.Logger = log) -> None:
        """Something the players should know: logged, and kept for `tablectl debug`."""
        to.log(level, "%s", text)
        if level >= logging.INFO:
            self.notices.append(text)
            del self.notices[:-200]

    def inputs(self) -> dict[str, Any]:
        """What reached the engine: clean input events with the kernel's edge time (`ts_ns`) and
        when the loop took them (`received_ns`); decisions with the press's edge time and when
        the engine decided (`decided_ns`), all on the inputs' clock (CLOCK_MONOTONIC on a Pi);
        the arbiter's ties and late presses in this match."""
        seats = self.seat_of_player
        arbiter = [{"kind": d.kind, "delta_ns": d.delta_ns,
                    "presses": [{"seat": seats[p.seat] + 1, "control": p.control, "ts_ns": p.ts}
                                for p in d.presses]}
                   for d in (self.referee.arbiter.decisions if self.referee else ())]
        return {"events": list(self.trace), "arbiter": arbiter,
                "window_ns": self.window_ns, "epsilon_ns": self.epsilon_ns}

    def decisions_since(self, since: int) -> dict[str, Any]:
        """The decisions traced from the cursor `since` on (0 at first, then what the last answer
        said as `next`), oldest first, and how many entries of the trace from there it no longer
        holds (`missed`: some may have been decisions). A reader that asks again and again gets
        each decision once, and only what is new: `inputs` copies the whole trace every time."""
        if isinstance(since, bool) or not isinstance(since, int) or since < 0:
            raise ValueError(f"since must be a cursor, a whole number 0 or more (an answer's next), "
                             f"not {since!r}")
        if since > self.traced:
            raise ValueError(f"cursor {since} is past the trace's {self.traced} entries (the daemon "
                             "started again?): ask from 0")
        oldest = self.traced - len(self.trace)  # the cursor of the oldest entry still held
        kept = list(self.trace)[max(since, oldest) - oldest:]
        return {"decisions": [e for e in kept if "decided_ns" in e], "next": self.traced,
                "missed": max(0, oldest - since), "window_ns": self.window_ns}

    def _trace(self, entry: dict[str, Any]) -> None:
        self.trace.append(entry)
        self.traced += 1

    def status(self) -> dict[str, Any]:
        return {
            "phase": str(self.phase),
            "game": self.game,
            "options": self.options,
            "seats_joined": [s + 1 for s in self.joined],
            "names": self.player_names(),
            "bots": len(self.bots),
            "round": None if self.match is None else self.match.round_no + 1,
            "totals": None if self.match is None else list(self.match.totals),
        }



def _rng(seed: int, i: int) -> Any:
    import random

    return random.Random(f"table-bot/{seed}/{i}")
