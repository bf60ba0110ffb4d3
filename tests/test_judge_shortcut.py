"""The game side's shortcuts give what the long way gives (hypothesis; issue 20, t22core).

- A deal keeps each hand as a tuple, and ``held``, the same cards sorted by the card
  order once it is known (what a seat's view shows): after any sequence of answers,
  ``held`` is the hand sorted from scratch (``order.sort``), and before the trump the
  hand as received.
- A fallback basis judges for the machine while nothing changed: the fallback it built
  (legal by construction, its verdict known as it is built; a forced follow built
  without any position, which must be ``fallback_play``'s on the whole table) and any
  follow (on the seat's own position). Its verdict is the one the legality API gives on the
  whole table (``check_play``/``check_bury``/``check_bid`` on ``match.position``), field
  for field — a lead's ``LeadVerdict`` included — and the machine applies the answer
  the same way (a refused one raises the same reason).

- The events written most (a card dealt, cards played, a trick won) build their record
  line's dict by hand: it is the generic ``Event.to_dict``'s, to the byte.
- ``quick_init`` sets a big value through a twin class: the value is its class's own.

Random short matches as in ``test_game_properties.py``: decks and answers drawn by
``tests/strategies.py`` (so a failure shrinks), now and then junk or a referee penalty
between the request and the answer.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import VARIANTS, candidates, decks, junk, picks
from test_game_properties import assert_refused

from arena.errors import IllegalPlay
from arena.game import (
    Action,
    CardDealt,
    CardsPlayed,
    DealSnapshot,
    Decision,
    Event,
    Kind,
    MatchMachine,
    MatchSetup,
    Phase,
    SeatView,
    TrickWon,
)
from arena.records.format import dump_line
from arena.rules import (
    SEATS,
    Card,
    RuleSet,
    Verdict,
    check_bid,
    check_bury,
    check_play,
    deck,
    fallback_burial,
    fallback_play,
)
from arena.rules.values import LEND_FROM

EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def whole_table(match: MatchMachine, decision: Decision, action: Action) -> Verdict:
    """The verdict on the whole table: what the machine's own judge asks."""
    position = match.position
    if decision.kind is Kind.BID:
        return check_bid(position, decision.seat, action)
    if decision.kind is Kind.BURY:
        return check_bury(position, action)
    return check_play(position, action)


def the_long_way(match: MatchMachine, decision: Decision) -> Action:
    """The fallback asked of the whole table's position (a forced follow is built
    without a position by the basis: it must be what ``fallback_play`` builds)."""
    position = match.position
    if decision.kind is Kind.BID:
        return ()
    if decision.kind is Kind.BURY:
        return fallback_burial(position)
    return fallback_play(position)


def held_is_sorted(match: MatchMachine) -> None:
    deal = match.snapshot().deal
    assert len(deal) == len(DealSnapshot._fields)  # (freeze builds the tuple at once)
    for seat in (0, 1, 2, 3):
        hand = deal.hands[seat]
        expected = tuple(deal.order.sort(list(hand))) if deal.order is not None else hand
        assert deal.held[seat] == expected, f"seat {seat}: held {deal.held[seat]} != {expected}"


@EXAMPLES
@given(data=st.data(), rules=st.sampled_from(VARIANTS), deals=st.integers(1, 2))
def test_held_hands_and_the_bases_verdicts_are_the_long_ways(
    data: st.DataObject, rules: dict[str, Any], deals: int
) -> None:
    rule_set = RuleSet.from_mapping({"deals": deals, **rules})
    stacked = {n: tuple(data.draw(decks(rule_set), label=f"deck {n}")) for n in range(1, deals + 1)}
    match = MatchMachine(MatchSetup(rule_set, 0, stacked))
    shortcuts = 0
    while not match.finished:
        held_is_sorted(match)
        for decision in match.pending():
            seat = decision.seat
            basis = match.fallback_basis(seat)  # what a request carries
            fallback = basis.answer() if data.draw(st.booleans(), label="fallback built") else None
            options = list(candidates(match, decision))
            pick = data.draw(picks(10 * len(options)), label="pick")
            if pick >= 9 * len(options):
                action = junk(data.draw, match, decision)
            elif fallback is not None and pick % 3 == 0:
                action = fallback
            else:
                action = options[pick % len(options)]
            action = tuple(action)
            full = whole_table(match, decision, action)
            short = basis.judge(action)
            if short is not None:
                shortcuts += 1
                assert short == full, f"{decision} {action}: basis {short} != table {full}"
            if fallback is not None:
                assert basis.judge(fallback) == whole_table(match, decision, fallback)
                assert fallback == the_long_way(match, decision)
            if data.draw(st.integers(0, 24), label="penalty") == 0:
                phase = match.snapshot().deal.phase
                if phase is not Phase.OVER:  # the deal changes: the basis judges no more
                    match.penalize(data.draw(st.integers(0, 1), label="team"), 10, "test")
            if not full.legal:
                assert_refused(match, seat, action, full.reason)
                action = match.fallback(seat)
            match.answer(seat, action)
            if match.finished:
                break
    held_is_sorted(match)


def test_a_basis_a_bot_changed_judges_nothing() -> None:
    """An in-process bot holds the very basis the machine keeps: if it changes the
    basis's hand, the fallback built from it is not trusted — the machine judges the
    answer on the whole table, and its own fallback is the whole table's."""
    match = MatchMachine(MatchSetup(RuleSet(), 5))
    while True:
        decision = match.pending()[0]
        deal = match.snapshot().deal
        if decision.kind is Kind.PLAY and deal.plays:
            break
        match.answer(decision.seat, match.fallback(decision.seat))
    seat = decision.seat
    basis = match.fallback_basis(seat)
    held = deal.hands[seat]
    basis.hand = tuple(c for c in deck(deal.rules.decks) if c not in held)[:25]
    wrong = basis.answer()  # built from cards the seat does not hold
    verdict = check_play(match.position, wrong)
    assert not verdict.legal
    with pytest.raises(IllegalPlay) as refused:
        match.answer(seat, wrong)
    assert refused.value.reason == verdict.reason
    assert match.fallback(seat) == fallback_play(match.position)


# -- the record lines' and values' shortcuts ------------------------------------------

some_seats = st.one_of(st.sampled_from(SEATS), st.integers(0, 3))  # a Seat or a plain int
some_cards = st.lists(st.sampled_from(deck(1)), max_size=6).map(tuple)


@settings(max_examples=60, deadline=None)
@given(
    seat=some_seats,
    winner=some_seats,
    numbers=st.lists(st.integers(0, 400), min_size=4, max_size=4),
    cards=some_cards,
)
def test_written_out_to_dicts_are_the_generic_ones(
    seat: int, winner: int, numbers: list[int], cards: tuple[Card, ...]
) -> None:
    """CardDealt, CardsPlayed and TrickWon write their lines without the generic loop:
    the same dict (keys in order, values of the same types), the same bytes."""
    a, b, c, d = numbers
    events = [
        CardDealt(seat, cards[0] if cards else deck(1)[0]),
        CardsPlayed(seat, a, cards),
        TrickWon(a, winner, b, c + d),
    ]
    for event in events:
        mine, generic = event.to_dict(), Event.to_dict(event)
        assert list(mine.items()) == list(generic.items())
        assert [type(v) for v in mine.values()] == [type(v) for v in generic.values()]
        assert dump_line(mine) == dump_line(generic)


def test_quick_init_lends_a_big_value_to_its_twin_and_takes_it_back() -> None:
    """A value of LEND_FROM fields or more is set through its twin class: what comes
    out is an instance of the class itself, frozen, equal to the one the setters make
    (a subclass takes the setters), and pickles as one."""
    assert len(dataclasses.fields(SeatView)) >= LEND_FROM
    args = tuple(range(len(dataclasses.fields(SeatView))))
    view = SeatView(*args)  # type: ignore[arg-type]
    assert (
        type(view) is SeatView
        and tuple(getattr(view, f.name) for f in dataclasses.fields(view)) == args
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.seat = 3  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(view)) == view and copy.copy(view) == view
    assert dataclasses.replace(view, seat=9).seat == 9

    @dataclasses.dataclass(frozen=True, slots=True)
    class Wider(SeatView):
        extra: int = 5

    wider = Wider(*args)  # type: ignore[arg-type]
    assert type(wider) is Wider and wider.first_seat == args[-1] and wider.extra == 5
