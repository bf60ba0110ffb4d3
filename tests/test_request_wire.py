"""The Play stream's requests, written as bytes joined from parts (server/request_wire.py),
read back by protobuf, say exactly what the message built field by field says
(``convert.request_to_pb``): every request and every event of whole matches."""

from __future__ import annotations

from arena.game import MatchMachine, MatchSetup
from arena.referee import Referee, SeatVerdict, TimeControl
from arena.referee.seats import LocalSeat
from arena.rules import RuleSet
from arena.server import convert, request_wire
from arena.server.event_table import event_to_pb
from arena.server.limits import Limits
from arena.server.traffic import Ask, Judged, VerdictMode
from arena.server.wire import EventCache, SeatWire
from arena.v1 import arena_pb2 as pb


class _Nobody:
    name = "fallback"

    def decide(self, request: object) -> tuple[()]:  # never asked: the test answers
        return ()


def _asks(seed: int, deals: int) -> list[tuple[int, Ask]]:
    """Every request of a match whose seats answer their fallback, as the edge gets it."""
    rules = RuleSet.from_mapping({"deals": deals})
    seats = [LocalSeat(_Nobody()) for _ in range(4)]
    core = Referee(f"w{seed}", MatchSetup(rules, seed), seats, TimeControl()).core
    asks: list[tuple[int, Ask]] = []
    while not core.finished:
        for decision in core.match.pending():
            ask = core.ask(decision, core.tally.clock)
            answer = ask.request.fallback
            acked = ask.seq - 1 if ask.seq % 3 else 0  # with and without an ack
            asks.append((decision.seat, Ask(ask.seq, ask.request, 2000, 70_000 * ask.seq, acked)))
            core.apply(core.settle(ask, answer, None, 0.001))
            if core.finished:
                break
    return asks


def test_every_request_of_whole_matches_reads_back_as_the_built_message() -> None:
    for seed in (1, 7):
        cache, built = EventCache(), EventCache()
        wires = [SeatWire(cache, VerdictMode.FAULTS_ONLY, Limits()) for _ in range(4)]
        builders = [SeatWire(built, VerdictMode.FAULTS_ONLY, Limits()) for _ in range(4)]
        asks = _asks(seed, deals=2)
        assert any(a.request.decision.options for _, a in asks), "no bid with options"
        for seat, ask in asks:
            data = wires[seat].encode(ask)
            assert pb.RefereeMessage.FromString(data) == builders[seat].message(ask)
            assert wires[seat].sent_seq == ask.seq  # the edge clock starts as before


def test_every_event_encodes_as_the_event_table_converts_it() -> None:
    match = MatchMachine(MatchSetup(RuleSet.from_mapping({"deals": 2}), 3))
    while not match.finished:
        decision = match.pending()[0]
        match.answer(decision.seat, match.fallback_basis(decision.seat).answer())
    kinds = set()
    for index, event in enumerate(match.events):
        entry = request_wire.event_entry(index, event)
        read = pb.Request.FromString(entry)
        assert list(read.events) == [event_to_pb(event, index)]
        kinds.add(type(event).__name__)
    assert {"CardDealt", "CardsPlayed", "TrickWon", "DealEnded"} <= kinds


def test_other_items_are_their_messages_serialized() -> None:
    _, ask = _asks(5, deals=1)[-1]
    wire = SeatWire(EventCache(), VerdictMode.EVERY_ANSWER, Limits())
    verdict = Judged(SeatVerdict(ask.seq, True, ask.request.fallback))
    assert wire.encode(verdict) == wire.message(verdict).SerializeToString()


def test_varints_are_protobufs() -> None:
    for n in [*range(1, 20_000), 2**21, 2**31 - 1, 2**32, 2**63, 2**64 - 1]:
        tag, *_ = pb.Action(seq=1).SerializeToString()  # a uint64 field, then its varint
        assert bytes([tag]) + request_wire.varint(n) == pb.Action(seq=n).SerializeToString()


def test_a_request_without_events_or_ack() -> None:
    _, ask = _asks(9, deals=1)[0]
    data = request_wire.request_message(ask.seq, ask.request, 0, 0, [], 0)
    expected = convert.request_to_pb(ask.seq, ask.request, 0, 0, [])
    assert pb.RefereeMessage.FromString(data) == expected
