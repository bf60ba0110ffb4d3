"""The match state machine: deals in sequence, levels, dealer rotation, the match end.

A :class:`MatchMachine` owns the current :class:`~arena.game.deal.DealMachine` and
forwards the same verbs (``pending``, ``answer``, ``check``, ``fallback``). Everything
it does follows from the rule set, the seed and the answers, so replaying the answers
rebuilds the identical event stream. Policy (deadlines, faults, penalties) belongs to
the referee, which calls :meth:`penalize` and :meth:`forfeit`; the machine only
records their effect. Its moves are the rows of :data:`MATCH_TRANSITIONS`, like the
deal machine's.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from arena.errors import StateError
from arena.game.deal import DealMachine
from arena.game.domain import Termination
from arena.game.events import Action, DealRevealed, Decision, Event, MatchEnded
from arena.game.shuffle import first_seat, shuffled_deck
from arena.game.snapshot import MatchSnapshot, Phase
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


class MatchPhase(enum.Enum):
    PLAYING = "playing"  # a deal is in progress
    OVER = "over"


class Input(enum.Enum):
    """What moves a match: the referee's calls, and the steps after a deal ends."""

    ANSWER = "answer"
    PENALTY = "penalty"
    FORFEIT = "forfeit"
    CANCEL = "cancel"
    REDEAL = "redeal"  # the first deal ended without a bid
    DEAL_OVER = "deal over"  # a deal was played out
    NEXT_DEAL = "next deal"
    MATCH_WON = "match won"  # at A (RULES.md §8)
    DEALS_PLAYED = "deals played"  # the rule set's number of deals


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
        self._fire(self._after_deal())  # a first deal where nobody can ever bid is redealt

    @property
    def finished(self) -> bool:
        return self.result is not None

    @property
    def phase(self) -> MatchPhase:
        return MatchPhase.OVER if self.result is not None else MatchPhase.PLAYING

    def snapshot(self) -> MatchSnapshot:
        """The match as of now, frozen (the current deal's snapshot inside)."""
        return MatchSnapshot(
            self.levels, self.dealer, self.deals_played, self.result, self.deal.snapshot()
        )

    def __repr__(self) -> str:
        return f"<MatchMachine seed {self.setup.seed} {self.snapshot()!r}>"

    def pending(self) -> tuple[Decision, ...]:
        return () if self.result else self.deal.pending()

    def answer(self, seat: int, action: Sequence[Card]) -> list[Event]:
        """Apply an answer; return every event it caused, across deal boundaries.

        Raises:
            IllegalPlay: the answer breaks a rule; nothing changed.
            StateError: the match is over, or ``seat`` was not asked.
        """
        return self._fire(Input.ANSWER, (seat, action))

    def check(self, seat: int, action: Sequence[Card]) -> Verdict:
        self._live()
        return self.deal.check(seat, action)

    def fallback(self, seat: int) -> Action:
        self._live()
        return self.deal.fallback(seat)

    def penalize(self, team: int, points: int, reason: str) -> list[Event]:
        """Charge ``points`` against ``team`` in the current deal (lenient policy)."""
        return self._fire(Input.PENALTY, (team, points, reason))

    def forfeit(self, team: int, reason: str) -> list[Event]:
        """End the match: ``team`` forfeits it (strict policy, or too many faults)."""
        return self._fire(Input.FORFEIT, (team, reason))

    def cancel(self, reason: str = "cancelled") -> list[Event]:
        return self._fire(Input.CANCEL, (reason,))

    # -- the machinery -------------------------------------------------------------------

    def _fire(self, what: Input | None, args: tuple[Any, ...] = ()) -> list[Event]:
        """Feed ``what`` through :data:`MATCH_TRANSITIONS`, then any step that follows."""
        start = len(self.events)
        while what is not None:
            row = MATCH_TRANSITIONS.get((self.phase, what))
            if row is None:
                self._live()
                raise StateError(f"no {what.value} is allowed in phase {self.phase.value}")
            what, args = row[0](self, *args), ()  # row[1], the phase after, is the result's
        return self.events[start:]

    def _live(self) -> None:
        if self.result is not None:
            raise StateError(f"the match is over ({self.result.reason})")

    def _absorb(self, events: list[Event]) -> list[Event]:
        self.events.extend(events)
        return events

    def _on_answer(self, seat: int, action: Sequence[Card]) -> Input | None:
        self._absorb(self.deal.answer(seat, action))
        return self._after_deal()

    def _on_penalty(self, team: int, points: int, reason: str) -> None:
        self._absorb(self.deal.penalize(team, points, reason))

    def _after_deal(self) -> Input | None:
        if self.deal.phase is not Phase.OVER:  # (no snapshot: this runs at every answer)
            return None
        return Input.REDEAL if self.deal.snapshot().redeal else Input.DEAL_OVER

    def _on_redeal(self) -> Input | None:
        self.deal = self._new_deal(self.deal.snapshot().attempt + 1)
        return self._after_deal()

    def _on_deal_over(self) -> Input:
        deal = self.deal.snapshot()
        outcome = deal.result
        if outcome is None:  # pragma: no cover - OVER always has a result or a redeal
            raise StateError("deal over without a result")
        self.deals_played += 1
        self.levels = outcome.levels
        size = self.rules.hand_size  # the deal is over: every hand as dealt is public
        self._absorb([DealRevealed.of_deck(deal.deal, deal.deck, deal.first_seat, size)])
        if deal.match_won:
            return Input.MATCH_WON
        if self.rules.deals is not None and self.deals_played >= self.rules.deals:
            return Input.DEALS_PLAYED
        return Input.NEXT_DEAL

    def _on_match_won(self) -> None:
        deal = self.deal.snapshot()
        outcome = deal.result
        assert outcome is not None
        kept_a = outcome.winner is Side.DEALER and deal.level is Rank.ACE
        reason = Termination.LEVEL_A_KEPT if kept_a else Termination.PASSED_A
        self._end(outcome.winner.team(outcome.dealer), reason)

    def _on_deals_played(self) -> None:
        a, b = self.levels
        self._end(0 if a > b else 1 if b > a else None, Termination.DEALS_PLAYED)

    def _on_next_deal(self) -> Input | None:
        outcome = self.deal.snapshot().result
        assert outcome is not None
        self.dealer = outcome.next_dealer
        self.deal = self._new_deal(attempt=0)
        return self._after_deal()

    def _on_forfeit(self, team: int, reason: str) -> None:
        self._end(other_team(team), Termination.FORFEIT, forfeited=team, detail=reason)

    def _on_cancel(self, reason: str) -> None:
        self._end(None, Termination.CANCELLED, detail=reason)

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

    def _end(
        self,
        winner: int | None,
        reason: Termination,
        forfeited: int | None = None,
        detail: str = "",
    ) -> None:
        self.result = MatchEnded(winner, self.levels, self.deals_played, reason, forfeited, detail)
        self._absorb([self.result])


_P, _O = MatchPhase.PLAYING, MatchPhase.OVER
MATCH_TRANSITIONS: Final[dict[tuple[MatchPhase, Input], tuple[Callable[..., Any], MatchPhase]]] = {
    # phase  input                handler                            next phase
    (_P, Input.ANSWER): (MatchMachine._on_answer, _P),  # → REDEAL, DEAL_OVER at a deal's end
    (_P, Input.PENALTY): (MatchMachine._on_penalty, _P),
    (_P, Input.FORFEIT): (MatchMachine._on_forfeit, _O),
    (_P, Input.CANCEL): (MatchMachine._on_cancel, _O),
    (_P, Input.REDEAL): (MatchMachine._on_redeal, _P),
    (_P, Input.DEAL_OVER): (MatchMachine._on_deal_over, _P),  # → MATCH_WON, DEALS_PLAYED, NEXT_DEAL
    (_P, Input.NEXT_DEAL): (MatchMachine._on_next_deal, _P),
    (_P, Input.MATCH_WON): (MatchMachine._on_match_won, _O),
    (_P, Input.DEALS_PLAYED): (MatchMachine._on_deals_played, _O),
}
"""Every move of a match: (phase, input) → (handler, the phase after it). A handler
returns the input that follows, if any; an over match takes nothing (StateError)."""
