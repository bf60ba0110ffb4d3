"""The environment's engine, without PettingZoo: a match driven one card choice at a time.

:class:`Table` plays a :class:`~arena.game.MatchMachine` the way the referee's self-play
driver does — every request built by :class:`~arena.game.SeatFeed` (the one redaction
path), every answer judged by the machine — but takes answers card by card
(:mod:`arena.env.actions`) and keeps each seat's observation (:mod:`arena.env.encoding`)
and rewards. The PettingZoo environment (:mod:`arena.env.aec`) and the vectorised runner
(:mod:`arena.env.vector`) are thin layers over it. Given a recorder, it writes the arena
match record of the trajectory as it goes, which ``arena replay --verify`` checks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from arena.env.actions import ACTION_SIZE, Choice
from arena.env.encoding import Obs, SeatMemory, encode, with_chosen
from arena.game import (
    Action,
    DealEnded,
    Event,
    MatchEnded,
    MatchMachine,
    MatchSetup,
    Recorder,
    RecordFeed,
    Request,
    SeatFeed,
    TrickWon,
    order_for,
    seat_view,
    team_of,
)
from arena.rules import SEATS, RuleSet, other_team

Mask = npt.NDArray[np.int8]


@dataclasses.dataclass(frozen=True)
class Rewards:
    """How results become rewards; every reward is zero-sum between the two teams and
    both seats of a team get the same.

    - ``deal`` × the levels a deal gains: the winning team gets ``+``, the other ``-``
      (a deal the attackers win with 80–119 points gains no level: 0);
    - ``match`` at the end of the match: ``+`` to the winning team, ``-`` to the other,
      0 for a draw (a match cut short by ``deals``);
    - ``points``, shaping (0 by default): × the card points of each trick / the deck's
      total (200 with two decks), ``+`` to the trick winner's team, ``-`` to the other.
    """

    deal: float = 1.0
    match: float = 1.0
    points: float = 0.0


class Table:
    """One match at a time for four seats answering card by card.

    After :meth:`reset`, :attr:`seat` is the seat to act (``None`` once the match is
    over); :meth:`observe` gives any seat's observation and action mask; :meth:`step`
    applies the acting seat's action and sets :attr:`rewards` (this step's, per seat).
    """

    def __init__(
        self,
        rules: RuleSet | None = None,
        rewards: Rewards | None = None,
    ) -> None:
        self.rules = rules or RuleSet()
        self.scheme = rewards or Rewards()
        self.rewards = [0.0, 0.0, 0.0, 0.0]
        self.decisions = 0  # whole answers given (each one or more steps)
        self.steps = 0
        self.seat: int | None = None
        self.kind = "none"
        self.match = MatchMachine(MatchSetup(self.rules, 0))
        self.feed = SeatFeed(self.match)
        self.memory = [SeatMemory(s) for s in range(4)]
        self.choice: Choice | None = None
        self.request: Request | None = None
        self._base: Obs | None = None
        self._mask: Mask | None = None
        self._record: RecordFeed | None = None
        self._recorder: Recorder | None = None

    @property
    def finished(self) -> bool:
        return self.match.finished

    def reset(self, seed: int, recorder: Recorder | None = None) -> None:
        """Start the match of ``seed`` (the arena's match seed: the same deals as
        ``arena match --seed``); ``recorder`` receives its record."""
        self.match = MatchMachine(MatchSetup(self.rules, seed))
        self.feed = SeatFeed(self.match)
        self.memory = [SeatMemory(s) for s in range(4)]
        self.rewards = [0.0, 0.0, 0.0, 0.0]
        self.decisions = self.steps = 0
        self._recorder = recorder
        self._record = RecordFeed(self.match, recorder) if recorder is not None else None
        self._next()

    def observe(self, seat: int) -> tuple[Obs, Mask]:
        """``seat``'s observation and action mask (all zero when it is not its turn)."""
        if seat == self.seat and self.choice is not None and self._base is not None:
            if self._mask is None:
                mask = self._mask = np.zeros(ACTION_SIZE, dtype=np.int8)
                mask[self.choice.allowed_actions()] = 1
            chosen = self.choice.chosen
            return (with_chosen(self._base, chosen) if chosen else self._base), self._mask
        memory = self.memory[seat]
        memory.absorb(e for _, e in self.feed.catch_up(seat))
        view = seat_view(self.match, seat)
        return encode(view, memory, self.rules), np.zeros(ACTION_SIZE, dtype=np.int8)

    def step(self, action: int) -> Action | None:
        """Apply the acting seat's ``action``; returns the answer it completed, if any.

        Raises:
            ValueError: the action is masked out, or the match is over.
        """
        choice, seat, request = self.choice, self.seat, self.request
        if choice is None or seat is None or request is None:
            raise ValueError("the match is over: reset() first")
        self.rewards = [0.0, 0.0, 0.0, 0.0]
        answer = choice.take(int(action))
        self.steps += 1
        self._mask = None
        if answer is None:
            return None
        self.decisions += 1
        if self._record is not None and self._recorder is not None:
            self._record.flush()
            self._recorder.answer(
                seat=seat, seq=self.decisions, kind=request.decision.kind.value, sent=answer,
                played=answer, requested_at_ms=0.0, latency_ms=0.0, fault=None,
            )  # fmt: skip
        self._score(self.match.answer(seat, answer))
        self._next()
        return answer

    # -- internals -----------------------------------------------------------------------

    def _next(self) -> None:
        """Put the next pending decision to its seat (the lowest seat first in a bid window)."""
        self._mask = None
        pending = self.match.pending()
        if not pending:
            self.seat, self.choice, self.request, self._base, self.kind = (
                None,
                None,
                None,
                None,
                "none",
            )
            if self._record is not None and self._recorder is not None and self.match.result:
                self._record.flush()
                self._recorder.close(self.match.result, [])
                self._record = None
            return
        decision = pending[0]
        request = self.feed.request(decision)
        view = request.view
        memory = self.memory[decision.seat]
        memory.absorb(request.events)
        order = order_for(request) if view.trump_declared else None
        self.choice = choice = Choice(decision, view.hand, order)
        self.seat, self.request, self.kind = decision.seat, request, choice.kind
        self._base = encode(view, memory, self.rules, choice.kind, decision.count)
        self._base.flags.writeable = False  # handed out as is: nobody may change it

    def _score(self, events: Sequence[Event]) -> None:
        scheme, total = self.scheme, 100.0 * self.rules.decks
        team_reward = [0.0, 0.0]
        for event in events:
            if isinstance(event, TrickWon) and scheme.points:
                gain = scheme.points * event.points / total
                team_reward[team_of(event.winner)] += gain
                team_reward[other_team(team_of(event.winner))] -= gain
            elif isinstance(event, DealEnded) and scheme.deal:
                winner = event.winner.team(event.dealer)
                team_reward[winner] += scheme.deal * event.levels_gained
                team_reward[other_team(winner)] -= scheme.deal * event.levels_gained
            elif isinstance(event, MatchEnded) and event.winner is not None and scheme.match:
                team_reward[event.winner] += scheme.match
                team_reward[other_team(event.winner)] -= scheme.match
        self.rewards = [team_reward[s.team] for s in SEATS]


__all__ = ["Mask", "Rewards", "Table"]
