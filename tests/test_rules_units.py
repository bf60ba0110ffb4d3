"""Units of play and the decomposition of a throw (RULES.md §4)."""

from __future__ import annotations

from collections import Counter

import pytest

from arena.rules import (
    THROW,
    IllegalPlay,
    RuleSet,
    Trump,
    arrange,
    card_order,
    decompose,
    format_cards,
    parse_cards,
    shape_of,
)

P = parse_cards


def order(level: str = "2", suit: str | None = "S", **rules: object):
    return card_order(Trump.parse(level, suit), RuleSet.from_mapping(rules))


def shape(cards: str, o) -> list[tuple[str, str]]:
    """(kind, cards) of each unit, largest first; cards sorted so faces read in order."""
    return [
        (u.kind, " ".join(sorted(format_cards(u.cards).split()))) for u in decompose(P(cards), o)
    ]


def kinds(cards: str, o) -> list[str]:
    return [u.kind for u in decompose(P(cards), o)]


TEN_HEARTS = order("T", "H")


# -- single, pair, tractor (§4) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "kind"),
    [
        ("7C", "single"),
        ("BJ", "single"),
        ("7C 7C", "pair"),
        ("TS TS", "pair"),
        ("SJ SJ", "pair"),
    ],
)
def test_single_and_pair(cards: str, kind: str) -> None:
    units = decompose(P(cards), TEN_HEARTS)
    assert [u.kind for u in units] == [kind]
    assert shape_of(units) == kind


@pytest.mark.parametrize(
    "cards",
    [
        "9S 9S JS JS",  # RULES.md §4 examples, L = 10, T = ♥
        "TH TH SJ SJ",
        "AH AH TD TD",
        "TD TD TH TH",
        "SJ SJ BJ BJ",
        "JH JH 9H 9H",  # plain trumps across the removed level rank
        "KH KH AH AH TC TC TH TH",  # four pairs through the level cards
        "TS TS TH TH SJ SJ BJ BJ",
        "2D 2D 3D 3D 4D 4D",
    ],
)
def test_tractors_with_level_ten_hearts(cards: str) -> None:
    units = decompose(P(cards), TEN_HEARTS)
    assert len(units) == 1
    assert units[0].kind == "tractor"
    assert units[0].length == len(cards.split()) // 2
    assert shape_of(units) == "tractor"
    assert Counter(units[0].cards) == Counter(P(cards))


@pytest.mark.parametrize(
    "cards",
    [
        "9H 9H TH TH",  # RULES.md §4 non-examples (L = 10, T = ♥)
        "TD TD TC TC",
        "AH AH TH TH",
        "KH KH TD TD",
        "TD TD SJ SJ",
        "TH TH BJ BJ",
    ],
)
def test_not_tractors(cards: str) -> None:
    assert kinds(cards, TEN_HEARTS) == ["pair", "pair"]
    assert shape_of(decompose(P(cards), TEN_HEARTS)) == THROW


def test_ts_ts_js_js_is_two_effective_suits() -> None:
    # RULES.md §4: "not a tractor: TS TS JS JS" (TS is a trump, JS a spade)
    with pytest.raises(IllegalPlay, match="more than one effective suit"):
        decompose(P("TS TS JS JS"), TEN_HEARTS)


@pytest.mark.parametrize(
    ("cards", "is_tractor"),
    [
        ("TS TS SJ SJ", True),  # every L card is adjacent to SJ
        ("TH TH SJ SJ", True),
        ("SJ SJ BJ BJ", True),
        ("TS TS TD TD", False),  # two L cards are never adjacent
        ("TS TS BJ BJ", False),
        ("9S 9S JS JS", True),
    ],
)
def test_tractors_in_no_trump(cards: str, is_tractor: bool) -> None:
    assert (kinds(cards, order("T", None)) == ["tractor"]) is is_tractor


def test_level_ace_king_of_trump_meets_off_suit_aces() -> None:
    o = order("A", "S")
    assert kinds("KS KS AH AH", o) == ["tractor"]
    assert kinds("KS KS AH AH AS AS SJ SJ", o) == ["tractor"]
    assert kinds("QS QS AH AH", o) == ["pair", "pair"]


@pytest.mark.parametrize(
    ("cards", "is_tractor"),
    [
        ("SJ SJ BJ BJ", True),  # the only tractor left through level cards and jokers
        ("TH TH SJ SJ", False),
        ("AH AH TD TD", False),
        ("TD TD TH TH", False),
        ("KH KH AH AH", True),  # plain trumps are unaffected
        ("9S 9S JS JS", True),  # skipping the removed level rank is not "through" it
    ],
)
def test_level_tractors_forbidden(cards: str, is_tractor: bool) -> None:
    o = order("T", "H", level_tractors=False)
    assert (kinds(cards, o) == ["tractor"]) is is_tractor
    # and the default allows every one of them
    assert kinds(cards, TEN_HEARTS) == ["tractor"]


# -- throws (§4, Throw) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "expected"),
    [
        # judge-format.md u2
        ("AH AH KH QH QH", [("pair", "AH AH"), ("pair", "QH QH"), ("single", "KH")]),
        # longest tractor first, then shorter tractors, then pairs, then singles
        (
            "QH QH KH KH AH AH 5H 5H 6H 6H 8H",
            [
                ("tractor", "AH AH KH KH QH QH"),
                ("tractor", "5H 5H 6H 6H"),
                ("single", "8H"),
            ],
        ),
        ("5H 5H 6H 6H 7H 7H 9H 9H", [("tractor", "5H 5H 6H 6H 7H 7H"), ("pair", "9H 9H")]),
        ("5H 5H 6H 6H 7H 7H 8H 8H 9H 9H", [("tractor", "5H 5H 6H 6H 7H 7H 8H 8H 9H 9H")]),
        ("AC KC 3C", [("single", "AC"), ("single", "KC"), ("single", "3C")]),
        # the equal-length tractor ranked higher comes first
        # trumps: through the level cards (L = 2, T = ♠)
        ("AS AS 2H 2H 2S 2S 3S", [("tractor", "2H 2H 2S 2S AS AS"), ("single", "3S")]),
        ("2H 2H 2D 2D", [("pair", "2D 2D"), ("pair", "2H 2H")]),
    ],
)
def test_throw_decomposition(cards: str, expected: list[tuple[str, str]]) -> None:
    o = order("2", "S")
    got = shape(cards, o)
    assert sorted(got) == sorted(expected)
    assert got[0][0] == expected[0][0]  # the largest unit leads
    assert shape_of(decompose(P(cards), o)) == ("throw" if len(expected) > 1 else expected[0][0])


def test_equal_length_tractors_higher_first() -> None:
    assert shape("3D 3D 4D 4D 8D 8D 9D 9D", order()) == [
        ("tractor", "8D 8D 9D 9D"),
        ("tractor", "3D 3D 4D 4D"),
    ]
    assert shape("AH QH QH KH KH 3H 4H 4H", order())[0] == ("tractor", "KH KH QH QH")


def test_off_suit_level_pairs_share_a_place_in_a_tractor() -> None:
    # AH AH 2D 2D 2C 2C 2S 2S (L = 2, T = ♥): one of the equal off-suit pairs joins the tractor
    o = order("2", "H")
    units = decompose(P("AH AH 2D 2D 2C 2C 2H 2H"), o)
    assert [u.kind for u in units] == ["tractor", "pair"]
    assert units[0].length == 3


@pytest.mark.parametrize(
    ("level", "suit", "cards"),
    [
        ("T", "H", ""),
        ("2", "H", "AH AS"),
        ("T", "H", "TS JS"),
        ("T", None, "AS TS"),  # AS is a plain spade in no trump, TS a trump
        ("2", "S", "3S 3H"),
    ],
)
def test_decompose_rejects_empty_and_mixed(level: str, suit: str | None, cards: str) -> None:
    with pytest.raises(IllegalPlay):
        decompose(P(cards), order(level, suit))


def test_unit_text() -> None:
    o = order("2", "S")
    tractor = decompose(P("5H 5H 6H 6H"), o)[0]
    assert str(tractor) == "5H 5H 6H 6H"
    assert tractor.describe(o) == "a tractor of 2 pairs of hearts"
    assert decompose(P("3S 3S"), o)[0].describe(o) == "a pair of trumps"
    assert (tractor.size, tractor.width, tractor.length) == (4, 2, 2)


# -- deck variants ------------------------------------------------------------------------------


def test_three_decks_triples_and_tractors_of_triples() -> None:
    o = order("2", "S", decks=3)
    assert kinds("9H 9H 9H", o) == ["triple"]
    assert kinds("9H 9H 9H TH TH TH", o) == ["tractor"]
    units = decompose(P("9H 9H 9H TH TH TH"), o)
    assert (units[0].width, units[0].length) == (3, 2)
    assert kinds("9H 9H 9H JH JH", o) == ["triple", "pair"]
    # the largest unit as large as possible: a tractor of pairs may take two of a triple
    assert shape("9H 9H 9H TH TH", o) == [("tractor", "9H 9H TH TH"), ("single", "9H")]
    assert shape("9H 9H 9H TH TH JH JH", o) == [
        ("tractor", "9H 9H JH JH TH TH"),
        ("single", "9H"),
    ]
    # equal sizes: the wider tractor
    assert shape("9H 9H 9H TH TH TH JH JH", o)[0] == ("tractor", "9H 9H 9H TH TH TH")


def test_one_deck_is_singles() -> None:
    o = order("2", "S", decks=1)
    assert kinds("AH KH QH", o) == ["single"] * 3


# -- arranging a play into the lead's units (§7, Winning a trick) ------------------------------


@pytest.mark.parametrize(
    ("lead", "play", "fits"),
    [
        ("5H 5H", "9S 9S", True),
        ("5H 5H", "9S 8S", False),
        ("5H 5H 6H 6H", "3S 3S 4S 4S", True),
        ("5H 5H 6H 6H", "3S 3S 5S 5S", False),  # two pairs, not a tractor
        ("AH AH 9H 9H", "3S 3S 4S 4S", True),  # a held tractor may serve as pairs
        ("AH KH", "3S 3S", True),  # a pair may serve as two singles
        ("AH AH KH", "3S 3S 4S", True),
        ("AH AH KH", "3S 4S 5S", False),
        ("AH AH KH QH", "2H 2H 2D 2D", True),  # off-suit level pairs as a pair and singles
    ],
)
def test_arrange(lead: str, play: str, fits: bool) -> None:
    o = order("2", "S")
    units = decompose(P(lead), o)
    assert (arrange(P(play), units, o) is not None) is fits


def test_arrange_places_the_highest_first() -> None:
    o = order("2", "S")
    units = decompose(P("AH AH KH"), o)
    keys = arrange(P("3S 3S 9S"), units, o)
    assert keys == [o.key_of(P("3S")[0]), o.key_of(P("9S")[0])]
    assert arrange(P("3S 3S"), units, o) is None  # wrong size
