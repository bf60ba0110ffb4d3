"""The domain's value types (issue 15 item 1): seats, sides, time control, fault policy,
immutable cards, and reprs that show the value."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from arena.errors import InvalidRules
from arena.game import FaultPolicy, MatchSetup, PolicyKind, Termination, TimeControl
from arena.records import RecordError, RecordHeader, SeatRecord
from arena.rules import CARDS, SEATS, Card, Rank, Seat, Side, Suit, Trump

# -- seats and sides ------------------------------------------------------------------------


def test_a_seat_knows_its_team_partner_and_neighbours() -> None:
    assert [s.team for s in SEATS] == [0, 1, 0, 1]
    assert [s.partner for s in SEATS] == [2, 3, 0, 1]
    assert [s.next for s in SEATS] == [1, 2, 3, 0]
    assert [Seat(1).after(n) for n in range(-1, 6)] == [0, 1, 2, 3, 0, 1, 2]
    assert [Seat(3).places_after(s) for s in SEATS] == [3, 2, 1, 0]
    assert all(type(s.partner) is Seat and type(s.next) is Seat for s in SEATS)


def test_seats_are_interned_ints() -> None:
    assert Seat(2) is Seat(2) is SEATS[2] is Seat(Seat(2))
    assert Seat(2) == 2 and hash(Seat(2)) == hash(2) and {2: "x"}[Seat(2)] == "x"
    assert [0, 1, 2, 3][Seat(3)] == 3
    assert pickle.loads(pickle.dumps(Seat(1))) is Seat(1) and copy.deepcopy(Seat(1)) is Seat(1)
    for bad in (-1, 4, True, 1.0, "1"):
        with pytest.raises(ValueError, match="a seat is 0, 1, 2 or 3"):
            Seat(bad)  # type: ignore[arg-type]


def test_a_seat_prints_as_a_number_and_reprs_as_a_seat() -> None:
    assert repr(Seat(2)) == "Seat(2)"
    assert str(Seat(2)) == f"{Seat(2)}" == "2" and f"{Seat(2):>3}" == "  2"
    assert json.dumps({"seat": Seat(3)}) == '{"seat": 3}'  # records and JSON see an int


def test_sides_follow_the_dealer() -> None:
    assert [s.side(dealer=1) for s in SEATS] == [Side.ATTACKERS, Side.DEALER] * 2
    assert Side.DEALER.team(dealer=3) == 1 and Side.ATTACKERS.team(dealer=3) == 0
    assert Side.DEALER.other is Side.ATTACKERS and Side.ATTACKERS.other is Side.DEALER


def test_termination_says_whether_the_cards_decided() -> None:
    played = {t for t in Termination if t.played_out}
    assert played == {Termination.LEVEL_A_KEPT, Termination.PASSED_A, Termination.DEALS_PLAYED}


# -- immutable cards ---------------------------------------------------------------------------


def test_cards_cannot_be_changed() -> None:
    ten = Card.parse("TS")
    with pytest.raises(AttributeError, match="cards are immutable"):
        ten.index = 3  # type: ignore[misc]
    with pytest.raises(AttributeError, match="cards are immutable"):
        del ten.points
    with pytest.raises(AttributeError):
        ten.colour = "black"  # type: ignore[attr-defined]
    assert ten.index == 8 and ten.points == 10 and CARDS[8] is ten


# -- time control and fault policy -----------------------------------------------------------


def test_time_control_is_frozen_and_shows_its_values() -> None:
    tc = TimeControl(decision_ms=500, bank_ms=2000)
    assert repr(tc) == "TimeControl(decision_ms=500, bank_ms=2000, grace_ms=10000, allowance_ms=50)"
    with pytest.raises(AttributeError):
        tc.bank_ms = 1  # type: ignore[misc]
    with pytest.raises(InvalidRules, match="bank_ms"):
        TimeControl(bank_ms=-1)


def test_the_bank_rule() -> None:
    """Time beyond decision + allowance comes from the bank; below zero is a timeout."""
    tc = TimeControl(decision_ms=1000, bank_ms=2000, allowance_ms=50)
    assert tc.limit == 1.05 and tc.bank == 2.0
    assert tc.bank_after(2.0, 0.9) == 2.0  # within the limit: the bank is untouched
    assert tc.bank_after(2.0, 1.55) == pytest.approx(1.5)
    assert tc.bank_after(2.0, 3.55) == pytest.approx(-0.5)  # a timeout


def test_time_control_reads_forgivingly_from_its_json_form() -> None:
    tc = TimeControl(decision_ms=700, bank_ms=0, grace_ms=5, allowance_ms=1)
    assert TimeControl.from_dict(tc.to_dict()) == tc
    assert TimeControl.from_dict({}) == TimeControl()  # an old record: the defaults
    assert TimeControl.from_dict({"bank_ms": 1500.0, "later_key": 1}) == TimeControl(bank_ms=1500)
    for bad in ("fast", None, -5, float("nan"), True):
        with pytest.raises(InvalidRules, match="decision_ms"):
            TimeControl.from_dict({"decision_ms": bad})


def test_fault_policy_values() -> None:
    strict = FaultPolicy(PolicyKind.STRICT, 0, 1)
    assert repr(strict) == "FaultPolicy(PolicyKind.STRICT, penalty_points=0, max_faults=1)"
    assert eval(repr(FaultPolicy()), {"FaultPolicy": FaultPolicy, "PolicyKind": PolicyKind}) == (
        FaultPolicy()
    )
    assert strict.strict and not FaultPolicy().strict
    assert FaultPolicy.from_dict(strict.to_dict()) == strict
    assert FaultPolicy.from_dict({}) == FaultPolicy() == FaultPolicy.parse()
    assert FaultPolicy.parse("strict", max_faults=3) == FaultPolicy(PolicyKind.STRICT, 10, 3)
    with pytest.raises(InvalidRules, match="unknown fault policy 'harsh'"):
        FaultPolicy.from_dict({"kind": "harsh"})


def test_a_record_header_holds_the_values_and_reads_old_headers() -> None:
    seats = [SeatRecord(f"s{i}", "builtin:random") for i in range(4)]
    tc, policy = TimeControl(bank_ms=5000), FaultPolicy(PolicyKind.STRICT, 10, 1)
    header = RecordHeader.for_setup("m-1", MatchSetup(seed=3), seats, tc, policy)
    back = RecordHeader.from_dict(json.loads(json.dumps(header.to_dict())))
    assert (back.time_control, back.policy) == (tc, policy)
    old = {**header.to_dict(), "time_control": {}, "policy": {"kind": "lenient"}}
    read = RecordHeader.from_dict(old)  # written before every key was
    assert (read.time_control, read.policy) == (TimeControl(), FaultPolicy())
    with pytest.raises(RecordError, match=r"time_control.decision_ms must be a number"):
        RecordHeader.from_dict({**old, "time_control": {"decision_ms": "fast"}})


# -- trump carried as itself ----------------------------------------------------------------


def test_trump_reprs_and_prints() -> None:
    trump = Trump(Rank.parse("2"), Suit.SPADES)
    assert str(trump) == "2S" and str(Trump(Rank.ACE, None)) == "ANT"
    assert repr(trump) == "Trump(Rank.TWO, Suit.SPADES)" and repr(Trump(Rank.ACE, None)) == (
        "Trump(Rank.ACE, None)"
    )
    assert eval(repr(trump), {"Trump": Trump, "Rank": Rank, "Suit": Suit}) == trump
