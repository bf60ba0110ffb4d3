"""The referee's deadlines, time banks and fault policy, on virtual time (STYLE.md habit 9).

Every seat is a :class:`LocalSeat` whose bot "thinks" with ``trio.sleep`` under the
``autojump_clock`` fixture, so a 5 s think costs nothing and every time asserted is an
exact ``trio.current_time()``. No network, no threads.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
import trio
import trio.testing

from arena.bots import make_bot
from arena.game import (
    Action,
    CardsPlayed,
    Kind,
    MatchEnded,
    MatchSetup,
    PenaltyApplied,
    Request,
)
from arena.records import CancelLine, RecordHeader, RecordWriter, SeatRecord, read_record
from arena.referee import (
    FaultKind,
    FaultPolicy,
    LocalSeat,
    PolicyKind,
    Referee,
    SeatVerdict,
    TimeControl,
)
from arena.rules import RuleSet, deck

RULES = RuleSet.from_mapping({"deals": 1})
SEED = 3  # the first decision is a lone bid of seat 0 (no bid window)
WINDOW_SEED = 2  # the first decision is a bid window: seats 0 and 3 at once
TC = TimeControl(decision_ms=1000, bank_ms=0, grace_ms=0, allowance_ms=50)


class ClockedSeat(LocalSeat):
    """A local seat that notes when it was asked and when it was told each verdict."""

    def __init__(self, seat: int, think: Callable[[Request], Any] | None = None) -> None:
        super().__init__(make_bot("random", seat), think)
        self.seat = seat
        self.asked: list[tuple[float, int, Request, int]] = []  # (time, seq, request, bank_ms)
        self.told: list[tuple[float, SeatVerdict]] = []

    async def ask(self, seq: int, request: Request, deadline_ms: int, bank_ms: int) -> Action:
        self.asked.append((trio.current_time(), seq, request, bank_ms))
        return await super().ask(seq, request, deadline_ms, bank_ms)

    def tell_verdict(self, verdict: SeatVerdict) -> None:
        self.told.append((trio.current_time(), verdict))
        super().tell_verdict(verdict)

    def turn(self, seq: int) -> tuple[float, Request, int, float, SeatVerdict]:
        """(asked at, request, bank_ms sent, judged at, verdict) of decision ``seq``."""
        asked = next(a for a in self.asked if a[1] == seq)
        told = next(t for t in self.told if t[1].seq == seq)
        return asked[0], asked[2], asked[3], told[0], told[1]


def slow(kind: Kind, seconds: float, times: int = 1) -> Callable[[Request], Any]:
    """Think ``seconds`` (virtual) on the first ``times`` decisions of ``kind``."""
    left = [times]

    async def think(request: Request) -> None:
        if request.decision.kind is kind and left[0] > 0:
            left[0] -= 1
            await trio.sleep(seconds)
        else:
            await trio.lowlevel.checkpoint()

    return think


def referee(
    seats: list[ClockedSeat],
    tc: TimeControl = TC,
    policy: FaultPolicy | None = None,
    seed: int = SEED,
    recorder: Any = None,
) -> Referee:
    return Referee("m-test", MatchSetup(RULES, seed), seats, tc, policy, recorder)


def seats(**thinks: Callable[[Request], Any]) -> list[ClockedSeat]:
    """Four seats; ``s1=slow(...)`` gives seat 1 a way of thinking."""
    return [ClockedSeat(i, thinks.get(f"s{i}")) for i in range(4)]


def not_held(request: Request) -> Action:
    """A card the seat does not hold (a lead or a follow of the right size)."""
    hand = set(request.view.hand)
    missing = next(c for c in deck(2) if c not in hand)
    return (missing,) * max(1, request.decision.count)


def follow_with_one_too_many(request: Request) -> Action | None:
    count = request.decision.count
    return tuple(request.view.hand[: count + 1]) if count else None  # leads are skipped


class CheatingBot:
    """Plays randomly, but answers ``bad(request)`` where that is not ``None``, as long
    as the budget ``left`` (a one-item list, shared by several bots if wished) lasts."""

    def __init__(self, seat: int, bad: Callable[[Request], Action | None], left: list[int]) -> None:
        self.inner = make_bot("random", seat)
        self.name = "cheat"
        self.bad = bad
        self.left = left

    def decide(self, request: Request) -> Action:
        answer = self.bad(request) if self.left[0] > 0 else None
        if answer is None:
            return self.inner.decide(request)
        self.left[0] -= 1
        return answer


def cheater(seat: int, bad: Callable[[Request], Action | None], times: int = 1) -> ClockedSeat:
    s = ClockedSeat(seat)
    s.bot = CheatingBot(seat, bad, [times])
    return s


def cheaters(bad: Callable[[Request], Action | None]) -> list[ClockedSeat]:
    """Four seats of which whoever first meets a decision ``bad`` answers cheats, once."""
    table, left = seats(), [1]
    for seat in table:
        seat.bot = CheatingBot(seat.seat, bad, left)
    return table


def on(kind: Kind, answer: Callable[[Request], Action]) -> Callable[[Request], Action | None]:
    return lambda r: answer(r) if r.decision.kind is kind else None


# --------------------------------------------------------------------------- deadlines


async def test_a_slow_bot_times_out_at_the_limit_and_the_fallback_is_played(
    autojump_clock: trio.testing.MockClock,
) -> None:
    table = seats(s1=slow(Kind.PLAY, 5.0))
    ref = referee(table)
    report = await ref.run()

    [fault] = report.faults
    assert (fault.seat, fault.kind) == (1, FaultKind.TIMEOUT)
    asked, request, _, judged, verdict = table[1].turn(fault.seq)
    assert asked == 0.0  # every other decision is instant
    assert judged == pytest.approx(1.05, abs=1e-9)  # the limit plus the network allowance
    assert trio.current_time() == pytest.approx(1.05, abs=1e-9)  # and the match went on
    assert not verdict.accepted and verdict.played == request.fallback == fault.played
    played = [e for e in report.events if isinstance(e, CardsPlayed) and e.seat == 1]
    assert played[0].cards == request.fallback and played[0].trick == fault.trick
    assert "no answer within 1.050s" in fault.reason
    assert report.result.reason == "deals_played"


@pytest.mark.parametrize(
    ("think", "bank_left_ms"),
    [(1.3, 750), (1.05, 1000), (0.5, 1000), (1.8, 250)],
)
async def test_an_overrun_is_charged_to_the_bank_less_the_allowance(
    autojump_clock: trio.testing.MockClock, think: float, bank_left_ms: int
) -> None:
    tc = TimeControl(decision_ms=1000, bank_ms=1000, allowance_ms=50)
    table = seats(s2=slow(Kind.PLAY, think))
    ref = referee(table, tc)
    report = await ref.run()

    assert report.faults == ()
    assert ref.bank[2] == pytest.approx(bank_left_ms / 1000)
    assert ref.statistics().bank_ms[2] == bank_left_ms
    first_play = next(a for a in table[2].asked if a[2].decision.kind is Kind.PLAY)
    later = [a for a in table[2].asked if a[0] > first_play[0]]
    assert later and all(bank == bank_left_ms for _, _, _, bank in later)  # what the bot is told
    assert max(report.latencies[2]) == pytest.approx(think)
    assert trio.current_time() == pytest.approx(think)


async def test_an_exhausted_bank_is_a_timeout(autojump_clock: trio.testing.MockClock) -> None:
    tc = TimeControl(decision_ms=1000, bank_ms=500, allowance_ms=50)
    table = seats(s1=slow(Kind.PLAY, 1.3, times=2))
    ref = referee(table, tc)
    report = await ref.run()

    [fault] = report.faults  # the first overrun (0.25 s) was paid from the bank
    assert fault.kind is FaultKind.TIMEOUT and fault.seat == 1
    asked, _, bank_ms, judged, verdict = table[1].turn(fault.seq)
    assert asked == pytest.approx(1.3) and bank_ms == 250
    assert judged - asked == pytest.approx(1.05 + 0.25)  # limit + allowance + what was left
    assert ref.bank[1] == 0 and "bank left 0.250s" in fault.reason
    assert not verdict.accepted


async def test_a_synchronous_late_answer_is_judged_by_elapsed_time(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A bot that never reaches a checkpoint cannot be cancelled: its lateness is measured."""
    spent = [False]

    async def hog(request: Request) -> None:  # no checkpoint: the scope cannot fire
        if request.decision.kind is Kind.PLAY and not spent[0]:
            spent[0] = True
            autojump_clock.jump(3.0)

    table = seats(s3=hog)
    report = await referee(table).run()

    [fault] = report.faults
    assert (fault.seat, fault.kind) == (3, FaultKind.TIMEOUT)
    _, request, _, judged, verdict = table[3].turn(fault.seq)
    assert judged == pytest.approx(3.0)
    assert not verdict.accepted and verdict.played == request.fallback


# --------------------------------------------------------------------------- illegal answers


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(on(Kind.PLAY, not_held), id="play-not-held"),
        pytest.param(on(Kind.PLAY, follow_with_one_too_many), id="follow-wrong-count"),
        pytest.param(on(Kind.BURY, lambda r: tuple(r.view.hand[:7])), id="bury-seven"),
        pytest.param(on(Kind.BID, not_held), id="bid-not-held"),
    ],
)
async def test_an_illegal_answer_is_faulted_penalized_and_replaced(
    autojump_clock: trio.testing.MockClock, bad: Callable[[Request], Action | None]
) -> None:
    table = cheaters(bad)
    report = await referee(table).run()

    [fault] = report.faults
    assert fault.kind is FaultKind.ILLEGAL_ACTION
    assert fault.reason and fault.penalty_points == 10
    cheat = table[fault.seat]
    _, request, _, _, verdict = cheat.turn(fault.seq)
    assert not verdict.accepted and verdict.fault == fault
    assert verdict.played == request.fallback == fault.played
    penalties = [e for e in report.events if isinstance(e, PenaltyApplied)]
    assert [(p.team, p.points) for p in penalties] == [(fault.seat % 2, 10)]
    assert report.result.reason == "deals_played"
    assert cheat.verdicts == [verdict]  # LocalSeat keeps the rejections


async def test_max_faults_forfeits_the_match(autojump_clock: trio.testing.MockClock) -> None:
    table = seats()
    table[2] = cheater(2, on(Kind.PLAY, not_held), times=99)
    ref = referee(table, policy=FaultPolicy(PolicyKind.LENIENT, penalty_points=5, max_faults=3))
    report = await ref.run()

    assert [f.kind for f in report.faults] == [FaultKind.ILLEGAL_ACTION] * 3
    result = report.result
    assert result.reason == "forfeit" and "disqualified after 3 faults" in result.detail
    assert (result.forfeited, result.winner) == (0, 1)
    assert report.events[-1] == result and isinstance(result, MatchEnded)
    penalties = [e for e in report.events if isinstance(e, PenaltyApplied)]
    assert [(p.team, p.points) for p in penalties] == [(0, 5)] * 3
    assert table[2].told[-1][1].seq == report.faults[-1].seq  # told of the last fault too
    assert max(s for t in table for _, s, _, _ in t.asked) == report.faults[-1].seq  # then stop


async def test_strict_policy_forfeits_on_the_first_fault(
    autojump_clock: trio.testing.MockClock,
) -> None:
    table = seats(s0=slow(Kind.BID, 5.0))
    ref = referee(table, policy=FaultPolicy(PolicyKind.STRICT))
    report = await ref.run()

    [fault] = report.faults
    assert (fault.seat, fault.kind, fault.penalty_points) == (0, FaultKind.TIMEOUT, 0)
    assert report.result.reason == "forfeit"
    assert report.result.detail.startswith("seat 0 timeout")
    assert (report.result.forfeited, report.result.winner) == (0, 1)
    assert not any(isinstance(e, PenaltyApplied) for e in report.events)
    assert trio.current_time() == pytest.approx(1.05)
    assert report.events[-1] == report.result  # nothing was played after the fault


# --------------------------------------------------------------------------- bid windows


async def test_a_bid_window_asks_its_seats_concurrently(
    autojump_clock: trio.testing.MockClock,
) -> None:
    table = seats(s0=slow(Kind.BID, 0.6), s3=slow(Kind.BID, 0.6))
    ref = referee(table, seed=WINDOW_SEED)
    assert {d.seat for d in ref.match.pending()} == {0, 3}
    report = await ref.run()

    assert report.faults == ()
    for seat in (0, 3):  # trio may start either first: seqs 1 and 2 in either order
        asked, _, _, judged, verdict = table[seat].turn(table[seat].asked[0][1])
        assert (asked, judged) == (0.0, pytest.approx(0.6)) and verdict.accepted
    assert trio.current_time() == pytest.approx(0.6)  # 0.6, not 1.2: side by side


async def test_a_timeout_in_a_bid_window_does_not_delay_the_other_seat(
    autojump_clock: trio.testing.MockClock,
) -> None:
    table = seats(s3=slow(Kind.BID, 5.0))
    report = await referee(table, seed=WINDOW_SEED).run()

    [fault] = report.faults
    assert (fault.seat, fault.kind) == (3, FaultKind.TIMEOUT)
    assert report.latencies[0][0] == 0.0 and table[0].told[0][1].accepted  # answered at once
    # both verdicts come when the window closes, at seat 3's deadline
    assert [t.told[0][0] for t in (table[0], table[3])] == [pytest.approx(1.05)] * 2


# --------------------------------------------------------------------------- logs


@pytest.fixture(autouse=True)
def default_logging() -> Iterator[None]:
    """structlog's defaults: a CLI test may have left it writing to a closed stream."""
    config = structlog.get_config()
    structlog.reset_defaults()
    yield
    structlog.configure(**config)


@pytest.fixture
def logs() -> Iterator[list[dict[str, Any]]]:
    """Captured structlog events, debug included, with the context variables merged."""
    config = structlog.get_config()
    wrapper = config["wrapper_class"]
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    try:
        with structlog.testing.capture_logs([structlog.contextvars.merge_contextvars]) as entries:
            yield entries
    finally:
        structlog.configure(wrapper_class=wrapper)


async def test_faults_and_decisions_are_logged_as_data(
    autojump_clock: trio.testing.MockClock, logs: list[dict[str, Any]]
) -> None:
    report = await referee(seats(s1=slow(Kind.PLAY, 5.0))).run()

    [fault] = report.faults
    warnings = [e for e in logs if e["event"] == "fault_recorded"]
    assert len(warnings) == 1
    w = warnings[0]
    assert w["log_level"] == "warning" and w["match_id"] == "m-test"
    assert (w["seat"], w["kind"], w["seq"]) == (1, "timeout", fault.seq)
    assert "no answer within" in w["reason"]

    answered = [e for e in logs if e["event"] == "decision_answered"]
    assert len(answered) == report.decisions
    assert all(e["log_level"] == "debug" and e["match_id"] == "m-test" for e in answered)
    assert {"seat", "kind", "deal", "trick", "seq", "latency_ms", "fault"} <= set(answered[0])
    faulted = [e for e in answered if e["fault"] is not None]
    assert [(e["seat"], e["seq"], e["latency_ms"]) for e in faulted] == [(1, fault.seq, 1050.0)]
    # the trick logged is the one the decision was in, not the one after it
    plays = [e for e in answered if e["kind"] == "play"]
    assert [e["trick"] for e in plays[:4]] == [1, 1, 1, 1]
    assert plays[4]["trick"] == 2
    assert [e["event"] for e in logs][-1] == "match_finished"


# --------------------------------------------------------------------------- cancellation


@pytest.mark.parametrize("seed", [SEED, WINDOW_SEED], ids=["lone-decision", "bid-window"])
async def test_cancelling_the_referee_records_a_cancel(
    autojump_clock: trio.testing.MockClock, tmp_path: Path, seed: int
) -> None:
    table = seats(s0=slow(Kind.BID, 100.0), s3=slow(Kind.BID, 100.0))
    tc = TimeControl(decision_ms=60_000, bank_ms=0)
    setup = MatchSetup(RULES, seed)
    header = RecordHeader.for_setup(
        "m-test", setup, [SeatRecord(s.name, "builtin:random") for s in table]
    )
    path = tmp_path / "cancelled.jsonl"
    ref = referee(table, tc, seed=seed, recorder=RecordWriter.open(path, header))
    with trio.move_on_after(2.5) as scope:
        await ref.run()

    assert scope.cancelled_caught
    result = ref.match.result
    assert result is not None and result.reason == "cancelled" and result.winner is None
    record = read_record(path)
    assert record.complete and record.problems == []
    assert record.footer is not None and record.footer.result.reason == "cancelled"
    assert [i.reason for i in record.items() if isinstance(i, CancelLine)] == ["cancelled"]
    assert ref.faults == []
