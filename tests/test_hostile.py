"""Hostile bots against a real server: real subprocesses, real gRPC on 127.0.0.1 port 0.

One server hosts, all at the same time: a match for each bot of ``tests/hostile/``, a
clean match of four sample bots, and a match of four recording bots (``spy.py``) for
the redaction check; next to it ``arena match`` runs a strict-policy match in its own
process. The module runs all of that once, in parallel, and each test checks one
part: the server stays up, each hostile match ends as the policy says with its fault
recorded (referee, record footer, what the bot was told), and the clean match is
untouched.

Python start-up dominates the time (and a loaded machine multiplies it), so a hostile
bot's partners are one sample bot subprocess (a well-behaved remote neighbour that
must not suffer) and two in-process built-in bots; ``silent`` and ``garbage first``
never connect, so their matches start after a short connect timeout with built-in
partners only.

Real clock: only ``sleepy`` plays against a short limit, and it overruns limit and
bank together by about three times, never by a hair; every match gives a stalled
well-behaved bot seconds of bank, so a loaded machine does not fault it (STYLE.md
habit 9).
"""

from __future__ import annotations

import json
import logging
import os
import struct
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
import structlog
import trio

from arena.bots import make_bot
from arena.game import Bot, CardDealt, CardsPlayed, DealStarted, Event, KittyBuried, KittyTaken
from arena.records import read_record
from arena.referee import Fault, FaultKind, FaultPolicy, TimeControl
from arena.rules import RuleSet
from arena.server import convert
from arena.server.app import ArenaServer, open_arena_server
from arena.server.host import HostedMatch, MatchSpec, MatchState
from arena.server.recording import record_factory
from arena.server.remote import RemoteSeat
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "hostile"
SAMPLE = [sys.executable, str(ROOT / "sample_bots" / "random_bot.py"), "--seed", "1"]
CLEAN_DEALS = 4  # the clean match is longer, so that it overlaps the hostile ones
ROOMY = TimeControl(decision_ms=1000, bank_ms=5000, grace_ms=1000)
# sleepy's: a 0.5 s limit; the 1.5 s bank shields its partners from a loaded machine
TIGHT = TimeControl(decision_ms=500, bank_ms=1500, grace_ms=1000)
POLICY = FaultPolicy(max_faults=50)  # let every hostile match run to its end
CONNECT = 60.0  # seconds for a match's bots to connect (a loaded machine is slow)
NEVER = 3.0  # the connect timeout of a match whose hostile bot never joins
RUN_TIMEOUT = 120.0  # the whole module's matches; beyond this something hangs
LEAVE = 60.0  # seconds a bot may take to exit after its match ended (a never-seated
# bot may still be starting when its match is forfeited, on a loaded machine)


def hostile(name: str, *args: str) -> list[str]:
    return [sys.executable, str(HOSTILE / f"{name}.py"), *args]


@dataclass(frozen=True)
class Case:
    argv: list[str]
    seat: int = 1  # the hostile bot's seat
    sample: int | None = 3  # the sample bot's seat; the others are built-in bots
    tc: TimeControl = ROOMY
    connect: float = CONNECT


CASES = {
    "sleepy": Case(hostile("sleepy", "6"), tc=TIGHT),  # 6 s against 0.5 + 1.5 bank
    "illegal": Case(hostile("illegal")),
    "garbage": Case(hostile("garbage")),
    "garbage-first": Case(hostile("garbage", "first"), sample=None, connect=NEVER),
    "flood": Case(hostile("flood")),
    "crash": Case(hostile("crash", "5")),
    "reconnect": Case(hostile("reconnect", "5")),
    "wrong_token": Case(hostile("wrong_token")),
    "steal_seat": Case(hostile("steal_seat"), seat=2),  # steals seat 3, the sample bot
    "silent": Case(hostile("silent"), sample=None, connect=NEVER),
}


@dataclass
class Played:
    """One match as it went: the host's record of it, exit codes, what the bots reported."""

    hosted: HostedMatch
    folder: Path
    label: str
    codes: list[int | None] = field(default_factory=lambda: [None] * 4)
    running: tuple[float, float] = (0.0, 0.0)  # (started, ended), trio time

    @property
    def faults(self) -> list[Fault]:
        assert self.hosted.referee is not None
        return list(self.hosted.referee.faults)

    @property
    def reason(self) -> str:
        result = self.hosted.result
        assert result is not None
        return result.reason

    @property
    def report_path(self) -> Path:
        return self.folder / f"{self.label}.report.jsonl"

    def reports(self) -> list[dict[str, Any]]:
        if not self.report_path.exists():
            return []
        return [json.loads(line) for line in self.report_path.read_text().splitlines()]

    def seat(self, seat: int) -> RemoteSeat:
        remote = self.hosted.remote(seat)
        assert remote is not None
        return remote


@dataclass
class Run:
    """Everything the module's one run produced."""

    folder: Path
    matches: dict[str, Played] = field(default_factory=dict)
    infos: list[pb.MatchInfo] = field(default_factory=list)
    cli: subprocess.CompletedProcess[bytes] | None = None
    grpc_threads_after: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- running


async def _run_bot(argv: list[str], env: dict[str, str], played: Played, seat: int) -> None:
    """Run one bot until its match is over, then give it a while to leave, then kill it."""
    log = played.folder / f"{played.label}.seat{seat}.log"
    with log.open("wb") as out:
        process = await trio.lowlevel.open_process(
            argv, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT
        )
        try:
            await played.hosted.done.wait()
            with trio.move_on_after(LEAVE):
                await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()
    played.codes[seat] = process.returncode


async def _play(
    server: ArenaServer, played: Played, bots: dict[int, list[str]], env: dict[int, dict[str, str]]
) -> None:
    """Run the match's remote bots (``bots``: seat → command) and note when it ran."""
    base = {**os.environ, "ARENA_SERVER": server.target, "HOSTILE_REPORT": str(played.report_path)}
    hosted = played.hosted
    async with trio.open_nursery() as nursery:
        for seat, argv in bots.items():
            token = hosted.tokens[seat]
            assert token is not None
            seat_env = {**base, "ARENA_TOKEN": token, **env.get(seat, {})}
            nursery.start_soon(_run_bot, argv, seat_env, played, seat)
        while hosted.state is MatchState.WAITING:
            await trio.sleep(0.01)
        started = trio.current_time()
        await hosted.done.wait()
        played.running = (started, trio.current_time())


def _spec(
    tc: TimeControl,
    seed: int,
    local: dict[int, Bot] | None = None,
    connect: float = CONNECT,
    deals: int = 1,
) -> MatchSpec:
    rules = RuleSet.from_mapping({"deals": deals})
    return MatchSpec(rules, seed, tc, POLICY, local=local or {}, connect_timeout=connect)


def _list_matches(target: str, token: str) -> list[pb.MatchInfo]:
    """An organiser's call from another thread: is the server still answering?"""
    with grpc.insecure_channel(target) as channel:
        stub = pb_grpc.MatchesStub(channel)
        metadata = [("authorization", f"Bearer {token}")]
        return list(stub.List(pb.ListMatchesRequest(), metadata=metadata, timeout=10).matches)


async def _arena_match(run: Run) -> None:
    """``arena match`` in its own process: strict policy, an illegal bot in seat 1."""
    argv = [sys.executable, "-m", "arena.cli.main", "match", "--seed", "3", "--deals", "1"]
    argv += ["--policy", "strict", "--record", str(run.folder / "cli.jsonl")]
    for bot in ("builtin:random", " ".join(hostile("illegal")), "builtin:greedy", "builtin:random"):
        argv += ["--bot", bot]
    with trio.fail_after(RUN_TIMEOUT):
        run.cli = await trio.run_process(argv, capture_stdout=True, capture_stderr=True, cwd=ROOT)


async def _run_all(folder: Path) -> Run:
    run = Run(folder)
    async with (
        open_arena_server(recorder_factory=record_factory(None, str(folder))) as server,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(_arena_match, run)
        clean = Played(server.host.create(_spec(ROOMY, 12, deals=CLEAN_DEALS)), folder, "clean")
        nursery.start_soon(_play, server, clean, dict.fromkeys(range(4), SAMPLE), {})
        spies = Played(server.host.create(_spec(ROOMY, 5)), folder, "spy")
        dumps = {s: {"SPY_DUMP": str(folder / f"spy{s}.bin")} for s in range(4)}
        nursery.start_soon(_play, server, spies, dict.fromkeys(range(4), hostile("spy")), dumps)
        run.matches.update(clean=clean, spy=spies)
        for seed, (name, case) in enumerate(CASES.items(), start=20):
            remote = {case.seat: case.argv} | ({case.sample: SAMPLE} if case.sample else {})
            local = {s: make_bot("random", seed + s) for s in range(4) if s not in remote}
            played = Played(
                server.host.create(_spec(case.tc, seed, local, case.connect)), folder, name
            )
            env: dict[int, dict[str, str]] = {}
            if name == "steal_seat":
                env[case.seat] = {"VICTIM_TOKEN": played.hosted.tokens[3] or ""}
            nursery.start_soon(_play, server, played, remote, env)
            run.matches[name] = played
        with trio.fail_after(RUN_TIMEOUT):
            for played in run.matches.values():
                await played.hosted.done.wait()
        run.infos = await trio.to_thread.run_sync(
            _list_matches, server.target, server.organiser_token
        )
    run.grpc_threads_after = [t.name for t in threading.enumerate() if t.name == "arena-grpc"]
    return run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """The module's one run: a trio run of its own, set up before any test runs."""
    folder = tmp_path_factory.mktemp("hostile")
    config = structlog.get_config()
    # structlog's defaults (a CLI test may have left it writing to a closed capture
    # stream), warnings and up as ``arena match`` logs (a flood logs every late answer)
    structlog.reset_defaults()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("arena.server.service.HELLO_TIMEOUT", 1.0)  # close silent streams
            yield trio.run(_run_all, folder)
    finally:
        structlog.configure(**config)


# --------------------------------------------------------------------------- the server


def test_the_server_stays_up_and_ends_cleanly(run: Run) -> None:
    assert len(run.infos) == len(CASES) + 2  # it still answered after every match
    assert {i.state for i in run.infos} == {pb.FINISHED}
    assert run.grpc_threads_after == []
    for p in run.matches.values():  # every bot process was waited for
        assert all((p.codes[s] is None) == (p.hosted.tokens[s] is None) for s in range(4))


def test_the_other_match_is_unaffected(run: Run) -> None:
    clean = run.matches["clean"]
    assert clean.hosted.state is MatchState.FINISHED and clean.reason == "deals_played"
    assert clean.faults == [] and clean.codes == [0, 0, 0, 0]
    start, end = clean.running
    hostile = [run.matches[n].running for n in CASES]
    assert any(s < end and start < e for s, e in hostile), "it ran alone"
    assert all(clean.seat(s).late_answers == 0 for s in range(4))
    record = read_record(clean.hosted.record)
    assert record.complete and record.problems == []


# --------------------------------------------------------------------------- each hostile bot


def _expect(name: str, p: Played, h: int) -> None:
    """What the hostile bot ``name`` in seat ``h`` must have caused in its match ``p``."""
    mine = [(f.kind, f.reason) for f in p.faults if f.seat == h and f.charged]
    uncharged = [(f.kind, f.reason) for f in p.faults if f.seat == h and not f.charged]
    assert set(uncharged) <= {(FaultKind.DISCONNECTED, "disconnected (still)")}
    kinds = [k for k, _ in mine]
    reports = p.reports()
    told = [(r["verdict"], r["reason"]) for r in reports if "verdict" in r]
    if name == "sleepy":
        assert kinds and set(kinds) == {FaultKind.TIMEOUT}
        assert all(r.startswith("no answer within") for _, r in mine)
        assert p.seat(h).late_answers >= 1  # its stale answers came, and were dropped
        assert told == [("TIMEOUT", r) for _, r in mine]
    elif name == "illegal":
        assert kinds == [FaultKind.ILLEGAL_ACTION] * 2
        assert told == [("ILLEGAL_ACTION", r) for _, r in mine]
        assert all(f.penalty_points == 10 for f in p.faults)
    elif name == "garbage":
        assert kinds == [FaultKind.MALFORMED, FaultKind.DISCONNECTED]
        assert mine[0][1] == "unreadable message: DecodeError"
        assert reports == [
            {"status": "INVALID_ARGUMENT", "details": "unreadable message: DecodeError"}
        ]
    elif name == "garbage-first":  # it never took its seat: its team forfeits unplayed
        assert kinds == []
        assert [r["status"] for r in reports] == ["INVALID_ARGUMENT"]
        assert not p.seat(h).ever_connected.is_set()
    elif name == "flood":
        assert kinds == [FaultKind.UNKNOWN_SEQUENCE]
        assert "answer for seq" in mine[0][1]
        seat = p.seat(h)  # each of its 2000 unrequested Actions dropped or discarded
        assert seat.late_answers + seat.dropped >= 2000
    elif name == "crash":
        assert kinds == [FaultKind.DISCONNECTED]  # one absence, charged once
        assert p.codes[h] == 3
    elif name == "reconnect":
        assert kinds == []
        [back] = [r for r in reports if "resumed" in r]
        assert back["resumed"] is True and back["asked_again"] == back["abandoned"] > 0
    elif name == "wrong_token":
        assert kinds == []
        assert reports[0] == {"status": "UNAUTHENTICATED"}
    elif name == "steal_seat":
        assert kinds == []
        assert reports[0] == {"status": "ALREADY_EXISTS"}
        assert p.seat(3).name == "random_bot"  # the real seat 3 kept its seat
    elif name == "silent":  # never took its seat either
        assert kinds == []
        [closed] = reports
        assert closed["status"] == "UNAUTHENTICATED" and 0.9 < closed["after"] < 5
    else:  # pragma: no cover
        raise AssertionError(name)


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_bot_is_faulted_and_its_match_played_out(run: Run, name: str) -> None:
    case, p = CASES[name], run.matches[name]
    never_seated = not p.seat(case.seat).ever_connected.is_set()
    # a seat that never connects cannot win: its team forfeits before the first deal
    assert p.hosted.state is MatchState.FINISHED
    assert p.reason == ("forfeit" if never_seated else "deals_played")
    if never_seated:
        result = p.hosted.result
        assert result is not None and result.forfeited == case.seat % 2
        assert "never connected" in result.detail
    others = [f for f in p.faults if f.seat != case.seat]
    assert others == [], f"well-behaved seats were faulted: {others}"
    assert case.sample is None or p.codes[case.sample] == 0, p.codes
    _expect(name, p, case.seat)
    record = read_record(p.hosted.record)
    assert record.complete and record.problems == [] and record.footer is not None
    assert [(f["seat"], f["kind"], f["reason"]) for f in record.footer.faults] == [
        (f.seat, f.kind.value, f.reason) for f in p.faults
    ]


def test_arena_match_forfeits_a_strict_match_on_the_first_fault(run: Run) -> None:
    assert run.cli is not None
    out = run.cli.stdout.decode()
    assert run.cli.returncode == 0, out + run.cli.stderr.decode()
    assert "(forfeit: seat 1 illegal_action:" in out
    assert "fault: seat 1 illegal_action" in out
    record = read_record(run.folder / "cli.jsonl")
    assert record.complete and record.footer is not None
    assert record.footer.result.reason.startswith("forfeit") and record.footer.result.forfeited == 1
    assert [(f["seat"], f["kind"]) for f in record.footer.faults] == [(1, "illegal_action")]


# --------------------------------------------------------------------------- redaction


def _dumped(path: Path) -> list[pb.RefereeMessage]:
    data, out, at = path.read_bytes(), [], 0
    while at < len(data):
        (size,) = struct.unpack(">I", data[at : at + 4])
        out.append(pb.RefereeMessage.FromString(data[at + 4 : at + 4 + size]))
        at += 4 + size
    return out


def _key(cards: Any) -> Counter[tuple[int, int]]:
    return Counter((c.suit, c.rank) for c in cards)


def _hand(events: Sequence[Event], upto: int, seat: int) -> Counter[tuple[int, int]]:
    """``seat``'s hand after ``events[: upto + 1]`` (the record's, unredacted)."""
    hand: Counter[tuple[int, int]] = Counter()
    for event in events[: upto + 1]:
        if isinstance(event, DealStarted):
            hand = Counter()
        elif isinstance(event, CardDealt) and event.seat == seat:
            hand += _key(convert.cards_to_pb([event.card]))
        elif isinstance(event, KittyTaken) and event.seat == seat:
            hand += _key(convert.cards_to_pb(event.cards))
        elif isinstance(event, KittyBuried | CardsPlayed) and event.seat == seat:
            hand -= _key(convert.cards_to_pb(event.cards))
    return hand


def _check_events(seat: int, events: Sequence[pb.Event]) -> None:
    for e in events:
        kind = e.WhichOneof("kind")
        if kind == "card_dealt":
            assert e.card_dealt.seat == seat, f"seat {seat} saw seat {e.card_dealt.seat}'s card"
        elif kind in ("kitty_taken", "kitty_buried"):
            m = getattr(e, kind)
            assert m.seat == seat or not m.cards, f"seat {seat} saw the kitty in {kind}"


def test_no_seat_is_sent_another_seats_hidden_cards(run: Run) -> None:
    """Every message the four recording bots received, checked against the record."""
    spies = run.matches["spy"]
    assert spies.codes == [0, 0, 0, 0] and spies.faults == []
    events = read_record(spies.hosted.record).events()
    assert spies.hosted.referee is not None
    assert events == list(spies.hosted.referee.match.events)
    requests = 0
    for seat in range(4):
        seen = -1  # the last event index sent to this seat
        messages = _dumped(run.folder / f"spy{seat}.bin")
        for message in messages:
            kind = message.WhichOneof("kind")
            if kind == "request":
                r = message.request
                _check_events(seat, r.events)
                seen = max([seen, *(e.index for e in r.events)])
                assert r.view.seat == seat
                assert _key(r.view.hand) == _hand(events, seen, seat), f"seat {seat} seq {r.seq}"
                if r.view.kitty:
                    holds = r.view.dealer == seat and r.view.phase != pb.DEALING
                    assert holds or r.view.phase == pb.DEAL_OVER
                requests += 1
            elif kind == "notice":
                _check_events(seat, message.notice.events)
        assert messages[-1].WhichOneof("kind") == "match_end"
    assert requests == spies.hosted.referee.decisions
