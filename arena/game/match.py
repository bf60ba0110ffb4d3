"""The match state machine: deals in sequence, levels, dealer rotation, the match end.

A :class:`MatchMachine` owns the current :class:`~arena.game.deal.DealMachine` and
forwards the same verbs (``pending``, ``answer``, ``check``, ``fallback``). Everything
it does follows from the rule set, the seed and the answers, so replaying the answers
rebuilds the identical event stream. Policy (deadlines, faults, penalties) belongs to
the referee, which calls :meth:`penalize` and :meth:`forfeit`; the machine only
records their effect.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from arena.errors import StateError
from arena.game.deal import DealMachine, Phase
from arena.game.domain import Termination
from arena.game.events import Action, DealRevealed, Decision, Event, MatchEnded
from arena.game.shuffle import first_seat, shuffled_deck
from arena.rules import Card, Rank, RuleSet, Side, Verdict, other_team

MAX_REDEALS = 3


@dataclasses.dataclass(frozen=True)
class MatchSetup:
    """What fixes a match: rules, seed, and optionally stacked decks by deal number
    (from 1; each a whole deck in dealing order, used instead of the shuffle for the
    first attempt of that deal)."""

    rules: RuleSet = dataclasses.field(default_factory=RuleSet)
    seed: int = 0
    stacked: Mapping[int, Sequence[Card]] = dataclasses.field(default_factory=dict)


class MatchMachine:
    """A whole match. ``events`` holds every event so far, in order."""

    def __init__(self, setup: MatchSetup | None = None) -> None:
        self.setup = setup or MatchSetup()
        self.rules = self.setup.rules
        self.events: list[Event] = []
        self.decks: list[tuple[int, int, tuple[Card, ...]]] = []  # (deal, attempt, cards)
        start = self.rules.start_level
        self.levels: tuple[Rank, Rank] = (start, start)
        self.dealer: int | None = None
        self.deals_played = 0
        self.result: MatchEnded | None = None
        self.first_seat = first_seat(self.setup.seed)
        self.deal = self._new_deal(attempt=0)
        self._advance()  # a first deal where nobody can ever bid is redealt at once

    @property
    def finished(self) -> bool:
        return self.result is not None

    def pending(self) -> tuple[Decision, ...]:
        return () if self.result else self.deal.pending()

    def answer(self, seat: int, action: Sequence[Card]) -> list[Event]:
        """Apply an answer; return every event it caused, across deal boundaries.

        Raises:
            IllegalPlay: the answer breaks a rule; nothing changed.
            StateError: the match is over, or ``seat`` was not asked.
        """
        self._live()
        start = len(self.events)
        self._absorb(self.deal.answer(seat, action))
        self._advance()
        return self.events[start:]

    def check(self, seat: int, action: Sequence[Card]) -> Verdict:
        self._live()
        return self.deal.check(seat, action)

    def fallback(self, seat: int) -> Action:
        self._live()
        return self.deal.fallback(seat)

    def penalize(self, team: int, points: int, reason: str) -> list[Event]:
        """Charge ``points`` against ``team`` in the current deal (lenient policy)."""
        self._live()
        return self._absorb(self.deal.penalize(team, points, reason))

    def forfeit(self, team: int, reason: str) -> list[Event]:
        """End the match: ``team`` forfeits it (strict policy, or too many faults)."""
        self._live()
        return self._end(other_team(team), Termination.FORFEIT, forfeited=team, detail=reason)

    def cancel(self, reason: str = "cancelled") -> list[Event]:
        self._live()
        return self._end(None, Termination.CANCELLED, detail=reason)

    # -- internals -----------------------------------------------------------------------

    def _live(self) -> None:
        if self.result is not None:
            raise StateError(f"the match is over ({self.result.reason})")

    def _absorb(self, events: list[Event]) -> list[Event]:
        self.events.extend(events)
        return events

    def _new_deal(self, attempt: int) -> DealMachine:
        number = self.deals_played + 1
        stacked = self.setup.stacked.get(number) if attempt == 0 else None
        cards = stacked or shuffled_deck(self.setup.seed, number, attempt, self.rules.decks)
        self.decks.append((number, attempt, tuple(cards)))
        first = self.first_seat if self.dealer is None else self.dealer
        deal = DealMachine(
            self.rules,
            cards,
            deal=number,
            dealer=self.dealer,
            levels=self.levels,
            first_seat=first,
            attempt=attempt,
            redeal_fallback=attempt >= MAX_REDEALS,
        )
        self._absorb(deal.events)
        return deal

    def _advance(self) -> None:
        """Move past finished deals (and redeals) until a decision is pending."""
        while self.deal.phase is Phase.OVER and self.result is None:
            deal = self.deal
            if deal.redeal:
                self.deal = self._new_deal(deal.attempt + 1)
                continue
            outcome = deal.result
            if outcome is None:  # pragma: no cover - OVER always has a result or a redeal
                raise StateError("deal over without a result")
            self.deals_played += 1
            self.levels = outcome.levels
            size = self.rules.hand_size  # the deal is over: every hand as dealt is public
            self._absorb([DealRevealed.of_deck(deal.deal, deal.deck, deal.first_seat, size)])
            if deal.match_won:
                kept_a = outcome.winner is Side.DEALER and deal.level is Rank.ACE
                reason = Termination.LEVEL_A_KEPT if kept_a else Termination.PASSED_A
                self._end(outcome.winner.team(outcome.dealer), reason)
                return
            if self.rules.deals is not None and self.deals_played >= self.rules.deals:
                a, b = self.levels
                self._end(0 if a > b else 1 if b > a else None, Termination.DEALS_PLAYED)
                return
            self.dealer = outcome.next_dealer
            self.deal = self._new_deal(attempt=0)

    def _end(
        self,
        winner: int | None,
        reason: Termination,
        forfeited: int | None = None,
        detail: str = "",
    ) -> list[Event]:
        self.result = MatchEnded(winner, self.levels, self.deals_played, reason, forfeited, detail)
        return self._absorb([self.result])
