"""The shortcuts issue 20 took on the referee's own work per decision, each against the
longer way it replaced (docs/architecture.md, section t21core):

- a follow to a lead of singles is built without the profile: the same cards
  ``_shaped`` builds, legal as :func:`check_play` judges them, whatever ``pick`` chooses;
- :func:`quick_init` values are the dataclass's own values (equality, hash, replace);
- a record written with :meth:`RecordWriter.hold` is byte for byte the one written
  line by line, and a held writer left on a crash writes the complete lines it holds.
"""

from __future__ import annotations

import dataclasses
import io
import random
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.bots import make_bot
from arena.game import Decision, Kind, MatchSetup, Phase, SeatView, TrickView
from arena.records import RecordHeader, RecordWriter, SeatRecord
from arena.referee import play_match
from arena.rules import (
    SUITED_RANKS,
    Card,
    CardOrder,
    Position,
    RuleSet,
    Suit,
    Trump,
    Unit,
    card_order,
    check_play,
    deck,
    decompose,
    follow_with,
    lowest,
    quick_init,
)
from arena.rules.follow import profile
from arena.rules.legal import _shaped, follow_candidate

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
SUITS_OR_NONE = [Suit.SPADES, Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS, None]


def _singles_lead(rnd: random.Random, hand: Sequence[Card], order: CardOrder) -> list[Card]:
    """One card, or (half the time) a throw of distinct singles of one suit."""
    lane = rnd.choice(sorted({order.lane_of(c) for c in hand}))
    suited = [c for c in hand if order.lane_of(c) == lane]
    faces = sorted(set(suited), key=lambda c: c.index)
    if rnd.random() < 0.5 or len(faces) < 2:
        return [rnd.choice(faces)]
    lead = rnd.sample(faces, rnd.randint(2, min(len(faces), 5)))
    if any(u.width > 1 or u.length > 1 for u in decompose(lead, order)):
        return [lead[0]]  # adjacent faces of one key could read as more than singles
    return lead


@FAST
@given(SEEDS)
def test_a_follow_to_singles_is_what_the_profile_would_build(seed: int) -> None:
    rnd = random.Random(seed)
    order = card_order(Trump(rnd.choice(SUITED_RANKS), rnd.choice(SUITS_OR_NONE)), RuleSet())
    cards = deck(2)
    rnd.shuffle(cards)
    leader_hand = cards[:25]
    lead = _singles_lead(rnd, leader_hand, order)
    hand = cards[25 : 25 + rnd.randint(len(lead), 25)]  # as many cards as the lead, at least
    units = tuple(decompose(lead, order))
    assert all(u.width == 1 for u in units)
    for pick_seed in (None, seed):
        pick = lowest if pick_seed is None else random.Random(pick_seed).choice
        built, forced = follow_candidate(lead, hand, order, units, pick)
        assert forced
        ordered = order.cheapest_first(list(hand))
        led = order.lane_of(lead[0])
        suited = [c for c in ordered if order.lane_of(c) == led]
        if len(suited) > len(lead):  # the shortcut's case: what _shaped gives
            again = lowest if pick_seed is None else random.Random(pick_seed).choice
            assert built == _shaped(suited, units, order, again)
            assert profile(built, units, order) == profile(suited, units, order)
        position = Position(
            (tuple(leader_hand), tuple(hand), None, None), order.trump.level, order.trump,
            0, None, 0, (tuple(lead),), rules=order.rules, landed_units=units,
        ).knowing(order)  # fmt: skip
        assert check_play(position, built), (lead, hand, built)
        if pick_seed is None:
            assert follow_with(position) == tuple(built)


@quick_init
@dataclasses.dataclass(frozen=True, slots=True)
class _Quick:
    a: int
    b: tuple[int, ...] = ()
    c: str = "x"


def test_quick_init_makes_the_dataclass_own_values() -> None:
    v = _Quick(1, (2,))
    assert v == _Quick(a=1, b=(2,), c="x") and hash(v) == hash(_Quick(1, (2,), "x"))
    assert dataclasses.replace(v, c="y") == _Quick(1, (2,), "y")
    assert repr(v) == "_Quick(a=1, b=(2,), c='x')"
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.a = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        _Quick()  # type: ignore[call-arg]
    decision = Decision(2, Kind.PLAY, 1, (), (Card.parse("AS"),))
    assert decision == Decision(seat=2, kind=Kind.PLAY, count=1, lead=(Card.parse("AS"),))
    assert Decision(1, Kind.BID).options == () and Unit(1, 1, (), 3, 3).size == 1
    trick = TrickView(1, 0, ())
    assert trick.winner is None and hash(trick) == hash(TrickView(1, 0, (), None))
    fields = {f.name: f.default for f in dataclasses.fields(SeatView)}
    assert fields["first_seat"] == 0 and fields["hand_sizes"] == (0, 0, 0, 0)
    assert Phase.PLAYING in {Phase.PLAYING: 1} and hash(Kind.BID) == object.__hash__(Kind.BID)


def test_quick_init_refuses_what_it_does_not_fit() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Later:
        a: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True)
    class Unslotted:
        a: int

    for cls in (Later, Checked, Unslotted):
        with pytest.raises(TypeError):
            quick_init(cls)


def _record(seed: int, hold: bool) -> bytes:
    """A self-play match's record; with ``hold``, held and released every 7 calls."""
    setup = MatchSetup(RuleSet(deals=1), seed)
    seats = [SeatRecord(f"s{i}", "builtin:random") for i in range(4)]
    out = io.BytesIO()
    writer = RecordWriter(out, RecordHeader.for_setup("h", setup, seats))
    out.close = lambda: None  # type: ignore[method-assign]  # keep the bytes past close()
    calls = 0
    real = writer._write_numbered

    def counted(lines: list[dict[str, object]], digest: bool = True) -> None:
        nonlocal calls
        calls += 1
        if hold and calls % 7 == 0:
            writer.release()
        real(lines, digest)
        if hold and calls % 7 == 3:
            writer.hold()

    writer._write_numbered = counted  # type: ignore[method-assign]
    play_match(setup, [make_bot("random", seed + i) for i in range(4)], recorder=writer)
    return out.getvalue()


@pytest.mark.parametrize("seed", [3, 8])
def test_a_held_record_is_the_same_bytes(seed: int) -> None:
    assert _record(seed, hold=True) == _record(seed, hold=False)


def test_a_held_writer_left_on_a_crash_keeps_its_complete_lines() -> None:
    setup = MatchSetup(RuleSet(deals=1), 1)
    seats = [SeatRecord(f"s{i}", "x") for i in range(4)]
    out = io.BytesIO()
    out.close = lambda: None  # type: ignore[method-assign]
    header = RecordHeader.for_setup("c", setup, seats)
    with pytest.raises(RuntimeError), RecordWriter(out, header) as w:
        w.hold()
        w.penalty(0, 10, "held")
        assert out.getvalue().count(b"\n") == 1  # the header only, so far
        raise RuntimeError("crash")
    assert out.getvalue().count(b"\n") == 2 and b'"reason":"held"' in out.getvalue()
