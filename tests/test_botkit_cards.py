"""botkit without a server: every wire card round-trips to the one interned, immutable
``arena.rules.Card``, and a :class:`botkit.Turn` holds the very cards the referee meant
(checked on every request of a real match, sent through the server's own conversion)."""

from __future__ import annotations

import copy
import pickle
import sys
from pathlib import Path

import pytest

from arena.game import Kind, MatchSetup, Request
from arena.referee import play_match
from arena.rules import CARDS, Card, RuleSet
from arena.server.convert import request_to_pb
from arena.v1 import arena_pb2 as pb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sample_bots"))

import botkit

SUIT_CODES = {pb.SPADES: "S", pb.HEARTS: "H", pb.CLUBS: "C", pb.DIAMONDS: "D"}


def test_every_card_round_trips_through_the_tables() -> None:
    for card in CARDS:
        wire = botkit.card_to_pb(card)
        assert botkit.card_from_pb(wire) is card
        assert botkit.cards([wire, wire]) == [card, card]
        assert Card.parse(card.code) is card
        if card.is_joker:
            assert wire.suit == pb.JOKER and card.code == ("SJ" if wire.rank == 15 else "BJ")
        else:
            assert SUIT_CODES[wire.suit] == card.code[1] and int(card.rank) == wire.rank


def test_exactly_54_enum_pairs_name_a_card_and_the_rest_are_refused() -> None:
    found = []
    for suit in range(7):
        for rank in range(20):
            wire = pb.Card(suit=suit, rank=rank)  # type: ignore[arg-type]
            try:
                found.append(botkit.card_from_pb(wire))
            except ValueError as exc:
                assert f"suit {suit}, rank {rank}" in str(exc)
                with pytest.raises(ValueError):
                    botkit.cards([botkit.card_to_pb(CARDS[0]), wire])
    assert sorted(c.index for c in found) == list(range(54))


def test_cards_are_interned_and_immutable() -> None:
    hand = botkit.cards([botkit.card_to_pb(c) for c in CARDS])
    again = botkit.cards([botkit.card_to_pb(c) for c in CARDS])
    assert all(a is b is c for a, b, c in zip(hand, again, CARDS, strict=True))
    ten = Card.parse("TS")
    assert copy.copy(ten) is ten and copy.deepcopy(ten) is ten
    assert pickle.loads(pickle.dumps(ten)) is ten
    with pytest.raises((AttributeError, TypeError)):
        ten.points = 0  # type: ignore[misc]
    assert ten.points == 10 and ten.rank == 10 and ten.suit is not None


class TurnChecker:
    """An in-process seat that sends each request through the server's conversion and
    checks that botkit's Turn reads back the referee's own cards."""

    name = "turn-checker"

    def __init__(self, rules: RuleSet) -> None:
        self.table = botkit.Table(rules=rules)
        self.checked = {kind: 0 for kind in Kind}

    def decide(self, request: Request) -> tuple[Card, ...]:
        message = request_to_pb(1, request, 1000, 1000).request
        self.table.seat = request.view.seat
        turn = botkit.Turn(message, self.table)
        d = request.decision
        assert turn.hand == list(request.view.hand)
        assert tuple(turn.fallback_cards) == tuple(request.fallback)
        assert turn.count == d.count and turn.seq == 1
        if d.kind is Kind.BID:
            assert [tuple(b) for b in turn.bids] == [tuple(o) for o in d.options]
        if d.kind is Kind.PLAY:
            assert tuple(turn.lead) == tuple(d.lead)
            current = request.view.current
            plays = [] if current is None else [(s, list(c)) for s, c in current.plays]
            assert turn.plays == plays
            lanes = [turn.order.is_trump(c) for c in turn.hand]
            level, suit = request.view.level, request.view.trump_suit
            assert lanes == [
                c.is_joker or c.rank == level or (c.suit is not None and c.suit is suit)
                for c in turn.hand
            ]
        self.checked[d.kind] += 1
        return tuple(request.fallback)


def test_a_turn_holds_the_referees_cards_on_every_request_of_a_match() -> None:
    rules = RuleSet.from_mapping({"deals": 2})
    seats = [TurnChecker(rules) for _ in range(4)]
    match = play_match(MatchSetup(rules, 5), seats)  # type: ignore[arg-type]
    assert match.finished
    assert all(s.checked[Kind.PLAY] > 40 and s.checked[Kind.BID] > 0 for s in seats)
    assert sum(s.checked[Kind.BURY] for s in seats) == 2


def test_a_decide_written_for_the_raw_request_still_reads_a_turn() -> None:
    """The wire fields a ``decide(request, table)`` of the first botkit read are on a Turn."""
    request = pb.Request(seq=7, kind=pb.PLAY, count=0, deadline_ms=900, time_bank_ms=50)
    request.view.hand.extend([botkit.card_to_pb(Card.parse("AS"))])
    request.fallback.cards.extend([botkit.card_to_pb(Card.parse("AS"))])
    turn = botkit.Turn(request, botkit.Table())
    assert botkit.cards(turn.view.hand) == turn.hand == turn.fallback_cards == [Card.parse("AS")]
    assert (turn.kind, turn.seq, turn.deadline_ms, turn.time_bank_ms) == (pb.PLAY, 7, 900, 50)
    assert turn.lead == [] and turn.plays == [] and turn.request is request
    assert list(turn.legal_bids) == [] and list(turn.events) == []


def test_the_seat_asks_for_faults_only_and_reads_acks_and_faults() -> None:
    """botkit's message handling, shared by both clients: the Hello's verdict mode, an
    acknowledgement riding on the next message, a fault Verdict, a failing decide."""
    import io

    err = io.StringIO()
    calls: list[int] = []

    def decide(turn: botkit.Turn, table: botkit.Table) -> list[Card]:
        calls.append(turn.seq)
        if turn.seq == 2:
            raise RuntimeError("bug")
        return turn.hand[:1]

    seat = botkit.Seat(decide, "t", err=err)
    assert seat.hello("tok").hello.verdicts == pb.VERDICT_FAULTS_ONLY
    every = botkit.Seat(decide, "t", every_verdict=True).hello("tok").hello
    assert every.verdicts == pb.VERDICT_EVERY_ANSWER
    welcome = pb.Welcome(seat=2, match_id="m", verdicts=pb.VERDICT_FAULTS_ONLY)
    welcome.rules["decks"] = "2"
    assert seat.receive(pb.RefereeMessage(welcome=welcome)) is None
    assert seat.table.seat == 2 and seat.faults_only
    request = pb.Request(seq=1, kind=pb.PLAY)
    request.view.hand.extend([botkit.card_to_pb(Card.parse("AS")), botkit.card_to_pb(CARDS[0])])
    answer = seat.receive(pb.RefereeMessage(request=request))
    assert answer is not None and botkit.cards(answer.action.cards) == [Card.parse("AS")]
    request.seq = 2
    request.fallback.cards.extend([botkit.card_to_pb(CARDS[0])])
    answer = seat.receive(pb.RefereeMessage(request=request, accepted_seq=1))
    assert seat.accepted == 1 and answer is not None and answer.action.seq == 2
    assert botkit.cards(answer.action.cards) == [CARDS[0]]  # the fallback, after the bug
    fault = pb.Verdict(seq=2, accepted=False, reason="not in hand")
    assert seat.receive(pb.RefereeMessage(verdict=fault)) is None
    assert seat.table.faults == 1 and seat.accepted == 1
    assert seat.receive(pb.RefereeMessage(match_end=pb.MatchEnd(), accepted_seq=0)) is None
    assert seat.ended and calls == [1, 2]
    assert err.getvalue().splitlines() == [
        "t: decide failed (RuntimeError('bug')); playing the fallback",
        "t: fault on seq 2: not in hand",
    ]
