"""The wire says what the domain says: every event and every field reaches the protocol
and the record, through the one table in ``arena/server/event_table.py``.

Walks every ``oneof`` case of ``Event`` and every field of its message; round-trips
events with every field set (and every optional seat unset) through the wire and the
record; round-trips every event of real matches; and checks what a real bot is sent in a
real ``arena match`` (a faulting bot's penalties in ``DealEnded``, ``DealRevealed``,
``PenaltyApplied``, a result that names team 0).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import subprocess
import sys
import typing
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import trio
from google.protobuf import json_format, text_format

from arena.bots import make_bot
from arena.errors import ProtocolError
from arena.game import (
    EVENTS,
    CardDealt,
    DealRevealed,
    Event,
    MatchEnded,
    MatchMachine,
    MatchSetup,
    Request,
    SeatFeed,
    Termination,
    ThrowFailed,
    order_for,
)
from arena.records.format import EVENT_TYPES, event_from_dict
from arena.referee import (
    Fault,
    FaultKind,
    LocalSeat,
    Referee,
    SeatVerdict,
    TimeControl,
    play_match,
)
from arena.rules import Card, Rank, RuleSet, Suit, parse_cards
from arena.rules.trump import TRUMP_LANE
from arena.server import convert
from arena.server.event_table import TABLE, event_from_pb, event_to_pb, row_for
from arena.v1 import arena_pb2 as pb

REPO = Path(__file__).resolve().parent.parent
CASES = [f.name for f in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields]


# -- the table covers both sides -----------------------------------------------------------


def test_every_domain_event_has_one_row_and_every_case_one_event() -> None:
    assert sorted(r.event.__name__ for r in TABLE) == sorted(e.__name__ for e in EVENTS)
    assert sorted(r.case for r in TABLE) == sorted(CASES)
    assert set(EVENT_TYPES.values()) == set(EVENTS)  # the record knows the same events


@pytest.mark.parametrize("case", CASES)
def test_every_wire_field_is_filled_from_the_domain(case: str) -> None:
    row = next(r for r in TABLE if r.case == case)
    message: Any = pb.Event.DESCRIPTOR.fields_by_name[case].message_type
    if row.nested:
        message = message.fields_by_name[row.nested].message_type
    mapped = {wire for _, wire, _ in row_for(row.event).fields}
    assert set(message.fields_by_name) == mapped | set(row.derived) | row.not_from_event
    domain = {f.name for f in dataclasses.fields(row.event)}
    assert {d for d, _, _ in row_for(row.event).fields} == domain


# -- every field set: through the wire and the record and back ------------------------------

AH, TS, BJ, D3 = parse_cards("AH TS BJ 3D")
KING = Rank.parse("K")


def sample(event: type[Event], unset: bool = False) -> Event:
    """An ``event`` with every field set to a value that is not the wire's default (or,
    with ``unset``, every optional seat ``None``)."""
    hints = typing.get_type_hints(event)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(event):
        hint = hints[f.name]
        if f.name == "suit":
            values[f.name] = None if unset else Suit.HEARTS
        elif hint == int | None:
            values[f.name] = None if unset else 2
        elif hint is int:
            values[f.name] = 3
        elif hint is str:
            values[f.name] = f"a {f.name}"
        elif hint is Rank:
            values[f.name] = KING
        elif hint is Card:
            values[f.name] = AH
        elif hint == tuple[Card, ...]:
            values[f.name] = (AH, TS, BJ)
        elif hint == tuple[Rank, Rank]:
            values[f.name] = (KING, Rank.parse("3"))
        elif hint == tuple[tuple[Card, ...], ...]:
            values[f.name] = ((AH,), (TS, TS), (BJ,), (D3,))
        elif isinstance(hint, type) and issubclass(hint, enum.StrEnum):  # Side, Termination
            values[f.name] = list(hint)[-1]
        else:  # pragma: no cover - a new kind of field: teach sample() about it
            raise AssertionError(f"no sample for {event.__name__}.{f.name}: {hint}")
    return event(**values)


def _non_default(m: Any, name: str) -> bool:
    field = m.DESCRIPTOR.fields_by_name[name]
    value = getattr(m, name)
    if field.is_repeated:
        return len(value) > 0
    if field.message_type is not None or field.has_presence:
        return bool(m.HasField(name))
    return bool(value != field.default_value)


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.__name__)
def test_every_field_arrives(event: type[Event]) -> None:
    original = sample(event)
    wire = event_to_pb(original, index=9)
    assert wire.index == 9 and wire.WhichOneof("kind") == row_for(event).case
    assert event_from_pb(pb.Event.FromString(wire.SerializeToString())) == original
    assert event_from_dict(json.loads(json.dumps(original.to_dict()))) == original
    row = row_for(event)
    target: Any = getattr(wire, row.case)
    if row.nested:
        target = getattr(target, row.nested)
    for _, name, _ in row.fields:
        assert _non_default(target, name), f"{row.case}.{name} arrives as its default"


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.__name__)
def test_an_unset_seat_is_minus_one_and_comes_back_none(event: type[Event]) -> None:
    original = sample(event, unset=True)
    assert event_from_pb(event_to_pb(original)) == original
    assert event_from_dict(original.to_dict()) == original


def test_a_malformed_wire_event_is_refused_by_name() -> None:
    with pytest.raises(ProtocolError, match="no kind"):
        event_from_pb(pb.Event(index=1))
    bad = pb.Event(card_dealt=pb.CardDealt(seat=1, card=pb.Card(suit=pb.JOKER, rank=pb.TWO)))
    with pytest.raises(ProtocolError, match="not a card: suit=JOKER rank=TWO"):
        event_from_pb(bad)


# -- real matches ---------------------------------------------------------------------------

VARIANTS = [
    {"deals": 2},
    {"deals": 2, "no_bid": "first_level_or_joker", "throw_beaten_by": "all_units"},
    {"deals": 2, "decks": 3},
]


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: ",".join(map(str, r.values())))
def test_every_event_of_real_matches_round_trips(rules: dict[str, Any]) -> None:
    kinds: Counter[str] = Counter()
    for seed in range(3):
        match = play_match(
            MatchSetup(RuleSet.from_mapping(rules), seed),
            [make_bot("greedy" if s % 2 else "random", seed * 4 + s) for s in range(4)],
        )
        dealt: list[list[Card]] = [[], [], [], []]
        for event in match.events:
            kinds[event.type] += 1
            assert event_from_pb(event_to_pb(event)) == event
            assert event_from_dict(json.loads(json.dumps(event.to_dict()))) == event
            if isinstance(event, CardDealt):
                dealt[event.seat].append(event.card)
            elif isinstance(event, DealRevealed):  # the hands as their card_dealt said
                assert [list(h) for h in event.hands] == dealt
                dealt = [[], [], [], []]
            elif event.type == "redealt":
                dealt = [[], [], [], []]
    assert kinds["deal_revealed"] == kinds["deal_ended"] > 0


class Thrower:
    """Leads every card of its longest side suit (throws that often fail), else random."""

    name = "thrower"

    def __init__(self, seat: int) -> None:
        self.inner = make_bot("random", seat)

    def decide(self, request: Request) -> tuple[Card, ...]:
        d = request.decision
        if d.kind.value == "play" and not d.count:
            order = order_for(request)
            lanes: dict[int, list[Card]] = {}
            for card in request.view.hand:
                lanes.setdefault(order.lane_of(card), []).append(card)
            lanes.pop(TRUMP_LANE, None)
            longest = max(lanes.values(), key=len, default=[])
            if len(longest) > 1:
                return tuple(longest)
        return tuple(self.inner.decide(request))


class Listening(LocalSeat):
    """A local seat that keeps every verdict it is told."""

    def __init__(self, seat: int) -> None:
        super().__init__(Thrower(seat))
        self.told: list[SeatVerdict] = []

    def tell_verdict(self, verdict: SeatVerdict) -> None:
        self.told.append(verdict)


def test_a_failed_throws_verdict_plays_the_forced_unit() -> None:
    seats = [Listening(s) for s in range(4)]
    referee = Referee(
        "m-throws",
        MatchSetup(RuleSet.from_mapping({"deals": 1}), 5),
        seats,
        TimeControl(decision_ms=5000, bank_ms=0, grace_ms=0, allowance_ms=50),
    )
    trio.run(referee.run)
    failed = [e for e in referee.match.events if isinstance(e, ThrowFailed)]
    assert failed, "no throw failed: pick another seed"
    for event in failed:
        verdicts = [v for v in seats[event.seat].told if set(v.played) == set(event.played)]
        assert verdicts, f"no verdict played the forced unit {event.played}"
        wire = convert.verdict_to_pb(verdicts[0]).verdict
        assert wire.accepted and convert.cards_from_pb(wire.played) == tuple(verdicts[0].played)
    attempted = {tuple(e.attempted) for e in failed}
    assert not any(tuple(v.played) in attempted for s in seats for v in s.told)


def _set_fields(m: Any, prefix: str, out: set[str]) -> None:
    """Add to ``out`` every field of ``m`` (and of its sub-messages) that is not at its
    default, as ``View.field`` / ``View.current_trick.plays``."""
    for field, value in m.ListFields():
        name = f"{prefix}.{field.name}"
        out.add(name)
        if field.message_type is not None and field.message_type.name in ("Trick", "Trump"):
            _set_fields(value, name, out)


def _all_fields(descriptor: Any, prefix: str) -> set[str]:
    out = set()
    for field in descriptor.fields:
        out.add(f"{prefix}.{field.name}")
        if field.message_type is not None and field.message_type.name in ("Trick", "Trump"):
            out |= _all_fields(field.message_type, f"{prefix}.{field.name}")
    return out


def test_every_view_field_reaches_the_wire() -> None:
    """Views of real deals, with throws and a referee penalty: every ``View`` field (and
    every ``Trick`` and ``Trump`` field in it) is set at some decision."""
    seen: set[str] = set()
    for seed in range(3):
        match = MatchMachine(MatchSetup(RuleSet.from_mapping({"deals": 2}), seed))
        feed = SeatFeed(match)
        bots = [Thrower(s) for s in range(4)]
        while not match.finished:
            for decision in match.pending():
                request = feed.request(decision)
                _set_fields(convert.view_to_pb(request.view), "View", seen)
                match.answer(decision.seat, bots[decision.seat].decide(request))
                if match.snapshot().deal.trick == 3 and not match.snapshot().deal.team_penalties[1]:
                    match.penalize(1, 10, "a test")
    assert _all_fields(pb.View.DESCRIPTOR, "View") - seen == set()


def test_every_fault_field_reaches_the_wire() -> None:
    fault = Fault(2, FaultKind.TIMEOUT, "slow", 3, 4, 5, 10, (AH, TS), charged=True)
    wire = convert.fault_to_pb(fault)
    assert {f.name for f, _ in wire.ListFields()} == set(pb.Fault.DESCRIPTOR.fields_by_name)
    assert {f.name for f in dataclasses.fields(Fault)} == set(pb.Fault.DESCRIPTOR.fields_by_name)
    assert (wire.seat, wire.kind, wire.reason, wire.deal, wire.trick, wire.seq) == (
        2,
        pb.TIMEOUT,
        "slow",
        3,
        4,
        5,
    )
    assert convert.cards_from_pb(wire.played) == (AH, TS) and wire.penalty_points == 10
    uncharged = convert.fault_to_pb(dataclasses.replace(fault, charged=False))
    assert not uncharged.charged


# -- no winner is unmistakable --------------------------------------------------------------


def test_team_0_winning_is_spelled_out_in_json() -> None:
    levels = (Rank.parse("A"), Rank.parse("9"))
    team0 = convert.result_to_pb(MatchEnded(0, levels, 5, Termination.LEVEL_A_KEPT))
    draw = convert.result_to_pb(MatchEnded(None, levels, 5, Termination.DEALS_PLAYED))
    assert json_format.MessageToDict(team0)["winnerTeam"] == 0
    assert json_format.MessageToDict(team0)["forfeitedTeam"] == -1
    assert json_format.MessageToDict(draw)["winnerTeam"] == -1
    assert "winner_team: 0" in text_format.MessageToString(team0)
    cancelled = Termination.CANCELLED
    assert MatchEnded(0, levels, 5, cancelled).to_dict()["winner"] == 0  # the record: 0 / null
    assert MatchEnded(None, levels, 5, cancelled).to_dict()["winner"] is None


# -- what a real bot is sent ----------------------------------------------------------------


def _transcript(path: Path) -> list[pb.RefereeMessage]:
    """The messages a botkit ``--transcript`` file says the bot received."""
    out: list[pb.RefereeMessage] = []
    blocks = path.read_text(encoding="utf-8").split("\n# ")
    for block in blocks:
        head, _, body = block.partition("\n")
        if head.rstrip().endswith("received RefereeMessage"):
            out.append(text_format.Parse(body, pb.RefereeMessage()))
    return out


@pytest.mark.slow
def test_a_real_bot_is_sent_every_field(tmp_path: Path) -> None:
    """Seat 0 faults twice (tests/hostile/illegal.py); seat 1, the random sample bot,
    writes down everything it receives."""
    transcript = tmp_path / "seat1.txt"
    python = sys.executable
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [python, "-m", "arena.cli.main", "match", "--seed", "3", "--deals", "1",
         "--bot", f"{python} tests/hostile/illegal.py",
         "--bot", f"{python} sample_bots/random_bot.py --transcript {transcript}",
         "--bot", "builtin:greedy", "--bot", "builtin:random",
         "--record", str(tmp_path / "r.jsonl")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    messages = _transcript(transcript)
    events = [e for m in messages if m.HasField("request") for e in m.request.events]
    events += [e for m in messages if m.HasField("notice") for e in m.notice.events]
    kinds = Counter(e.WhichOneof("kind") for e in events)
    for case in ("deal_started", "card_dealt", "trump_declared", "cards_played", "trick_won",
                 "penalty_applied", "deal_ended", "deal_revealed", "match_ended"):  # fmt: skip
        assert kinds[case], f"seat 1 was never sent {case}: {kinds}"
    penalties = [e.penalty_applied for e in events if e.HasField("penalty_applied")]
    assert {(p.team, p.points) for p in penalties} == {(0, 10)}
    (ended,) = [e.deal_ended for e in events if e.HasField("deal_ended")]
    assert ended.fault_penalty_points == 10 * len(penalties) * (1 if ended.dealer % 2 == 0 else -1)
    (revealed,) = [e.deal_revealed for e in events if e.HasField("deal_revealed")]
    assert [len(h.cards) for h in revealed.hands] == [25] * 4 and len(revealed.kitty) == 8
    end = messages[-1].match_end
    assert end.result.HasField("winner_team") and end.result.HasField("forfeited_team")
    assert list(end.result.fault_counts) == [len(penalties), 0, 0, 0]
    lines = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    types = [line["event"]["type"] for line in lines if line["type"] == "event"]
    assert types.count("deal_revealed") == 1 and types.count("penalty_applied") == len(penalties)


def test_every_event_field_is_in_its_record_line() -> None:
    """``Event.to_dict`` walks ``__match_args__`` (fast): it must name every field."""
    for cls in EVENT_TYPES.values():
        assert cls.__match_args__ == tuple(f.name for f in dataclasses.fields(cls)), cls
