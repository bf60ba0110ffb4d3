"""End of the deal: kitty bonus, the level table, advancing levels (RULES.md §8)."""

from __future__ import annotations

import pytest

from arena.rules import (
    ATTACKERS,
    DEALER,
    Rank,
    RuleSet,
    Trump,
    advance,
    card_order,
    check_lead,
    deal_result,
    decompose,
    kitty_bonus,
    parse_cards,
)

P = parse_cards
ORDER = card_order(Trump.parse("2", "S"))


def rules(**values: object) -> RuleSet:
    return RuleSet.from_mapping(values)


def multiplier(last_lead: str, **values: object) -> int:
    return kitty_bonus(P("5D"), decompose(P(last_lead), ORDER), rules(**values))[0]


# -- kitty bonus --------------------------------------------------------------------------------


def test_judge_format_example_k1() -> None:
    kitty = P("KD TD 5D 3C 4C 6C JC QS")
    assert kitty_bonus(kitty, decompose(P("AH AH"), ORDER), RuleSet()) == (4, 100)


@pytest.mark.parametrize(
    ("last_lead", "linear", "power", "doubling"),
    [
        ("AH", 2, 2, 2),  # single ×2
        ("AH AH", 4, 4, 4),  # pair ×4
        ("5H 5H 6H 6H", 8, 16, 8),  # tractor of 2 pairs ×8
        ("5H 5H 6H 6H 7H 7H", 12, 64, 16),  # tractor of 3 pairs ×12
        ("AH AH KH", 4, 4, 4),  # a throw: its largest unit
        ("AH KH QH", 2, 2, 2),
        ("5H 5H 6H 6H AH AH KH", 8, 16, 8),
    ],
)
def test_kitty_multipliers(last_lead: str, linear: int, power: int, doubling: int) -> None:
    assert multiplier(last_lead) == linear
    assert multiplier(last_lead, kitty_multiplier="linear") == linear
    assert multiplier(last_lead, kitty_multiplier="power") == power
    assert multiplier(last_lead, kitty_multiplier="doubling") == doubling


def test_kitty_bonus_after_a_failed_throw_uses_the_forced_unit() -> None:
    hands = [P("AH AH QH"), P("KH"), P(""), P("")]
    verdict = check_lead(0, hands, P("AH AH QH"), ORDER)
    assert verdict.failed
    kitty = P("KD TD 5D 3C 4C 6C JC QS")
    assert kitty_bonus(kitty, verdict.units, RuleSet()) == (2, 50)


def test_kitty_without_points() -> None:
    assert kitty_bonus(P("3C 4C"), decompose(P("AH AH"), ORDER), RuleSet()) == (4, 0)


# -- the level table ----------------------------------------------------------------------------

TWO_DECKS = [
    (-160, DEALER, 7),
    (-120, DEALER, 6),
    (-115, DEALER, 5),
    (-80, DEALER, 5),  # −80 → +5
    (-75, DEALER, 4),
    (-40, DEALER, 4),  # −40 → +4
    (-35, DEALER, 3),
    (-10, DEALER, 3),
    (0, DEALER, 3),  # P ≤ 0 → +3
    (5, DEALER, 2),  # 5–35 → +2
    (35, DEALER, 2),
    (40, DEALER, 1),  # 40–75 → +1
    (75, DEALER, 1),
    (80, ATTACKERS, 0),  # 80–115 → take over, no level
    (85, ATTACKERS, 0),
    (115, ATTACKERS, 0),
    (120, ATTACKERS, 1),  # 120–155 → +1
    (155, ATTACKERS, 1),
    (160, ATTACKERS, 2),  # 160–195 → +2
    (195, ATTACKERS, 2),
    (200, ATTACKERS, 3),  # each further 40, uncapped
    (240, ATTACKERS, 4),
    (400, ATTACKERS, 8),
]


@pytest.mark.parametrize(("points", "winner", "levels"), TWO_DECKS)
def test_level_table_two_decks(points: int, winner: str, levels: int) -> None:
    result = deal_result(points, RuleSet())
    assert (result.winner, result.levels) == (winner, levels)


@pytest.mark.parametrize(
    ("points", "winner", "levels"),
    [
        (-40, DEALER, 5),
        (-20, DEALER, 4),
        (-15, DEALER, 3),
        (0, DEALER, 3),
        (5, DEALER, 2),  # 5–15
        (15, DEALER, 2),
        (20, DEALER, 1),  # 20–35
        (35, DEALER, 1),
        (40, ATTACKERS, 0),  # 40–55 take over
        (55, ATTACKERS, 0),
        (60, ATTACKERS, 1),  # 60–75
        (75, ATTACKERS, 1),
        (80, ATTACKERS, 2),
        (100, ATTACKERS, 3),
    ],
)
def test_level_table_one_deck(points: int, winner: str, levels: int) -> None:
    result = deal_result(points, rules(decks=1))
    assert (result.winner, result.levels) == (winner, levels)


@pytest.mark.parametrize(
    ("points", "winner", "levels"),
    [
        (-120, DEALER, 5),
        (-60, DEALER, 4),
        (-55, DEALER, 3),
        (0, DEALER, 3),
        (5, DEALER, 2),  # step 60: 5–55
        (55, DEALER, 2),
        (60, DEALER, 1),  # 60–115
        (115, DEALER, 1),
        (120, ATTACKERS, 0),  # 120–175 take over
        (175, ATTACKERS, 0),
        (180, ATTACKERS, 1),
        (235, ATTACKERS, 1),
        (240, ATTACKERS, 2),
        (300, ATTACKERS, 3),
    ],
)
def test_level_table_three_decks(points: int, winner: str, levels: int) -> None:
    result = deal_result(points, rules(decks=3))
    assert (result.winner, result.levels) == (winner, levels)


@pytest.mark.parametrize(
    ("points", "winner", "levels"),
    [
        (75, DEALER, 1),  # the dealer's side does not change
        (0, DEALER, 3),
        (80, ATTACKERS, 1),  # 80–115 → attackers +1
        (115, ATTACKERS, 1),
        (120, ATTACKERS, 2),
        (160, ATTACKERS, 3),
    ],
)
def test_dead_zone_off(points: int, winner: str, levels: int) -> None:
    result = deal_result(points, rules(dead_zone=False))
    assert (result.winner, result.levels) == (winner, levels)


@pytest.mark.parametrize(
    ("cap", "points", "levels"),
    [
        (None, -80, 5),
        (3, -80, 3),
        (3, -40, 3),
        (3, 0, 3),
        (3, 35, 2),
        (3, 240, 3),
        (3, 400, 3),
        (6, -200, 6),
        (6, -80, 5),
        (6, 400, 6),
        (6, 200, 3),
    ],
)
def test_level_cap(cap: int | None, points: int, levels: int) -> None:
    assert deal_result(points, rules(level_cap=cap)).levels == levels


# -- advancing (A must be defended) --------------------------------------------------------------


def adv(level: str, levels: int, as_dealer: bool, **values: object) -> tuple[str, bool]:
    new, won = advance(Rank.parse(level), levels, as_dealer, rules(**values))
    return new.code, won


@pytest.mark.parametrize(
    ("level", "levels", "as_dealer", "expected"),
    [
        ("2", 3, True, ("5", False)),
        ("2", 0, False, ("2", False)),
        ("2", 1, False, ("3", False)),
        ("Q", 3, True, ("A", False)),  # judge-format.md a1: levels never skip past A
        ("Q", 3, False, ("A", False)),
        ("K", 1, False, ("A", False)),
        ("A", 1, True, ("A", True)),  # keeps the deal as dealer team at A: match won
        ("A", 3, True, ("A", True)),
        ("A", 2, False, ("A", False)),  # took over at A: must now defend it
        ("A", 0, False, ("A", False)),
        ("9", 2, False, ("J", False)),
        ("T", 4, True, ("A", False)),
        ("5", 3, False, ("8", False)),
    ],
)
def test_advance_default(level: str, levels: int, as_dealer: bool, expected: tuple) -> None:
    assert adv(level, levels, as_dealer) == expected
    assert adv(level, levels, as_dealer, must_defend=["A"]) == expected


@pytest.mark.parametrize(
    ("level", "levels", "as_dealer", "expected"),
    [
        ("3", 3, False, ("5", False)),  # arriving at 5 stops there
        ("3", 3, True, ("5", False)),
        ("5", 3, True, ("8", False)),  # the dealer team that kept the deal leaves it
        ("5", 3, False, ("5", False)),  # attackers at 5 stay at 5
        ("8", 5, True, ("T", False)),
        ("T", 2, True, ("Q", False)),
        ("Q", 3, True, ("K", False)),  # K must be defended too
        ("Q", 3, False, ("K", False)),
        ("K", 3, True, ("A", False)),
        ("A", 1, True, ("A", True)),
        ("6", 2, True, ("8", False)),
    ],
)
def test_advance_must_defend_points(
    level: str, levels: int, as_dealer: bool, expected: tuple
) -> None:
    assert adv(level, levels, as_dealer, must_defend=["5", "T", "K", "A"]) == expected


@pytest.mark.parametrize(
    ("level", "levels", "as_dealer", "expected"),
    [
        ("Q", 3, True, ("A", True)),  # nothing to defend: passing A wins the match
        ("Q", 2, True, ("A", False)),
        ("K", 1, False, ("A", False)),
        ("K", 2, False, ("A", True)),
        ("A", 1, False, ("A", True)),
        ("3", 3, False, ("6", False)),
    ],
)
def test_advance_nothing_to_defend(
    level: str, levels: int, as_dealer: bool, expected: tuple
) -> None:
    assert adv(level, levels, as_dealer, must_defend=[]) == expected
