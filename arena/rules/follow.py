"""Follow legality (RULES.md §7, Follow).

A follower plays as many cards as were led. Holding fewer cards of the led effective
suit than that, it plays all of them plus any others. Otherwise every card is of the led
suit and the play must match the lead's shape as far as the hand allows. The ladder of
requirements (exact shape, then shorter tractors plus pairs, then pairs, then fewer pairs
plus singles, then singles) is measured by a *profile*: how many of the lead's triples and
pairs the cards can supply, then how much of the lead's tractor structure. A play is
legal when its profile equals the best profile the hand could have reached.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.rules.cards import Card, format_cards
from arena.rules.ruleset import FollowRule
from arena.rules.trump import CardOrder
from arena.rules.units import Unit, decompose, longest_chain, tally
from arena.rules.verdict import LEGAL, Verdict, missing_from

__all__ = ["check_follow", "profile", "take_tractors"]


def check_follow(
    lead: Sequence[Card],
    hand: Sequence[Card],
    play: Sequence[Card],
    order: CardOrder,
    lead_units: Sequence[Unit] | None = None,
) -> Verdict:
    """Judge ``play`` as a follow to ``lead`` from ``hand`` (the whole hand, play included).

    ``lead_units`` may pass the lead's decomposition when the caller already has it.
    """
    if len(play) != len(lead):
        cards = "card" if len(lead) == 1 else "cards"
        return Verdict(False, f"must play {len(lead)} {cards}, not {len(play)}")
    missing = missing_from(hand, play)
    if missing:
        return Verdict(False, f"not in hand: {format_cards(missing)}")
    lane_of = order.lane
    led = lane_of[lead[0].index]
    name = order.lane_name(led)
    suited = [c for c in hand if lane_of[c.index] == led]
    in_suit = [c for c in play if lane_of[c.index] == led]
    if len(suited) <= len(lead):
        if len(in_suit) < len(suited):
            return Verdict(False, f"must play all your {name} first: {format_cards(suited)}")
        return LEGAL
    if len(in_suit) < len(play):
        return Verdict(False, f"must follow {name}: you hold {len(suited)} {name}")
    if order.rules.follow is FollowRule.SUIT_ONLY:
        return LEGAL
    units = lead_units if lead_units is not None else decompose(lead, order)
    if all(u.width == 1 for u in units):
        return LEGAL
    best = profile(suited, units, order)
    got = profile(play, units, order)
    if got == best:
        return LEGAL
    return Verdict(False, _explain(best, got, suited, units, order))


Profile = tuple[int, int, tuple[int, ...], tuple[int, ...]]


def profile(cards: Sequence[Card], units: Sequence[Unit], order: CardOrder) -> Profile:
    """(triples supplied, pairs supplied, triple-tractor structure, pair-tractor structure)."""
    counts = tally(cards, order)
    sizes = [n for faces in counts.values() for n in faces.values()]
    triple_slots = sum(u.length for u in units if u.width == 3)
    pair_slots = sum(u.length for u in units if u.width == 2)
    triples = min(sum(n >= 3 for n in sizes), triple_slots)
    pairs = min(sum(n >= 2 for n in sizes) - triples, pair_slots + triple_slots - triples)
    return (
        triples,
        pairs,
        _structure(counts, units, 3),
        _structure(counts, units, 2),
    )


def _structure(
    counts: dict[int, dict[Card, int]], units: Sequence[Unit], width: int
) -> tuple[int, ...]:
    """For each lead tractor of ``width`` (longest first), the lengths of the tractors
    still held within its length, longest first, then 0 to end that tractor's part."""
    work = {k: dict(faces) for k, faces in counts.items()}
    out: list[int] = []
    for chains in take_tractors(work, units, width):
        out.extend(len(chain) for chain in chains)
        out.append(0)
    return tuple(out)


def take_tractors(
    counts: dict[int, dict[Card, int]], units: Sequence[Unit], width: int
) -> list[list[list[tuple[int, Card]]]]:
    """Take from ``counts`` (in place) what best meets the lead's tractors of ``width``.

    A tractor of n groups loosens to shorter tractors — the longest first, then the
    next longest in what remains of the n — before it loosens to groups (RULES.md §7).
    Returns, per lead tractor (longest first), the chains taken.
    """
    wanted = sorted((u.length for u in units if u.width == width and u.length > 1), reverse=True)
    out: list[list[list[tuple[int, Card]]]] = []
    for length in wanted:
        taken: list[list[tuple[int, Card]]] = []
        budget = length
        while budget >= 2:
            chain = longest_chain(counts, width, budget)
            if not chain:
                break
            taken.append(chain)
            budget -= len(chain)
            for key, face in chain:
                counts[key][face] -= width
        out.append(taken)
    return out


def _explain(
    best: Profile, got: Profile, suited: Sequence[Card], units: Sequence[Unit], order: CardOrder
) -> str:
    name = order.lane_name(order.lane_of(suited[0]))
    counts = tally(suited, order)
    if got[0] < best[0]:
        return f"must play {_count(best[0], 'triple')} of {name}: " + _groups(counts, 3)
    if got[1] < best[1] and not any(best[3]):
        return f"must play {_count(best[1], 'pair')} of {name}: " + _groups(counts, 2)
    width = 3 if got[2] != best[2] else 2
    lengths = [n for n in (best[2] if width == 3 else best[3]) if n]
    shown: list[str] = []
    work = {k: dict(faces) for k, faces in counts.items()}
    for length in lengths:
        chain = longest_chain(work, width, length)
        for key, face in chain:
            work[key][face] -= width
        if chain:
            shown.append(format_cards(f for _, f in chain for _ in range(width)))
    what = "a tractor" if len(shown) == 1 else f"tractors of {', '.join(map(str, lengths))} groups"
    more = best[1] - sum(lengths) if width == 2 else 0
    also = "" if more <= 0 else " and another pair" if more == 1 else f" and {more} other pairs"
    return f"must play {what}{also} of {name}: " + ", ".join(shown)


def _count(n: int, noun: str) -> str:
    return f"a {noun}" if n == 1 else f"{n} {noun}s"


def _groups(counts: dict[int, dict[Card, int]], width: int) -> str:
    groups = [
        format_cards([face] * width)
        for key in sorted(counts, reverse=True)
        for face, n in counts[key].items()
        if n >= width
    ]
    return ", ".join(groups)
