"""The scenarios of ``arena check-bot``: stacked positions and random matches.

A stacked scenario deals deal 1 from a deck built by :func:`arena.game.stack` so that
the bot under test must face a hard case (its ``targets``, named by the situation
constants below); its opponents are :class:`ScriptedBot` instances: the built-in
``greedy`` bot with the few bids and leads the position needs. Positions are written in
seats relative to the bot (``B`` the bot, ``L`` the opponent after it, ``P`` its
partner, ``R`` the opponent before it) and dealt first to seat 0.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from arena.bots import GreedyBot, make_bot
from arena.game import Action, Kind, Request, order_for, seed_for_first_seat, stack
from arena.rules import Card, Seat, Suit, fallback_bury, parse_cards

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
SITUATIONS = (BID, BURY, VOID, TRACTOR_HELD, TRACTOR_PAIRS, FOLLOW_THROW, AFTER_FAILED, OWN_FAILED,
              LAST)  # fmt: skip
"""Every situation, in the order reports list them."""

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
        self.bids = [tuple(parse_cards(b)) for b in plan.bids]
        self.leads = [tuple(parse_cards(c)) for c in plan.leads]

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
    me = Seat(bot)
    seats: dict[str, int] = {"B": me, "L": me.next, "P": me.partner, "R": me.after(3)}
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


__all__ = [
    "AFTER_FAILED",
    "BID",
    "BURY",
    "FOLLOW_THROW",
    "LAST",
    "OWN_FAILED",
    "SITUATIONS",
    "TRACTOR_HELD",
    "TRACTOR_PAIRS",
    "VOID",
    "Plan",
    "Scenario",
    "ScriptedBot",
    "random_scenarios",
    "stacked_scenarios",
]
