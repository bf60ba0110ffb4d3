"""The edge's per-match event cache stays small: what it keeps is what the next few
readers ask for, and a match's cache goes with its last stream (issue 20, RSS per match)."""

from __future__ import annotations

import gc

from arena.game import CardDealt, MatchMachine, MatchSetup
from arena.game.views import public_events
from arena.rules import RuleSet
from arena.server.event_table import event_to_pb
from arena.server.wire import KEEP, EventCache, EventCaches


def played_match() -> MatchMachine:
    match = MatchMachine(MatchSetup(RuleSet.from_mapping({"deals": 1}), 7))
    while not match.finished:
        decision = match.pending()[0]
        match.answer(decision.seat, match.fallback_basis(decision.seat).answer())
    return match


def test_a_whole_match_keeps_at_most_twice_keep_events_converted() -> None:
    events = played_match().events
    assert len(events) > 4 * KEEP
    cache = EventCache()
    for index, event in enumerate(events):
        message = cache.get(index, event)
        assert message == event_to_pb(event, index)
        assert len(cache) <= 2 * KEEP
        if not isinstance(event, CardDealt):  # the four seats' next reads are hits
            assert cache.get(index, event) is message


def test_dealt_cards_are_not_kept_they_have_one_reader() -> None:
    events = played_match().events
    cache = EventCache()
    dealt = [(i, e) for i, e in enumerate(events) if isinstance(e, CardDealt)]
    cache.many(dealt)
    assert len(cache) == 0
    public = [e for e in public_events(events) if not isinstance(e, CardDealt)]
    assert public, "spectators see no dealt card: nothing lost by not keeping them"


def test_a_matchs_cache_goes_with_its_last_stream() -> None:
    caches = EventCaches()
    cache = caches.of("m-1")
    assert caches.of("m-1") is cache
    cache.get(0, played_match().events[0])
    del cache
    gc.collect()
    assert len(caches.of("m-1")) == 0  # a new, empty one: the old one was released
