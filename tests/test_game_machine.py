"""The deal and match machines as sans-IO state machines (STYLE.md §1, habit 5).

Table-driven: for every decision kind, an illegal answer raises IllegalPlay and leaves
the machine exactly as it was; driving it wrongly raises StateError. Plus determinism,
match ends, fixed-length matches, forfeits and penalties.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from gamekit import Script, of_type, snapshot, stack

from arena.bots import make_bot
from arena.errors import IllegalPlay, StateError
from arena.game import (
    Action,
    DealEnded,
    Decision,
    Kind,
    MatchEnded,
    MatchMachine,
    MatchSetup,
    PenaltyApplied,
    Phase,
    SeatFeed,
    Termination,
)
from arena.referee import play_match
from arena.rules import CARDS, Card, Rank, RuleSet, is_bid_shape

Builder = Callable[[MatchMachine, Decision], Action | None]


def walk(setup: MatchSetup, bot_seed: int) -> Iterator[tuple[MatchMachine, Decision]]:
    """Every decision of a match between seeded random bots, one at a time."""
    match = MatchMachine(setup)
    feed = SeatFeed(match)
    bots = [make_bot("random", bot_seed * 4 + i) for i in range(4)]
    while not match.finished:
        for decision in match.pending():
            yield match, decision
            if match.finished or decision not in match.pending():
                break
            match.answer(decision.seat, bots[decision.seat].decide(feed.request(decision)))


# Shuffled two-deal matches, then a stacked deal where seat 1 is dealt 2H 2C 2C 2H first
# (it may bid 2H, then holds a pair of 2C it may not bid over its own 2H).
SOURCES = [(MatchSetup(RuleSet(deals=2), seed), seed) for seed in range(12)] + [
    (MatchSetup(RuleSet(deals=1), 1, {1: stack(["3S 4S 5S 6S", "2H 2C 2C 2H"])}), bot_seed)
    for bot_seed in range(8)
]


def find(kind: Kind, lead: bool | None, build: Builder) -> tuple[MatchMachine, Decision, Action]:
    """The first decision (over a few seeds) of ``kind`` for which ``build`` finds an answer."""
    for setup, bot_seed in SOURCES:
        for match, decision in walk(setup, bot_seed):
            if decision.kind is not kind:
                continue
            if lead is not None and bool(decision.lead) == lead:
                continue
            action = build(match, decision)
            if action is not None:
                return match, decision, action
    raise AssertionError(f"no {kind} decision where the builder applies")


def hand(match: MatchMachine, seat: int) -> list[Card]:
    return list(match.snapshot().deal.hands[seat])


def not_held(match: MatchMachine, seat: int) -> Card:
    held = Counter(hand(match, seat))
    return next(c for c in CARDS if held[c] == 0)


def lane(match: MatchMachine, card: Card) -> int:
    order = match.snapshot().deal.order
    assert order is not None
    return order.lane[card.index]


# -- builders of illegal answers, one row per way to be wrong ---------------------------


def bid_not_held(m: MatchMachine, d: Decision) -> Action | None:
    level = m.snapshot().deal.level
    held = Counter(hand(m, d.seat))
    face = next((c for c in CARDS if c.rank == level and held[c] == 0), None)
    return (face,) if face else None


def bid_not_a_bid(m: MatchMachine, d: Decision) -> Action | None:
    card = next(
        (c for c in hand(m, d.seat) if c.rank != m.snapshot().deal.level and not c.is_joker), None
    )
    return (card,) if card else None


def bid_single_joker(m: MatchMachine, d: Decision) -> Action | None:
    joker = next((c for c in hand(m, d.seat) if c.is_joker), None)
    return (joker,) if joker else None


def bid_mixed(m: MatchMachine, d: Decision) -> Action | None:
    levels = sorted(
        {c for c in hand(m, d.seat) if c.rank == m.snapshot().deal.level}, key=lambda c: c.index
    )
    return (levels[0], levels[1]) if len(levels) >= 2 else None


def bid_too_weak(m: MatchMachine, d: Decision) -> Action | None:
    """A bid shape the seat holds that does not beat another seat's winning bid."""
    winning = m.snapshot().deal.winning
    return _held_non_option(m, d) if winning and winning.seat != d.seat else None


def bid_overturn_self(m: MatchMachine, d: Decision) -> Action | None:
    """The winning seat shows a different bid instead of reinforcing its own."""
    winning = m.snapshot().deal.winning
    if not winning or winning.seat != d.seat:
        return None
    option = _held_non_option(m, d)
    return option if option and option[0] is not winning.face else None


def _held_non_option(m: MatchMachine, d: Decision) -> Action | None:
    counts = Counter(hand(m, d.seat))
    for face, n in counts.items():
        for k in range(1, n + 1):
            option = (face,) * k
            if is_bid_shape(option, m.snapshot().deal.level) and option not in d.options:
                return option
    return None


def bury_short(m: MatchMachine, d: Decision) -> Action | None:
    return tuple(hand(m, d.seat)[: d.count - 1])


def bury_long(m: MatchMachine, d: Decision) -> Action | None:
    return tuple(hand(m, d.seat)[: d.count + 1])


def bury_not_held(m: MatchMachine, d: Decision) -> Action | None:
    return (*hand(m, d.seat)[: d.count - 1], not_held(m, d.seat))


def lead_empty(m: MatchMachine, d: Decision) -> Action | None:
    return ()


def lead_two_suits(m: MatchMachine, d: Decision) -> Action | None:
    cards = hand(m, d.seat)
    other = next((c for c in cards if lane(m, c) != lane(m, cards[0])), None)
    return (cards[0], other) if other else None


def lead_not_held(m: MatchMachine, d: Decision) -> Action | None:
    return (not_held(m, d.seat),)


def follow_short(m: MatchMachine, d: Decision) -> Action | None:
    return tuple(m.fallback(d.seat)[:-1])


def follow_long(m: MatchMachine, d: Decision) -> Action | None:
    fallback = m.fallback(d.seat)
    spare = Counter(hand(m, d.seat)) - Counter(fallback)
    return (*fallback, next(iter(spare))) if spare else None


def follow_revoke(m: MatchMachine, d: Decision) -> Action | None:
    """A single lead answered off-suit while holding the led suit."""
    if d.count != 1:
        return None
    led = lane(m, d.lead[0])
    cards = hand(m, d.seat)
    off = next((c for c in cards if lane(m, c) != led), None)
    if off is None or all(lane(m, c) != led for c in cards):
        return None
    return (off,)


def follow_breaks_pair(m: MatchMachine, d: Decision) -> Action | None:
    """A pair lead answered with two odd cards of the suit while holding a pair in it."""
    if d.count != 2 or d.lead[0] != d.lead[1]:
        return None
    led = lane(m, d.lead[0])
    counts = Counter(c for c in hand(m, d.seat) if lane(m, c) == led)
    if not any(n >= 2 for n in counts.values()) or len(counts) < 2:
        return None
    a, b = sorted(counts, key=lambda c: c.index)[:2]
    return (a, b)


def follow_not_held(m: MatchMachine, d: Decision) -> Action | None:
    return (*m.fallback(d.seat)[:-1], not_held(m, d.seat))


ILLEGAL: list[tuple[str, Kind, bool | None, Builder, str]] = [
    ("bid a card not held", Kind.BID, None, bid_not_held, "not in hand"),
    ("bid a non-level card", Kind.BID, None, bid_not_a_bid, "is not a bid"),
    ("bid a single joker", Kind.BID, None, bid_single_joker, "is not a bid"),
    ("bid two different faces", Kind.BID, None, bid_mixed, "is not a bid"),
    ("bid too weak", Kind.BID, None, bid_too_weak, "does not beat"),
    ("bid over one's own bid", Kind.BID, None, bid_overturn_self, "only reinforce"),
    ("bury 7 cards", Kind.BURY, None, bury_short, "bury exactly 8"),
    ("bury 9 cards", Kind.BURY, None, bury_long, "bury exactly 8"),
    ("bury a card not held", Kind.BURY, None, bury_not_held, "not in hand"),
    ("lead nothing", Kind.PLAY, True, lead_empty, "at least one card"),
    ("lead two suits", Kind.PLAY, True, lead_two_suits, "one effective suit"),
    ("lead a card not held", Kind.PLAY, True, lead_not_held, "not in hand"),
    ("follow too few", Kind.PLAY, False, follow_short, "must play"),
    ("follow too many", Kind.PLAY, False, follow_long, "must play"),
    ("follow off-suit holding the suit", Kind.PLAY, False, follow_revoke, "must follow"),
    ("follow a pair with odd cards", Kind.PLAY, False, follow_breaks_pair, "a pair of"),
    ("follow with a card not held", Kind.PLAY, False, follow_not_held, "not in hand"),
]


@pytest.mark.parametrize(
    ("kind", "lead", "build", "reason"),
    [pytest.param(*row[1:], id=row[0]) for row in ILLEGAL],
)
def test_an_illegal_answer_raises_and_changes_nothing(
    kind: Kind, lead: bool | None, build: Builder, reason: str
) -> None:
    match, decision, action = find(kind, lead, build)
    before = snapshot(match)
    verdict = match.check(decision.seat, action)
    assert not verdict.legal and verdict.reason
    with pytest.raises(IllegalPlay) as caught:
        match.answer(decision.seat, action)
    assert reason in caught.value.reason
    assert caught.value.reason == verdict.reason
    assert snapshot(match) == before  # the machine is unchanged
    match.answer(decision.seat, match.fallback(decision.seat))  # and still works


KINDS = [
    pytest.param(Kind.BID, None, id="bid"),
    pytest.param(Kind.BURY, None, id="bury"),
    pytest.param(Kind.PLAY, True, id="lead"),
    pytest.param(Kind.PLAY, False, id="follow"),
]


def first(kind: Kind, lead: bool | None) -> tuple[MatchMachine, Decision]:
    match, decision, _ = find(kind, lead, lambda m, d: ())
    return match, decision


@pytest.mark.parametrize(("kind", "lead"), KINDS)
def test_answering_for_a_seat_not_asked_is_a_state_error(kind: Kind, lead: bool | None) -> None:
    match, decision = first(kind, lead)
    asked = {d.seat for d in match.pending()}
    before = snapshot(match)
    for seat in set(range(4)) - asked:
        with pytest.raises(StateError, match=f"seat {seat} has no pending decision"):
            match.answer(seat, match.fallback(decision.seat))
        with pytest.raises(StateError):
            match.check(seat, ())
        with pytest.raises(StateError):
            match.fallback(seat)
    assert snapshot(match) == before


def test_answering_twice_in_a_bid_window_is_a_state_error() -> None:
    match, decision, _ = find(Kind.BID, None, lambda m, d: () if len(m.pending()) > 1 else None)
    match.answer(decision.seat, ())
    before = snapshot(match)
    with pytest.raises(StateError):
        match.answer(decision.seat, ())
    assert snapshot(match) == before


@pytest.mark.parametrize(("kind", "lead"), KINDS)
def test_the_fallback_is_legal(kind: Kind, lead: bool | None) -> None:
    for setup, bot_seed in SOURCES[:3]:
        for match, decision in walk(setup, bot_seed):
            if decision.kind is kind and (lead is None or bool(decision.lead) != lead):
                assert match.check(decision.seat, match.fallback(decision.seat)).legal


# -- determinism -----------------------------------------------------------------------


def stream(seed: int, bot_seed: int, names: tuple[str, ...] = ("random",) * 4) -> list[Any]:
    bots = [make_bot(n, bot_seed * 4 + i) for i, n in enumerate(names)]
    match = play_match(MatchSetup(RuleSet(deals=2), seed), bots)
    return [e.to_dict() for e in match.events]


@pytest.mark.parametrize("seed", [0, 1, 2**40 + 7])
def test_same_seed_and_answers_give_the_same_events(seed: int) -> None:
    assert stream(seed, 5) == stream(seed, 5)
    names = ("random", "greedy", "random", "greedy")
    assert stream(seed, 5, names) == stream(seed, 5, names)


def test_different_seeds_differ() -> None:
    assert stream(1, 5) != stream(2, 5)
    assert stream(1, 5) != stream(1, 6)  # same deck, other answers


def test_replaying_the_answers_rebuilds_the_stream() -> None:
    match = MatchMachine(MatchSetup(RuleSet(deals=2), 9))
    script = Script(policy=lambda m, d: d.options[-1] if d.options else None)
    script.run(match)
    again = MatchMachine(MatchSetup(RuleSet(deals=2), 9))
    for seat, _, action in script.log:
        again.answer(seat, action)
    assert [e.to_dict() for e in again.events] == [e.to_dict() for e in match.events]


# -- how matches end -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "names"),
    [(0, ("random",) * 4), (1, ("random",) * 4), (2, ("random", "greedy", "random", "greedy"))],
)
def test_matches_end(seed: int, names: tuple[str, ...]) -> None:
    bots = [make_bot(n, seed * 4 + i) for i, n in enumerate(names)]
    match = play_match(MatchSetup(RuleSet(), seed), bots, check=False)
    result = match.result
    assert result is not None and result.reason in {"level_a_kept", "passed_a"}
    last = of_type(match.events, DealEnded)[-1]
    assert result.winner is not None and result.levels[result.winner] is Rank.ACE
    assert result.deals == len(of_type(match.events, DealEnded)) == match.deals_played
    assert last.winner == "dealer" and result.winner == last.dealer % 2
    assert match.pending() == ()
    with pytest.raises(StateError, match="the match is over"):
        match.answer(0, ())


@pytest.mark.parametrize("seed", range(4))
def test_a_fixed_number_of_deals(seed: int) -> None:
    bots = [make_bot("random", seed * 4 + i) for i in range(4)]
    match = play_match(MatchSetup(RuleSet.from_mapping({"deals": 2}), seed), bots)
    result = match.result
    assert result is not None and (result.reason, result.deals) == ("deals_played", 2)
    assert len(of_type(match.events, DealEnded)) == 2
    a, b = result.levels
    assert result.winner == (0 if a > b else 1 if b > a else None)
    assert result.levels == of_type(match.events, DealEnded)[-1].levels


def test_forfeit_ends_the_match() -> None:
    match = MatchMachine(MatchSetup(RuleSet(), 3))
    Script().run(match, until=lambda m: m.snapshot().deal.phase is Phase.PLAYING)
    events = match.forfeit(1, "too many faults")
    assert events == [
        MatchEnded(0, (Rank.TWO, Rank.TWO), 0, Termination.FORFEIT, 1, "too many faults")
    ]
    assert match.finished and match.pending() == () and match.events[-1] == events[0]
    for verb in (lambda: match.answer(0, ()), lambda: match.forfeit(0, "again")):
        with pytest.raises(StateError):
            verb()


def test_cancel_ends_the_match_without_a_winner() -> None:
    match = MatchMachine(MatchSetup(RuleSet(), 3))
    assert match.cancel("server shutdown")[0].winner is None
    with pytest.raises(StateError):
        match.penalize(0, 10, "late")


@pytest.mark.parametrize("offender", ["dealer", "attackers"])
def test_penalties_are_settled_at_the_deal_end(offender: str) -> None:
    def run(penalty: int) -> tuple[DealEnded, list[PenaltyApplied]]:
        match = MatchMachine(MatchSetup(RuleSet(deals=1), 21))
        script = Script(policy=lambda m, d: d.options[0] if d.options else None)
        script.run(match, until=lambda m: m.snapshot().deal.phase is Phase.PLAYING)
        dealer_team = (
            match.snapshot().deal.dealer % 2 if match.snapshot().deal.dealer is not None else 0
        )
        team = dealer_team if offender == "dealer" else 1 - dealer_team
        if penalty:
            match.penalize(team, penalty, "timeout")
            match.penalize(team, penalty, "timeout")
        script.run(match)
        return of_type(match.events, DealEnded)[0], of_type(match.events, PenaltyApplied)

    plain, none = run(0)
    ended, applied = run(15)
    assert none == [] and len(applied) == 2 and applied[0].points == 15
    sign = 1 if offender == "dealer" else -1
    assert ended.penalty_points == plain.penalty_points  # failed throws only
    assert ended.fault_penalty_points == plain.fault_penalty_points + sign * 30
    assert ended.attacker_points == plain.attacker_points + sign * 30
    assert ended.trick_points == plain.trick_points  # play was not affected


def test_a_deck_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(StateError, match="needs 108 cards"):
        MatchMachine(MatchSetup(RuleSet(), 0, {1: list(CARDS)}))


def test_the_machines_show_no_mutable_state() -> None:
    """Both machines keep their state private: what a reader may touch is a read-only
    property or a ``Final`` value, and the snapshot is made once per change."""
    match = MatchMachine(MatchSetup(seed=3))
    public = {name for name in vars(match) if not name.startswith("_")}
    assert public == {"setup", "rules", "events", "first_seat"}  # Final: never reassigned
    for name in ("levels", "dealer", "deals_played", "result", "decks", "position"):
        with pytest.raises(AttributeError):
            setattr(match, name, None)
    deal = vars(match)["_deal"]
    assert {name for name in vars(deal) if not name.startswith("_")} == {"rules", "deal", "events"}
    first = match.snapshot()
    assert match.snapshot() is first  # cached until the next change
    decision = match.pending()[0]
    match.answer(decision.seat, match.fallback(decision.seat))
    assert match.snapshot() is not first and match.snapshot().deal is deal.snapshot()
