"""Who wins a trick led by a throw, under every ``throw_beaten_by`` policy (RULES.md §7,
"Winning a trick"; docs/rules-notes.md).

A play's cards may fit the lead's units in several ways (a pair serves as two singles, a
held tractor as pairs). The cases below come from the rules text; the property at the end
checks the referee against a brute-force oracle that tries every assignment of cards to
units, for all three policies.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.rules import Card, RuleSet, Trump, card_order, decompose, parse_cards, trick_winner
from arena.rules.trump import TRUMP_LANE, CardOrder

P = parse_cards
POLICIES = ("largest_unit", "all_units", "highest_card")


def order(policy: str) -> CardOrder:
    """Level 2, spades trump (the examples of RULES.md §7)."""
    return card_order(Trump.parse("2", "S"), RuleSet.from_mapping({"throw_beaten_by": policy}))


def winner(plays: list[str], policy: str) -> int:
    return trick_winner(0, [P(p) for p in plays], order(policy)).winner


# Lead AH AH KH QH: a pair and two singles. Seat 1 ruffs with 3S 3S 9S 8S (pair 3, singles
# 9 and 8). Each row: seat 2's ruff, then the winner under each policy.
CASES = [
    # the defect: 4S 4S TS TS read as pair 4S + singles TS TS beats every unit of seat 1
    ("4S 4S TS TS", {"largest_unit": 2, "all_units": 2, "highest_card": 2}),
    # pair 4 beats pair 3, but the singles 9 8 only tie seat 1's
    ("4S 4S 9S 8S", {"largest_unit": 2, "all_units": 1, "highest_card": 1}),
    # higher everywhere: every policy agrees
    ("5S 5S JS TS", {"largest_unit": 2, "all_units": 2, "highest_card": 2}),
    # only the highest card is higher
    ("2S 7S 6S 6S", {"largest_unit": 2, "all_units": 1, "highest_card": 2}),
    # not a pair and two singles of one lane: never wins
    ("4S 5S 6S 7S", {"largest_unit": 1, "all_units": 1, "highest_card": 1}),
    ("4S 4S TS 9D", {"largest_unit": 1, "all_units": 1, "highest_card": 1}),
]


@pytest.mark.parametrize(("ruff", "expected"), CASES)
@pytest.mark.parametrize("policy", POLICIES)
def test_a_second_ruff_of_a_throw(ruff: str, expected: dict[str, int], policy: str) -> None:
    plays = ["AH AH KH QH", "3S 3S 9S 8S", ruff, "4D 5D 6D 7D"]
    assert winner(plays, policy) == expected[policy]


@pytest.mark.parametrize("policy", POLICIES)
def test_the_winner_holds_with_every_reading_of_its_cards(policy: str) -> None:
    # seat 1's 5S 5S 8S 8S reads as pair 8 + singles 5 5, or pair 5 + singles 8 8: under
    # all_units seat 2's 9S 9S 7S 6S beats the first reading but not the second
    plays = ["AH AH KH QH", "5S 5S 8S 8S", "9S 9S 7S 6S", "4D 5D 6D 7D"]
    assert winner(plays, policy) == {"largest_unit": 2, "all_units": 1, "highest_card": 2}[policy]
    plays[2] = "9S 9S JS TS"  # higher than every reading
    assert winner(plays, policy) == 2


@pytest.mark.parametrize("policy", POLICIES)
def test_a_held_tractor_serves_as_pairs(policy: str) -> None:
    # lead AH AH QH QH 9H: two pairs (K between them) and a single
    plays = ["AH AH QH QH 9H", "3S 3S 4S 4S 6S", "5S 5S 7S 7S 8S", "4D 5D 6D 7D 8D"]
    assert winner(plays, policy) == 2
    plays[2] = "5S 5S 6S 6S 3D"  # a side card: never wins
    assert winner(plays, policy) == 1


@pytest.mark.parametrize("policy", POLICIES)
def test_a_throw_of_singles(policy: str) -> None:
    # pairs serve as two singles; under all_units TS TS beats 9S 3S single by single
    assert winner(["AH KH", "9S 3S", "TS TS", "4D 5D"], policy) == 2
    assert winner(["AH KH", "9S 3S", "5S 5S", "4D 5D"], policy) == 1


@pytest.mark.parametrize("policy", POLICIES)
def test_within_the_led_suit(policy: str) -> None:
    # nothing trumps: the led suit's plays compare by the same policy
    plays = ["KH KH 3H", "4H 4H AH", "5H 5H 6H", "4D 5D 6D"]
    # the lead's pair is never beaten; only AH is higher than every card before it
    assert winner(plays, policy) == {"largest_unit": 0, "all_units": 0, "highest_card": 1}[policy]
    assert (
        winner(["5H 5H 3H", "6H 6H 9H", "7H 7H 4H", "4D 5D 6D"], policy)
        == {
            "largest_unit": 2,
            "all_units": 1,
            "highest_card": 1,
        }[policy]
    )


# -- a brute-force oracle ------------------------------------------------------------------


def readings(
    cards: Sequence[Card], shapes: Sequence[tuple[int, int]], o: CardOrder
) -> set[tuple[int, ...]]:
    """Every way to deal ``cards`` into units of ``shapes`` (width, length), by trying every
    order of the cards: each unit's high key, units of one shape sorted highest first."""
    out: set[tuple[int, ...]] = set()
    sizes = [w * n for w, n in shapes]
    for perm in set(itertools.permutations(cards)):
        highs: list[int] = []
        at = 0
        for shape, size in zip(shapes, sizes, strict=True):
            part = perm[at : at + size]
            at += size
            try:
                units = decompose(part, o)
            except Exception:
                break
            if len(units) != 1 or (units[0].width, units[0].length) != shape:
                break
            highs.append(max(o.key[c.index] for c in part))
        else:
            keyed = sorted(zip(shapes, highs, strict=True), key=lambda sh: (sh[0], -sh[1]))
            by_shape = {s: sorted((h for t, h in keyed if t == s), reverse=True) for s in shapes}
            out.add(tuple(by_shape[s].pop(0) for s in shapes))
    return out


def oracle(plays: list[list[Card]], policy: str) -> int:
    """The winner by the rules' definitions, tried exhaustively."""
    o = order(policy)
    lead_units = decompose(plays[0], o)
    shapes = [(u.width, u.length) for u in lead_units]
    led = o.lane_of(plays[0][0])
    best, lane, read = 0, led, readings(plays[0], shapes, o)
    for i in range(1, len(plays)):
        lanes = {o.lane_of(c) for c in plays[i]}
        if len(lanes) != 1 or not lanes <= {led, TRUMP_LANE}:
            continue
        mine = readings(plays[i], shapes, o)
        if not mine:
            continue
        (my_lane,) = lanes
        top = max(o.key[c.index] for c in plays[i])
        their_top = max(o.key[c.index] for c in plays[best])
        if my_lane != lane:
            wins = my_lane == TRUMP_LANE
        elif policy == "largest_unit":
            wins = max(r[0] for r in mine) > max(r[0] for r in read)
        elif policy == "all_units":  # some reading of mine beats every reading of theirs
            wins = any(all(all(m > t for m, t in zip(r, s, strict=True)) for s in read)
                       for r in mine)  # fmt: skip
        else:
            wins = top > their_top
        if wins:
            best, lane, read = i, my_lane, mine
    return best


LEADS = ["AH AH KH", "AH AH KH QH", "AH AH QH QH 9H", "AH KH", "KH KH 9H", "QH QH 3H 4H"]
TRUMPS = P("3S 3S 4S 4S 5S 5S 6S 6S 8S 8S 9S 9S TS TS JS QS 2D 2D 2S SJ BJ BJ")
SIDE = P("5H 7H 8H 8H 4C")


def ruff(rnd: random.Random, left: list[Card], n: int) -> list[Card]:
    """``n`` cards taken from ``left``: some pairs (which may serve as singles), the rest
    single cards, now and then a side card (which never wins)."""
    out: list[Card] = []
    for _ in range(rnd.randrange(n // 2 + 1)):
        pairs = sorted({c for c in left if left.count(c) >= 2}, key=str)
        if pairs:
            face = rnd.choice(pairs)
            left.remove(face)
            left.remove(face)
            out += [face, face]
    while len(out) < n:
        out.append(left.pop(rnd.randrange(len(left))))
    if rnd.random() < 0.1:
        out[0] = rnd.choice(SIDE)
    return sorted(out, key=str)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(LEADS), st.integers(0, 2**32 - 1))
def test_trick_winner_agrees_with_the_oracle(lead: str, seed: int) -> None:
    rnd = random.Random(seed)
    led = P(lead)
    left = list(TRUMPS)
    plays = [led] + [ruff(rnd, left, len(led)) for _ in range(3)]
    for policy in POLICIES:
        assert trick_winner(0, plays, order(policy)).winner == oracle(plays, policy), policy


def test_arena_judge_agrees() -> None:
    """Every case above, asked of a real ``arena judge`` process in one stream."""
    questions: list[dict[str, object]] = []
    expected = []
    for ruff_play, winners in CASES:
        for policy in POLICIES:
            plays = ["AH AH KH QH", "3S 3S 9S 8S", ruff_play, "4D 5D 6D 7D"]
            questions.append(
                {
                    "id": len(questions),
                    "q": "trick",
                    "trump": {"level": "2", "suit": "S"},
                    "rules": {"throw_beaten_by": policy},
                    "leader": 0,
                    "plays": [p.split() for p in plays],
                }
            )
            expected.append(winners[policy])
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "judge"],
        input="".join(json.dumps(q) + "\n" for q in questions),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["winner"] for a in answers] == expected
