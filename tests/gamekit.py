"""Helpers for the game-machine tests: stacked decks, a scripted driver, snapshots.

Not a test module (pytest collects ``test_*.py`` only); the ``test_game_*`` files import it.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from arena.game import Action, Decision, Event, Kind, MatchMachine, first_seat
from arena.rules import Card, Rank, deck, format_cards, parse_cards

HAND, KITTY = 25, 8

#: seeds whose first deal is dealt first to seat 0, 1, 2, 3
SEED_FOR_FIRST_SEAT: dict[int, int] = {}
for _seed in range(64):
    SEED_FOR_FIRST_SEAT.setdefault(first_seat(_seed), _seed)


def cards(text: str | Iterable[Card]) -> list[Card]:
    return parse_cards(text) if isinstance(text, str) else list(text)


def stack(
    hands: Sequence[str | Sequence[Card]],
    kitty: str | Sequence[Card] = "",
    first: int = 0,
    *,
    level: str = "2",
    avoid: Mapping[int, Callable[[Card], bool]] | None = None,
) -> list[Card]:
    """A whole two-deck deck in dealing order: card i goes to seat ``(first + i) % 4``.

    ``hands[seat]`` lists that seat's cards in the order they are dealt (round 1 first);
    the rest of the deck fills each hand up to 25 cards (dealt after the given ones) and
    the kitty up to 8. Level cards (rank ``level``) and jokers nobody was given go to the
    kitty first, so the fill makes as few bid windows as it can. ``avoid[seat]`` keeps
    cards out of that seat's fill (e.g. ``lambda c: c.suit is Suit.HEARTS`` for a void).
    """
    given = [cards(h) for h in hands] + [[]] * (4 - len(hands))
    kit = cards(kitty)
    rest = Counter(deck(2))
    for c in [c for h in given for c in h] + kit:
        if rest[c] == 0:
            raise ValueError(f"{c} used more often than two decks hold")
        rest[c] -= 1
    if any(len(h) > HAND for h in given) or len(kit) > KITTY:
        raise ValueError("a hand holds 25 cards and the kitty 8")
    lvl = Rank.parse(level)
    avoid = avoid or {}
    places: list[list[Card]] = [*given, kit]  # seats 0..3, then the kitty (index 4)
    room = [HAND - len(h) for h in given] + [KITTY - len(kit)]

    def allowed(card: Card) -> list[int]:
        return [i for i in range(5) if i == 4 or not avoid.get(i, _never)(card)]

    pool = sorted(rest.elements(), key=lambda c: (len(allowed(c)), c.index))
    for card in pool:
        options = [i for i in allowed(card) if room[i] > 0]
        if not options:
            raise ValueError(f"no room left for {card}")
        special = card.is_joker or card.rank == lvl
        if special and room[4] > 0:
            dest = 4
        else:
            dest = max(options, key=lambda i: (room[i], -i))
        places[dest] = [*places[dest], card]
        room[dest] -= 1
    out: list[Card] = []
    for i in range(4 * HAND):
        out.append(places[(first + i) % 4][i // 4])
    out.extend(places[4])
    assert Counter(out) == Counter(deck(2)), "a stacked deck must be the whole deck"
    return out


def _never(card: Card) -> bool:
    return False


def hands_of(stacked: Sequence[Card], first: int = 0) -> tuple[list[list[Card]], list[Card]]:
    """The inverse of :func:`stack`: each seat's cards in dealing order, and the kitty."""
    hands: list[list[Card]] = [[], [], [], []]
    for i, card in enumerate(stacked[: 4 * HAND]):
        hands[(first + i) % 4].append(card)
    return hands, list(stacked[4 * HAND :])


Policy = Callable[[MatchMachine, Decision], Action | None]


class Script:
    """Answers pending decisions from per-seat scripts, else with the fallback.

    - ``bids[seat]``: bids (card text) made in order, each as soon as it is among the
      options offered; every other bid decision passes (the fallback).
    - ``bury[seat]``: the cards that seat buries when it is dealer.
    - ``plays[seat]``: that seat's next plays, in order; when they run out, the fallback.
    - ``policy(match, decision)``: consulted first; ``None`` means "use the scripts".

    ``log`` records every (seat, kind, action) applied.
    """

    def __init__(
        self,
        *,
        bids: Mapping[int, Sequence[str]] | None = None,
        bury: Mapping[int, str] | None = None,
        plays: Mapping[int, Sequence[str]] | None = None,
        policy: Policy | None = None,
    ) -> None:
        self.bids = {s: [tuple(cards(b)) for b in v] for s, v in (bids or {}).items()}
        self.bury = {s: tuple(cards(v)) for s, v in (bury or {}).items()}
        self.plays = {s: [tuple(cards(p)) for p in v] for s, v in (plays or {}).items()}
        self.policy = policy
        self.log: list[tuple[int, Kind, Action]] = []

    def action(self, match: MatchMachine, decision: Decision) -> Action:
        seat = decision.seat
        if self.policy is not None:
            chosen = self.policy(match, decision)
            if chosen is not None:
                return chosen
        if decision.kind is Kind.BID:
            queue = self.bids.get(seat)
            if queue and queue[0] in decision.options:
                return queue.pop(0)
            return ()
        if decision.kind is Kind.BURY and seat in self.bury:
            return self.bury.pop(seat)
        if decision.kind is Kind.PLAY and self.plays.get(seat):
            return self.plays[seat].pop(0)
        return match.fallback(seat)

    def step(self, match: MatchMachine) -> list[Event]:
        """Answer every decision pending now (one bid window, or one play)."""
        events: list[Event] = []
        for decision in match.pending():
            action = self.action(match, decision)
            self.log.append((decision.seat, decision.kind, action))
            events.extend(match.answer(decision.seat, action))
        return events

    def run(
        self, match: MatchMachine, until: Callable[[MatchMachine], bool] | None = None
    ) -> list[Event]:
        """Step until the match ends or ``until(match)`` holds; return the events."""
        events: list[Event] = []
        while not match.finished and not (until and until(match)):
            events.extend(self.step(match))
        return events


def play_all(match: MatchMachine, answers: Iterable[tuple[int, Action]]) -> None:
    """Replay recorded answers into a fresh machine."""
    for seat, action in answers:
        match.answer(seat, action)


def snapshot(match: MatchMachine) -> dict[str, Any]:
    """Everything observable about a match and its current deal, deep-copied."""
    deal = match.deal
    state = {k: copy.deepcopy(v) for k, v in vars(deal).items() if k != "order"}
    state["order"] = id(deal.order)
    state["match_events"] = [e.to_dict() for e in match.events]
    state["pending"] = match.pending()
    state["levels"] = match.levels
    state["dealer"] = match.dealer
    state["deals_played"] = match.deals_played
    state["result"] = match.result
    return state


def of_type(events: Iterable[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def text(action: Iterable[Card]) -> str:
    return format_cards(action)
