"""Perft for Tractor: legal play counts from fixed positions, against a brute force.

Chess engines test move generation by counting the leaves of the move tree to a small
depth from known positions ("perft") and comparing with trusted numbers. Here the
positions are written in the text form (docs/position.md), the production side is
:func:`arena.rules.perft` over :func:`arena.rules.legal_plays`, and the trusted side is
``follow_oracle``: every multiset of the right size from the hand, filtered by a
separately written reading of RULES.md §7 that calls no production rule code. The pinned
numbers were counted by hand for the smaller cases (see the comments).
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from follow_oracle import Table, follows, leads, multisets

from arena.rules import Position, check_play, legal_plays, perft

# (name, position, {depth: leaves}); the trick's lead is on the table except in "lead"
PERFT: list[tuple[str, str, dict[int, int]]] = [
    # a pair led, no follower holds a heart pair: 4C2 · 3C2 · 3C2 follows
    ("pair",
     "AS,AS,3C,4C/3H,7H,8H,JH,QC,KC,KC,6D/3S,4S,4H,5H,TH,8C,QD,QD/"
     "6S,QH,KH,AH,7C,7C,9D,JD 2S 0 ? 0:9H,9H 0 -",
     {1: 6, 2: 18, 3: 54}),
    # RULES.md §7's examples: the tractor 9H9H THTH, then 8H8H and two of 3H 4H 7H
    ("tractor",
     "4H,JH,KH,KH,5C,6C,4D,4D/3C,3D/3H,9H,9H,TH,TH,QH,QH,7C/"
     "3H,4H,7H,8H,8H,8C,8C,AD 2S 0 ? 1:5H,5H,6H,6H 0 -",
     {1: 1, 2: 3, 3: 3}),
    # level cards make a trump tractor (2H2H 2S2S; AS AS 2D 2D answers it)
    ("level tractor",
     "4S,KS,KS,2C,2C,9C,TD,BJ/3S,7S,JS,QS,QS,8D,8D,BJ/4D,5D/"
     "3S,AS,AS,5H,6H,2D,2D,SJ 2S 2 ? 2:2S,2S,2H,2H 0 -",
     {1: 1, 2: 1, 3: 6}),
    # a throw of a pair and a single
    ("throw",
     "9H,TH,QH,QH,6C,7C/6H,7H,8H,JH,3D,4D/3H,4H,4H,5H,5H,AC/"
     "AS,2C 2S 1 ? 3:KH,KH,AH 0 -",
     {1: 2, 2: 8, 3: 32}),
    # a 3-pair tractor: shorter tractor plus pair, two pairs plus singles, short suit
    ("long tractor",
     "AH,AC/KC,3D,3D,5D,6D,JD,JD,QD,QD/6C,6C,4D,5D,TD,TD,KD,AD,AD/"
     "5S,6S,3C,3C,4C,4C,4D,KD 2S 1 ? 0:7D,7D,8D,8D,9D,9D 0 -",
     {1: 1, 2: 3, 3: 24}),
    # a throw of a tractor and a single: a tractor inside a longer one
    ("tractor throw",
     "7C,8C,8C,TC,TC,JC,JD/9C,JC,3D,4D,5D,6D/7H,7H/"
     "2S,AH,4C,4C,5C,5C,6C,6C,9C 2S 3 ? 2:3C,QC,QC,KC,KC 0 -",
     {1: 4, 2: 8, 3: 32}),
    # no trump at level 5: the 5s and jokers are the trumps
    ("no trump",
     "5C,2D,3D/KS,AS/5H,5H,3C,5D,SJ,SJ,BJ/5C,KC,AC,AC,5D,BJ 5NT 1 ? 1:5S,5S 0 -",
     {1: 2, 2: 6, 3: 12}),
    # a lead: 5 spade leads, 1 club, 2·3·2·2·2 − 1 = 47 trump leads (trump hearts)
    ("lead",
     "KS,AS,AS,3H,4H,4H,5H,9C,2D,BJ/QS,QS,6H,7H,8D/JS,JS,9H,9H/"
     "TC,TC,KD,KD 2H 0 ? 0: 0 -",
     {1: 53}),
]  # fmt: skip


def brute_perft(position: Position, depth: int) -> int:
    """The oracle's count: follows by brute force, a trick's plays applied by hand."""
    table = Table(position.level, position.trump.suit if position.trump else None)
    hand = position.hand(position.turn)
    lead = position.lead
    if lead is None:
        assert depth == 1, "the oracle has no throw check: leads are counted to depth 1"
        return len(leads(hand, table))
    if depth == 0:
        return 1
    total = 0
    for play in follows(lead, hand, table):
        left = list((Counter(hand) - Counter(play)).elements())
        hands = list(position.hands)
        hands[position.turn] = tuple(left)
        h0, h1, h2, h3 = hands
        after = dataclasses.replace(position, hands=(h0, h1, h2, h3), plays=(*position.plays, play))
        total += 1 if len(after.plays) == 4 or depth == 1 else brute_perft(after, depth - 1)
    return total


@pytest.mark.parametrize(("name", "text", "leaves"), PERFT, ids=[p[0] for p in PERFT])
def test_perft_matches_the_brute_force(name: str, text: str, leaves: dict[int, int]) -> None:
    position = Position.parse(text)
    assert str(position) == text  # the text form is canonical: it prints as written
    for depth, expected in leaves.items():
        assert perft(position, depth) == expected, f"{name}: perft({depth})"
        assert brute_perft(position, depth) == expected, f"{name}: oracle({depth})"


@pytest.mark.parametrize(("name", "text", "leaves"), PERFT, ids=[p[0] for p in PERFT])
def test_check_play_agrees_with_the_oracle_on_every_multiset(
    name: str, text: str, leaves: dict[int, int]
) -> None:
    """Not just the counts: the same plays, and check_play refuses every other one."""
    position = Position.parse(text)
    table = Table(position.level, position.trump.suit if position.trump else None)
    hand = position.hand(position.turn)
    generated = list(legal_plays(position))
    assert len(generated) == len(set(generated)), "legal_plays yields each play once"
    lead = position.lead
    expected = leads(hand, table) if lead is None else follows(lead, hand, table)
    assert set(generated) == expected
    sizes = range(1, len(hand) + 1) if lead is None else [len(lead)]
    for size in sizes:
        for play in multisets(hand, size):
            assert bool(check_play(position, play)) is (play in expected), (name, play)
