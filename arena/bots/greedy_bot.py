"""``greedy``: a simple, sensible heuristic player.

Bids its longest suit when it can, buries cheap side cards (never points when it can
help it), leads its strongest side cards (pairs and tractors first), wins a trick when it
is cheap and worth points, feeds points to a partner who is winning, and otherwise
follows low.
"""

from __future__ import annotations

from arena.game import Action, Kind, Request, order_for
from arena.rules import (
    TRUMP_LANE,
    Card,
    CardOrder,
    Seat,
    cheapness,
    decompose,
    fallback_burial,
    follow_with,
    legal_plays,
    trick_winner,
)


class GreedyBot:
    name = "greedy"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def decide(self, request: Request) -> Action:
        decision = request.decision
        hand = list(request.view.hand)
        if decision.kind is Kind.BID:
            return self._bid(request)
        order = order_for(request)
        if decision.kind is Kind.BURY:
            return fallback_burial(request.position)
        if not decision.lead:
            return tuple(self._lead(hand, order))
        return tuple(self._follow(request, hand, order))

    def _bid(self, request: Request) -> Action:
        options = request.decision.options
        if not options:
            return ()
        hand = request.view.hand
        level = request.view.level

        def support(option: Action) -> int:
            suit = option[0].suit
            return sum(1 for c in hand if c.suit is suit or c.rank == level or c.is_joker)

        best = max(options, key=lambda o: (len(o), support(o)))
        enough = len(best) > 1 or support(best) * 3 >= len(hand)
        return best if enough else ()

    def _lead(self, hand: list[Card], order: CardOrder) -> list[Card]:
        side = [c for c in hand if order.lane[c.index] != TRUMP_LANE]
        pool = side or hand
        lanes: dict[int, list[Card]] = {}
        for card in pool:
            lanes.setdefault(order.lane[card.index], []).append(card)
        best = None
        for cards in lanes.values():
            for unit in decompose(cards, order):
                score = (unit.size, unit.high) if side else (-unit.size, -unit.high)
                if best is None or score > best[0]:
                    best = (score, list(unit.cards))
        assert best is not None
        return best[1]

    def _follow(self, request: Request, hand: list[Card], order: CardOrder) -> list[Card]:
        decision = request.decision
        position = request.position
        low = list(follow_with(position))
        current = request.view.current
        if current is None or len(decision.lead) != 1:
            return low
        plays = [cards for _, cards in current.plays]
        on_table = sum(c.points for p in plays for c in p)
        me = decision.seat
        winner = trick_winner(current.leader, plays, order).winner
        partner_winning = Seat(winner).team == Seat(me).team
        # a single lead: legal_plays yields each legal card once, judging only the suited
        # cards (cheaper than a check_play per card of the hand); set(hand) keeps the order
        legal = {cards[0] for cards in legal_plays(position)}
        options = sorted((c for c in set(hand) if c in legal), key=cheapness(order))
        if partner_winning and len(plays) == 3:
            scorers = [c for c in options if c.points]
            return [max(scorers, key=lambda c: c.points)] if scorers else low
        if on_table >= 10 or len(plays) == 3:
            for card in options:
                if trick_winner(current.leader, [*plays, [card]], order).winner == me:
                    return [card]
        return low
