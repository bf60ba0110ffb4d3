"""Reading a check-bot match back from its record: what the bot was asked, and when.

:func:`read_positions` walks the record's lines in order (an answer line comes before
the events it caused), keeping every hand, the trump and the trick in progress, and
describes each decision of the bot's seat: a :class:`Position` with its hand, the trick
so far and the situations it was in.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from arena.batch.checkbot.scenarios import (
    AFTER_FAILED,
    BID,
    BURY,
    FOLLOW_THROW,
    LAST,
    OWN_FAILED,
    TRACTOR_HELD,
    TRACTOR_PAIRS,
    VOID,
)
from arena.game import (
    CardDealt,
    CardsPlayed,
    DealEnded,
    DealStarted,
    Kind,
    KittyBuried,
    KittyTaken,
    ThrowFailed,
    TrickWon,
    TrumpDeclared,
)
from arena.records import AnswerLine, EventLine, read_record
from arena.rules import Card, CardOrder, RuleSet, card_order, decompose, format_cards

# -- reading positions back from the record ------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Position:
    """What the bot was asked, as the record shows it."""

    deal: int
    attempt: int
    kind: Kind
    trick: int | None  # plays only
    hand: tuple[Card, ...]
    plays: tuple[tuple[int, tuple[Card, ...]], ...]  # the trick so far
    trump: str  # e.g. "2S", "2NT", "" before it is declared
    dealer: int | None
    situations: tuple[str, ...]
    what: str  # a one-line description

    def to_dict(self) -> dict[str, Any]:
        return {
            "deal": self.deal,
            "attempt": self.attempt,
            "kind": self.kind.value,
            "trick": self.trick,
            "hand": format_cards(self.hand),
            "trick_so_far": [{"seat": s, "cards": format_cards(c)} for s, c in self.plays],
            "trump": self.trump,
            "dealer": self.dealer,
            "situations": list(self.situations),
            "what": self.what,
        }


class _Walker:
    """Follows a record line by line: hands, trump, the trick in progress."""

    def __init__(self, rules: RuleSet, seat: int, last_tricks: Mapping[tuple[int, int], int]):
        self.rules = rules
        self.seat = seat
        self.last_tricks = last_tricks
        self.deal = self.attempt = 0
        self.hands: list[list[Card]] = [[], [], [], []]
        self.level: Any = None
        self.order: CardOrder | None = None
        self.trump = ""
        self.dealer: int | None = None
        self.trick = 1
        self.plays: list[tuple[int, tuple[Card, ...]]] = []
        self.throw: ThrowFailed | None = None  # this trick's lead was a failed throw
        self.last_throw: ThrowFailed | None = None  # the previous trick's was
        self.returned: list[list[Card]] = [[], [], [], []]  # failed-throw cards still held

    def event(self, event: Any) -> None:
        if isinstance(event, DealStarted):
            self.deal, self.attempt, self.level = event.deal, event.attempt, event.level
            self.hands = [[], [], [], []]
            self.returned = [[], [], [], []]
            self.order, self.trump, self.dealer = None, "", event.dealer
            self.trick, self.plays, self.throw, self.last_throw = 1, [], None, None
        elif isinstance(event, CardDealt):
            self.hands[event.seat].append(event.card)
        elif isinstance(event, TrumpDeclared):
            self.order = card_order(event.trump, self.rules)
            self.trump = str(event.trump)
            self.dealer = event.dealer
        elif isinstance(event, KittyTaken):
            self.hands[event.seat].extend(event.cards)
        elif isinstance(event, KittyBuried):
            _remove(self.hands[event.seat], event.cards)
        elif isinstance(event, ThrowFailed):
            self.throw = event
            union = Counter(self.returned[event.seat]) | Counter(event.returned)
            self.returned[event.seat] = list(union.elements())
        elif isinstance(event, CardsPlayed):
            _remove(self.hands[event.seat], event.cards)
            _remove(self.returned[event.seat], event.cards, strict=False)
            self.trick = event.trick
            self.plays.append((event.seat, event.cards))
        elif isinstance(event, TrickWon):
            self.trick = event.trick + 1
            self.plays, self.last_throw, self.throw = [], self.throw, None

    def position(self, answer: AnswerLine) -> Position:
        hand = list(self.hands[answer.seat])
        order = self.order
        shown = order.sort(hand) if order else sorted(hand, key=lambda c: c.index)
        situations = self._situations(answer, hand)
        return Position(
            self.deal,
            self.attempt,
            answer.kind,
            self.trick if answer.kind is Kind.PLAY else None,
            tuple(shown),
            tuple(self.plays),
            self.trump,
            self.dealer,
            tuple(situations),
            self._what(answer, hand, situations),
        )

    def _situations(self, answer: AnswerLine, hand: list[Card]) -> list[str]:
        if answer.kind is Kind.BID:
            return [BID]
        if answer.kind is Kind.BURY:
            return [BURY] if len(hand) > self.rules.hand_size else []
        out: list[str] = []
        order = self.order
        if order is None:
            return out
        if self.returned[answer.seat]:
            out.append(OWN_FAILED)
        if not self.plays:
            if self.last_throw is not None:
                out.append(AFTER_FAILED)
        else:
            lead = list(self.plays[0][1])
            lane = order.lane_of(lead[0])
            held = [c for c in hand if order.lane_of(c) == lane]
            units = decompose(lead, order)
            if not held:
                out.append(VOID)
            if any(u.length > 1 for u in units) and held:
                mine = decompose(held, order)
                if any(u.length > 1 for u in mine):
                    out.append(TRACTOR_HELD)
                elif any(u.width > 1 for u in mine):
                    out.append(TRACTOR_PAIRS)
            if len(units) > 1:
                out.append(FOLLOW_THROW)
        if self.last_tricks.get((self.deal, self.attempt)) == self.trick:
            out.append(LAST)
        return out

    def _what(self, answer: AnswerLine, hand: list[Card], situations: list[str]) -> str:
        if answer.kind is Kind.BID:
            if len(hand) == self.rules.hand_size:
                return "a closing bid window (all cards dealt)"
            return f"a bid window after dealing round {len(hand)}"
        if answer.kind is Kind.BURY:
            return f"burying {len(answer.played)} of {len(hand)} cards as dealer"
        last = ", the last trick" if LAST in situations else ""
        if not self.plays:
            after = ""
            if self.last_throw is not None:
                who = (
                    "its own"
                    if self.last_throw.seat == answer.seat
                    else (f"seat {self.last_throw.seat}'s")
                )
                after = f" after {who} failed throw"
            return f"leading trick {self.trick}{after}{last}"
        leader, lead = self.plays[0]
        assert self.order is not None
        units = decompose(list(lead), self.order)
        shape = units[0].describe(self.order) if len(units) == 1 else "a throw"
        void = " (void in the led suit)" if VOID in situations else ""
        failed = " (what landed of a failed throw)" if self.throw is not None else ""
        return (
            f"following {shape} {format_cards(lead)}{failed} led by seat {leader} "
            f"in trick {self.trick}{void}{last}"
        )


def _remove(hand: list[Card], played: Sequence[Card], strict: bool = True) -> None:
    for card in played:
        if card in hand:
            hand.remove(card)
        elif strict:
            raise ValueError(f"{card} is not in the hand")


def read_positions(path: str | os.PathLike[str], seat: int) -> dict[int, Position]:
    """Every decision ``seat`` answered in the record, by sequence number."""
    record = read_record(path)
    rules = record.header.setup.rules if record.header is not None else RuleSet()
    last: dict[tuple[int, int], int] = {}
    key = (0, 0)
    trick = 0
    for event in record.events():
        if isinstance(event, DealStarted):
            key = (event.deal, event.attempt)
        elif isinstance(event, TrickWon):
            trick = event.trick
        elif isinstance(event, DealEnded):
            last[key] = trick
    walker = _Walker(rules, seat, last)
    out: dict[int, Position] = {}
    for item in record.items():
        if isinstance(item, EventLine):
            walker.event(item.event)
        elif isinstance(item, AnswerLine) and item.seat == seat:
            out[item.seq] = walker.position(item)
    return out


__all__ = ["Position", "read_positions"]
