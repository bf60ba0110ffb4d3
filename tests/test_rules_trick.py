"""Who wins a trick, and its points (RULES.md §7, Winning a trick; §3 equal cards)."""

from __future__ import annotations

import pytest

from arena.rules import RuleSet, Trump, card_order, decompose, parse_cards, trick_winner

P = parse_cards


def order(level: str = "2", suit: str | None = "S", **rules: object):
    return card_order(Trump.parse(level, suit), RuleSet.from_mapping(rules))


def winner(plays: list[str], leader: int = 0, **rules: object) -> int:
    return trick_winner(leader, [P(p) for p in plays], order(**rules)).winner


def test_judge_format_example_t1() -> None:
    result = trick_winner(1, [P("5H"), P("2S"), P("AH"), P("KH")], order())
    assert (result.winner, result.points) == (2, 15)


# -- singles ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plays", "seat"),
    [
        (["9H", "3H", "KH", "4H"], 2),  # highest of the led suit
        (["9H", "AC", "KD", "4H"], 0),  # other suits never win
        (["9H", "3S", "KH", "4H"], 1),  # a trump beats a side-suit lead
        (["9H", "3S", "4S", "KH"], 2),  # a higher trump beats a lower trump
        (["9H", "2H", "2D", "4H"], 1),  # equal trumps: the first stays ahead (§3)
        (["9H", "2H", "2S", "2D"], 2),  # the level card of T beats an off-suit one
        (["9H", "2S", "SJ", "BJ"], 3),
        (["9H", "9H", "3H", "4H"], 0),  # the second copy never overtakes the first
        (["AS", "BJ", "2S", "SJ"], 1),  # trump lead
        (["AS", "AH", "AC", "AD"], 0),  # side cards never win a trump lead
    ],
)
def test_singles(plays: list[str], seat: int) -> None:
    assert winner(plays) == seat


def test_no_trump_level_cards_are_equal() -> None:
    assert winner(["2H", "2S", "2C", "2D"], level="2", suit=None) == 0
    assert winner(["2H", "2S", "SJ", "2D"], level="2", suit=None) == 2
    assert winner(["AH", "KH", "2C", "AS"], level="2", suit=None) == 2


@pytest.mark.parametrize("leader", [0, 1, 2, 3])
def test_winner_is_a_seat_counted_from_the_leader(leader: int) -> None:
    result = trick_winner(leader, [P("9H"), P("3H"), P("KH"), P("4H")], order())
    assert result.winner == (leader + 2) % 4


# -- pairs and tractors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plays", "seat"),
    [
        (["5H 5H", "9H 9H", "3H 3H", "4H 4H"], 1),  # higher pair of the led suit
        (["5H 5H", "AH KH", "3H 4H", "6C 6C"], 0),  # shape-breaking plays never win
        (["5H 5H", "3S 4S", "6H 7H", "8H 9H"], 0),  # two different trumps are not a pair
        (["5H 5H", "3S 3S", "4S 4S", "AH AH"], 2),  # trump pairs
        (["5H 5H", "3S AH", "6C 6C", "7D 7D"], 0),  # a mixed play never wins
        (["5H 5H", "2H 2D", "9H 9H", "3H 3H"], 2),  # off-suit level cards: equal, not a pair
        (["5H 5H", "2H 2H", "2D 2D", "2S 2S"], 3),
        (["5H 5H", "2H 2H", "2D 2D", "AS AS"], 1),
    ],
)
def test_pairs(plays: list[str], seat: int) -> None:
    assert winner(plays) == seat


@pytest.mark.parametrize(
    ("plays", "seat"),
    [
        (["5H 5H 6H 6H", "9H 9H TH TH", "3H 3H 4H 4H", "7C 7C 8C 8C"], 1),
        (["5H 5H 6H 6H", "9H 9H JH JH", "3H 3H 4H 4H", "7C 7C 8C 8C"], 0),  # not a tractor
        (["5H 5H 6H 6H", "3S 3S 5S 5S", "3H 3H 4H 4H", "7C 7C 8C 8C"], 0),
        (["5H 5H 6H 6H", "3S 3S 4S 4S", "AS AS 2H 2H", "7C 7C 8C 8C"], 2),  # through level
        (["5H 5H 6H 6H", "3S 3S 4S 4S", "2H 2H 2S 2S", "SJ SJ BJ BJ"], 3),
    ],
)
def test_tractors(plays: list[str], seat: int) -> None:
    assert winner(plays) == seat


def test_level_tractors_forbidden_changes_the_winner() -> None:
    plays = ["5H 5H 6H 6H", "3S 3S 4S 4S", "AS AS 2H 2H", "7C 7C 8C 8C"]
    assert winner(plays) == 2
    assert winner(plays, level_tractors=False) == 1


# -- throws -------------------------------------------------------------------------------------


def test_held_tractor_serves_as_pairs_to_beat_a_throw() -> None:
    assert winner(["AH AH 9H 9H", "3S 3S 4S 4S", "5C 5C 6C 6C", "7H 8H JH QH"]) == 1


def test_throw_must_be_matched_in_shape() -> None:
    # lead pair + single; a trump play of three singles does not win
    assert winner(["AH AH KH", "3S 4S 5S", "6H 7H 8H", "9C 9C TC"]) == 0
    assert winner(["AH AH KH", "3S 3S 4S", "6H 7H 8H", "9C 9C TC"]) == 1


# lead AH AH KH (pair + single); seat 1 ruffs with 3S 3S AS, seat 2 with 5S 5S 4S
POLICY_TRICK = ["AH AH KH", "3S 3S AS", "5S 5S 4S", "6D 7D 8D"]


@pytest.mark.parametrize(
    ("policy", "seat"),
    [
        ("largest_unit", 2),  # the pair 5S 5S beats 3S 3S
        ("all_units", 1),  # 4S does not beat AS: seat 2 must beat every unit
        ("highest_card", 1),  # AS is the highest card
    ],
)
def test_throw_policies(policy: str, seat: int) -> None:
    assert winner(POLICY_TRICK, throw_beaten_by=policy) == seat


@pytest.mark.parametrize(
    ("policy", "seat"),
    [("largest_unit", 2), ("all_units", 2), ("highest_card", 2)],
)
def test_throw_policies_agree_when_every_unit_is_higher(policy: str, seat: int) -> None:
    plays = ["AH AH KH", "3S 3S 4S", "5S 5S 6S", "6D 7D 8D"]
    assert winner(plays, throw_beaten_by=policy) == seat


def test_a_throw_of_singles_compares_the_highest() -> None:
    plays = ["AH KH", "3S 9S", "4S 8S", "QH JH"]
    assert winner(plays) == 1
    assert winner(plays, throw_beaten_by="all_units") == 1
    assert winner(["AH KH", "3S 9S", "4S TS", "QH JH"]) == 2


def test_equal_largest_unit_stays_with_the_earlier_play() -> None:
    # 2D 2D and 2C 2C are equal pairs (off-suit level cards, L = 2, T = ♠)
    plays = ["AH AH KH", "2D 2D 4S", "2C 2C 9S", "6D 7D 8D"]
    assert winner(plays) == 1


def test_lead_units_may_be_passed_in() -> None:
    o = order()
    plays = [P("5H 5H 6H 6H"), P("3S 3S 4S 4S"), P("9H 9H TH TH"), P("7C 7C 8C 8C")]
    assert trick_winner(0, plays, o, decompose(plays[0], o)).winner == 1


# -- points --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plays", "points"),
    [
        (["5H", "TH", "KH", "4H"], 25),
        (["AS", "2S", "3S", "4S"], 0),
        (["5H 5H", "TS TS", "KD KD", "5C 4C"], 55),
    ],
)
def test_points_are_every_point_card_in_the_trick(plays: list[str], points: int) -> None:
    assert trick_winner(0, [P(p) for p in plays], order()).points == points
