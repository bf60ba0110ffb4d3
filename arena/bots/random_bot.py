"""``random``: uniformly chosen among legal kinds of action, from its own seeded generator.

It bids at random, buries any cards, leads a random unit (sometimes a throw of several
units, which may fail) and follows with a legal play whose free choices are random (the
legality API's ``follow_with``). Its job is to exercise every rule, not to play well.
"""

from __future__ import annotations

import random

from arena.game import Action, Kind, Request, order_for
from arena.rules import Card, CardOrder, decompose, follow_with


class RandomBot:
    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def decide(self, request: Request) -> Action:
        decision = request.decision
        hand = list(request.view.hand)
        rng = self.rng
        if decision.kind is Kind.BID:
            if decision.options and rng.random() < 0.5:
                return rng.choice(decision.options)
            return ()
        if decision.kind is Kind.BURY:
            return tuple(rng.sample(hand, decision.count))
        if decision.lead:  # the legality API's question, on its own view
            return follow_with(request.position, rng.choice)
        return tuple(self._lead(hand, order_for(request)))

    def _lead(self, hand: list[Card], order: CardOrder) -> list[Card]:
        rng = self.rng
        lanes: dict[int, list[Card]] = {}
        for card in hand:
            lanes.setdefault(order.lane[card.index], []).append(card)
        cards = lanes[rng.choice(sorted(lanes))]
        units = decompose(cards, order)
        if len(units) > 1 and rng.random() < 0.15:
            chosen = rng.sample(units, rng.randint(2, min(4, len(units))))
            return [c for u in chosen for c in u.cards]
        unit = rng.choice(units)
        if unit.size > 1 and rng.random() < 0.3:
            return [rng.choice(unit.cards)]
        return list(unit.cards)
