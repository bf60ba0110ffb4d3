"""Properties of whole deals (hypothesis), every deck and answer drawn so failures shrink.

Each example plays a short match (one or two deals) whose stacked decks and answers come
from ``tests/strategies.py`` — legal answers from the legality API, now and then junk —
and checks an invariant after every answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import VARIANTS, candidates, decks, junk, picks

from arena.errors import IllegalPlay
from arena.game import (
    Action,
    CardDealt,
    DealEnded,
    Decision,
    Event,
    KittyBuried,
    KittyTaken,
    MatchMachine,
    MatchSetup,
    Phase,
    TrickWon,
    check_cards,
    public_events,
    seat_events,
    seat_view,
    shuffled_deck,
)
from arena.rules import Card, RuleSet, deck, points

EXAMPLES = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
variants = st.sampled_from(VARIANTS)

Check = Callable[[MatchMachine, Decision, Action, list[Event]], None]


def play(
    data: st.DataObject,
    rules: dict[str, Any] | None = None,
    deals: int = 1,
    after: Check | None = None,
) -> tuple[MatchMachine, list[tuple[int, Action]]]:
    """Play a short match whose decks and answers hypothesis draws (so a failure shrinks
    to the plain deck order and the first legal answers). Every answer goes through
    ``match.check`` first, and a junk answer must be refused exactly when the check says
    it is illegal."""
    rule_set = RuleSet.from_mapping({"deals": deals, **(rules or {})})
    stacked = {n: tuple(data.draw(decks(rule_set), label=f"deck {n}")) for n in range(1, deals + 1)}
    match = MatchMachine(MatchSetup(rule_set, 0, stacked))
    applied: list[tuple[int, Action]] = []
    while not match.finished:
        for decision in match.pending():
            seat = decision.seat
            options = list(candidates(match, decision))
            pick = data.draw(picks(10 * len(options)))  # shrinks to 0: the fallback
            if pick >= 9 * len(options):  # one time in ten, junk
                action = junk(data.draw, match, decision)
            else:
                action = options[pick % len(options)]
            verdict = match.check(seat, action)
            if not verdict.legal:
                assert_refused(match, seat, action, verdict.reason)
                action = match.fallback(seat)
                assert match.check(seat, action).legal
            events = match.answer(seat, action)
            applied.append((seat, action))
            if after is not None:
                after(match, decision, action, events)
    return match, applied


def assert_refused(match: MatchMachine, seat: int, action: Action, reason: str) -> None:
    """An answer judged illegal is refused with the judge's reason, and nothing is applied."""
    size = len(match.events)
    try:
        match.answer(seat, action)
    except IllegalPlay as exc:
        assert exc.reason == reason
    else:
        raise AssertionError(f"{action} was applied, yet judged illegal")
    assert len(match.events) == size


@EXAMPLES
@given(data=st.data(), rules=variants)
def test_every_card_is_in_exactly_one_place(data: st.DataObject, rules: dict[str, Any]) -> None:
    def cards_accounted(m: MatchMachine, d: Decision, a: Action, e: list[Event]) -> None:
        assert check_cards(m.snapshot().deal) is None

    play(data, rules, after=cards_accounted)


@EXAMPLES
@given(data=st.data(), rules=variants)
def test_trick_points_and_the_kitty_make_the_deck_total(
    data: st.DataObject, rules: dict[str, Any]
) -> None:
    match, _ = play(data, rules, deals=2)
    total = 100 * match.rules.decks
    won = 0
    ended = 0
    for event in match.events:
        if isinstance(event, TrickWon):
            won += event.points
        elif isinstance(event, DealEnded):
            assert won + points(event.kitty) == total
            assert event.attacker_points == (
                event.trick_points + event.kitty_bonus + event.penalty_points
            )
            won, ended = 0, ended + 1
    assert ended == 2


def check_events_for(seat: int, events: list[Event]) -> None:
    """Redacted events: no card dealt to another seat, no kitty card of another dealer."""
    for event in seat_events(events, seat) if seat >= 0 else public_events(events):
        if isinstance(event, CardDealt):
            assert event.seat == seat
        elif isinstance(event, KittyTaken | KittyBuried) and event.seat != seat:
            assert event.cards == ()


@EXAMPLES
@given(data=st.data())
def test_seats_see_only_what_they_may(data: st.DataObject) -> None:
    dealt: list[list[Card]] = [[], [], [], []]  # what each seat was shown being dealt
    seen = [0]

    def redacted(m: MatchMachine, d: Decision, a: Action, _: list[Event]) -> None:
        new, seen[0] = m.events[seen[0] :], len(m.events)
        deal = m.snapshot().deal
        over = deal.phase is Phase.OVER
        for seat in range(4):
            view = seat_view(m, seat)
            assert Counter(view.hand) == Counter(deal.hands[seat])
            may_see_kitty = over or (seat == deal.dealer and deal.phase is not Phase.BIDDING)
            assert view.kitty == (tuple(deal.kitty) if may_see_kitty else ())
            for other in range(4):  # shown cards are still in that hand, nothing more
                assert not Counter(view.revealed[other]) - Counter(deal.hands[other])
            check_events_for(seat, new)
            dealt[seat].extend(e.card for e in seat_events(new, seat) if isinstance(e, CardDealt))
            if deal.phase is Phase.BIDDING:  # its hand is exactly its latest dealt cards
                held = deal.hands[seat]
                assert Counter(dealt[seat][len(dealt[seat]) - len(held) :]) == Counter(held)
        check_events_for(-1, new)

    match, _ = play(data, after=redacted)
    for seat in (-1, 0, 1, 2, 3):  # and the whole stream at once
        check_events_for(seat, match.events)


@EXAMPLES
@given(data=st.data(), rules=variants)
def test_the_same_answers_rebuild_the_same_events(
    data: st.DataObject, rules: dict[str, Any]
) -> None:
    match, applied = play(data, rules, deals=2)
    again = MatchMachine(match.setup)
    for seat, action in applied:
        again.answer(seat, action)
    assert again.finished
    assert [e.to_dict() for e in again.events] == [e.to_dict() for e in match.events]


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**63),
    deal=st.integers(min_value=1, max_value=10**6),
    attempt=st.integers(min_value=0, max_value=3),
    n_decks=st.sampled_from([1, 2, 3]),
)
def test_the_shuffle_is_a_permutation_of_the_deck(
    seed: int, deal: int, attempt: int, n_decks: int
) -> None:
    shuffled = shuffled_deck(seed, deal, attempt, n_decks)
    assert Counter(shuffled) == Counter(deck(n_decks))
    assert all(isinstance(c, Card) for c in shuffled)
    assert shuffled == shuffled_deck(seed, deal, attempt, n_decks)


def test_seeds_give_different_shuffles() -> None:
    decks = {tuple(shuffled_deck(seed, deal, attempt)) for seed in range(3)
             for deal in (1, 2) for attempt in (0, 1)}  # fmt: skip
    assert len(decks) == 12
