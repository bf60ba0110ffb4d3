"""The RuleSet: defaults, validation by name, and every variant of RULES.md §9 that the rules
library reads changing at least one answer."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from arena.rules import (
    VARIANT_KEYS,
    Bid,
    BidStrength,
    FollowRule,
    ForcedUnit,
    InvalidRules,
    KittyMultiplier,
    NoBid,
    Position,
    Rank,
    RuleSet,
    ThrowBeatenBy,
    ThrowPenalty,
    Trump,
    advance,
    card_order,
    check_follow,
    check_lead,
    deal_result,
    decompose,
    kitty_bonus,
    legal_bids,
    parse_cards,
    trick_winner,
)

P = parse_cards

# judge-format.md's variant table: every value each key takes, the default first.
VARIANTS: dict[str, list[Any]] = {
    "decks": [2, 1, 3],
    "kitty_multiplier": ["linear", "power", "doubling"],
    "throw_beaten_by": ["largest_unit", "all_units", "highest_card"],
    "forced_unit": ["fewest_then_lowest", "first_blocker"],
    "throw_penalty": ["per_throw", "per_card", "none"],
    "dead_zone": [True, False],
    "level_cap": [None, 3, 6],
    "must_defend": [["A"], [], ["5", "T", "K", "A"]],
    "bid_strength": ["count_then_jokers", "count_then_suit", "count_only"],
    "no_bid": ["first_kitty_card", "first_level_or_joker"],
    "level_tractors": [True, False],
    "follow": ["shape", "suit_only"],
}


def test_defaults_are_the_competition_rules() -> None:
    r = RuleSet()
    assert r.decks == 2 and (r.hand_size, r.kitty_size, r.point_step) == (25, 8, 40)
    assert r.kitty_multiplier is KittyMultiplier.LINEAR
    assert r.throw_beaten_by is ThrowBeatenBy.LARGEST_UNIT
    assert r.forced_unit is ForcedUnit.FEWEST_THEN_LOWEST
    assert r.throw_penalty is ThrowPenalty.PER_THROW
    assert r.dead_zone is True and r.level_cap is None
    assert r.must_defend == frozenset({Rank.ACE})
    assert r.bid_strength is BidStrength.COUNT_THEN_JOKERS
    assert r.no_bid is NoBid.FIRST_KITTY_CARD
    assert r.level_tractors is True and r.follow is FollowRule.SHAPE
    assert r.start_level is Rank.TWO and r.deals is None
    assert r.changes() == {}


def test_every_judge_format_key_is_known() -> None:
    assert set(VARIANTS) <= set(VARIANT_KEYS)
    assert set(VARIANT_KEYS) - set(VARIANTS) == {"start_level", "deals"}


@pytest.mark.parametrize(
    ("key", "value"), [(k, v) for k, values in VARIANTS.items() for v in values]
)
def test_every_documented_value_is_accepted_and_round_trips(key: str, value: Any) -> None:
    r = RuleSet.from_mapping({key: value})
    mapped = r.to_mapping()[key]
    if isinstance(value, list):
        assert sorted(mapped) == sorted(value)
    else:
        assert mapped == value
    assert RuleSet.from_mapping(r.to_mapping()) == r
    assert (key in r.changes()) is (value != VARIANTS[key][0])


@pytest.mark.parametrize(
    ("decks", "hand", "kitty", "step"), [(1, 12, 6, 20), (2, 25, 8, 40), (3, 39, 6, 60)]
)
def test_deck_sizes(decks: int, hand: int, kitty: int, step: int) -> None:
    r = RuleSet.from_mapping({"decks": decks})
    assert (r.hand_size, r.kitty_size, r.point_step) == (hand, kitty, step)
    assert 4 * hand + kitty == 54 * decks


def test_start_level_and_match_length() -> None:
    r = RuleSet.from_mapping({"start_level": "T", "deals": 8})
    assert r.start_level is Rank.TEN and r.deals == 8
    assert RuleSet.from_mapping({"start_level": 10}).start_level is Rank.TEN


def test_unknown_variant_is_rejected_by_name() -> None:
    with pytest.raises(InvalidRules, match="unknown rule variant 'kitty_bonus'"):
        RuleSet.from_mapping({"kitty_bonus": "double"})
    with pytest.raises(InvalidRules, match="'trumps'"):
        RuleSet.from_mapping({"decks": 2, "trumps": True})


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("decks", 4),
        ("decks", 0),
        ("decks", "2"),
        ("decks", 2.5),
        ("decks", True),
        ("kitty_multiplier", "triple"),
        ("kitty_multiplier", 2),
        ("throw_beaten_by", "any_unit"),
        ("forced_unit", "largest"),
        ("throw_penalty", "per_trick"),
        ("throw_penalty", None),
        ("dead_zone", "yes"),
        ("dead_zone", 1),
        ("level_cap", 0),
        ("level_cap", -3),
        ("level_cap", "3"),
        ("level_cap", True),
        ("must_defend", "A"),
        ("must_defend", ["Z"]),
        ("must_defend", ["SJ"]),
        ("bid_strength", "count_then_rank"),
        ("no_bid", "redeal"),
        ("level_tractors", "no"),
        ("level_tractors", 0),
        ("follow", "strict"),
        ("follow", ["shape"]),
        ("start_level", "SJ"),
        ("start_level", "1"),
        ("deals", 0),
        ("deals", "8"),
    ],
)
def test_bad_values_are_rejected_naming_key_and_value(key: str, value: Any) -> None:
    with pytest.raises(InvalidRules) as info:
        RuleSet.from_mapping({key: value})
    assert repr(key) in str(info.value)
    assert json.dumps(value) in str(info.value)


def test_from_pairs() -> None:
    r = RuleSet.from_pairs(["decks=3", "follow=suit_only", "level_cap=null", "dead_zone=false"])
    assert r.decks == 3 and r.follow is FollowRule.SUIT_ONLY
    assert r.level_cap is None and r.dead_zone is False
    assert RuleSet.from_pairs(['must_defend=["5","T","K","A"]']).must_defend == frozenset(
        {Rank.FIVE, Rank.TEN, Rank.KING, Rank.ACE}
    )
    with pytest.raises(InvalidRules, match="not key=value"):
        RuleSet.from_pairs(["decks"])
    with pytest.raises(InvalidRules, match="'colour'"):
        RuleSet.from_pairs(["colour=red"])


def test_from_mapping_overrides_a_base() -> None:
    base = RuleSet.from_mapping({"decks": 3})
    r = RuleSet.from_mapping({"dead_zone": False}, base)
    assert r.decks == 3 and r.dead_zone is False


def test_ruleset_is_frozen_and_hashable() -> None:
    r = RuleSet()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.decks = 3  # type: ignore[misc]
    assert hash(r) == hash(RuleSet())
    assert card_order(Trump.parse("2", "S"), r) is card_order(Trump.parse("2", "S"))


# -- every variant that touches the rules library changes at least one answer ------------------


def _order(r: RuleSet):
    return card_order(Trump.parse("2", "S"), r)


def _decks(r: RuleSet) -> object:
    return (deal_result(40, r), r.hand_size)


def _kitty_multiplier(r: RuleSet) -> object:
    return kitty_bonus(P("KD"), decompose(P("5H 5H 6H 6H 7H 7H"), _order(r)), r)


def _throw_beaten_by(r: RuleSet) -> object:
    plays = [P("AH AH KH"), P("3S 3S AS"), P("5S 5S 4S"), P("6D 7D 8D")]
    return trick_winner(0, plays, _order(r)).winner


def _forced_unit(r: RuleSet) -> object:
    hands = [P("KH 9H 9H"), P("TH TH"), P("AH 3C"), P("")]
    return check_lead(0, hands, P("KH 9H 9H"), _order(r)).played


def _throw_penalty(r: RuleSet) -> object:
    hands = [P("AH QH 3H"), P("KH"), P(""), P("")]
    return check_lead(0, hands, P("AH QH 3H"), _order(r)).penalty


def _dead_zone(r: RuleSet) -> object:
    return deal_result(85, r)


def _level_cap(r: RuleSet) -> object:
    return deal_result(-200, r)


def _must_defend(r: RuleSet) -> object:
    return advance(Rank.THREE, 3, False, r), advance(Rank.KING, 3, True, r)


def _bid_strength(r: RuleSet) -> object:
    high = Position.holding(1, P("2S SJ SJ"), Rank.TWO, bid=Bid(0, tuple(P("2D 2D"))), rules=r)
    low = Position.holding(1, P("2S"), Rank.TWO, bid=Bid(0, tuple(P("2D"))), rules=r)
    return legal_bids(high, 1), legal_bids(low, 1)


def _level_tractors(r: RuleSet) -> object:
    return [u.kind for u in decompose(P("AS AS 2H 2H"), _order(r))]


def _follow(r: RuleSet) -> object:
    return check_follow(P("9H 9H"), P("JH JH 3H 6D"), P("3H JH"), _order(r)).legal


CHANGES: dict[str, Callable[[RuleSet], object]] = {
    "decks": _decks,
    "kitty_multiplier": _kitty_multiplier,
    "throw_beaten_by": _throw_beaten_by,
    "forced_unit": _forced_unit,
    "throw_penalty": _throw_penalty,
    "dead_zone": _dead_zone,
    "level_cap": _level_cap,
    "must_defend": _must_defend,
    "bid_strength": _bid_strength,
    "level_tractors": _level_tractors,
    "follow": _follow,
}


@pytest.mark.parametrize(
    ("key", "value"),
    [(k, v) for k, values in VARIANTS.items() if k in CHANGES for v in values[1:]],
)
def test_variant_changes_an_answer(key: str, value: Any) -> None:
    ask = CHANGES[key]
    assert ask(RuleSet()) != ask(RuleSet.from_mapping({key: value}))
