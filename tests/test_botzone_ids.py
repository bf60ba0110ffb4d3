"""Card ids through the Botzone bridge, round trip, over many seeded deals.

Each deal is played by the real game machine with built-in bots; every request goes
through the real wire conversion (``convert.request_to_pb``) into one
:class:`~arena.botzone.table.BotzoneTable` per seat, whose Botzone requests feed an
independent Botzone player (``tests/botzone/bzkit.py``, which fails on any id
contradiction). The answers go back through the table to the machine. Checked: every
id names the card arena dealt; no id is used twice in a deal; the dealer, who sees
every card, has used each of 0–107 exactly once; the player's hand rebuilt from its
requests equals arena's hand of the seat at every decision.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.bots import make_bot
from arena.botzone.cards import DealIds, face_number, face_of
from arena.botzone.table import BotzoneError, BotzoneTable
from arena.game import MatchMachine, MatchSetup, SeatFeed
from arena.rules import RuleSet, codes, deck
from arena.server import convert
from arena.v1 import arena_pb2 as pb

sys.path.insert(0, str(Path(__file__).parent / "botzone"))
import bzkit

RULES = RuleSet.from_mapping({"deals": 1, "level_tractors": False})


def test_ids_and_faces_agree_with_the_botzone_numbering() -> None:
    assert [str(face_of(i)) for i in (0, 4, 7, 36, 52, 53, 54, 107)] == [
        "AS",
        "2S",
        "2D",
        "TS",
        "SJ",
        "BJ",
        "AS",
        "BJ",
    ]
    assert all(bzkit.face(i) == str(face_of(i)) for i in range(108))
    assert sorted(face_number(c) for c in deck(1)) == list(range(54))
    with pytest.raises(ValueError):
        face_of(108)


def test_a_face_takes_the_copy_nobody_has_used() -> None:
    ids = DealIds()
    ace = face_of(0)
    assert ids.receive([ace]) == [0]
    assert ids.seen([ace]) == [54]  # the other copy: never the one in hand
    assert ids.release([ace]) == [0]


def play_deal(seed: int) -> tuple[list[BotzoneTable], MatchMachine]:
    match = MatchMachine(MatchSetup(RULES, seed))
    feed = SeatFeed(match)
    bots = [make_bot("greedy", seed * 4 + i) for i in range(4)]
    tables = [BotzoneTable(seat) for seat in range(4)]
    players = [bzkit.Player() for _ in range(4)]
    seq = 0
    while not match.finished:
        for decision in match.pending():
            seq += 1
            request = feed.request(decision)
            message = convert.request_to_pb(seq, request, 1000, 1000).request
            seat, table = decision.seat, tables[decision.seat]
            if any(e.WhichOneof("kind") == "deal_started" for e in message.events):
                players[seat] = bzkit.Player()
            table.absorb(message.events)
            wanted = [str(c) for c in bots[seat].decide(request)]
            while (turn := table.next_turn(message)) is not None:
                player = players[seat]
                player.feed(turn.request, None)
                if turn.stage == "deal":
                    table.answer(turn, [])
                    continue
                faces = sorted(bzkit.face(i) for i in player.hand)
                assert faces == sorted(codes(request.view.hand)), f"seed {seed}: hands differ"
                response = player._ids([c for c in _parse(wanted)])
                if turn.stage == "cover":
                    player.hand.difference_update(response)
                table.answer(turn, response)
            action = table.action(message)
            match.answer(seat, convert.cards_from_pb(action.cards))
    for seat, table in enumerate(tables):
        # what a default-mode bot is given at its last turn: the whole game, replayed
        bzkit.replay(table.game.requests, table.game.responses[:-1])
        # the last trick, which no request carries
        table.absorb(convert.event_to_pb(e) for _, e in feed.catch_up(seat))
    return tables, match


def _parse(wanted: list[str]) -> list[Any]:
    from arena.rules import Card

    return [Card.parse(c) for c in wanted]


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=0, max_value=2**32))
def test_every_deal_maps_each_physical_card_to_one_id(seed: int) -> None:
    tables, match = play_deal(seed)
    dealer = match.snapshot().deal.dealer
    assert dealer is not None
    dealt = match.snapshot().deal.deck
    for seat, table in enumerate(tables):
        used = table.ids.used
        assert all(face_of(i) is card for i, card in used.items())
        # each face at most twice, and each id names one physical card
        assert max(Counter(used.values()).values()) <= 2
        expected = 108 if seat == dealer else 100  # the buried kitty stays hidden
        assert len(used) == expected, f"seed {seed} seat {seat}: {len(used)} ids"
        assert not table.ids.hand  # every card left the hand
    assert sorted(tables[dealer].ids.used) == list(range(108))
    assert Counter(tables[dealer].ids.used.values()) == Counter(dealt)


def test_an_id_the_seat_lacks_is_not_your_poker() -> None:
    table = BotzoneTable(0)
    table.ids.receive([face_of(5)])
    turn = table._queue("play", {"stage": "play"}, decision=True)
    with pytest.raises(BotzoneError) as bad:
        table.answer(turn, [59])  # the other copy of the card it holds
    assert bad.value.name == "NOT_YOUR_POKER" and bad.value.kind == pb.ILLEGAL_ACTION
    for wrong in ([108], ["5"], 5, [True]):
        with pytest.raises(BotzoneError) as bad:
            table.answer(turn, wrong)
        assert bad.value.name == "INVALID_POKERID"
