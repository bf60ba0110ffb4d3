"""A position of a deal as a value, and its one-line text form (like chess's FEN).

A :class:`Position` holds what the rules need to judge the next action: the four hands
(a hand may be unknown, as in a seat's own view), the level and trump, the dealer, the
kitty if known, the trick in progress, the attackers' points and the winning bid. The
deal machine prints its position in its ``repr``, tests start from a position written
by hand, and a bug report carries one line that reproduces the situation
(docs/position.md)::

    >>> p = Position.parse("AS,AS,KS/QS,QS,3H/5S,6S,9D/7S,8S,TD 2H 0 ? 0:AS,AS 35 -")
    >>> str(p)
    'AS,AS,KS/QS,QS,3H/5S,6S,9D/7S,8S,TD 2H 0 ? 0:AS,AS 35 -'

Seven fields, separated by single spaces:

1. hands, seats 0 to 3 separated by ``/``: card codes separated by ``,``; ``-`` for an
   empty hand, ``?`` for one not known;
2. the level and trump: ``2S`` (trump spades at level 2), ``TNT`` (no trump at level
   10), ``2?`` (level 2, trump not declared yet);
3. the dealer: a seat, or ``-`` before the bidding decides it;
4. the kitty: cards, ``-`` if empty, ``?`` if not known;
5. the trick in progress: its leader, ``:``, then the plays so far in play order
   separated by ``;`` (``3:`` is seat 3 about to lead);
6. the attackers' card points from tricks so far;
7. the winning bid: ``seat:cards``, or ``-``.

The rule set is not part of the text (as a chess variant is not part of a FEN): pass it
to :meth:`Position.parse`. Hands and the kitty print in the deck's order, so two
positions holding the same cards print alike and compare equal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from arena.errors import InvalidCards, StateError
from arena.rules.bids import Bid
from arena.rules.cards import Card, Rank, Suit, check_counts
from arena.rules.ruleset import RuleSet
from arena.rules.seats import SEATS, Seat
from arena.rules.trump import CardOrder, Trump, card_order
from arena.rules.units import Unit, decompose

Hand = tuple[Card, ...]
UNKNOWN: Final = "?"
EMPTY: Final = "-"
_DEFAULT_RULES: Final = RuleSet()


@dataclasses.dataclass(frozen=True, slots=True, eq=False, init=False)
class Position:
    """What the rules need to judge the next action of a deal (see the module doc)."""

    hands: tuple[Hand | None, Hand | None, Hand | None, Hand | None]
    level: Rank
    trump: Trump | None = None  # None: not declared yet (bidding)
    dealer: int | None = None
    kitty: Hand | None = None  # None: not known
    leader: int = 0  # who leads the trick in progress
    plays: tuple[Hand, ...] = ()  # the trick in progress so far, the leader's first
    points: int = 0  # the attackers' card points from tricks so far
    bid: Bid | None = None  # the winning bid
    rules: RuleSet = _DEFAULT_RULES
    # the lead's units as they landed (a failed throw's forced unit): a cache the deal
    # machine fills; derived from the lead when absent
    landed_units: tuple[Unit, ...] | None = None
    # the card order, once asked for or handed over (:meth:`knowing`): a cache, which
    # dataclasses.replace does not copy
    known_order: CardOrder | None = dataclasses.field(default=None, init=False)

    def __init__(
        self,
        hands: tuple[Hand | None, Hand | None, Hand | None, Hand | None],
        level: Rank,
        trump: Trump | None = None,
        dealer: int | None = None,
        kitty: Hand | None = None,
        leader: int = 0,
        plays: tuple[Hand, ...] = (),
        points: int = 0,
        bid: Bid | None = None,
        rules: RuleSet = _DEFAULT_RULES,
        landed_units: tuple[Unit, ...] | None = None,
    ) -> None:
        # written out with the slots' own setters (a frozen class refuses setattr): the
        # machine makes a position per answer and each request's fallback one more, and
        # a frozen dataclass's own __init__ (object.__setattr__ per field) costs twice this
        put = _PUT
        put[0](self, hands)
        put[1](self, level)
        put[2](self, trump)
        put[3](self, dealer)
        put[4](self, kitty)
        put[5](self, leader)
        put[6](self, plays)
        put[7](self, points)
        put[8](self, bid)
        put[9](self, rules)
        put[10](self, landed_units)
        put[11](self, None)

    # -- derived ---------------------------------------------------------------------------

    @property
    def turn(self) -> Seat:
        """The seat to play next in the trick (the leader when nobody has played)."""
        return SEATS[(self.leader + len(self.plays)) & 3]

    @property
    def lead(self) -> Hand | None:
        """The trick's lead, or ``None`` when the next play leads."""
        return self.plays[0] if self.plays else None

    @property
    def order(self) -> CardOrder:
        """The card order of this deal (the trump must be declared)."""
        order = self.known_order
        if order is not None:
            return order
        if self.trump is None:
            raise StateError("no trump has been declared yet")
        order = card_order(self.trump, self.rules)
        object.__setattr__(self, "known_order", order)  # a cache: the value is unchanged
        return order

    @property
    def lead_units(self) -> tuple[Unit, ...]:
        """The units of the trick's lead (empty when the next play leads)."""
        if self.landed_units is not None or not self.plays:
            return self.landed_units or ()
        units = tuple(decompose(self.plays[0], self.order))
        object.__setattr__(self, "landed_units", units)  # a cache: the lead's own units
        return units

    def knowing(self, order: CardOrder | None) -> Position:
        """This position, told its card order (``card_order(self.trump, self.rules)``)
        by a caller that has it at hand: the order is then not looked up again."""
        if order is not None:
            object.__setattr__(self, "known_order", order)  # a cache: the value is unchanged
        return self

    def hand(self, seat: int) -> Hand:
        """``seat``'s hand, which must be known."""
        hand = self.hands[seat]
        if hand is None:
            raise StateError(f"seat {seat}'s hand is not known in this position")
        return hand

    # -- the text form -------------------------------------------------------------------

    def __str__(self) -> str:
        trump = f"{self.level.code}?" if self.trump is None else str(self.trump)
        trick = f"{self.leader}:" + ";".join(_cards(p) for p in self.plays)
        bid = EMPTY if self.bid is None else f"{self.bid.seat}:{_cards(self.bid.cards)}"
        return " ".join(
            (
                "/".join(_known(h) for h in self.hands),
                trump,
                EMPTY if self.dealer is None else str(self.dealer),
                _known(self.kitty),
                trick,
                str(self.points),
                bid,
            )
        )

    def __repr__(self) -> str:
        return f"Position.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return str(self) == str(other) and self.rules == other.rules

    def __hash__(self) -> int:
        return hash(str(self))

    @classmethod
    def holding(
        cls,
        seat: int,
        hand: Sequence[Card],
        level: Rank,
        *,
        bid: Bid | None = None,
        rules: RuleSet | None = None,
    ) -> Position:
        """A bidding position where only ``seat``'s hand is known (what a bid needs)."""
        hands: list[Hand | None] = [None, None, None, None]
        hands[seat] = tuple(hand)
        h0, h1, h2, h3 = hands
        return cls((h0, h1, h2, h3), level, bid=bid, rules=rules or _DEFAULT_RULES)

    @classmethod
    def parse(cls, text: str, rules: RuleSet | None = None) -> Position:
        """Read the text form (see the module doc).

        Raises:
            InvalidCards: naming the field that does not parse.
        """
        fields = text.split()
        if len(fields) != 7:
            raise InvalidCards(
                f"a position has 7 fields (hands trump dealer kitty trick points bid), "
                f"not {len(fields)}: {text!r}"
            )
        hands_f, trump_f, dealer_f, kitty_f, trick_f, points_f, bid_f = fields
        hands = hands_f.split("/")
        if len(hands) != 4:
            raise InvalidCards(f"hands: 4 hands separated by '/', not {len(hands)}")
        level, trump = _trump(trump_f)
        leader, sep, plays_f = trick_f.partition(":")
        if not sep:
            raise InvalidCards(f"trick: 'leader:plays' like '0:AS,AS;3S,4S', not {trick_f!r}")
        plays = tuple(_hand(p, "trick") for p in plays_f.split(";")) if plays_f else ()
        bid = None
        if bid_f != EMPTY:
            seat, sep, cards = bid_f.partition(":")
            if not sep or not cards:
                raise InvalidCards(f"bid: 'seat:cards' or '-', not {bid_f!r}")
            bid = Bid(_seat(seat, "bid"), _hand(cards, "bid"))
        try:
            points = int(points_f)
        except ValueError:
            raise InvalidCards(f"points: a whole number, not {points_f!r}") from None
        h0, h1, h2, h3 = (_maybe(h, "hands") for h in hands)
        kitty = _maybe(kitty_f, "kitty")
        rules = rules or _DEFAULT_RULES
        known = [c for part in (h0, h1, h2, h3, kitty, *plays) if part for c in part]
        try:
            check_counts(known, rules.decks)
        except InvalidCards as exc:
            raise InvalidCards(f"an impossible position: {exc}") from None
        return cls(
            hands=(h0, h1, h2, h3),
            level=level,
            trump=trump,
            dealer=None if dealer_f == EMPTY else _seat(dealer_f, "dealer"),
            kitty=kitty,
            leader=_seat(leader, "trick leader"),
            plays=plays,
            points=points,
            bid=bid,
            rules=rules,
        )


# The slots' setters in the order __init__ calls them, by name: a field renamed or
# removed fails here, at import, rather than setting the wrong slot.
_PUT: Final = tuple(
    Position.__dict__[name].__set__
    for name in (
        "hands", "level", "trump", "dealer", "kitty", "leader",
        "plays", "points", "bid", "rules", "landed_units", "known_order",
    )
)  # fmt: skip


def position_of(
    hands: Sequence[Sequence[Card] | None],
    trump: Trump,
    *,
    dealer: int | None = 0,
    leader: int = 0,
    plays: Sequence[Sequence[Card]] = (),
    rules: RuleSet | None = None,
) -> Position:
    """A playing position built from parts (what the judge's questions carry)."""
    h0, h1, h2, h3 = (None if h is None else tuple(h) for h in hands)
    return Position(
        (h0, h1, h2, h3),
        trump.level,
        trump,
        dealer,
        leader=leader,
        plays=tuple(tuple(p) for p in plays),
        rules=rules or _DEFAULT_RULES,
    )


def _cards(cards: Sequence[Card]) -> str:
    return ",".join(c.code for c in sorted(cards, key=_by_index)) if cards else EMPTY


def _known(cards: Sequence[Card] | None) -> str:
    return UNKNOWN if cards is None else _cards(cards)


def _by_index(card: Card) -> int:
    return card.index


def _hand(text: str, field: str) -> Hand:
    if text == EMPTY:
        return ()
    try:
        return tuple(Card.parse(code) for code in text.split(","))
    except InvalidCards as exc:
        raise InvalidCards(f"{field}: {exc}") from None


def _maybe(text: str, field: str) -> Hand | None:
    return None if text == UNKNOWN else _hand(text, field)


def _seat(text: str, field: str) -> int:
    try:
        return Seat(int(text)) if text.isdigit() else Seat(-1)
    except ValueError:
        raise InvalidCards(f"{field}: a seat 0-3, not {text!r}") from None


def _trump(text: str) -> tuple[Rank, Trump | None]:
    try:
        if text.endswith("?"):
            return Rank.parse(text[:-1]), None
        if text.upper().endswith("NT"):
            level = Rank.parse(text[:-2])
            return level, Trump(level, None)
        level = Rank.parse(text[:-1])
        return level, Trump(level, Suit.parse(text[-1:]))
    except InvalidCards as exc:
        raise InvalidCards(f"trump: {exc} (like 2S, TNT, or 2? before it is declared)") from None


__all__ = ["Position", "position_of"]
