"""The one legality API: for each kind of decision, every legal action and a check.

=====================  ==========================  ==================================
decision               every legal action          judge one action
=====================  ==========================  ==================================
play (lead or follow)  :func:`legal_plays`         :func:`check_play` → Verdict
bid                    :func:`legal_bids`          :func:`check_bid` → Verdict
burial of the kitty    :func:`legal_burials`       :func:`check_bury` → Verdict
=====================  ==========================  ==================================

Each takes a :class:`~arena.rules.position.Position`, so the deal machine, the judge, the
fallbacks, ``Check`` and the bots ask the same question the same way. The constructed
actions — the referee's fallbacks (:func:`fallback_play`, :func:`fallback_burial`) and a
follow whose free choices a bot makes (:func:`follow_with`, the random bot's) — are
built by :mod:`arena.rules.legal` and judged here by :func:`check_play` like any answer.
:func:`apply_play` applies a play to a position (what lands, who wins the trick, the
points), so a test can walk a trick from any position written in the text form.

The ``legal_*`` functions are generators of distinct actions (each a tuple in the
deck's order: a multiset of cards, since copies of a face are interchangeable). Their
count can be exponential in the hand: a 10-card throw followed from 20 cards of other
suits has C(20, 10) = 184,756 legal follows, and a lead may be any non-empty set of one
suit's cards (up to 3^12·2 with 25 trumps in pairs). They yield lazily, so take what you
need (``itertools.islice``); nothing in arena's own play enumerates them — the referee
judges one answer with the ``check_*`` functions, which are cheap.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator, Sequence

from arena.errors import IllegalPlay, StateError
from arena.rules.bids import bid_options, judge_bid
from arena.rules.cards import Card, format_cards
from arena.rules.follow import check_follow
from arena.rules.lead import LeadVerdict, check_lead
from arena.rules.legal import Pick, fallback_bury, fallback_lead, follow_candidate, lowest
from arena.rules.position import Hand, Position
from arena.rules.seats import SEATS, Seat
from arena.rules.trick import trick_winner
from arena.rules.trump import CardOrder
from arena.rules.units import Unit
from arena.rules.verdict import LEGAL, Verdict, missing_from


def _by_index(card: Card) -> int:
    return card.index


# -- plays -------------------------------------------------------------------------------


def check_play(position: Position, cards: Sequence[Card]) -> Verdict:
    """Judge ``cards`` as the next play of the trick, by the seat to play
    (:attr:`Position.turn`).

    A lead's verdict is a :class:`~arena.rules.lead.LeadVerdict`: what lands and, for a
    failed throw (still legal), the blocker and the penalty. That detail is the
    referee's: it tells who holds what, so ``Check`` answers a bot with the plain verdict.
    Hands not known in ``position`` count as empty, so a throw is then judged by its
    shape only.
    """
    seat = position.turn
    plays = position.plays
    if not plays:
        if position.dealer is None:
            raise StateError("no dealer yet: nothing is played before the bidding ends")
        hands = [h if h is not None else () for h in position.hands]
        hands[seat] = position.hand(seat)
        return check_lead(seat, hands, cards, position.order, position.dealer)
    units = position.landed_units  # the lead's units, cached by whoever knew them
    if units is None:
        units = position.lead_units
    order = position.known_order or position.order
    return check_follow(plays[0], position.hand(seat), cards, order, units)


def legal_plays(position: Position) -> Iterator[Hand]:
    """Every distinct legal next play (see the module doc on how many there can be)."""
    seat = position.turn
    hand = position.hand(seat)
    order = position.order
    lane = order.lane
    lead = position.lead
    if lead is None:  # any non-empty set of one effective suit's cards
        for led in sorted({lane[c.index] for c in hand}):
            suited = [c for c in hand if lane[c.index] == led]
            for size in range(1, len(suited) + 1):
                yield from _multisets(suited, size)
        return
    n = len(lead)
    led = lane[lead[0].index]
    suited = [c for c in hand if lane[c.index] == led]
    if n == 1:  # a single: any card of the led suit, or any card when out of it
        for card in sorted(set(suited or hand), key=_by_index):
            yield (card,)
        return
    if len(suited) <= n:
        others = [c for c in hand if lane[c.index] != led]
        for rest in _multisets(others, n - len(suited)):
            yield tuple(sorted((*suited, *rest), key=_by_index))
        return
    units = position.lead_units
    for combo in _multisets(suited, n):
        if check_follow(lead, hand, combo, order, units):
            yield combo


def fallback_play(position: Position) -> Hand:
    """The referee's deterministic play for the seat to play (a timeout, a fault): the
    cheapest single card to lead (any single card is a legal lead), else the cheapest
    legal follow (:func:`follow_with`)."""
    if position.lead is None:
        return tuple(fallback_lead(position.hand(position.turn), position.order))
    return follow_with(position)


def forced_fallback(
    lead: Sequence[Card], hand: Sequence[Card], order: CardOrder, units: Sequence[Unit]
) -> Hand | None:
    """:func:`fallback_play`'s follow to ``lead`` (whose units are ``units``) from
    ``hand``, when its shape is forced (most follows: see
    :func:`~arena.rules.legal.follow_candidate`) — legal as built, so no position is
    needed to build or judge it; ``None`` when it is not forced (ask
    :func:`fallback_play`, which judges the candidate)."""
    built, forced = follow_candidate(lead, hand, order, units, lowest)
    return tuple(built) if forced else None


def follow_with(position: Position, pick: Pick[Card] = lowest) -> Hand:
    """A legal follow for the seat to play, every free choice made by ``pick`` (given
    candidates, cheapest first, it returns one: :func:`~arena.rules.legal.lowest` for
    the fallback, a seeded ``rng.choice`` for the random bot). A candidate whose shape
    the rules force (the hand short of the led suit, or suit-only rules) is legal as
    built; any other is judged by :func:`check_play`, and if refused the first of
    :func:`legal_plays` is played.

    Raises:
        StateError: nobody has led yet, or (a bug) no legal follow exists.
    """
    lead = position.lead
    if lead is None:
        raise StateError("nothing to follow: the seat to play leads")
    hand = position.hand(position.turn)
    order = position.known_order or position.order
    built, forced = follow_candidate(lead, hand, order, position.lead_units, pick)
    cards = tuple(built)
    if forced or check_play(position, cards):  # (forced: what check_follow would say)
        return cards
    for play in legal_plays(position):
        return play
    raise StateError(f"no legal follow to {format_cards(lead)} from {format_cards(hand)}")


def legal_follow(
    lead: Sequence[Card],
    hand: Sequence[Card],
    order: CardOrder,
    pick: Pick[Card] = lowest,
    lead_units: Sequence[Unit] | None = None,
) -> list[Card]:
    """:func:`follow_with` for a caller holding no position, only the lead and a hand
    (a bot written with the rules library alone): the same construction and judgement."""
    units = None if lead_units is None else tuple(lead_units)
    position = Position(
        ((*hand,), None, None, None), order.trump.level, order.trump, None, None,
        3, ((*lead,),), rules=order.rules, landed_units=units,
    ).knowing(order)  # fmt: skip
    return list(follow_with(position, pick))


def apply_play(position: Position, cards: Sequence[Card]) -> Position:
    """The position after the seat to play plays ``cards``: a failed throw lands its
    forced unit (the rest stays in the hand); the fourth play ends the trick, which its
    winner then leads, and the attackers' points grow by what they won.

    Raises:
        IllegalPlay: the play is illegal.
    """
    verdict = check_play(position, cards)
    if not verdict:
        raise IllegalPlay(verdict.reason)
    seat = position.turn
    landed = tuple(cards)
    units = position.landed_units
    if isinstance(verdict, LeadVerdict):
        landed, units = verdict.played, verdict.units
    hands = list(position.hands)
    left = list(position.hand(seat))
    for card in landed:
        left.remove(card)
    hands[seat] = tuple(left)
    h0, h1, h2, h3 = hands
    plays = (*position.plays, landed)
    if len(plays) < 4:
        return _replace(position, hands=(h0, h1, h2, h3), plays=plays, landed_units=units)
    result = trick_winner(position.leader, list(plays), position.order, units)
    won = result.winner
    points = position.points
    if position.dealer is not None and SEATS[won].team != SEATS[position.dealer].team:
        points += result.points
    return _replace(
        position, hands=(h0, h1, h2, h3), plays=(), leader=won, points=points, landed_units=None
    )


def perft(position: Position, depth: int) -> int:
    """How many sequences of ``depth`` legal plays there are from ``position`` (the
    leaves of the play tree, as chess engines count to test move generation)."""
    if depth == 0:
        return 1
    if not position.hand(position.turn):
        return 0
    return sum(perft(apply_play(position, p), depth - 1) for p in legal_plays(position))


# -- bids --------------------------------------------------------------------------------


def legal_bids(position: Position, seat: int) -> list[tuple[Card, ...]]:
    """Every bid ``seat`` may make now, weakest first (the pass, always legal, aside)."""
    return bid_options(position.level, seat, position.hand(seat), position.bid, position.rules)


def check_bid(position: Position, seat: int, cards: Sequence[Card]) -> Verdict:
    """Judge ``seat``'s bid of ``cards`` (empty: a pass, always legal)."""
    return judge_bid(position.level, seat, position.hand(seat), position.bid, cards, position.rules)


# -- burials -----------------------------------------------------------------------------


def _burier(position: Position) -> Seat:
    if position.dealer is None:
        raise StateError("no dealer yet: the kitty is buried after the bidding")
    return SEATS[position.dealer]


def legal_burials(position: Position) -> Iterator[Hand]:
    """Every distinct set of cards the dealer may bury: any ``kitty_size`` of its hand
    (the kitty included). C(33, 8) sets at most with two decks: take what you need."""
    hand = position.hand(_burier(position))
    yield from _multisets(list(hand), position.rules.kitty_size)


def check_bury(position: Position, cards: Sequence[Card]) -> Verdict:
    """Judge the dealer's burial (RULES.md §6): exactly ``kitty_size`` cards it holds."""
    count = position.rules.kitty_size
    if len(cards) != count:
        return Verdict(False, f"bury exactly {count} cards, not {len(cards)}")
    missing = missing_from(position.hand(_burier(position)), cards)
    return Verdict(False, f"not in hand: {format_cards(missing)}") if missing else LEGAL


def fallback_burial(position: Position) -> Hand:
    """The referee's deterministic burial: the dealer's ``kitty_size`` cheapest cards
    (side suits before trumps, no points, low first) — judged by :func:`check_bury`."""
    hand = position.hand(_burier(position))
    cards = tuple(fallback_bury(hand, position.rules.kitty_size, position.order))
    verdict = check_bury(position, cards)
    if not verdict:  # pragma: no cover - the dealer holds kitty_size cards at least
        raise StateError(f"no legal burial: {verdict.reason}")
    return cards


# -- internals ---------------------------------------------------------------------------


def _multisets(cards: Sequence[Card], size: int) -> Iterator[Hand]:
    """Every distinct sub-multiset of ``size`` cards, each sorted by the deck's order."""
    counts = sorted(Counter(cards).items(), key=lambda item: item[0].index)
    faces = [face for face, _ in counts]
    have = [n for _, n in counts]
    room = [0] * (len(have) + 1)  # cards available from face i on
    for i in range(len(have) - 1, -1, -1):
        room[i] = room[i + 1] + have[i]
    chosen: list[Card] = []

    def walk(i: int, need: int) -> Iterator[Hand]:
        if need == 0:
            yield tuple(chosen)
            return
        if i == len(faces) or room[i] < need:
            return
        for k in range(min(have[i], need), -1, -1):
            chosen.extend([faces[i]] * k)
            yield from walk(i + 1, need - k)
            if k:
                del chosen[-k:]

    if 0 <= size <= len(cards):
        yield from walk(0, size)


def _replace(position: Position, **changes: object) -> Position:
    return dataclasses.replace(position, **changes)  # type: ignore[arg-type]


__all__ = [
    "apply_play",
    "check_bid",
    "check_bury",
    "check_play",
    "fallback_burial",
    "fallback_play",
    "follow_with",
    "forced_fallback",
    "legal_bids",
    "legal_burials",
    "legal_follow",
    "legal_plays",
    "perft",
]
