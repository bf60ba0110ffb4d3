"""The one translation between domain values and protobuf messages (STYLE.md §5).

Everything that crosses the wire passes through here: cards, requests built from a
seat's redacted view, verdicts, events, results. Incoming cards are validated here and
a bad one raises :class:`~arena.errors.ProtocolError`, the peer's fault.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from arena.game import Event, FaultKind, Kind, MatchEnded, Request, SeatView
from arena.referee import Fault, SeatVerdict, TimeControl
from arena.rules import Card, Rank, RuleSet, team_of
from arena.server import event_table, view_wire
from arena.server.event_table import CARD_TO_PB as _CARD_TO_PB
from arena.server.event_table import PB_TO_CARD as _PB_TO_CARD
from arena.server.event_table import card_from_pb
from arena.v1 import arena_pb2 as pb

_KIND_TO_PB = {Kind.BID: pb.BID, Kind.BURY: pb.BURY, Kind.PLAY: pb.PLAY}
FAULT_TO_PB: dict[FaultKind, pb.FaultKind.ValueType] = {
    kind: pb.FaultKind.Value(kind.name) for kind in FaultKind
}
"""The domain's fault kinds are the source; each must have a wire value of the same name
(a new kind without one fails here, at import)."""


def cards_to_pb(cards: Iterable[Card]) -> list[pb.Card]:
    return [_CARD_TO_PB[c] for c in cards]


def cards_from_pb(cards: Iterable[pb.Card]) -> tuple[Card, ...]:
    """Wire cards to domain cards.

    Raises:
        ProtocolError: a card whose suit and rank name no card (e.g. unset fields).
    """
    try:  # one look-up per card, no call: a bot's every answer passes here
        return tuple([_PB_TO_CARD[m.suit, m.rank] for m in cards])
    except KeyError:
        return tuple(card_from_pb(m) for m in cards)  # names the first bad card


def rank_to_pb(rank: Rank) -> pb.Rank.ValueType:
    return pb.Rank.ValueType(int(rank))


def _seat(seat: int | None) -> int:
    return -1 if seat is None else seat


# The request is rebuilt for every decision, so it is built in place: a message passed
# to a constructor (``pb.Request(view=pb.View(...))``) is copied, once per nesting level.
# The view and the cards go in as encodings (:mod:`arena.server.view_wire`): a join of
# precomputed and cached parts, merged in one call, not a protobuf call per field and card.


def _put_view(m: pb.View, view: SeatView) -> None:
    m.MergeFromString(view_wire.view_bytes(view))


def view_to_pb(view: SeatView) -> pb.View:
    m = pb.View()
    _put_view(m, view)
    return m


def request_to_pb(
    seq: int,
    request: Request,
    deadline_ms: int,
    bank_ms: int,
    events: Sequence[pb.Event] | None = None,
) -> pb.RefereeMessage:
    """The request message; ``events``: its events already converted (the edge's
    per-match cache, :class:`arena.server.wire.EventCache`), else converted here."""
    d = request.decision
    message = pb.RefereeMessage()
    r = message.request
    r.seq = seq
    r.kind = _KIND_TO_PB[d.kind]
    _put_view(r.view, request.view)
    if events is None:
        events = [
            event_to_pb(e, i) for e, i in zip(request.events, request.event_indices, strict=True)
        ]
    r.events.extend(events)
    r.fallback.SetInParent()
    r.fallback.seq = seq
    r.fallback.MergeFromString(view_wire.ACTION_CARDS.encode(request.fallback))
    r.deadline_ms = deadline_ms
    r.time_bank_ms = bank_ms
    for option in d.options:
        view_wire.put_bid(r.legal_bids.add(), d.seat, option)
    r.count = d.count
    return message


def fault_to_pb(fault: Fault) -> pb.Fault:
    return pb.Fault(
        seat=fault.seat,
        kind=FAULT_TO_PB[fault.kind],
        reason=fault.reason,
        deal=fault.deal,
        trick=fault.trick,
        seq=fault.seq,
        penalty_points=fault.penalty_points,
        played=cards_to_pb(fault.played),
        charged=fault.charged,
    )


def verdict_to_pb(verdict: SeatVerdict) -> pb.RefereeMessage:
    message = pb.RefereeMessage()
    m = message.verdict
    m.SetInParent()
    m.seq = verdict.seq
    m.accepted = verdict.accepted
    m.fault = FAULT_TO_PB[verdict.fault.kind] if verdict.fault else pb.FAULT_NONE
    m.reason = verdict.reason
    m.played.extend([_CARD_TO_PB[c] for c in verdict.played])
    m.penalty_points = verdict.fault.penalty_points if verdict.fault else 0
    return message


def result_to_pb(result: MatchEnded, faults: Sequence[Fault] = ()) -> pb.MatchResult:
    """The result as in the ``match_ended`` event, with the fault tallies added."""
    penalties = [0, 0]
    counts = [0, 0, 0, 0]
    for f in faults:
        penalties[team_of(f.seat)] += f.penalty_points
        counts[f.seat] += 1
    m = event_table.event_to_pb(result).match_ended.result
    m.fault_penalty_points.extend(penalties)
    m.fault_counts.extend(counts)
    return m


def time_control_to_pb(tc: TimeControl) -> pb.TimeControl:
    return pb.TimeControl(
        decision_ms=tc.decision_ms,
        bank_ms=tc.bank_ms,
        grace_ms=tc.grace_ms,
        allowance_ms=tc.allowance_ms,
    )


def time_control_from_pb(m: pb.TimeControl, default: TimeControl) -> TimeControl:
    return TimeControl(
        decision_ms=m.decision_ms or default.decision_ms,
        bank_ms=m.bank_ms or default.bank_ms,
        grace_ms=m.grace_ms or default.grace_ms,
        allowance_ms=m.allowance_ms or default.allowance_ms,
    )


def rules_to_pb(rules: RuleSet) -> dict[str, str]:
    return {k: json.dumps(v) for k, v in rules.to_mapping().items()}


def rules_from_pb(values: dict[str, str]) -> RuleSet:
    """Variant key → JSON text (a bare word is taken as a string)."""
    parsed: dict[str, Any] = {}
    for key, text in values.items():
        try:
            parsed[key] = json.loads(text)
        except json.JSONDecodeError:
            parsed[key] = text
    return RuleSet.from_mapping(parsed)


def event_to_pb(event: Event, index: int = 0) -> pb.Event:
    """One domain event (already redacted for its viewer) as a wire event."""
    return event_table.event_to_pb(event, index)
