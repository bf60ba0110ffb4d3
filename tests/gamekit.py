"""Helpers for the game-machine tests: stacked decks, a scripted driver, snapshots.

Not a test module (pytest collects ``test_*.py`` only); the ``test_game_*`` files import it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from arena.game import Action, Decision, Event, Kind, MatchMachine
from arena.game.stacking import HAND, KITTY, cards, hands_of, seed_for_first_seat, stack
from arena.rules import Card, format_cards

# The deck builders live in arena.game.stacking (arena check-bot uses them too).
__all__ = ["HAND", "KITTY", "SEED_FOR_FIRST_SEAT", "Script", "cards", "hands_of", "stack"]

#: seeds whose first deal is dealt first to seat 0, 1, 2, 3
SEED_FOR_FIRST_SEAT: dict[int, int] = {seat: seed_for_first_seat(seat) for seat in range(4)}


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
    deal = vars(match)["_deal"]  # the live deal machine, private to the match
    # the private state itself (the cached snapshot aside: judging an answer may make it)
    private = vars(deal)["_s"]
    state = {f: copy.deepcopy(getattr(private, f)) for f in private.__slots__ if f != "order"}
    state["order"] = id(private.order)
    state["events"] = list(deal.events)
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
