"""The spectator delay (arena.server.spectate), pure: whole tricks or deals behind,
nothing lost, nothing reordered, everything shown once the match ends."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.game import DealEnded, DealStarted, Event, MatchEnded, Termination, TrickWon
from arena.rules import Rank, Side
from arena.server.spectate import DelayedFeed, InvalidDelay, SpectatorDelay

LEVELS = (Rank.TWO, Rank.TWO)
START = DealStarted(1, 0, None, Rank.TWO, 0, LEVELS)
END = MatchEnded(0, LEVELS, 1, Termination.DEALS_PLAYED)


def deal_ended(deal: int) -> DealEnded:
    return DealEnded(deal, 0, 0, (), 0, 0, 0, 0, Side.DEALER, 0, LEVELS, 1)


def test_the_delay_holds_events_back_by_whole_tricks_and_deals() -> None:
    won = [TrickWon(t, 0, 0, 0) for t in (1, 2, 3)]
    stream: list[tuple[int, Event]] = list(enumerate([START, won[0], won[1], won[2]]))
    feed = DelayedFeed(SpectatorDelay.parse("2 tricks"))
    assert feed.push(stream[:2]) == [] and feed.push(stream[2:3]) == []
    assert feed.push(stream[3:]) == stream[:2]  # trick 1 shown once tricks 2 and 3 ended
    assert feed.push([(4, END)]) == [*stream[2:], (4, END)]  # the end shows the rest
    assert DelayedFeed(SpectatorDelay.parse("0")).push(stream) == stream
    assert DelayedFeed(SpectatorDelay.parse("1 deal")).push(stream) == []


def test_delays_are_read_in_tricks_or_deals() -> None:
    assert SpectatorDelay.parse("3") == SpectatorDelay(3, "tricks")
    assert SpectatorDelay.parse(" 2 tricks ") == SpectatorDelay(2, "tricks")
    assert SpectatorDelay.parse("1deal") == SpectatorDelay(1, "deals")
    assert str(SpectatorDelay.parse("0 deals")) == "none"
    for bad in ("soon", "-1 tricks", "2 hands", ""):
        with pytest.raises(InvalidDelay, match="tricks or deals"):
            SpectatorDelay.parse(bad)


STEP = st.sampled_from(["event", "trick", "deal"])


@given(
    kinds=st.lists(STEP, max_size=60),
    cuts=st.lists(st.integers(0, 60), max_size=8),
    amount=st.integers(0, 4),
    unit=st.sampled_from(["tricks", "deals"]),
    ended=st.booleans(),
)
def test_a_delayed_feed_loses_and_reorders_nothing(
    kinds: list[str], cuts: list[int], amount: int, unit: str, ended: bool
) -> None:
    made = {"event": lambda i: START, "trick": lambda i: TrickWon(i, 0, 0, 0), "deal": deal_ended}
    events: list[Event] = [made[k](i) for i, k in enumerate(kinds)]
    if ended:
        events.append(END)
    stream = list(enumerate(events))
    delay = SpectatorDelay(amount, unit)
    feed = DelayedFeed(delay)
    shown: list[tuple[int, Event]] = []
    bounds = sorted({min(c, len(stream)) for c in cuts} | {len(stream)})
    start = 0
    for bound in bounds:  # the stream in arbitrary batches
        shown += feed.push(stream[start:bound])
        start = bound
        # Exactly `amount` steps behind (all of them, while fewer have ended so far):
        # never ahead, and never further behind than asked.
        held = stream[len(shown) : bound]
        steps_so_far = sum(delay.ends_a_step(e) for _, e in stream[:bound])
        if not (ended and bound == len(stream)) and amount:
            assert sum(delay.ends_a_step(e) for _, e in held) == min(amount, steps_so_far)
            if shown and held:  # released by whole tricks (deals)
                assert delay.ends_a_step(shown[-1][1])
    assert shown == stream[: len(shown)]  # a prefix, in order
    if ended or amount == 0:
        assert shown == stream  # the end (or no delay) shows everything
    assert shown + feed.close() == stream
