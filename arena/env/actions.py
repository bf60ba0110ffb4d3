"""The action interface: every decision as a sequence of single-card choices.

A Tractor answer is a multiset of cards (a bid, eight buried cards, a lead or throw, a
follow), far too many to number once and for all. So the environment asks for one card
at a time: an action is a card face (``Card.index``, 0–53) or :data:`STOP` (54), and a
decision takes as many steps as its answer has cards (plus a ``STOP`` where the answer's
length is free). :class:`Choice` says, for the cards chosen so far, which next actions
can still end in a legal answer — so the action mask is exact, never a guess:

- **bid**: the faces of the legal bids (one level card, two level cards, a joker pair…);
  ``STOP`` with nothing chosen passes, and after a card it ends a bid that is legal as it
  stands. Built from the machine's own list of legal bids (``Decision.options``).
- **bury**: any card still in hand, until ``Decision.count`` are chosen.
- **lead**: any card; after the first, any card of the same effective suit (a throw), or
  ``STOP``. Every one-suit set of cards is a legal lead (RULES.md §7): a throw that other
  hands beat fails, is played as its forced unit and costs the penalty — a legal move.
- **follow**: exactly as many cards as were led, each one that still leaves a legal
  follow reachable. Cases the rules settle at a glance are answered directly; otherwise
  every candidate follow that could meet the lead's shape is generated and judged with
  :func:`arena.rules.check_follow`, the referee's own check.

An answer ends by itself when no further card is possible and what is chosen is legal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Final

from arena.game import Action, Decision, Kind
from arena.rules import (
    CARDS,
    Card,
    CardOrder,
    FollowRule,
    check_follow,
    decompose,
    legal_follow,
)

STOP: Final = 54
"""End the answer here (pass, with nothing chosen in a bid)."""
ACTION_SIZE: Final = 55
"""Actions 0–53 choose the card face with that ``Card.index``; 54 is :data:`STOP`."""

KINDS: Final = ("bid", "bury", "lead", "follow")
"""The decision kinds as ``info["decision"]`` names them (a play is a lead or a follow)."""


def kind_name(decision: Decision) -> str:
    if decision.kind is Kind.PLAY:
        return "follow" if decision.lead else "lead"
    return str(decision.kind.value)


class Choice:
    """One decision being answered card by card.

    ``hand`` is the seat's hand; ``order`` the deal's card order (``None`` while bidding).
    """

    __slots__ = (
        "_allowed",
        "_follows",
        "_rule",
        "chosen",
        "decision",
        "hand",
        "kind",
        "left",
        "order",
    )

    def __init__(self, decision: Decision, hand: Sequence[Card], order: CardOrder | None) -> None:
        self.decision = decision
        self.kind = kind_name(decision)
        self.hand = tuple(hand)
        self.order = order
        self.chosen: list[Card] = []
        self.left: Counter[Card] = Counter(hand)  # the hand less the cards chosen
        self._follows: list[Counter[Card]] | None = None
        self._rule = _RULES[self.kind]
        self._allowed: tuple[list[int], bool] | None = None

    # -- the public verbs ----------------------------------------------------------------

    def allowed(self) -> tuple[list[int], bool]:
        """The card faces that may come next, and whether ``STOP`` may."""
        if self._allowed is None:
            self._allowed = self._rule(self)
        return self._allowed

    def mask(self) -> list[int]:
        """The action mask: 1 for each of the :data:`ACTION_SIZE` actions allowed now."""
        faces, stop = self.allowed()
        out = [0] * ACTION_SIZE
        for face in faces:
            out[face] = 1
        out[STOP] = int(stop)
        return out

    def allowed_actions(self) -> list[int]:
        """The allowed actions as a list (the mask's ones)."""
        faces, stop = self.allowed()
        return [*faces, STOP] if stop else list(faces)

    def take(self, action: int) -> Action | None:
        """Apply one action; returns the whole answer once it is complete, else ``None``.

        Raises:
            ValueError: the action is masked out (the caller's bug: the mask said no).
        """
        faces, stop = self.allowed()
        if action == STOP:
            if not stop:
                raise ValueError(f"STOP is not allowed now in this {self.kind}")
            return tuple(self.chosen)
        if action not in faces:
            raise ValueError(f"action {action} is masked out in this {self.kind}")
        card = CARDS[action]
        self.chosen.append(card)
        self.left[card] -= 1
        self._allowed = None
        faces, stop = self.allowed()
        if not faces:
            if not stop:  # pragma: no cover - a dead end the masks never lead to
                raise ValueError(f"no legal way on from {self.chosen}")
            return tuple(self.chosen)
        return None

    # -- per kind ------------------------------------------------------------------------

    def _in_hand(self) -> list[int]:
        return [card.index for card, n in self.left.items() if n > 0]

    def _allowed_bid(self) -> tuple[list[int], bool]:
        chosen = tuple(self.chosen)
        n = len(chosen)
        faces = {o[n].index for o in self.decision.options if len(o) > n and o[:n] == chosen}
        return sorted(faces), n == 0 or chosen in self.decision.options

    def _allowed_bury(self) -> tuple[list[int], bool]:
        if len(self.chosen) >= self.decision.count:
            return [], True
        return self._in_hand(), False

    def _allowed_lead(self) -> tuple[list[int], bool]:
        if not self.chosen:
            return self._in_hand(), False
        lane = self._order().lane
        led = lane[self.chosen[0].index]
        return [i for i in self._in_hand() if lane[i] == led], True

    def _allowed_follow(self) -> tuple[list[int], bool]:
        lead = self.decision.lead
        n = len(lead)
        if len(self.chosen) >= n:
            return [], True
        order = self._order()
        lane = order.lane
        led = lane[lead[0].index]
        left = self._in_hand()
        if n == 1:  # the common case: a card of the led suit if there is one, else any
            return [i for i in left if lane[i] == led] or left, False
        suited = sum(1 for c in self.hand if lane[c.index] == led)
        if suited <= n:  # all the led suit, then anything
            others = sum(1 for c in self.chosen if lane[c.index] != led)
            if others < n - suited:
                return left, False
            return [i for i in left if lane[i] == led], False
        if order.rules.follow is FollowRule.SUIT_ONLY:
            return [i for i in left if lane[i] == led], False
        if self._follows is None:
            self._follows = follows(lead, self.hand, order)
        chosen = Counter(self.chosen)
        faces = {
            card.index
            for play in self._follows
            if all(play[c] >= k for c, k in chosen.items())
            for card, k in play.items()
            if k > chosen[card]
        }
        return sorted(faces), False

    def _order(self) -> CardOrder:
        if self.order is None:  # pragma: no cover - plays come after trump is declared
            raise ValueError("no card order before trump is declared")
        return self.order


_RULES: Final = {
    "bid": Choice._allowed_bid,
    "bury": Choice._allowed_bury,
    "lead": Choice._allowed_lead,
    "follow": Choice._allowed_follow,
}


def follows(lead: Action, hand: Sequence[Card], order: CardOrder) -> list[Counter[Card]]:
    """Every legal follow to ``lead`` from ``hand`` when the hand holds more of the led
    suit than was led (as multisets), judged one by one by :func:`check_follow`.

    Only candidates that hold at least as many groups (pairs, triples) as a legal follow
    must are generated: a follow with fewer cannot meet the lead's shape (RULES.md §7).
    """
    units = decompose(lead, order)
    if all(u.width == 1 for u in units):
        need2 = need3 = 0
    else:  # a legal follow holds as many groups as this one, which check_follow accepts
        known = Counter(legal_follow(lead, hand, order, lead_units=units))
        slots3 = sum(u.length for u in units if u.width == 3)
        slots2 = sum(u.length for u in units if u.width == 2)
        need3 = min(sum(1 for k in known.values() if k >= 3), slots3)
        need2 = need3 + min(
            sum(1 for k in known.values() if k >= 2) - need3, slots2 + slots3 - need3
        )
    lane = order.lane
    led = lane[lead[0].index]
    faces = sorted(Counter(c for c in hand if lane[c.index] == led).items(), key=lambda fk: -fk[1])
    n = len(lead)
    out: list[Counter[Card]] = []
    picked: list[tuple[Card, int]] = []

    def walk(i: int, budget: int, twos: int, threes: int) -> None:
        if budget == 0:
            if twos >= need2 and threes >= need3:
                play = [c for c, k in picked for _ in range(k)]
                if check_follow(lead, hand, play, order, units):
                    out.append(Counter(dict(picked)))
            return
        rest = faces[i:]
        if sum(k for _, k in rest) < budget:
            return
        if twos + min(sum(1 for _, k in rest if k >= 2), budget // 2) < need2:
            return
        if threes + min(sum(1 for _, k in rest if k >= 3), budget // 3) < need3:
            return
        card, have = faces[i]
        for k in range(min(have, budget), -1, -1):
            if k:
                picked.append((card, k))
            walk(i + 1, budget - k, twos + (k >= 2), threes + (k >= 3))
            if k:
                picked.pop()

    walk(0, n, 0, 0)
    return out


__all__ = ["ACTION_SIZE", "KINDS", "STOP", "Choice", "follows", "kind_name"]
