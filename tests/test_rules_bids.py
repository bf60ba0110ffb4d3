"""Trump bids (RULES.md §5, Bids; §9 bid strength)."""

from __future__ import annotations

import pytest

from arena.rules import (
    Bid,
    Position,
    Rank,
    RuleSet,
    Suit,
    check_bid,
    codes,
    is_bid_shape,
    legal_bids,
    parse_cards,
    strength,
)

P = parse_cards


def rules(**values: object) -> RuleSet:
    return RuleSet.from_mapping(values)


def bids(
    hand: str, winning: tuple[int, str] | None = None, seat: int = 1, level: str = "2", **values
) -> list[str]:
    win = None if winning is None else Bid(winning[0], tuple(P(winning[1])))
    position = Position.holding(seat, P(hand), Rank.parse(level), bid=win, rules=rules(**values))
    found = legal_bids(position, seat)
    return [" ".join(codes(b)) for b in found]


def test_judge_format_example_b1() -> None:
    got = bids("2H 2H 2S SJ SJ BJ 5C", (0, "2D"))
    assert sorted(got) == ["2H 2H", "SJ SJ"]


# -- what a bid is --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "is_bid"),
    [
        ("2H", True),  # one level card of a suit
        ("2H 2H", True),  # a pair of level cards
        ("SJ SJ", True),  # a joker pair bids no trump
        ("BJ BJ", True),
        ("SJ", False),  # a single joker is never a bid
        ("BJ", False),
        ("3H", False),  # not the level rank
        ("2H 2D", False),  # not identical
        ("SJ BJ", False),
        ("2H 2H 2H", False),  # two decks hold two
        ("", False),
    ],
)
def test_bid_shapes(cards: str, is_bid: bool) -> None:
    assert is_bid_shape(P(cards), Rank.TWO) is is_bid


def test_three_decks_allow_triples() -> None:
    assert is_bid_shape(P("2H 2H 2H"), Rank.TWO, decks=3)
    assert bids("2H 2H 2H", decks=3) == ["2H", "2H 2H", "2H 2H 2H"]


def test_bid_suit() -> None:
    assert Bid(0, tuple(P("2H 2H"))).suit is Suit.HEARTS
    assert Bid(0, tuple(P("SJ SJ"))).suit is None
    assert str(Bid(3, tuple(P("2H")))) == "seat 3: 2H"


def test_every_bid_the_hand_holds_with_nothing_winning() -> None:
    assert bids("2H 2H 2S SJ SJ BJ 5C") == ["2S", "2H", "2H 2H", "SJ SJ"]
    assert bids("5H 5H SJ BJ 3C") == []
    assert bids("5H 5H SJ BJ 3C", level="5") == ["5H", "5H 5H"]
    assert bids("TC TC", level="T") == ["TC", "TC TC"]


# -- strength --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "winning", "expected"),
    [
        ("2S", "2D", []),  # suited bids of equal count never overturn each other
        ("2S 2S", "2D 2D", []),
        ("2S 2S", "2D", ["2S 2S"]),  # a pair beats a single
        ("SJ SJ", "2D 2D", ["SJ SJ"]),  # SJ pair > any suited pair
        ("BJ BJ", "SJ SJ", ["BJ BJ"]),  # BJ pair > SJ pair
        ("SJ SJ", "BJ BJ", []),
        ("SJ SJ", "SJ SJ", []),
        ("2S 2S", "SJ SJ", []),
    ],
)
def test_count_then_jokers(hand: str, winning: str, expected: list[str]) -> None:
    assert bids(hand, (0, winning)) == expected
    assert bids(hand, (0, winning), bid_strength="count_then_jokers") == expected


@pytest.mark.parametrize(
    ("hand", "winning", "expected"),
    [
        ("2S", "2D", ["2S"]),  # ♦ < ♣ < ♥ < ♠
        ("2D", "2S", []),
        ("2C", "2D", ["2C"]),
        ("2H", "2C", ["2H"]),
        ("2S", "2H", ["2S"]),
        ("2C 2C", "2H 2H", []),
        ("2S 2S", "2H 2H", ["2S 2S"]),
        ("SJ SJ", "2S 2S", ["SJ SJ"]),
        ("BJ BJ", "SJ SJ", ["BJ BJ"]),
        ("2D 2D", "2S", ["2D 2D"]),  # count first
    ],
)
def test_count_then_suit(hand: str, winning: str, expected: list[str]) -> None:
    assert bids(hand, (0, winning), bid_strength="count_then_suit") == expected


@pytest.mark.parametrize(
    ("hand", "winning", "expected"),
    [
        ("2H 2H", "2D", ["2H 2H"]),
        ("SJ SJ", "2D 2D", []),  # count only: a joker pair is just a pair
        ("BJ BJ", "SJ SJ", []),
        ("2S", "2D", []),
        ("SJ SJ 2C", "2D", ["SJ SJ"]),
    ],
)
def test_count_only(hand: str, winning: str, expected: list[str]) -> None:
    assert bids(hand, (0, winning), bid_strength="count_only") == expected


def test_strength_values() -> None:
    assert (
        strength(P("BJ BJ"), RuleSet())
        > strength(P("SJ SJ"), RuleSet())
        > strength(P("2S 2S"), RuleSet())
    )
    assert strength(P("2S 2S"), RuleSet()) == strength(P("2D 2D"), RuleSet())
    assert strength(P("2S"), rules(bid_strength="count_then_suit")) > strength(
        P("2D"), rules(bid_strength="count_then_suit")
    )


# -- the winning seat only reinforces ------------------------------------------------------------


def test_winning_seat_may_only_reinforce() -> None:
    hand = "2D 2D 2H 2H SJ SJ BJ BJ"
    assert bids(hand, (1, "2D"), seat=1) == ["2D 2D"]
    assert bids(hand, (1, "2D 2D"), seat=1) == []
    assert bids("2D 2H 2H", (1, "2D"), seat=1) == []  # cannot overturn itself
    # another seat with the same hand may bid anything stronger
    got = bids("2C 2C 2H 2H 2S SJ SJ BJ BJ", (1, "2D"), seat=3)
    assert sorted(got) == ["2C 2C", "2H 2H", "BJ BJ", "SJ SJ"]
    assert got[-1] == "BJ BJ"  # weakest first


@pytest.mark.parametrize(
    ("hand", "winning", "seat", "cards", "legal", "reason"),
    [
        ("2H 5C", None, 1, "", True, ""),  # a pass is always legal
        ("2H 5C", None, 1, "2H", True, ""),
        ("2H 5C", None, 1, "2S", False, "not in hand: 2S"),
        ("5C 5C", None, 1, "5C 5C", False, "5C 5C is not a bid"),
        ("SJ 5C", None, 1, "SJ", False, "SJ is not a bid"),
        ("2H", (0, "2D"), 1, "2H", False, "2H does not beat seat 0: 2D; legal bids: none (pass)"),
        ("2D 2H 2H", (1, "2D"), 1, "2H 2H", False, "your bid 2D is winning"),
        ("2D 2H 2H", (1, "2D"), 1, "2D 2D", False, "not in hand: 2D"),
        ("2D 2D", (1, "2D"), 1, "2D 2D", True, ""),
    ],
)
def test_check_bid(
    hand: str, winning: tuple[int, str] | None, seat: int, cards: str, legal: bool, reason: str
) -> None:
    win = None if winning is None else Bid(winning[0], tuple(P(winning[1])))
    verdict = check_bid(Position.holding(seat, P(hand), Rank.TWO, bid=win), seat, P(cards))
    assert verdict.legal is legal
    assert reason in verdict.reason
