"""The match state machine: deals in sequence, levels, dealer rotation, the match end.

A :class:`MatchMachine` owns the current :class:`~arena.game.deal.DealMachine` and
forwards the same verbs (``pending``, ``answer``, ``check``, ``fallback``). Like the deal
machine it keeps its state private: readers (views, the referee, records, resume, the
environment) get read-only properties and the frozen :meth:`~MatchMachine.snapshot`,
which holds the current deal's snapshot; nothing outside reaches the deal machine. Everything
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
from arena.game.fallback import FallbackBasis
from arena.game.shuffle import first_seat, shuffled_deck
from arena.game.snapshot import MatchSnapshot, Phase
from arena.rules import Card, Position, Rank, RuleSet, Side, Verdict, other_team

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

    # Hashed by identity (members are singletons): the transition tables are looked up
    # by (phase, input) at every answer, and Enum's own __hash__ is a Python call.
    __hash__ = object.__hash__


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

    # Hashed by identity (members are singletons): the transition tables are looked up
    # by (phase, input) at every answer, and Enum's own __hash__ is a Python call.
    __hash__ = object.__hash__


class MatchMachine:
    """A whole match. ``events`` holds every event so far, in order (read it only: the
    machine appends to it); the rest of its state is private (see the module doc)."""

    def __init__(self, setup: MatchSetup | None = None) -> None:
        self.setup: Final = setup or MatchSetup()
        self.rules: Final = self.setup.rules
        self.events: Final[list[Event]] = []
        self.first_seat: Final = first_seat(self.setup.seed)
        self._decks: list[tuple[int, int, tuple[Card, ...]]] = []  # (deal, attempt, cards)
        start = self.rules.start_level
        self._levels: tuple[Rank, Rank] = (start, start)
        self._dealer: int | None = None
        self._deals_played = 0
        self._result: MatchEnded | None = None
        self._snapshot: MatchSnapshot | None = None  # a cache, made anew after a change
        self._deal = self._new_deal(attempt=0)
        self._fire(self._after_deal())  # a first deal where nobody can ever bid is redealt

    # -- what readers see ----------------------------------------------------------------

    @property
    def decks(self) -> tuple[tuple[int, int, tuple[Card, ...]], ...]:
        """Every deck dealt so far: (deal number, attempt, the cards in dealing order)."""
        return tuple(self._decks)

    @property
    def levels(self) -> tuple[Rank, Rank]:
        """Each team's level now."""
        return self._levels

    @property
    def dealer(self) -> int | None:
        """The dealer of the current deal (``None`` while the first deal's bidding decides)."""
        return self._dealer

    @property
    def deals_played(self) -> int:
        return self._deals_played

    @property
    def result(self) -> MatchEnded | None:
        """How the match ended, once it has."""
        return self._result

    @property
    def finished(self) -> bool:
        return self._result is not None

    @property
    def phase(self) -> MatchPhase:
        return MatchPhase.OVER if self._result is not None else MatchPhase.PLAYING

    @property
    def position(self) -> Position:
        """The current deal's position (the rules' view: every hand known)."""
        return self._deal.position

    def snapshot(self) -> MatchSnapshot:
        """The match as of now, frozen (the current deal's snapshot inside); made at most
        once per change, like the deal's."""
        snap, deal = self._snapshot, self._deal.snapshot()
        if snap is None or snap.deal is not deal:
            snap = MatchSnapshot(self._levels, self._dealer, self._deals_played, self._result, deal)
            self._snapshot = snap
        return snap

    def __repr__(self) -> str:
        return f"<MatchMachine seed {self.setup.seed} {self.snapshot()!r}>"

    def pending(self) -> tuple[Decision, ...]:
        return () if self._result else self._deal.pending()

    def answer(self, seat: int, action: Sequence[Card]) -> list[Event]:
        """Apply an answer; return every event it caused, across deal boundaries.

        Raises:
            IllegalPlay: the answer breaks a rule; nothing changed.
            StateError: the match is over, or ``seat`` was not asked.
        """
        return self._fire(Input.ANSWER, (seat, action))

    def check(self, seat: int, action: Sequence[Card]) -> Verdict:
        self._live()
        return self._deal.check(seat, action)

    def fallback(self, seat: int) -> Action:
        self._live()
        return self._deal.fallback(seat)

    def fallback_basis(self, seat: int) -> FallbackBasis:
        """What ``seat``'s fallback depends on, frozen now (a request carries it)."""
        if self._result is not None:
            self._live()  # raises
        return self._deal.fallback_basis(seat)

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
        if self._result is not None:
            raise StateError(f"the match is over ({self._result.reason})")

    def _absorb(self, events: list[Event]) -> list[Event]:
        """Every change of a match adds events: the snapshot is made anew after one."""
        self._snapshot = None
        self.events.extend(events)
        return events

    def _on_answer(self, seat: int, action: Sequence[Card]) -> Input | None:
        self._absorb(self._deal.answer(seat, action))
        return self._after_deal()

    def _on_penalty(self, team: int, points: int, reason: str) -> None:
        self._absorb(self._deal.penalize(team, points, reason))

    def _after_deal(self) -> Input | None:
        if self._deal.phase is not Phase.OVER:  # (no snapshot: this runs at every answer)
            return None
        return Input.REDEAL if self._deal.snapshot().redeal else Input.DEAL_OVER

    def _on_redeal(self) -> Input | None:
        self._deal = self._new_deal(self._deal.snapshot().attempt + 1)
        return self._after_deal()

    def _on_deal_over(self) -> Input:
        deal = self._deal.snapshot()
        outcome = deal.result
        if outcome is None:  # pragma: no cover - OVER always has a result or a redeal
            raise StateError("deal over without a result")
        self._deals_played += 1
        self._levels = outcome.levels
        size = self.rules.hand_size  # the deal is over: every hand as dealt is public
        self._absorb([DealRevealed.of_deck(deal.deal, deal.deck, deal.first_seat, size)])
        if deal.match_won:
            return Input.MATCH_WON
        if self.rules.deals is not None and self._deals_played >= self.rules.deals:
            return Input.DEALS_PLAYED
        return Input.NEXT_DEAL

    def _on_match_won(self) -> None:
        deal = self._deal.snapshot()
        outcome = deal.result
        assert outcome is not None
        kept_a = outcome.winner is Side.DEALER and deal.level is Rank.ACE
        reason = Termination.LEVEL_A_KEPT if kept_a else Termination.PASSED_A
        self._end(outcome.winner.team(outcome.dealer), reason)

    def _on_deals_played(self) -> None:
        a, b = self._levels
        self._end(0 if a > b else 1 if b > a else None, Termination.DEALS_PLAYED)

    def _on_next_deal(self) -> Input | None:
        outcome = self._deal.snapshot().result
        assert outcome is not None
        self._dealer = outcome.next_dealer
        self._deal = self._new_deal(attempt=0)
        return self._after_deal()

    def _on_forfeit(self, team: int, reason: str) -> None:
        self._end(other_team(team), Termination.FORFEIT, forfeited=team, detail=reason)

    def _on_cancel(self, reason: str) -> None:
        self._end(None, Termination.CANCELLED, detail=reason)

    def _new_deal(self, attempt: int) -> DealMachine:
        number = self._deals_played + 1
        stacked = self.setup.stacked.get(number) if attempt == 0 else None
        cards = stacked or shuffled_deck(self.setup.seed, number, attempt, self.rules.decks)
        self._decks.append((number, attempt, tuple(cards)))
        first = self.first_seat if self._dealer is None else self._dealer
        deal = DealMachine(
            self.rules,
            cards,
            deal=number,
            dealer=self._dealer,
            levels=self._levels,
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
        self._result = MatchEnded(
            winner, self._levels, self._deals_played, reason, forfeited, detail
        )
        self._absorb([self._result])


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
