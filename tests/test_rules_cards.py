"""Cards, notation, decks (RULES.md §1) and the trump order and adjacency (RULES.md §3)."""

from __future__ import annotations

import copy
import pickle
from collections import Counter

import pytest

from arena.rules import (
    BIG_JOKER,
    CARDS,
    SMALL_JOKER,
    TRUMP_LANE,
    Card,
    InvalidCards,
    Rank,
    RuleSet,
    Suit,
    Trump,
    card_order,
    check_counts,
    codes,
    deck,
    format_cards,
    parse_cards,
    points,
    pretty_cards,
)


def order(level: str, suit: str | None, **rules: object):
    return card_order(Trump.parse(level, suit), RuleSet.from_mapping(rules))


def one(code: str) -> Card:
    return Card.parse(code)


# -- notation ----------------------------------------------------------------------------


def test_there_are_54_interned_faces() -> None:
    assert len(CARDS) == 54
    assert len({c.code for c in CARDS}) == 54
    assert [c.index for c in CARDS] == list(range(54))
    assert SMALL_JOKER.code == "SJ" and BIG_JOKER.code == "BJ"


@pytest.mark.parametrize("card", CARDS, ids=lambda c: c.code)
def test_every_face_round_trips(card: Card) -> None:
    assert Card.parse(str(card)) is card
    assert eval(repr(card)) is card  # repr rebuilds the value
    assert Card.parse(card.code.lower()) is card
    assert Card.from_index(card.index) is card
    assert pickle.loads(pickle.dumps(card)) is card
    assert copy.copy(card) is card and copy.deepcopy(card) is card


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("9S 9S JS JS", ["9S", "9S", "JS", "JS"]),
        ("ts, th,sj  BJ", ["TS", "TH", "SJ", "BJ"]),
        ("", []),
        (["AH", "2c"], ["AH", "2C"]),
    ],
)
def test_parse_cards(text: str | list[str], expected: list[str]) -> None:
    assert codes(parse_cards(text)) == expected


@pytest.mark.parametrize("bad", ["1S", "TX", "10S", "S", "SJJ", "JB", "XX", "2", "AHH"])
def test_bad_codes_raise_invalid_cards_naming_them(bad: str) -> None:
    with pytest.raises(InvalidCards, match=repr(bad).replace("\\", "\\\\")):
        parse_cards(f"AS {bad} KS")


def test_a_card_is_not_built_directly() -> None:
    with pytest.raises(TypeError):
        Card(3)


def test_formatting() -> None:
    cards = parse_cards("TS TS JS JS SJ")
    assert format_cards(cards) == "TS TS JS JS SJ"
    assert pretty_cards(cards) == "10♠ 10♠ J♠ J♠ SJ"
    assert one("AH").pretty() == "A♥"


@pytest.mark.parametrize(
    ("text", "rank"),
    [("2", Rank.TWO), ("T", Rank.TEN), ("10", Rank.TEN), ("t", Rank.TEN), (" a ", Rank.ACE)],
)
def test_rank_parse(text: str, rank: Rank) -> None:
    assert Rank.parse(text) is rank


@pytest.mark.parametrize("bad", ["1", "SJ", "BJ", "11", "", "Z"])
def test_rank_parse_rejects(bad: str) -> None:
    with pytest.raises(InvalidCards, match="unknown rank"):
        Rank.parse(bad)


def test_suit_parse() -> None:
    assert Suit.parse("h") is Suit.HEARTS
    with pytest.raises(InvalidCards, match="unknown suit"):
        Suit.parse("X")


# -- decks and points (§1) -----------------------------------------------------------------


@pytest.mark.parametrize("decks", [1, 2, 3])
def test_deck_holds_each_face_once_per_deck(decks: int) -> None:
    cards = deck(decks)
    assert len(cards) == 54 * decks
    assert set(Counter(cards).values()) == {decks}


@pytest.mark.parametrize(("decks", "total"), [(1, 100), (2, 200), (3, 300)])
def test_point_total(decks: int, total: int) -> None:
    assert points(deck(decks)) == total


@pytest.mark.parametrize(
    ("code", "value"),
    [("5S", 5), ("5D", 5), ("TH", 10), ("KC", 10), ("KS", 10), ("AS", 0), ("QH", 0), ("SJ", 0)],
)
def test_point_cards(code: str, value: int) -> None:
    assert one(code).points == value


def test_check_counts() -> None:
    check_counts(parse_cards("AS AS BJ BJ"), 2)
    check_counts(parse_cards("AS AS AS"), 3)
    with pytest.raises(InvalidCards, match="AS appears 3 times"):
        check_counts(parse_cards("AS AS KH AS"), 2)
    with pytest.raises(InvalidCards, match="BJ appears 2 times"):
        check_counts(parse_cards("BJ BJ"), 1)


# -- trumps and order (§3) ------------------------------------------------------------------

# L = 10, T = ♥, the running example of RULES.md §3-§4.
TEN_HEARTS = order("T", "H")


@pytest.mark.parametrize(
    ("code", "is_trump"),
    [
        ("BJ", True),
        ("SJ", True),
        ("TH", True),
        ("TS", True),
        ("TC", True),
        ("TD", True),
        ("AH", True),
        ("2H", True),
        ("AS", False),
        ("9D", False),
        ("JC", False),
    ],
)
def test_trump_cards(code: str, is_trump: bool) -> None:
    assert TEN_HEARTS.is_trump(one(code)) is is_trump
    assert (TEN_HEARTS.lane_of(one(code)) == TRUMP_LANE) is is_trump


def test_effective_suit_names() -> None:
    assert TEN_HEARTS.lane_name(TEN_HEARTS.lane_of(one("TS"))) == "trumps"
    assert TEN_HEARTS.lane_name(TEN_HEARTS.lane_of(one("9S"))) == "spades"
    assert TEN_HEARTS.lane_name(TEN_HEARTS.lane_of(one("AD"))) == "diamonds"


def ranked(cards: str, o) -> list[int]:
    return [o.key_of(c) for c in parse_cards(cards)]


def test_trump_order_high_to_low() -> None:
    # BJ > SJ > L of T > the other L (equal) > A, K, Q, ... of T (rank L skipped).
    keys = ranked("BJ SJ TH TS AH KH QH JH 9H 8H 2H", TEN_HEARTS)
    assert keys == sorted(keys, reverse=True)
    assert len(set(keys)) == len(keys)
    assert ranked("TS TC TD", TEN_HEARTS) == [ranked("TS", TEN_HEARTS)[0]] * 3
    assert ranked("TH", TEN_HEARTS)[0] > ranked("TS", TEN_HEARTS)[0] > ranked("AH", TEN_HEARTS)[0]


def test_side_suit_order_skips_the_level_rank() -> None:
    keys = ranked("AS KS QS JS 9S 8S 7S 6S 5S 4S 3S 2S", TEN_HEARTS)
    assert keys == sorted(keys, reverse=True) and len(set(keys)) == 12


def test_no_trump_order() -> None:
    o = order("T", None)
    assert not o.is_trump(one("AH")) and not o.is_trump(one("9S"))
    assert all(o.is_trump(c) for c in parse_cards("BJ SJ TS TH TC TD"))
    assert ranked("BJ SJ TS", o) == sorted(ranked("BJ SJ TS", o), reverse=True)
    assert len(set(ranked("TS TH TC TD", o))) == 1  # L of any suit, all equal


def adjacent(a: str, b: str, o) -> bool:
    """RULES.md §3 adjacency, as the order tables encode it."""
    ca, cb = one(a), one(b)
    return o.lane_of(ca) == o.lane_of(cb) and abs(o.key_of(ca) - o.key_of(cb)) == 1


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("9S", "JS", True),  # side suit, L = 10 removed
        ("JS", "QS", True),
        ("AH", "TS", True),  # top of T to each off-suit L
        ("AH", "TD", True),
        ("AH", "TC", True),
        ("TD", "TH", True),  # off-suit L to L of T
        ("TS", "TH", True),
        ("TH", "SJ", True),
        ("SJ", "BJ", True),
        ("TD", "TC", False),  # off-suit L never adjacent to each other
        ("TS", "TD", False),
        ("KH", "TD", False),
        ("9H", "TH", False),  # 9H is a plain trump: its neighbour is JH
        ("9H", "JH", True),
        ("AH", "TH", False),
        ("TS", "JS", False),  # two effective suits
        ("TD", "SJ", False),
        ("TH", "BJ", False),
    ],
)
def test_adjacency_level_ten_hearts(a: str, b: str, expected: bool) -> None:
    assert adjacent(a, b, TEN_HEARTS) is expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("TS", "SJ", True),
        ("TD", "SJ", True),
        ("SJ", "BJ", True),
        ("TS", "TD", False),
        ("TS", "BJ", False),
        ("AS", "TS", False),
        ("9S", "JS", True),
    ],
)
def test_adjacency_no_trump(a: str, b: str, expected: bool) -> None:
    assert adjacent(a, b, order("T", None)) is expected


def test_adjacency_when_level_is_ace() -> None:
    o = order("A", "S")
    assert adjacent("KS", "AH", o)  # K is then the highest non-L card of T
    assert adjacent("AH", "AS", o)
    assert not adjacent("QS", "AH", o)
    assert adjacent("KH", "QH", o)  # side suits: K is the top


def test_level_tractors_forbidden_leaves_gaps_except_between_jokers() -> None:
    o = order("T", "H", level_tractors=False)
    assert not adjacent("AH", "TS", o)
    assert not adjacent("TD", "TH", o)
    assert not adjacent("TH", "SJ", o)
    assert adjacent("SJ", "BJ", o)
    assert adjacent("KH", "AH", o)
    # the order itself does not change
    keys = ranked("BJ SJ TH TS AH KH", o)
    assert keys == sorted(keys, reverse=True)


def test_card_order_is_cached_and_sorts_hands() -> None:
    assert order("T", "H") is TEN_HEARTS
    hand = TEN_HEARTS.sort(parse_cards("2H BJ 9S TS AS TH 3D"))
    assert format_cards(hand) == "AS 9S 3D BJ TH TS 2H"


def test_trump_text() -> None:
    assert str(Trump.parse("T", "H")) == "TH"
    assert str(Trump.parse("2", None)) == "2NT"
    assert Trump.parse("10", "h").pretty() == "level T, trump ♥"
