"""Whole deals on stacked decks: throws, the kitty bonus, redeals, takeovers, bid windows.

Each scenario builds a deck in dealing order with :func:`gamekit.stack` and drives the
match with a :class:`gamekit.Script` (scripted answers, else the referee's fallback).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from gamekit import SEED_FOR_FIRST_SEAT, Script, cards, hands_of, of_type, stack

from arena.errors import IllegalPlay
from arena.game import (
    BidMade,
    CardDealt,
    CardsPlayed,
    DealEnded,
    DealStarted,
    Decision,
    Kind,
    MatchEnded,
    MatchMachine,
    MatchSetup,
    Phase,
    Redealt,
    Termination,
    ThrowFailed,
    TrickWon,
    TrumpDeclared,
    seat_view,
    shuffled_deck,
)
from arena.rules import Bid, Rank, RuleSet, Suit, points

ONE_DEAL = RuleSet(deals=1)


def match_on(deck: list[Any], first: int = 0, rules: RuleSet = ONE_DEAL, deal: int = 1) -> Any:
    return MatchMachine(MatchSetup(rules, SEED_FOR_FIRST_SEAT[first], {deal: deck}))


def no_hearts(card: Any) -> bool:
    return card.suit is Suit.HEARTS


def bid_first_offer(match: MatchMachine, decision: Decision) -> tuple[Any, ...] | None:
    """A policy: in deal 1, every seat bids the first option it is offered."""
    if decision.kind is Kind.BID and match.snapshot().deal.deal == 1 and decision.options:
        return decision.options[0]
    return None


def only_in_deal(number: int, policy: Callable[..., Any]) -> Callable[..., Any]:
    def limited(match: MatchMachine, decision: Decision) -> Any:
        return policy(match, decision) if match.snapshot().deal.deal == number else None

    return limited


# -- throws ---------------------------------------------------------------------------


def test_failed_throw_by_the_dealer() -> None:
    deck = stack(["2S AH QH", "KH"], first=0)
    _, kitty = hands_of(deck)
    match = match_on(deck)
    script = Script(bids={0: ["2S"]}, bury={0: " ".join(c.code for c in kitty)})
    script.run(match, until=lambda m: m.snapshot().deal.phase is Phase.PLAYING)
    assert match.snapshot().deal.dealer == 0
    events = match.answer(0, cards("AH QH"))
    (failed,) = of_type(events, ThrowFailed)
    assert failed == ThrowFailed(
        0, tuple(cards("AH QH")), tuple(cards("QH")), tuple(cards("AH")), 1, 10
    )
    assert of_type(events, CardsPlayed) == [CardsPlayed(0, 1, tuple(cards("QH")))]
    for seat in range(4):
        assert seat_view(match, seat).revealed == (tuple(cards("AH")), (), (), ())
    assert cards("AH")[0] in match.snapshot().deal.hands[0]
    assert match.pending()[0].count == 1  # the next seat follows the forced unit
    script.run(match)
    (ended,) = of_type(match.events, DealEnded)
    assert ended.penalty_points == 10
    assert ended.attacker_points == ended.trick_points + ended.kitty_bonus + 10
    assert match.snapshot().deal.revealed[0] == ()  # AH has been played since


def test_failed_throw_by_an_attacker_costs_the_attackers() -> None:
    # Seat 0 (dealer) leads 3D; seat 1, void in diamonds, ruffs with BJ and throws clubs.
    deck = stack(
        ["2S 3D", "BJ AC QC", "KC"],
        first=0,
        avoid={1: lambda c: c.suit is Suit.DIAMONDS or c.is_joker},
    )
    _, kitty = hands_of(deck)
    match = match_on(deck)
    script = Script(
        bids={0: ["2S"]},
        bury={0: " ".join(c.code for c in kitty)},
        plays={0: ["3D"], 1: ["BJ", "AC QC"]},
    )
    events = script.run(match)
    (failed,) = of_type(events, ThrowFailed)
    assert (failed.seat, failed.played, failed.returned, failed.blocker, failed.penalty) == (
        1,
        tuple(cards("QC")),
        tuple(cards("AC")),
        2,
        -10,
    )
    (ended,) = of_type(events, DealEnded)
    assert ended.penalty_points == -10


@pytest.mark.parametrize(
    ("ruff1", "ruff3", "winner"),
    [
        ("3S 3S 4S", "5S 5S 6S", 3),  # trumped, then over-trumped (higher pair)
        ("3S 3S 4S", "5S 6S 7S", 1),  # seat 3 lacks the pair: shape-breaking, never wins
        ("3S 4S 5S", "5S 6S 7S", 0),  # nobody matches the shape: the throw stands
        ("2H 2H 4S", "2C 2C 6S", 1),  # an equal pair (off-suit level cards) stays earlier
    ],
)
def test_trumping_and_overtrumping_a_throw(ruff1: str, ruff3: str, winner: int) -> None:
    deck = stack(["2S AH AH KH", ruff1, "", ruff3], first=0, avoid={1: no_hearts, 3: no_hearts})
    _, kitty = hands_of(deck)
    match = match_on(deck)
    script = Script(
        bids={0: ["2S"]},
        bury={0: " ".join(c.code for c in kitty)},
        plays={0: ["AH AH KH"], 1: [ruff1], 3: [ruff3]},
    )
    events = script.run(match, until=lambda m: m.snapshot().deal.trick > 1)
    assert not of_type(events, ThrowFailed)
    assert of_type(events, CardsPlayed)[0] == CardsPlayed(0, 1, tuple(cards("AH AH KH")))
    (won,) = of_type(events, TrickWon)
    assert won.winner == winner


# -- the kitty bonus --------------------------------------------------------------------

# Seat 1 holds every trump but the dealer's SJ SJ (no-trump deal) and the top spades:
# it ruffs trick 1, draws all trumps, cashes spades and leads AH AH KH KH last.
SEAT1 = "BJ BJ 2S 2S 2H 2H 2C 2C 2D 2D AS AS KS KS QS QS JS JS TS TS 9S AH AH KH KH"
SEAT1_PLAYS = ["2C", "BJ", "BJ", "2S", "2S", "2H", "2H", "2C", "2D", "2D",
               "AS", "AS", "KS", "KS", "QS", "QS", "JS", "JS", "TS", "TS", "9S",
               "AH AH KH KH"]  # fmt: skip
KITTY = "5C 5C TC TC KC KC 5D 5D"  # 60 points


@pytest.mark.parametrize(("variant", "multiplier"), [("linear", 8), ("power", 16), ("doubling", 8)])
def test_kitty_bonus_with_a_tractor_on_the_last_trick(variant: str, multiplier: int) -> None:
    deck = stack(["SJ SJ 3D", SEAT1], KITTY, first=0)
    rules = RuleSet.from_mapping({"deals": 1, "kitty_multiplier": variant})
    match = match_on(deck, rules=rules)
    script = Script(bids={0: ["SJ SJ"]}, bury={0: KITTY}, plays={0: ["3D"], 1: SEAT1_PLAYS})
    events = script.run(match)
    (declared,) = of_type(events, TrumpDeclared)
    assert (declared.suit, declared.dealer) == (None, 0)
    tricks = of_type(events, TrickWon)
    assert len(tricks) == 22 and {t.winner for t in tricks} == {1}
    assert of_type(events, CardsPlayed)[-4].cards == tuple(cards("AH AH KH KH"))
    (ended,) = of_type(events, DealEnded)
    assert ended.kitty == tuple(cards(KITTY))
    assert ended.trick_points == 200 - 60
    assert ended.kitty_multiplier == multiplier
    assert ended.kitty_bonus == 60 * multiplier
    assert ended.attacker_points == 140 + 60 * multiplier
    assert ended.winner == "attackers" and ended.next_dealer == 1


# -- no bid -------------------------------------------------------------------------------


def test_no_bid_in_the_first_deal_redeals() -> None:
    seed = SEED_FOR_FIRST_SEAT[2]
    match = MatchMachine(MatchSetup(ONE_DEAL, seed, {1: stack(["2S", "2H 2H"], first=2)}))
    script = Script(
        policy=lambda m, d: bid_first_offer(m, d) if m.snapshot().deal.attempt == 1 else None
    )
    events = script.run(match, until=lambda m: m.snapshot().deal.phase is not Phase.BIDDING)
    assert {s for s, kind, _ in script.log if kind is Kind.BID} >= {0, 1}  # they passed
    (redealt,) = of_type(match.events, Redealt)
    assert redealt.attempt == 1
    starts = of_type(match.events, DealStarted)
    assert [(s.deal, s.attempt, s.dealer, s.first_seat) for s in starts] == [
        (1, 0, None, 2),
        (1, 1, None, 2),
    ]
    # the second attempt is dealt from the shuffle (seed, deal 1, attempt 1)
    at = match.events.index(starts[1])
    dealt = [e.card for e in of_type(match.events[at:], CardDealt)]
    assert dealt == shuffled_deck(seed, 1, 1)[: len(dealt)]
    (declared,) = of_type(events, TrumpDeclared)
    assert declared.source == "bid" and declared.dealer == declared.bidder


def test_a_first_deal_where_nobody_can_bid_is_redealt_at_once() -> None:
    # The eight 2s go to the kitty and each seat gets one joker: no window ever opens.
    match = MatchMachine(MatchSetup(ONE_DEAL, 1, {1: stack([], "2S 2S 2H 2H 2C 2C 2D 2D")}))
    assert [r.attempt for r in of_type(match.events, Redealt)] == [1]
    assert match.snapshot().deal.attempt == 1 and match.pending()


def test_three_redeals_then_the_first_seat_deals_and_the_kitty_decides() -> None:
    seed = SEED_FOR_FIRST_SEAT[3]
    match = MatchMachine(MatchSetup(ONE_DEAL, seed))
    Script().run(match, until=lambda m: m.snapshot().deal.phase is not Phase.BIDDING)
    assert [r.attempt for r in of_type(match.events, Redealt)] == [1, 2, 3]
    assert [s.attempt for s in of_type(match.events, DealStarted)] == [0, 1, 2, 3]
    kitty = shuffled_deck(seed, 1, 3)[100:]
    (declared,) = of_type(match.events, TrumpDeclared)
    suit = kitty[0].suit
    assert (declared.source, declared.dealer, declared.bidder) == ("redeal_fallback", 3, None)
    assert (declared.suit, declared.revealed, declared.level) == (suit, (kitty[0],), Rank.TWO)
    assert match.snapshot().deal.dealer == 3 and match.pending()[0] == Decision(
        3, Kind.BURY, count=8
    )


@pytest.mark.parametrize(
    ("rules", "kitty", "suit", "shown"),
    [
        ({}, "7C 5D 6D 7D 8D 9D JD QD", "C", "7C"),
        ({}, "SJ 5D 6D 7D 8D 9D JD QD", None, "SJ"),
        ({"no_bid": "first_level_or_joker"}, "9C 8D BJ 7D 6D 9D JD QD", None, "9C 8D BJ"),
        (
            {"no_bid": "first_level_or_joker"},
            "9C QD KH JD 6D 9D 8D 7S",
            "H",
            "9C QD KH JD 6D 9D 8D 7S",
        ),
    ],
)
def test_no_bid_in_a_later_deal_the_kitty_decides(
    rules: dict[str, Any], kitty: str, suit: str | None, shown: str
) -> None:
    # Deal 1 ends with levels of at most 2 + 3, so none of these kitty cards is a level card.
    setup = MatchSetup(
        RuleSet.from_mapping({"deals": 2, **rules}), 7, {2: stack([], kitty, level="A")}
    )
    match = MatchMachine(setup)
    Script(policy=only_in_deal(1, bid_first_offer)).run(match)
    declared = of_type(match.events, TrumpDeclared)
    assert [d.source for d in declared] == ["bid", "kitty"]
    (first,) = of_type(match.events, DealEnded)[:1]
    assert declared[1].suit == (Suit(suit) if suit else None)
    assert declared[1].revealed == tuple(cards(shown))
    assert declared[1].dealer == first.next_dealer and declared[1].bidder is None


# -- the result: takeover, levels, the match at A ---------------------------------------


def _deal_one(rules: RuleSet, seed: int, adjust: int = 0, team: int = 0) -> MatchMachine:
    """Deal 1 from ``seed`` (the first seat offered a bid takes it; then fallbacks), with
    a referee penalty of ``adjust`` charged to ``team`` before play."""
    match = MatchMachine(MatchSetup(rules, seed))
    if adjust:
        match.penalize(team, adjust, "test adjustment")
    Script(policy=only_in_deal(1, bid_first_offer)).run(match, until=lambda m: m.deals_played >= 1)
    return match


def forced_result(rules: RuleSet, seed: int, target: int) -> MatchMachine:
    """Deal 1 with the attackers' points forced to exactly ``target``: play it once to
    learn the natural total, then replay it with a penalty making up the difference."""
    natural = of_type(_deal_one(dataclasses.replace(rules, deals=1), seed).events, DealEnded)[0]
    attackers = 1 - natural.dealer % 2
    diff = target - natural.attacker_points
    team = 1 - attackers if diff > 0 else attackers
    match = _deal_one(rules, seed, abs(diff), team)
    assert of_type(match.events, DealEnded)[0].attacker_points == target
    return match


@pytest.mark.parametrize(
    ("points", "winner", "gained", "next_offset"),
    [(75, "dealer", 1, 2), (80, "attackers", 0, 1), (115, "attackers", 0, 1),
     (120, "attackers", 1, 1), (0, "dealer", 3, 2), (-40, "dealer", 4, 2)],
)  # fmt: skip
def test_result_table_and_the_next_dealer(
    points: int, winner: str, gained: int, next_offset: int
) -> None:
    match = forced_result(RuleSet(deals=2), 11, points)
    ended = of_type(match.events, DealEnded)[0]
    dealer = ended.dealer
    assert (ended.winner, ended.levels_gained) == (winner, gained)
    assert ended.next_dealer == (dealer + next_offset) % 4
    climbing = dealer % 2 if winner == "dealer" else 1 - dealer % 2
    expected = [Rank.TWO, Rank.TWO]
    expected[climbing] = Rank(2 + gained)
    assert list(ended.levels) == expected
    start = of_type(match.events, DealStarted)[-1]
    assert (start.deal, start.dealer, start.levels) == (2, ended.next_dealer, ended.levels)
    assert start.level == ended.levels[ended.next_dealer % 2]


def test_keeping_the_deal_at_a_wins_the_match() -> None:
    match = forced_result(RuleSet.from_mapping({"start_level": "A"}), 11, 40)
    (ended,) = of_type(match.events, DealEnded)
    assert match.finished
    assert match.result == MatchEnded(
        ended.dealer % 2, (Rank.ACE, Rank.ACE), 1, Termination.LEVEL_A_KEPT
    )


def test_attackers_taking_over_at_a_must_defend_it_first() -> None:
    match = forced_result(RuleSet.from_mapping({"start_level": "A"}), 11, 200)
    (ended,) = of_type(match.events, DealEnded)
    assert (ended.winner, ended.levels_gained, ended.levels) == ("attackers", 3, (Rank.ACE,) * 2)
    assert not match.finished  # they stop at A and must now defend it as dealers
    assert (
        match.snapshot().deal.dealer == (ended.dealer + 1) % 4
        and match.snapshot().deal.level is Rank.ACE
    )


@pytest.mark.parametrize(
    ("rules", "points", "gained", "level", "finished"),
    [
        ({"start_level": "Q"}, 0, 3, Rank.ACE, False),  # Q +3 stops at A: A must be defended
        ({"start_level": "Q", "must_defend": []}, 0, 3, Rank.ACE, True),  # passes A: wins
        ({"start_level": "3", "must_defend": ["5", "T", "K", "A"]}, 0, 3, Rank.FIVE, False),
        ({"level_cap": 3}, -200, 3, Rank.FIVE, False),  # +8 capped at +3
    ],
)
def test_must_defend_levels_and_the_level_cap(
    rules: dict[str, Any], points: int, gained: int, level: Rank, finished: bool
) -> None:
    match = forced_result(RuleSet.from_mapping(rules), 11, points)
    (ended,) = of_type(match.events, DealEnded)
    assert ended.levels_gained == gained
    assert ended.levels[ended.dealer % 2] is level
    assert match.finished is finished
    if finished:  # the dealer team climbed past A from Q: not "kept at A"
        assert match.result is not None and match.result.winner == ended.dealer % 2
        assert match.result.reason == "passed_a"


# -- bid windows ------------------------------------------------------------------------


def dealt(match: MatchMachine) -> int:
    return 4 * match.snapshot().deal.dealt  # a CardDealt per card, four a round


@pytest.mark.parametrize(("first", "applied"), [(0, [1]), (2, [3])])
def test_simultaneous_bids_apply_in_order_from_the_first_seat(
    first: int, applied: list[int]
) -> None:
    deck = stack(["3S", "2H", "3S", "2C"], first=first)
    match = match_on(deck, first)
    assert {d.seat for d in match.pending()} == {1, 3} and dealt(match) == 4
    assert match.answer(3, cards("2C")) == []  # nothing happens until every answer is in
    assert [d.seat for d in match.pending()] == [1]
    events = match.answer(1, cards("2H"))
    # The later seat's equal bid was outranked when applied: a pass, not a fault.
    assert [(e.seat, e.cards) for e in of_type(events, BidMade)] == [
        (s, tuple(cards("2H" if s == 1 else "2C"))) for s in applied
    ]
    assert (
        match.snapshot().deal.winning is not None
        and match.snapshot().deal.winning.seat == applied[0]
    )
    assert dealt(match) > 4  # the window closed and dealing went on


def test_a_stronger_bid_in_the_same_window_overturns_the_earlier_one() -> None:
    deck = stack(["3S 4S", "3H 2H", "3S 4S", "SJ SJ"], first=0)
    match = match_on(deck)
    assert {d.seat for d in match.pending()} == {1, 3} and dealt(match) == 8
    match.answer(3, cards("SJ SJ"))
    events = match.answer(1, cards("2H"))
    assert [e.seat for e in of_type(events, BidMade)] == [1, 3]
    assert match.snapshot().deal.winning == Bid(3, tuple(cards("SJ SJ")))


def test_the_winning_seat_may_only_reinforce() -> None:
    deck = stack(["3S 4S 5S 6S", "2H 2C 2C 2H"], first=0)
    match = match_on(deck)
    assert match.pending() == (Decision(1, Kind.BID, options=(tuple(cards("2H")),)),)
    match.answer(1, cards("2H"))
    # Round 3 brings 2C (a pair of 2C now, but seat 1 may not overturn itself): no window.
    (decision,) = match.pending()
    assert dealt(match) == 16 and decision.options == (tuple(cards("2H 2H")),)
    with pytest.raises(IllegalPlay, match="only reinforce"):
        match.answer(1, cards("2C 2C"))
    events = match.answer(1, cards("2H 2H"))
    assert of_type(events, BidMade) == [BidMade(1, tuple(cards("2H 2H")))]


def test_closing_windows_ask_every_seat_holding_a_bid_until_nobody_bids() -> None:
    hearts = " ".join(f"{r}H {r}H" for r in "3456789TJQKA")
    deck = stack(["2S", "", hearts + " 2D", "BJ BJ"], first=0)
    match = match_on(deck)
    Script().run(match, until=lambda m: dealt(m) == 100)
    assert [d.seat for d in match.pending()] == [2]  # round 25 brought seat 2 its 2D
    match.answer(2, ())
    assert {d.seat for d in match.pending()} == {0, 2, 3}  # closing: all who hold a bid
    match.answer(2, ())
    match.answer(3, ())  # keeps BJ BJ back for now
    events = match.answer(0, cards("2S"))
    assert of_type(events, BidMade) == [BidMade(0, tuple(cards("2S")))]
    assert [d.seat for d in match.pending()] == [3]  # the next closing window: only 3 can beat it
    events = match.answer(3, cards("BJ BJ"))
    assert of_type(events, BidMade) == [BidMade(3, tuple(cards("BJ BJ")))]
    (declared,) = of_type(events, TrumpDeclared)
    assert (declared.suit, declared.dealer, declared.bidder) == (None, 3, 3)
    assert match.pending() == (Decision(3, Kind.BURY, count=8),)


def test_points_in_a_stacked_deal_add_up() -> None:
    deck = stack(["SJ SJ 3D", SEAT1], KITTY, first=0)
    match = match_on(deck)
    Script(bids={0: ["SJ SJ"]}).run(match)
    (ended,) = of_type(match.events, DealEnded)
    won = sum(t.points for t in of_type(match.events, TrickWon))
    assert won + points(ended.kitty) == 200
