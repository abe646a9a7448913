"""The Domino bot's quick paths give the answers the plain ones give, at every moment of real
rounds: `placement_list` (one pass over the kept colour pairs) against the placements worked out
square by square, and `joker_for` (kept until the board or a token changes) against a fresh
`joker_route`. A stale kept answer, or a pair listed out of order, would change what bots play. And an ended
round's journal, as its match keeps it packed, reads back as it was."""

from __future__ import annotations

import random

from firmware_host.engine.game import sight_of
from firmware_host.engine.round import Wake
from firmware_host.games.domino.rules import (
    ANY_SEAT,
    SET,
    DiscardDomino,
    DominoCard,
    DominoRound,
    PlaceDomino,
    PlayJoker,
)
from firmware_host.play.simulate import make_bots
from firmware_host.table.matches import new_match


def _square_by_square(rnd: DominoRound, seat: int, card: DominoCard, ts: int | None) -> list[PlaceDomino]:
    """The placements as the rules define them: every pair of free squares next to each token
    (any free pair for a token this seat must free) whose colours are the card's."""
    owed = rnd.owed(seat)
    out = []
    for i, tok in enumerate(rnd.tokens):
        if owed and i not in owed:
            continue
        if tok.blocked_for is not None:
            if tok.blocked_for in (seat, ANY_SEAT):
                out += [PlaceDomino(seat, card, i, n, f) for n, f in rnd.free_pairs()
                        if rnd.matches(card, n, f)]
            continue
        if ts is not None and rnd._reserved_against(tok, seat, ts):
            continue
        out += [PlaceDomino(seat, card, i, n, f) for n, f in rnd.places_at(i) if rnd.matches(card, n, f)]
    return out


def test_kept_answers_are_the_fresh_ones_throughout_bot_rounds() -> None:
    checked = jokers = placed = 0
    for seed in range(6):
        players = 2 + seed % 3
        match = new_match("domino", players, f"kept/{seed}", {})
        bots = make_bots(players, "hard" if seed % 2 else "instant", seed)
        rng = random.Random(seed)
        rnd = match.round
        sights = [sight_of(rnd, s) for s in range(players)]
        now = 0
        while rnd.result is None and now < 3000:
            now += 1
            ts = now * 50_000_000  # 50 ms a move: a joker's 5 s hold lapses within a round
            due = rnd.deadline()
            if due is not None and due <= ts:
                rnd.wake(ts)
                continue
            for seat in range(players):
                card = rnd.top_card(seat)
                if card is None:
                    continue
                listed = rnd.placement_list(seat, card, ts)
                assert listed == _square_by_square(rnd, seat, card, ts)
                assert list(rnd.placements(seat, card)) == _square_by_square(rnd, seat, card, None)
                kept = rnd.joker_for(seat, card, ts)
                assert kept == rnd.joker_for(seat, card, ts)  # asked again: from what was kept
                rnd._known.clear()
                assert kept == rnd.joker_route(seat, [card], ts=ts)
                rnd.joker_for(seat, card, ts)  # kept again for the next move's check
                checked += 1
                jokers += kept is not None
                placed += bool(listed)
            seat = rng.randrange(players)
            action = bots[seat].choose(sights[seat], ts)
            if action is not None:
                match.apply(action)
    assert checked > 1000 and jokers > 10 and placed > 100


def test_a_packed_journal_is_plain_numbers_and_reads_back_equal() -> None:
    """Every kind of entry, and a square sent as a list (as JSON gives it), comes back equal and
    of the same types; what only the bots send packs to numbers, which the collector stops walking."""
    card = SET[7]
    journal = [PlaceDomino(0, card, 2, (3, 4), (3, 5), 11), PlayJoker(1, 3, (0, 1), 12), DiscardDomino(2, 13),
               Wake(14), PlaceDomino(1, SET[0], 0, [5, 6], (5, 7), 15), PlayJoker(0, 1, [2, 2], 16)]
    packed = DominoRound.pack_journal(journal)
    assert packed[:21] == (4, 0, 7, 2, 3, 4, 3, 5, 11, 5, 1, 3, 0, 1, 12, 3, 2, 13, 0, 14, 1)
    read = DominoRound.unpack_journal(packed)
    assert read == journal
    assert [[type(f) for f in a] for a in read] == [[type(f) for f in a] for a in journal]
    assert [type(a) for a in read] == [type(a) for a in journal]
    assert read[0].card is card
    plain = DominoRound.pack_journal(journal[:4])
    assert all(type(f) is int for f in plain)
