"""The rules of Tractor as a pure library (RULES.md): no I/O, no clocks, no randomness.

Other layers import from here, never from a module inside (STYLE.md habit 3).
"""

from arena.errors import IllegalPlay, InvalidCards, InvalidRules
from arena.rules.bids import Bid, check_bid, is_bid_shape, legal_bids, strength
from arena.rules.cards import (
    BIG_JOKER,
    CARDS,
    SMALL_JOKER,
    SUITED_RANKS,
    SUITS,
    Card,
    Rank,
    Suit,
    check_counts,
    codes,
    deck,
    format_cards,
    parse_cards,
    points,
    pretty_cards,
)
from arena.rules.follow import LEGAL, Verdict, check_follow, missing_from
from arena.rules.lead import LeadVerdict, check_lead, throw_penalty
from arena.rules.legal import cheapness, fallback_bury, fallback_lead, legal_follow, lowest
from arena.rules.ruleset import (
    VARIANT_KEYS,
    BidStrength,
    FollowRule,
    ForcedUnit,
    KittyMultiplier,
    NoBid,
    RuleSet,
    ThrowBeatenBy,
    ThrowPenalty,
)
from arena.rules.score import ATTACKERS, DEALER, DealResult, advance, deal_result, kitty_bonus
from arena.rules.trick import Leading, TrickResult, first_leading, next_leading, trick_winner
from arena.rules.trump import TRUMP_LANE, CardOrder, Trump, card_order
from arena.rules.units import THROW, Unit, arrange, decompose, shape_of

__all__ = [
    "ATTACKERS",
    "BIG_JOKER",
    "CARDS",
    "DEALER",
    "LEGAL",
    "SMALL_JOKER",
    "SUITED_RANKS",
    "SUITS",
    "THROW",
    "TRUMP_LANE",
    "VARIANT_KEYS",
    "Bid",
    "BidStrength",
    "Card",
    "CardOrder",
    "DealResult",
    "FollowRule",
    "ForcedUnit",
    "IllegalPlay",
    "InvalidCards",
    "InvalidRules",
    "KittyMultiplier",
    "LeadVerdict",
    "Leading",
    "NoBid",
    "Rank",
    "RuleSet",
    "Suit",
    "ThrowBeatenBy",
    "ThrowPenalty",
    "TrickResult",
    "Trump",
    "Unit",
    "Verdict",
    "advance",
    "arrange",
    "card_order",
    "cheapness",
    "check_bid",
    "check_counts",
    "check_follow",
    "check_lead",
    "codes",
    "deal_result",
    "deck",
    "decompose",
    "fallback_bury",
    "fallback_lead",
    "first_leading",
    "format_cards",
    "is_bid_shape",
    "kitty_bonus",
    "legal_bids",
    "legal_follow",
    "lowest",
    "missing_from",
    "next_leading",
    "parse_cards",
    "points",
    "pretty_cards",
    "shape_of",
    "strength",
    "throw_penalty",
    "trick_winner",
]
