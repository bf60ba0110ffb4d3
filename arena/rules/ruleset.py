"""The one immutable :class:`RuleSet` holding every variant of RULES.md §9.

The defaults are the competition rules. Variants are named by the keys of
``judge-format.md`` (``decks``, ``kitty_multiplier``, …) plus ``start_level`` and
``deals`` (match length). Configuring an unknown key or value raises
:class:`~arena.errors.InvalidRules` naming it, never silently ignored.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from arena.errors import InvalidRules
from arena.rules.cards import Rank


class KittyMultiplier(enum.StrEnum):
    LINEAR = "linear"  # 2 × size of the largest unit
    POWER = "power"  # 2 ** size of the largest unit
    DOUBLING = "doubling"  # 2 × 2 ** (pairs in the largest tractor)


class ThrowBeatenBy(enum.StrEnum):
    LARGEST_UNIT = "largest_unit"
    ALL_UNITS = "all_units"
    HIGHEST_CARD = "highest_card"


class ForcedUnit(enum.StrEnum):
    FEWEST_THEN_LOWEST = "fewest_then_lowest"
    FIRST_BLOCKER = "first_blocker"


class ThrowPenalty(enum.StrEnum):
    PER_THROW = "per_throw"
    PER_CARD = "per_card"
    NONE = "none"


class BidStrength(enum.StrEnum):
    COUNT_THEN_JOKERS = "count_then_jokers"
    COUNT_THEN_SUIT = "count_then_suit"
    COUNT_ONLY = "count_only"


class NoBid(enum.StrEnum):
    FIRST_KITTY_CARD = "first_kitty_card"
    FIRST_LEVEL_OR_JOKER = "first_level_or_joker"


class FollowRule(enum.StrEnum):
    SHAPE = "shape"
    SUIT_ONLY = "suit_only"


_HAND_AND_KITTY: Final = {1: (12, 6), 2: (25, 8), 3: (39, 6)}


@dataclasses.dataclass(frozen=True, slots=True)
class RuleSet:
    """Every configurable rule; ``RuleSet()`` is the competition rules.

    Build one from JSON-ish values with :meth:`from_mapping`, which validates.
    """

    decks: int = 2
    kitty_multiplier: KittyMultiplier = KittyMultiplier.LINEAR
    throw_beaten_by: ThrowBeatenBy = ThrowBeatenBy.LARGEST_UNIT
    forced_unit: ForcedUnit = ForcedUnit.FEWEST_THEN_LOWEST
    throw_penalty: ThrowPenalty = ThrowPenalty.PER_THROW
    dead_zone: bool = True
    level_cap: int | None = None
    must_defend: frozenset[Rank] = frozenset({Rank.ACE})
    bid_strength: BidStrength = BidStrength.COUNT_THEN_JOKERS
    no_bid: NoBid = NoBid.FIRST_KITTY_CARD
    level_tractors: bool = True
    follow: FollowRule = FollowRule.SHAPE
    start_level: Rank = Rank.TWO
    deals: int | None = None  # None: play until a team wins at A

    @property
    def hand_size(self) -> int:
        return _HAND_AND_KITTY[self.decks][0]

    @property
    def kitty_size(self) -> int:
        return _HAND_AND_KITTY[self.decks][1]

    @property
    def point_step(self) -> int:
        """The level table's step: 40 with two decks, 20 × decks in general (§8)."""
        return 20 * self.decks

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], base: RuleSet | None = None) -> RuleSet:
        """Override ``base`` (default: competition rules) with JSON-style values.

        Raises:
            InvalidRules: naming the unknown key, or the key and the value it does not take.
        """
        base = base or cls()
        changes: dict[str, Any] = {}
        for key, raw in values.items():
            parse = _PARSERS.get(key)
            if parse is None:
                raise InvalidRules(
                    f"unknown rule variant {key!r}; known: {', '.join(sorted(_PARSERS))}"
                )
            try:
                changes[key] = parse(raw)
            except (ValueError, TypeError, KeyError) as exc:
                raise InvalidRules(
                    f"rule {key!r} does not take {json.dumps(raw)}: {_HINTS[key]}"
                ) from exc
        return dataclasses.replace(base, **changes)

    @classmethod
    def from_pairs(cls, pairs: Iterable[str], base: RuleSet | None = None) -> RuleSet:
        """Parse command-line ``key=value`` words; a value is JSON, or else a bare string."""
        values: dict[str, Any] = {}
        for pair in pairs:
            key, sep, text = pair.partition("=")
            if not sep:
                raise InvalidRules(f"rule {pair!r} is not key=value")
            try:
                values[key.strip()] = json.loads(text)
            except json.JSONDecodeError:
                values[key.strip()] = text.strip()
        return cls.from_mapping(values, base)

    def to_mapping(self) -> dict[str, Any]:
        """JSON-ready values, the inverse of :meth:`from_mapping`."""
        out: dict[str, Any] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, enum.StrEnum):
                value = value.value
            elif isinstance(value, Rank):
                value = value.code
            elif isinstance(value, frozenset):
                value = [r.code for r in sorted(value)]
            out[field.name] = value
        return out

    def changes(self) -> dict[str, Any]:
        """Only the variants that differ from the competition rules."""
        default = RuleSet().to_mapping()
        return {k: v for k, v in self.to_mapping().items() if default[k] != v}


def _choice(options: Iterable[Any]) -> Any:
    table = {json.dumps(o): o for o in options}

    def parse(raw: Any) -> Any:
        return table[json.dumps(raw)]

    return parse


def _optional_positive(raw: Any) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise ValueError(raw)
    return raw


def _ranks(raw: Any) -> frozenset[Rank]:
    if not isinstance(raw, list | tuple):
        raise TypeError(raw)
    return frozenset(Rank.parse(str(r)) for r in raw)


def _rank(raw: Any) -> Rank:
    return Rank.parse(str(raw))


def _enum(kind: type[enum.StrEnum]) -> Any:
    return kind


_PARSERS: Final[dict[str, Any]] = {
    "decks": _choice([2, 1, 3]),
    "kitty_multiplier": KittyMultiplier,
    "throw_beaten_by": ThrowBeatenBy,
    "forced_unit": ForcedUnit,
    "throw_penalty": ThrowPenalty,
    "dead_zone": _choice([True, False]),
    "level_cap": _optional_positive,
    "must_defend": _ranks,
    "bid_strength": BidStrength,
    "no_bid": NoBid,
    "level_tractors": _choice([True, False]),
    "follow": FollowRule,
    "start_level": _rank,
    "deals": _optional_positive,
}

_HINTS: Final = {
    "decks": "one of 2, 1, 3",
    "kitty_multiplier": 'one of "linear", "power", "doubling"',
    "throw_beaten_by": 'one of "largest_unit", "all_units", "highest_card"',
    "forced_unit": 'one of "fewest_then_lowest", "first_blocker"',
    "throw_penalty": 'one of "per_throw", "per_card", "none"',
    "dead_zone": "true or false",
    "level_cap": "null or a positive whole number (3, 6)",
    "must_defend": 'a list of ranks, e.g. ["A"], [], ["5", "T", "K", "A"]',
    "bid_strength": 'one of "count_then_jokers", "count_then_suit", "count_only"',
    "no_bid": 'one of "first_kitty_card", "first_level_or_joker"',
    "level_tractors": "true or false",
    "follow": 'one of "shape", "suit_only"',
    "start_level": "a rank: 2-9, T, J, Q, K, A",
    "deals": "null (play to A) or a positive number of deals",
}

VARIANT_KEYS: Final = tuple(_PARSERS)


def variant_help() -> str:
    """One line per variant key: the values it takes and its competition default, for
    ``--help`` (built from the parsers and hints above, so it cannot drift from them)."""
    defaults = RuleSet().to_mapping()
    width = max(map(len, VARIANT_KEYS))
    return "\n".join(
        f"  {key:<{width}}  {_HINTS[key]} (default {json.dumps(defaults[key])})"
        for key in VARIANT_KEYS
    )
