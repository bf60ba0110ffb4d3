"""``--rules botzone``: the arena variants closest to Botzone's Tractor judge.

A preset is a named set of variants (RULES.md §9) that ``--rules`` takes as one word,
before or among ``KEY=VALUE`` words (which then override it). docs/botzone.md sets this
one side by side with RULES.md and lists what no variant can reproduce.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.rules import RuleSet

PRESETS: dict[str, dict[str, Any]] = {
    "botzone": {
        "level_tractors": False,  # only SJ SJ BJ BJ chains level cards and jokers
        "throw_penalty": "per_card",  # a failed throw costs 10 per card
        "bid_strength": "count_only",  # one declaration, then one pair overcall: a pair
        # beats a single, nothing beats a pair (Botzone has a single overcall)
        "deals": 1,  # a Botzone match is one deal
    },
}


def split_presets(words: Sequence[str]) -> tuple[RuleSet | None, list[str]]:
    """The rule set of the preset names among ``words`` (``None``: none), and the rest."""
    base: RuleSet | None = None
    rest: list[str] = []
    for word in words:
        if word in PRESETS:
            base = RuleSet.from_mapping(PRESETS[word], base)
        else:
            rest.append(word)
    return base, rest
