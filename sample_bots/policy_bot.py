#!/usr/bin/env python3
"""A policy trained against arena.env, playing over gRPC like any other bot.

    python sample_bots/policy_bot.py --policy examples/tiny_policy.py:act \\
        --server 127.0.0.1:50051 --token TOKEN

Each request's view and events come back from the wire into arena's own types, and the
policy answers through :class:`arena.env.policy.PolicyBot` — the very code that seats a
``policy:MODULE:FUNCTION`` in-process — so the policy sees the same encoding in
training, in ``arena match``/``batch`` and here. Needs the ``arena[env]`` extra.
"""

from __future__ import annotations

import argparse
import os
import sys

from botkit import Table, cards, parse_args, run

from arena.env.policy import PolicyBot, load_policy
from arena.game import CardsPlayed, DealStarted, Decision, Event, Kind, Phase, SeatView, TrickView
from arena.rules import Bid, Rank, Suit
from arena.v1 import arena_pb2 as pb

_KINDS = {pb.BID: Kind.BID, pb.BURY: Kind.BURY, pb.PLAY: Kind.PLAY}
_PHASES = {
    pb.DEALING: Phase.BIDDING,
    pb.BURYING: Phase.BURYING,
    pb.PLAYING: Phase.PLAYING,
    pb.DEAL_OVER: Phase.OVER,
}
_SUITS = {
    pb.SPADES: Suit.SPADES,
    pb.HEARTS: Suit.HEARTS,
    pb.CLUBS: Suit.CLUBS,
    pb.DIAMONDS: Suit.DIAMONDS,
}


def _seat(value: int) -> int | None:
    return None if value < 0 else value


def _trick(m: pb.Trick) -> TrickView:
    plays = tuple((p.seat, tuple(cards(p.cards))) for p in m.plays)
    return TrickView(m.number, m.leader, plays, _seat(m.winner) if plays else None)


def view_from_pb(m: pb.View) -> SeatView:
    """The wire view as arena's :class:`SeatView` (what the encoding reads)."""
    revealed: list[tuple] = [(), (), (), ()]
    for play in m.revealed:
        revealed[play.seat] = tuple(cards(play.cards))
    bids = tuple(Bid(b.seat, tuple(cards(b.cards))) for b in m.bids)
    winning = (
        Bid(m.winning_bid.seat, tuple(cards(m.winning_bid.cards)))
        if m.HasField("winning_bid")
        else None
    )
    return SeatView(
        seat=m.seat, deal=m.deal_number, phase=_PHASES[m.phase], hand=tuple(cards(m.hand)),
        dealer=_seat(m.dealer), level=Rank(m.trump.level),
        trump_suit=_SUITS.get(m.trump.suit) if m.trump.declared and not m.trump.no_trump else None,
        trump_declared=m.trump.declared, levels=(Rank(m.levels[0]), Rank(m.levels[1])),
        bids=bids, winning_bid=winning, trick=m.trick_number,
        current=_trick(m.current_trick) if m.HasField("current_trick") else None,
        previous=_trick(m.previous_trick) if m.HasField("previous_trick") else None,
        attacker_points=m.attacker_points, penalty_points=m.penalty_points,
        fault_penalty_points=m.fault_penalty_points, revealed=tuple(revealed),
        kitty=tuple(cards(m.kitty)), points_by_seat=tuple(m.points_by_seat),  # type: ignore[arg-type]
        hand_sizes=tuple(m.hand_sizes), first_seat=m.first_seat,  # type: ignore[arg-type]
    )  # fmt: skip


def events_from_pb(events: list[pb.Event]) -> list[Event]:
    """The events the encoding's memory needs: deal starts and cards played."""
    out: list[Event] = []
    for e in events:
        kind = e.WhichOneof("kind")
        if kind == "deal_started":
            d = e.deal_started
            out.append(
                DealStarted(
                    d.deal, 0, _seat(d.dealer), Rank(d.level), d.first_seat, (Rank(2), Rank(2))
                )
            )
        elif kind == "cards_played":
            p = e.cards_played
            out.append(CardsPlayed(p.seat, p.trick, tuple(cards(p.cards))))
    return out


def decision_from_pb(request: pb.Request, view: SeatView) -> Decision:
    """The decision the wire request asks for, as the referee's :class:`Decision`."""
    kind = _KINDS[request.kind]
    options = tuple(tuple(cards(b.cards)) for b in request.legal_bids)
    lead: tuple = ()
    if kind is Kind.PLAY and view.current is not None and view.current.plays:
        lead = view.current.plays[0][1]
    return Decision(view.seat, kind, count=request.count, options=options, lead=lead)


def decide(request: pb.Request, table: Table, bot: PolicyBot) -> list:
    view = view_from_pb(request.view)
    decision = decision_from_pb(request, view)
    order = table.order(request.view) if view.trump_declared else None
    return list(bot.answer(decision, view, events_from_pb(request.events), table.rules, order))


def main() -> int:
    # --policy is ours; every other option (server, token, TLS, transcript, reconnect) is
    # botkit's, so this bot connects exactly as the other sample bots do
    ours = argparse.ArgumentParser(add_help=False)
    ours.add_argument("--policy", default=os.environ.get("ARENA_POLICY"))
    known, rest = ours.parse_known_args()
    sys.argv = [sys.argv[0], *rest]
    args = parse_args(__doc__.splitlines()[0] + " (--policy MODULE:FUNCTION, or $ARENA_POLICY)")
    if not known.policy:
        print("policy_bot: give --policy MODULE:FUNCTION (or ARENA_POLICY)", file=sys.stderr)
        return 2
    bot = PolicyBot(load_policy(known.policy), args.name or "policy_bot")
    return run(
        lambda r, t: decide(r, t, bot), bot.name, args.server, args.token,
        reconnect_for=args.reconnect,
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
