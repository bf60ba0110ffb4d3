"""``arena check-bot``: the CI harness for one bot, over real gRPC.

The bot under test is run as a subprocess (``ARENA_SERVER``/``ARENA_TOKEN``, as in
``arena match``) against in-process opponents, in a list of :class:`Scenario`\\ s:

- *stacked* positions (deal 1 dealt from a stacked deck, see
  :mod:`arena.game.stacking`) built so the bot must answer bid windows, bury from 33
  cards, be void and trump, follow tractors and throws, lead after a failed throw and
  play the last trick; the opponents are the built-in ``greedy`` bot, scripted where a
  position needs a particular bid or lead (:class:`ScriptedBot`);
- *random* matches (shuffled deals) against ``greedy`` or ``random`` opponents, with
  the bot in seat 0 or seat 1.

Every fault the referee charges to the bot (timeout, illegal action, malformed message,
unknown sequence number, disconnection or crash) is reported with its position, which
is read back from the match record: the deal and trick, what the bot was asked, its
hand, the trick so far, what it sent and what was played instead. The situations each
scenario aims at are checked against the record too (``reached``/``missed``): the bot's
own choices decide some of them (it must win the bid to bury, it must throw to see its
own throw fail). :func:`check_bot` plays the scenarios; :func:`render`,
:func:`junit_xml` and :meth:`CheckReport.to_dict` present the outcome.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import multiprocessing
import os
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import trio

from arena.bots import GreedyBot, make_bot
from arena.game import (
    Action,
    CardDealt,
    CardsPlayed,
    DealEnded,
    DealStarted,
    Kind,
    KittyBuried,
    KittyTaken,
    Request,
    ThrowFailed,
    TrickWon,
    TrumpDeclared,
    order_for,
)
from arena.game.stacking import cards, seed_for_first_seat, stack
from arena.records import AnswerLine, EventLine, read_record
from arena.referee import FaultPolicy, TimeControl
from arena.rules import (
    Card,
    CardOrder,
    RuleSet,
    Suit,
    Trump,
    card_order,
    decompose,
    format_cards,
)
from arena.rules.legal import fallback_bury

# -- the situations a scenario sets up ----------------------------------------------------

BID = "bid window"
BURY = "bury 8 of 33 cards"
VOID = "void in the led suit"
TRACTOR_HELD = "follow a tractor holding a tractor"
TRACTOR_PAIRS = "follow a tractor holding only pairs"
FOLLOW_THROW = "follow a throw"
AFTER_FAILED = "lead after a failed throw"
OWN_FAILED = "play after its own failed throw (returned cards in hand)"
LAST = "the last trick"

FAULT_LABELS = {
    "timeout": "timeout",
    "illegal_action": "illegal action",
    "malformed": "protocol error (malformed message)",
    "unknown_sequence": "protocol error (unknown sequence number)",
    "disconnected": "crash or disconnection",
}


# -- scripted opponents -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a scripted opponent does beyond playing ``greedy``: the bids it makes (each
    the first time it is offered; it never bids otherwise) and its next leads, in order
    (each played when its turn to lead comes and it holds the cards)."""

    bids: tuple[str, ...] = ()
    leads: tuple[str, ...] = ()


class ScriptedBot:
    """An in-process opponent: ``greedy``, except for the bids and leads of its plan.

    Its planned lead cards are never buried, so a dealer still holds them to lead.
    """

    name = "greedy"

    def __init__(self, plan: Plan, seed: int = 0) -> None:
        self.inner = GreedyBot(seed)
        self.bids = [tuple(cards(b)) for b in plan.bids]
        self.leads = [tuple(cards(c)) for c in plan.leads]

    def decide(self, request: Request) -> Action:
        decision = request.decision
        hand = list(request.view.hand)
        if decision.kind is Kind.BID:
            for i, bid in enumerate(self.bids):
                if bid in decision.options:
                    del self.bids[: i + 1]
                    return bid
            return ()
        if decision.kind is Kind.BURY:
            keep = Counter(c for lead in self.leads for c in lead)
            free = list(hand)
            for card, n in keep.items():
                for _ in range(min(n, free.count(card))):
                    free.remove(card)
            if len(free) >= decision.count:
                return tuple(fallback_bury(free, decision.count, order_for(request)))
        elif not decision.lead and self.leads:
            lead = self.leads.pop(0)
            if not Counter(lead) - Counter(hand):
                return lead
        return self.inner.decide(request)


# -- scenarios ----------------------------------------------------------------------------

FIRST = 0  # stacked deals are dealt first to seat 0
SPECIALS = "2H 2H 2C 2C 2D 2D SJ BJ"  # a kitty of the level cards and jokers nobody holds


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One match the bot plays: a stacked position or a random deal sequence."""

    name: str
    description: str
    seat: int  # the bot's seat
    seed: int
    deals: int
    kind: str = "stacked"  # or "random"
    opponents: str = "greedy"  # the built-in bot the other three seats are
    deck: tuple[Card, ...] = ()  # deal 1, in dealing order (stacked only)
    plans: Mapping[int, Plan] = dataclasses.field(default_factory=dict)  # by seat
    targets: tuple[str, ...] = ()

    def opponent(self, seat: int) -> Any:
        if self.kind == "stacked":
            return ScriptedBot(self.plans.get(seat, Plan()), self.seed * 4 + seat)
        return make_bot(self.opponents, self.seed * 4 + seat)


def _stacked(
    name: str,
    description: str,
    bot: int,
    hands: Mapping[str, str],
    *,
    kitty: str = SPECIALS,
    avoid: Mapping[str, Callable[[Card], bool]] | None = None,
    plans: Mapping[str, Plan] | None = None,
    targets: Sequence[str] = (),
) -> Scenario:
    """A stacked scenario written in seats relative to the bot: ``B`` the bot, ``L`` the
    opponent after it (who plays first when leading to it), ``P`` its partner, ``R`` the
    opponent before it."""
    seats = {"B": bot, "L": (bot + 1) % 4, "P": (bot + 2) % 4, "R": (bot + 3) % 4}
    given = [""] * 4
    for who, text in hands.items():
        given[seats[who]] = text
    keep_out = {seats[w]: f for w, f in (avoid or {}).items()}
    deck = stack(given, kitty, FIRST, avoid=keep_out)
    return Scenario(
        name,
        description,
        bot,
        seed_for_first_seat(FIRST),
        1,
        deck=tuple(deck),
        plans={seats[w]: p for w, p in (plans or {}).items()},
        targets=tuple(targets),
    )


def _suits(*suits: Suit) -> Callable[[Card], bool]:
    def test(card: Card) -> bool:
        return card.suit in suits

    return test


L_BIDS_SPADES = Plan(bids=("2S", "2S 2S"))


def stacked_scenarios() -> list[Scenario]:
    """The named positions (level 2, one deal each)."""
    return [
        _stacked(
            "bid-windows",
            "Level cards early: a 2H in round 1, the second 2H in round 3 (a pair to "
            "reinforce or bid), a pair of small jokers by round 6 (no trump); the next "
            "opponent bids 2S and then 2S 2S. Several bid windows, some shared.",
            0,
            {"B": "2H 3S 2H SJ 4C SJ", "L": "3H 2S 4H 2S"},
            kitty="2C 2C 2D 2D BJ BJ",
            plans={"L": L_BIDS_SPADES},
            targets=(BID,),
        ),
        _stacked(
            "dealer-bury",
            "Only the bot can bid (2S in rounds 1 and 2): if it bids it is dealer, takes "
            "a kitty of six level cards and both jokers, buries 8 of 33 and leads trick 1.",
            1,
            {"B": "2S 2S SJ BJ"},
            targets=(BID, BURY),
        ),
        _stacked(
            "own-failed-throw",
            "As dealer-bury, and the bot's hand tempts a throw that fails: AH KH (the "
            "next opponent holds the other AH) and AC AC KC QC (it holds a KC); the "
            "returned cards stay in the bot's hand.",
            0,
            {"B": "2S 2S SJ BJ AH KH AC AC KC QC", "L": "AH KC"},
            targets=(BID, BURY, OWN_FAILED),
        ),
        _stacked(
            "void-and-trump",
            "The next opponent is dealer (trump spades) and leads AH AH, then AD; the "
            "bot holds no hearts and no diamonds, and trumps (AS KS KS …).",
            1,
            {"L": "2S 2S SJ BJ AH AH AD", "B": "AS KS KS 9S 7S 5S"},
            avoid={"B": _suits(Suit.HEARTS, Suit.DIAMONDS)},
            plans={"L": dataclasses.replace(L_BIDS_SPADES, leads=("AH AH", "AD"))},
            targets=(VOID,),
        ),
        _stacked(
            "follow-tractor",
            "The next opponent (dealer) leads AH AH KH KH while the bot holds the "
            "tractor 9H 9H TH TH, then AC AC KC KC while it holds only the pairs "
            "7C 7C and 4C 4C.",
            0,
            {
                "L": "2S 2S SJ BJ AH AH KH KH AC AC KC KC",
                "B": "9H 9H TH TH 7H 7C 7C 4C 4C",
                "P": "QH QH JH JH QC QC JC JC",
                "R": "8H 8H 6H 6H TC TC 9C 9C",
            },
            avoid={"B": _suits(Suit.HEARTS, Suit.CLUBS)},
            plans={"L": dataclasses.replace(L_BIDS_SPADES, leads=("AH AH KH KH", "AC AC KC KC"))},
            targets=(TRACTOR_HELD, TRACTOR_PAIRS),
        ),
        _stacked(
            "follow-throw",
            "The next opponent (dealer) throws AD AD KD KD QD (a tractor and a single; "
            "the bot holds 9D 9D 8D 8D 5D 3D), then AC AC KC (a pair and a single; the "
            "bot holds 7C 7C 6C 4C).",
            1,
            {
                "L": "2S 2S SJ BJ AD AD KD KD QD AC AC KC",
                "B": "9D 9D 8D 8D 5D 3D 7C 7C 6C 4C",
                "P": "JD JD TD QC",
                "R": "7D 7D 6D JC",
            },
            avoid={"B": _suits(Suit.DIAMONDS, Suit.CLUBS)},
            plans={"L": dataclasses.replace(L_BIDS_SPADES, leads=("AD AD KD KD QD", "AC AC KC"))},
            targets=(FOLLOW_THROW,),
        ),
        _stacked(
            "failed-throw",
            "The next opponent (dealer) throws QC JC 9C; the bot's AC AC KC KC block it, "
            "so only 9C is played and QC JC go back to its hand, shown. Any club the bot "
            "plays wins the trick, so the bot leads trick 2 after the failed throw.",
            0,
            {"L": "2S 2S SJ BJ QC JC 9C", "B": "AC AC KC KC", "P": "TC 8C", "R": "7C 6C"},
            avoid={"B": _suits(Suit.CLUBS)},
            plans={"L": dataclasses.replace(L_BIDS_SPADES, leads=("QC JC 9C",))},
            targets=(AFTER_FAILED,),
        ),
        _stacked(
            "last-trick",
            "The bot is an attacker strong in trumps (AS AS KS KS QS QS, SJ, BJ) against "
            "a spade contract: the deal is played out to its last trick, where the kitty "
            "bonus is decided.",
            1,
            {"L": "2S 2S", "B": "AS AS KS KS QS QS SJ BJ"},
            plans={"L": L_BIDS_SPADES},
            targets=(LAST,),
        ),
    ]


def random_scenarios(matches: int, seed: int, deals: int) -> list[Scenario]:
    """``matches`` shuffled matches: the bot in seat 0, 1, 0, 1, …; the opponents
    ``greedy`` for two, ``random`` for the next two, and so on."""
    out = []
    for i in range(matches):
        seat = i % 2
        opponents = "greedy" if (i // 2) % 2 == 0 else "random"
        out.append(
            Scenario(
                f"random-{i + 1}",
                f"A shuffled match (seed {seed + i}, {deals} deal{'s' if deals != 1 else ''}) "
                f"in seat {seat} against built-in {opponents} bots.",
                seat,
                seed + i,
                deals,
                kind="random",
                opponents=opponents,
                targets=(LAST,),
            )
        )
    return out


# -- reading positions back from the record ------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Position:
    """What the bot was asked, as the record shows it."""

    deal: int
    attempt: int
    kind: str  # bid, bury, play
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
            "kind": self.kind,
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
            suit = Suit(event.suit) if event.suit else None
            self.order = card_order(Trump(event.level, suit), self.rules)
            self.trump = f"{event.level.code}{event.suit or 'NT'}"
            self.dealer = event.dealer
        elif isinstance(event, KittyTaken):
            self.hands[event.seat].extend(event.cards)
        elif isinstance(event, KittyBuried):
            _remove(self.hands[event.seat], event.cards)
        elif isinstance(event, ThrowFailed):
            self.throw = event
            self.returned[event.seat].extend(event.returned)
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
            answer.kind.value,
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
            return [BURY] if len(hand) == 4 * 8 + 1 else []
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


def _s(n: int) -> str:
    return "" if n == 1 else "s"


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


# -- results ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FaultReport:
    """One fault charged to the bot, with its position."""

    kind: str
    reason: str
    deal: int
    trick: int
    seq: int
    sent: tuple[Card, ...] | None
    played: tuple[Card, ...]
    latency_ms: float
    position: Position | None

    @property
    def headline(self) -> str:
        where = self.position.what if self.position else f"deal {self.deal}, trick {self.trick}"
        deal = (
            f"deal {self.deal}"
            if self.position is None
            else (
                f"deal {self.position.deal}"
                + (f" (redeal {self.position.attempt})" if self.position.attempt else "")
            )
        )
        return f"{self.kind} in {deal}, {where} (seq {self.seq}): {self.reason}"

    def details(self, seat: int) -> list[str]:
        pos = self.position
        lines = [f"fault:   {FAULT_LABELS.get(self.kind, self.kind)} — {self.reason}"]
        if pos is not None:
            deal = f"deal {pos.deal}" + (f" (redeal {pos.attempt})" if pos.attempt else "")
            lines.append(f"where:   {deal}: {pos.what}; seat {seat}, seq {self.seq}")
            trump = pos.trump or "not declared yet"
            dealer = "not decided" if pos.dealer is None else f"seat {pos.dealer}"
            lines.append(f"trump:   {trump}; dealer {dealer}")
            n = len(pos.hand)
            lines.append(f"hand:    {format_cards(pos.hand) or '(empty)'} ({n} card{_s(n)})")
            if pos.kind == "play":
                so_far = "; ".join(f"seat {s}: {format_cards(c)}" for s, c in pos.plays)
                lines.append(f"trick:   {so_far or '(the bot leads)'}")
        else:
            lines.append(
                f"where:   deal {self.deal}, trick {self.trick}; seat {seat}, seq {self.seq}"
            )
        sent = "nothing usable" if self.sent is None else (format_cards(self.sent) or "(pass)")
        played = format_cards(self.played) or "(pass)"
        lines.append(f"sent:    {sent}; played instead: {played}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "reason": self.reason,
            "deal": self.deal,
            "trick": self.trick,
            "seq": self.seq,
            "sent": None if self.sent is None else format_cards(self.sent),
            "played": format_cards(self.played),
            "latency_ms": self.latency_ms,
            "position": self.position.to_dict() if self.position else None,
        }


@dataclasses.dataclass
class ScenarioResult:
    scenario: Scenario
    state: str = "not run"  # the match's final state: finished, cancelled, failed
    match_id: str = ""
    faults: list[FaultReport] = dataclasses.field(default_factory=list)
    uncharged: int = 0  # decisions played by fallback while the bot stayed away
    other_faults: list[str] = dataclasses.field(default_factory=list)  # not the bot's
    latencies: list[float] = dataclasses.field(default_factory=list)  # seconds
    decisions: int = 0  # the bot's
    reached: list[str] = dataclasses.field(default_factory=list)
    connected: bool = True
    result: str = ""
    record: str = ""
    log: str = ""
    log_tail: list[str] = dataclasses.field(default_factory=list)
    error: str = ""
    seconds: float = 0.0

    @property
    def status(self) -> str:
        """``pass``, ``fail`` (the bot faulted), ``error`` (the match did not complete)
        or ``skipped``. A built-in opponent's fault is only a warning: it says the
        machine is too busy for the time limit, not that the bot is wrong."""
        if self.faults:
            return "fail"
        if self.state == "skipped":
            return "skipped"
        if self.state != "finished" or self.error:
            return "error"
        return "pass"

    @property
    def missed(self) -> list[str]:
        return [t for t in self.scenario.targets if t not in self.reached]

    def to_dict(self) -> dict[str, Any]:
        s = self.scenario
        return {
            "name": s.name,
            "kind": s.kind,
            "description": s.description,
            "seat": s.seat,
            "seed": s.seed,
            "deals": s.deals,
            "opponents": s.opponents,
            "status": self.status,
            "state": self.state,
            "match_id": self.match_id,
            "result": self.result,
            "connected": self.connected,
            "faults": [f.to_dict() for f in self.faults],
            "uncharged_fallbacks": self.uncharged,
            "other_faults": self.other_faults,
            "decisions": self.decisions,
            "latency_ms": latency_summary(self.latencies),
            "targets": list(s.targets),
            "reached": list(self.reached),
            "missed": self.missed,
            "record": self.record,
            "log": self.log,
            "error": self.error,
            "seconds": round(self.seconds, 3),
        }


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..1) of values already sorted."""
    if not values:
        return 0.0
    return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]


def latency_summary(seconds: Sequence[float]) -> dict[str, float | int]:
    ms = sorted(x * 1000 for x in seconds)
    return {
        "n": len(ms),
        "p50": round(percentile(ms, 0.5), 3),
        "p99": round(percentile(ms, 0.99), 3),
        "max": round(ms[-1], 3) if ms else 0.0,
    }


@dataclasses.dataclass(frozen=True)
class CheckOptions:
    time_limit_ms: int = 1000
    time_bank_ms: int = 0
    grace_ms: int = 1000
    connect_timeout: float = 15.0
    max_faults: int = 5
    parallel: int = 2
    out: Path = Path("records/check-bot")
    fail_fast: bool = False

    def time_control(self) -> TimeControl:
        return TimeControl(self.time_limit_ms, self.time_bank_ms, self.grace_ms)

    def policy(self) -> FaultPolicy:
        return FaultPolicy.parse("lenient", 10, self.max_faults)


@dataclasses.dataclass
class CheckReport:
    command: str
    options: CheckOptions
    results: list[ScenarioResult]
    seconds: float

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.status == "pass" for r in self.results)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def latencies(self) -> list[float]:
        return [x for r in self.results for x in r.latencies]

    def fault_counts(self) -> dict[str, int]:
        return dict(Counter(f.kind for r in self.results for f in r.faults))

    def to_dict(self) -> dict[str, Any]:
        o = self.options
        return {
            "bot": self.command,
            "passed": self.passed,
            "exit_code": self.exit_code,
            "scenarios": [r.to_dict() for r in self.results],
            "faults": self.fault_counts(),
            "latency_ms": latency_summary(self.latencies()),
            "time_control": o.time_control().to_dict(),
            "max_faults": o.max_faults,
            "out": str(o.out),
            "seconds": round(self.seconds, 3),
        }


# -- playing ------------------------------------------------------------------------------


OnResult = Callable[["ScenarioResult"], None]


def check_bot(
    command: str,
    scenarios: Sequence[Scenario],
    options: CheckOptions,
    on_result: OnResult | None = None,
    initializer: Callable[[], None] | None = None,
) -> CheckReport:
    """Play every scenario, ``options.parallel`` at a time, each in its own worker
    process (so that one match's work never delays another's clock); never raises for a
    bot's misbehaviour: that is what the report is for. ``on_result`` is called (here)
    as each scenario finishes; ``initializer`` runs first in each worker."""
    started = time.perf_counter()
    todo = list(scenarios)
    results: dict[int, ScenarioResult] = {}

    def done(i: int, result: ScenarioResult) -> None:
        results[i] = result
        if on_result is not None:
            on_result(result)

    def stop() -> bool:
        return options.fail_fast and any(r.status != "pass" for r in results.values())

    if options.parallel <= 1 or len(todo) <= 1:
        for i, scenario in enumerate(todo):
            done(i, _skipped(scenario) if stop() else run_scenario(command, scenario, options))
    else:
        context = multiprocessing.get_context("spawn")  # no forked gRPC or trio state
        with concurrent.futures.ProcessPoolExecutor(
            options.parallel, mp_context=context, initializer=initializer
        ) as pool:
            futures = {
                pool.submit(run_scenario, command, scenario, options): i
                for i, scenario in enumerate(todo)
            }
            for future in concurrent.futures.as_completed(futures):
                i = futures[future]
                if future.cancelled():
                    continue
                try:
                    result = future.result()
                except Exception as exc:  # the worker died (killed, out of memory)
                    result = ScenarioResult(todo[i], error=f"worker failed: {exc!r}")
                done(i, result)
                if stop():
                    for other in futures:
                        other.cancel()
        for i, scenario in enumerate(todo):
            if i not in results:
                done(i, _skipped(scenario))
    ordered = [results[i] for i in range(len(todo))]
    return CheckReport(command, options, ordered, time.perf_counter() - started)


def _skipped(scenario: Scenario) -> ScenarioResult:
    return ScenarioResult(scenario, state="skipped", error="skipped after a failure (--fail-fast)")


def run_scenario(command: str, scenario: Scenario, options: CheckOptions) -> ScenarioResult:
    """Play one scenario (blocking: its own trio run)."""
    result = ScenarioResult(scenario)
    try:
        trio.run(play_scenario, command, result, options)
    except Exception as exc:  # the harness itself failed: report it, play the others
        result.error = f"{type(exc).__name__}: {exc}"
    return result


async def play_scenario(command: str, result: ScenarioResult, options: CheckOptions) -> None:
    """Play one scenario into ``result``."""
    from arena.batch.runner import play_hosted
    from arena.server.host import MatchSpec

    scenario = result.scenario
    started = time.perf_counter()
    seat = scenario.seat
    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    record = out / f"{scenario.name}.jsonl"
    builtin = command.removeprefix("builtin:") if command.startswith("builtin:") else None
    local = {s: scenario.opponent(s) for s in range(4) if s != seat}
    if builtin is not None:
        local[seat] = make_bot(builtin, scenario.seed * 4 + seat)
    names = tuple(
        "bot under test" if s == seat else f"builtin:{scenario.opponents}" for s in range(4)
    )
    spec = MatchSpec(
        rules=RuleSet.from_mapping({"deals": scenario.deals}),
        seed=scenario.seed,
        time_control=options.time_control(),
        policy=options.policy(),
        seat_names=names,
        local=local,
        connect_timeout=options.connect_timeout,
        stacked={1: scenario.deck} if scenario.deck else {},
    )
    commands = [command if s == seat else names[s] for s in range(4)]
    try:
        hosted = await play_hosted(spec, commands, str(record), logs=out)
    except Exception as exc:  # the harness itself failed: report it, play the others
        result.error = f"{type(exc).__name__}: {exc}"
        result.seconds = time.perf_counter() - started
        return
    result.seconds = time.perf_counter() - started
    result.state = hosted.state.value
    result.match_id = hosted.id
    result.error = hosted.error
    result.record = hosted.record or (str(record) if record.exists() else "")
    remote = hosted.remote(seat)
    result.connected = remote is None or remote.ever_connected.is_set()
    log = out / f"{hosted.id}.seat{seat}.log"
    if log.exists():
        named = out / f"{scenario.name}.bot.log"
        log.replace(named)
        result.log = str(named)
        result.log_tail = _tail(named)
    referee = hosted.referee
    if referee is None:
        return
    match_result = referee.match.result
    if match_result is not None:
        result.result = match_result.reason
    result.latencies = list(referee.latencies[seat])
    positions: dict[int, Position] = {}
    answers: dict[int, AnswerLine] = {}
    if result.record:
        try:
            positions = read_positions(result.record, seat)
            answers = {a.seq: a for a in read_record(result.record).answers() if a.seat == seat}
        except Exception as exc:  # a record we cannot read: report the faults without it
            result.error = f"could not read the record: {type(exc).__name__}: {exc}"
    result.decisions = len(answers)
    reached: set[str] = set()
    for pos in positions.values():
        reached.update(pos.situations)
    order = [BID, BURY, VOID, TRACTOR_HELD, TRACTOR_PAIRS, FOLLOW_THROW, AFTER_FAILED,
             OWN_FAILED, LAST]  # fmt: skip
    result.reached = [s for s in order if s in reached]
    charged = set()
    for fault in referee.faults:
        if fault.seat != seat:
            result.other_faults.append(
                f"seat {fault.seat} (built-in) {fault.kind.value}: {fault.reason}"
            )
            continue
        charged.add(fault.seq)
        answer = answers.get(fault.seq)
        result.faults.append(
            FaultReport(
                fault.kind.value,
                fault.reason,
                fault.deal,
                fault.trick,
                fault.seq,
                answer.sent if answer else None,
                tuple(fault.played),
                answer.latency_ms if answer else 0.0,
                positions.get(fault.seq),
            )
        )
    result.uncharged = sum(1 for a in answers.values() if a.fault and a.seq not in charged)


def _tail(path: Path, lines: int = 8) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-lines:]


# -- presenting ---------------------------------------------------------------------------


def _ms(summary: Mapping[str, float | int]) -> str:
    return f"p50 {summary['p50']:.1f} ms, p99 {summary['p99']:.1f} ms, max {summary['max']:.1f} ms"


def render(report: CheckReport) -> str:
    """The readable report: one line per scenario, then every fault in detail."""
    o = report.options
    lines = [
        f"arena check-bot: {report.command}",
        f"time limit {o.time_limit_ms} ms per decision, bank {o.time_bank_ms} ms, "
        f"reconnect grace {o.grace_ms} ms; a scenario stops at the bot's "
        f"{o.max_faults}th fault",
        "",
    ]
    width = max([len(r.scenario.name) for r in report.results] + [8])
    for r in report.results:
        s = r.scenario
        lat = latency_summary(r.latencies)
        note = f"{len(r.faults)} fault{_s(len(r.faults))}" if r.faults else ""
        if r.status in ("error", "skipped"):
            note = r.error or f"match {r.state}"
        elif r.other_faults:
            note = (note + "; " if note else "") + "warning: a built-in opponent faulted"
        lines.append(
            f"{r.status.upper():<5} {s.name:<{width}}  seat {s.seat}  {r.decisions:>3} answers  "
            f"p50 {lat['p50']:6.1f} ms  p99 {lat['p99']:6.1f} ms  {note}".rstrip()
        )
        if r.missed and r.status != "skipped":
            lines.append(f"{'':<6}{'':<{width}}  not reached: {'; '.join(r.missed)}")
    for r in report.results:
        if r.status in ("pass", "skipped") and not r.other_faults:
            continue
        lines += ["", f"{r.status.upper()} {r.scenario.name}: {r.scenario.description}"]
        lines += _failure_lines(r, "  ")
    total = latency_summary(report.latencies())
    lines += ["", f"latency of the bot ({total['n']} answers): {_ms(total)}"]
    n = len(report.results)
    if report.passed:
        lines.append(f"result: PASS — {n} scenario{_s(n)}, no faults")
    else:
        failed = sum(1 for r in report.results if r.status == "fail")
        errors = sum(1 for r in report.results if r.status == "error")
        kinds = ", ".join(f"{k} {c}" for k, c in sorted(report.fault_counts().items()))
        parts = [f"{failed} of {n} scenarios with faults" + (f" ({kinds})" if kinds else "")]
        if errors:
            parts.append(f"{errors} did not complete")
        lines.append("result: FAIL — " + "; ".join(parts))
    lines.append(f"records and bot logs: {o.out}/")
    return "\n".join(lines)


def _failure_lines(r: ScenarioResult, indent: str) -> list[str]:
    seat = r.scenario.seat
    lines: list[str] = []
    if not r.connected:
        lines.append(f"{indent}the bot never took its seat (it did not start, crashed at once, "
                     "or was refused)")  # fmt: skip
    for i, fault in enumerate(r.faults, 1):
        lines.append(f"{indent}#{i}")
        lines += [f"{indent}  {line}" for line in fault.details(seat)]
    if r.uncharged:
        lines.append(
            f"{indent}and {r.uncharged} later decision{_s(r.uncharged)} played by fallback while "
            "the bot was away (not charged again)"
        )
    for other in r.other_faults:
        lines.append(f"{indent}warning: {other} (the machine may be too busy for this time limit)")
    if r.state not in ("finished", "skipped") or (r.error and r.state != "skipped"):
        lines.append(f"{indent}match {r.state}{': ' + r.error if r.error else ''}")
    if r.result.startswith("forfeit"):
        lines.append(f"{indent}the scenario was stopped: {r.result}")
    if r.log_tail and r.status != "pass":
        lines.append(f"{indent}bot log ({r.log}), last lines:")
        lines += [f"{indent}  | {line}" for line in r.log_tail]
    if r.record:
        lines.append(f"{indent}record: {r.record}")
    return lines


def junit_xml(report: CheckReport) -> str:
    """JUnit XML: one test suite, one test case per scenario."""
    results = report.results
    attrs = {
        "name": "arena check-bot",
        "tests": str(len(results)),
        "failures": str(sum(1 for r in results if r.status == "fail")),
        "errors": str(sum(1 for r in results if r.status == "error")),
        "skipped": str(sum(1 for r in results if r.status == "skipped")),
        "time": f"{report.seconds:.3f}",
    }
    root = ET.Element("testsuites", attrs)
    suite = ET.SubElement(root, "testsuite", {**attrs, "timestamp": _now()})
    props = ET.SubElement(suite, "properties")
    o = report.options
    for name, value in (
        ("bot", report.command),
        ("time_limit_ms", str(o.time_limit_ms)),
        ("time_bank_ms", str(o.time_bank_ms)),
        ("latency_ms", _ms(latency_summary(report.latencies()))),
    ):
        ET.SubElement(props, "property", {"name": name, "value": _clean(value)})
    for r in results:
        s = r.scenario
        case = ET.SubElement(
            suite,
            "testcase",
            {"classname": f"check-bot.{s.kind}", "name": s.name, "time": f"{r.seconds:.3f}"},
        )
        details = _clean("\n".join(_failure_lines(r, "")))
        if r.status == "fail":
            more = f" (+{len(r.faults) - 1} more)" if len(r.faults) > 1 else ""
            message = _clean(r.faults[0].headline + more)
            ET.SubElement(
                case, "failure", {"message": message, "type": r.faults[0].kind}
            ).text = details
        elif r.status == "error":
            message = _clean(r.error or f"match {r.state}")
            ET.SubElement(case, "error", {"message": message, "type": r.state}).text = details
        elif r.status == "skipped":
            ET.SubElement(case, "skipped", {"message": _clean(r.error)})
        lat = latency_summary(r.latencies)
        out = [
            s.description,
            f"seat {s.seat}; {r.decisions} answers; latency {_ms(lat)}",
            f"reached: {'; '.join(r.reached) or 'nothing'}",
        ]
        if r.missed:
            out.append(f"not reached: {'; '.join(r.missed)}")
        out += [f"warning: {w}" for w in r.other_faults]
        if r.record:
            out.append(f"record: {r.record}")
        ET.SubElement(case, "system-out").text = _clean("\n".join(out))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _clean(text: str) -> str:
    """Drop the characters XML 1.0 cannot hold (a bot's log may contain anything)."""
    return "".join(
        c for c in text if c in "\t\n\r" or 0x20 <= ord(c) <= 0xD7FF or 0xE000 <= ord(c) <= 0xFFFD
        or 0x10000 <= ord(c) <= 0x10FFFF
    )  # fmt: skip


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())


def scenario_table(scenarios: Sequence[Scenario]) -> str:
    width = max([len(s.name) for s in scenarios] + [8])
    return "\n".join(f"{s.name:<{width}}  seat {s.seat}  {s.description}" for s in scenarios)


__all__ = [
    "CheckOptions",
    "CheckReport",
    "Plan",
    "Position",
    "Scenario",
    "ScenarioResult",
    "ScriptedBot",
    "check_bot",
    "junit_xml",
    "random_scenarios",
    "read_positions",
    "render",
    "scenario_table",
    "stacked_scenarios",
]
