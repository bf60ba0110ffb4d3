"""The request encoding's shortcuts (t22edge), read back with protobuf's own parser.

A packed list takes varints from the table inline, falling back for a value past it or
below zero; a trick's plays are kept encoded by value, so a play written again (the
current trick at each decision of the trick, the same play in another match) must give
the bytes it gave first. Whole matches are read back in tests/test_request_wire.py.
"""

from __future__ import annotations

from arena.game import TrickView
from arena.rules import Card
from arena.server import protowire, view_wire
from arena.v1 import arena_pb2 as pb


def test_packed_values_inside_and_outside_the_table() -> None:
    values = [0, 1, 127, 128, protowire.TABLED - 1, protowire.TABLED, 70_000, -1, -300]
    data = view_wire._POINTS_BY_SEAT(values)
    assert list(pb.View.FromString(data).points_by_seat) == values
    assert view_wire._HAND_SIZES(()) == b""
    sizes = (25, 0, 3, protowire.TABLED + 5)
    assert list(pb.View.FromString(view_wire._HAND_SIZES(sizes)).hand_sizes) == list(sizes)


def test_a_trick_written_again_gives_the_same_bytes() -> None:
    kh, ks, five, ten = (Card.parse(c) for c in ("KH", "KS", "5D", "TC"))
    plays = ((1, (kh, ks)), (2, (five,)), (3, (ten,)))
    for n in range(1, 4):  # the current trick growing, as at each decision of a trick
        trick = TrickView(4, 1, plays[:n], None)
        first = view_wire.trick_bytes(trick, False)
        again = view_wire.trick_bytes(TrickView(4, 1, tuple(plays[:n]), None), False)
        assert first == again
        m = pb.View.FromString(first).current_trick
        assert [(p.seat, len(p.cards)) for p in m.plays] == [(s, len(c)) for s, c in plays[:n]]
        assert m.points == sum(card.points for _, cards in plays[:n] for card in cards)
        assert m.winner == -1 and m.number == 4 and m.leader == 1
    done = TrickView(4, 1, plays, 3)
    assert pb.View.FromString(view_wire.trick_bytes(done, True)).previous_trick.winner == 3
