"""The views a referee keeps up to date equal the views built from scratch (hypothesis).

:class:`~arena.game.SeatViews` keeps the parts of each seat's view until what they
depend on changes; :func:`~arena.game.seat_view` builds a view from the match's
snapshot at once, and is what the leak properties (``test_game_properties.py``) check.
Here random short matches — decks and answers drawn by ``tests/strategies.py``, so a
failure shrinks, now and then a referee penalty or a forfeit — compare the two for
every seat after every step. And every request a real :class:`~arena.referee.RefereeCore`
builds carries exactly the from-scratch view, its wire form byte for byte that view's.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import VARIANTS
from test_game_properties import play

from arena.game import (
    Action,
    Decision,
    Event,
    Kind,
    MatchMachine,
    MatchSetup,
    Phase,
    SeatView,
    SeatViews,
    TrickView,
    seat_view,
)
from arena.referee import RefereeCore
from arena.rules import Card, Rank, RuleSet
from arena.server import convert
from arena.v1 import arena_pb2 as pb

EXAMPLES = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def same_views(views: SeatViews, match: MatchMachine) -> None:
    for seat in (0, 1, 2, 3):
        kept, fresh = views.view(seat), seat_view(match, seat)
        assert kept == fresh, f"seat {seat}: kept {kept} != from scratch {fresh}"


@EXAMPLES
@given(data=st.data(), rules=st.sampled_from(VARIANTS), deals=st.integers(1, 2))
def test_kept_views_equal_views_from_scratch(
    data: st.DataObject, rules: dict[str, Any], deals: int
) -> None:
    views: list[SeatViews] = []

    def compare(match: MatchMachine, _d: Decision, _a: Action, _e: list[Event]) -> None:
        if not views:  # made at the first answer: its first views come from a moved match
            views.append(SeatViews(match))
        same_views(views[0], match)
        if match.finished or match.snapshot().deal.phase is Phase.OVER:
            return
        if data.draw(st.integers(0, 19), label="penalty") == 0:  # a referee's penalty
            match.penalize(data.draw(st.integers(0, 1), label="team"), 10, "test")
            same_views(views[0], match)

    match, _ = play(data, rules, deals=deals, after=compare)
    same_views(views[0], match)


def cards(field: Any) -> tuple[Card, ...]:
    return convert.cards_from_pb(field)


def trick_of(m: pb.Trick) -> TrickView:
    plays = tuple((p.seat, cards(p.cards)) for p in m.plays)
    return TrickView(m.number, m.leader, plays, None if m.winner < 0 else m.winner)


def check_wire(view: SeatView, m: pb.View) -> None:
    """The wire view, read back field by field with protobuf's own accessors, says what
    ``view`` says (the encoding is a join of cached parts: no part may be stale)."""
    assert (m.seat, m.deal_number, m.first_seat) == (view.seat, view.deal, view.first_seat)
    assert m.dealer == (-1 if view.dealer is None else view.dealer)
    assert cards(m.hand) == view.hand and cards(m.kitty) == view.kitty
    assert [Rank(r) for r in m.levels] == list(view.levels)
    assert (Rank(m.trump.level), m.trump.declared) == (view.level, view.trump_declared)
    assert [(b.seat, cards(b.cards)) for b in m.bids] == [(b.seat, b.cards) for b in view.bids]
    winning = view.winning_bid
    assert m.HasField("winning_bid") == (winning is not None)
    if winning is not None:
        assert (m.winning_bid.seat, cards(m.winning_bid.cards)) == (winning.seat, winning.cards)
    for name, trick in (("current_trick", view.current), ("previous_trick", view.previous)):
        assert m.HasField(name) == (trick is not None)
        if trick is not None:
            assert trick_of(getattr(m, name)) == trick
            assert getattr(m, name).points == sum(c.points for _, cs in trick.plays for c in cs)
    revealed = {p.seat: cards(p.cards) for p in m.revealed}
    assert revealed == {s: c for s, c in enumerate(view.revealed) if c}
    assert (m.attacker_points, m.penalty_points, m.fault_penalty_points) == (
        view.attacker_points,
        view.penalty_points,
        view.fault_penalty_points,
    )
    assert tuple(m.points_by_seat) == view.points_by_seat
    assert tuple(m.hand_sizes) == view.hand_sizes


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32), penalties=st.sets(st.integers(1, 25), max_size=3))
def test_requests_carry_the_view_from_scratch(seed: int, penalties: set[int]) -> None:
    """Through the real core, as the server builds requests (faults charged now and
    then): each request's view is the from-scratch one, and its wire message says it."""
    core = RefereeCore(MatchSetup(RuleSet.from_mapping({"deals": 2}), seed))
    while not core.finished:
        for decision in core.match.pending():
            ask = core.ask(decision, core.tally.clock)
            view = ask.request.view
            assert view == seat_view(core.match, decision.seat)
            check_wire(view, convert.request_to_pb(ask.seq, ask.request, 1000, 1000).request.view)
            answer: Action = ask.request.fallback
            trick = core.match.snapshot().deal.trick
            if decision.kind is Kind.PLAY and trick in penalties:
                answer = ()  # an illegal answer: a fault, a penalty, the fallback played
                penalties.discard(trick)
            core.apply(core.settle(ask, answer, None, 0.0))
            if core.finished:
                break
