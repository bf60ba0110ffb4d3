"""The deal state machine: dealing with bid windows, the kitty, 25 tricks, the result.

Sans-IO in the style of h11: the machine says which decisions are pending
(:meth:`DealMachine.pending`), takes answers (:meth:`DealMachine.answer`) and returns
the events they caused. It never waits, reads no clock and draws no random number.
Every move it can make is one row of :data:`TRANSITIONS` (phase × input → handler,
next phase): the answers a seat gives, and the steps the machine gives itself when a
phase's work is done. Its state is private; :meth:`DealMachine.snapshot` is the frozen
picture views and tests read, and its ``repr`` is the position's text form.

Blame lives in the type (STYLE.md habit 5): an answer that breaks a rule raises
:class:`~arena.errors.IllegalPlay` and leaves the machine unchanged; driving the
machine wrongly (answering for a seat that was not asked) raises
:class:`~arena.errors.StateError`.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Final, NamedTuple

from arena.errors import IllegalPlay, StateError
from arena.game.bidding import apply_window, bid_window, trump_from_kitty
from arena.game.events import (
    Action,
    BidMade,
    CardDealt,
    CardsPlayed,
    DealEnded,
    DealStarted,
    Decision,
    Event,
    Kind,
    KittyBuried,
    KittyTaken,
    PenaltyApplied,
    Redealt,
    ThrowFailed,
    TrickWon,
    TrumpDeclared,
)
from arena.game.fallback import FallbackBasis
from arena.game.settle import settle_deal
from arena.game.snapshot import DealSnapshot, PastTrick, Phase
from arena.rules import (
    LEGAL,
    SEATS,
    Bid,
    Card,
    CardOrder,
    Leading,
    LeadVerdict,
    Position,
    Rank,
    RuleSet,
    Trump,
    Unit,
    Verdict,
    card_order,
    check_bid,
    check_bury,
    check_play,
    first_leading,
    next_leading,
)


class Step(enum.Enum):
    """The inputs the machine gives itself when a phase's work is done."""

    NO_BID = "no bid in the first deal"  # deal again
    TRUMP_SET = "trump settled"  # the dealer takes the kitty
    LAST_TRICK = "the last trick was won"  # settle the deal


class Answer(NamedTuple):
    """A seat's answer, judged: the decision it answers, the cards, the verdict."""

    decision: Decision
    action: Action
    verdict: Verdict


class DealMachine:
    """One deal, from the first card dealt to the result (RULES.md §5–§8).

    ``cards`` is the shuffled deck in dealing order. ``dealer`` is ``None`` in the first
    deal of a match, where the bidding decides it; then ``redeal_fallback`` says whether
    a deal without any bid falls back to the first seat (after three redeals) instead of
    ending in a redeal (the snapshot's ``redeal`` is then true).
    """

    def __init__(
        self,
        rules: RuleSet,
        cards: Sequence[Card],
        *,
        deal: int,
        dealer: int | None,
        levels: tuple[Rank, Rank],
        first_seat: int,
        attempt: int = 0,
        redeal_fallback: bool = False,
    ) -> None:
        self.rules: Final = rules
        self.deal: Final = deal  # the deal's number, from 1
        self._attempt = attempt
        self._dealer = dealer
        self._levels = levels
        self._level = levels[SEATS[dealer].team] if dealer is not None else rules.start_level
        self._first_seat = first_seat
        self._redeal_fallback = redeal_fallback
        self._deck = tuple(cards)
        self._phase = Phase.BIDDING
        self.events: Final[list[Event]] = []
        self._snapshot: DealSnapshot | None = None
        self._hands: list[list[Card]] = [[], [], [], []]
        self._kitty: list[Card] = []
        self._redeal = False
        # bidding
        self._bids: list[Bid] = []
        self._winning: Bid | None = None
        self._dealt = 0
        self._seen: list[frozenset[Action]] = [frozenset()] * 4
        self._closing = False
        self._window: dict[int, Decision] = {}
        self._answers: dict[int, Action] = {}
        # play
        self._trump: Trump | None = None
        self._order: CardOrder | None = None
        self._trick = 1
        self._leader = 0
        self._plays: list[tuple[int, Action]] = []
        self._played: list[Card] = []  # the cards of finished tricks
        self._leading = Leading(0, 0, (), 0)  # the play winning the trick in progress
        self._lead_units: tuple[Unit, ...] = ()
        self._previous: PastTrick | None = None
        self._revealed: list[list[Card]] = [[], [], [], []]
        self._trick_points = 0
        self._points_by_seat = [0, 0, 0, 0]  # card points won in tricks, per seat
        self._throw_penalties = 0
        self._team_penalties = [0, 0]
        self._ended: tuple[DealEnded, bool] | None = None  # the result, the match won
        expected = 4 * rules.hand_size + rules.kitty_size
        if len(self._deck) != expected:
            raise StateError(f"a deck for this deal needs {expected} cards, not {len(self._deck)}")
        self._emit(DealStarted(deal, attempt, dealer, self._level, first_seat, levels))
        self._fire(self._deal_on())

    # -- the public verbs ----------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def trick(self) -> int:
        """The number of the trick in progress (from 1)."""
        return self._trick

    def snapshot(self) -> DealSnapshot:
        """The deal as of now, frozen (made once per change)."""
        if self._snapshot is None:
            self._snapshot = self._freeze()
        return self._snapshot

    @property
    def position(self) -> Position:
        """The rules' view of the deal now (what the legality API judges against)."""
        return self.snapshot().position

    def __repr__(self) -> str:
        return f"<DealMachine deal {self.deal} {self._phase.value}: {self.position}>"

    def pending(self) -> tuple[Decision, ...]:
        """The decisions waiting for an answer (several only in a bid window)."""
        return tuple(d for s, d in self._window.items() if s not in self._answers)

    def answer(self, seat: int, action: Sequence[Card]) -> list[Event]:
        """Apply ``seat``'s answer; return the events it caused (none until a bid window
        has every answer).

        Raises:
            IllegalPlay: the answer breaks a rule; the machine is unchanged.
            StateError: ``seat`` has no pending decision.
        """
        decision = self._pending_for(seat)
        cards = tuple(action)
        verdict = self._judge(decision, cards)
        if not verdict.legal:
            raise IllegalPlay(verdict.reason)
        start = len(self.events)
        self._fire(decision.kind, Answer(decision, cards, verdict))
        return self.events[start:]

    def check(self, seat: int, action: Sequence[Card]) -> Verdict:
        """Judge an answer without applying it (the ``Check`` dry run). A legal lead is
        plain :data:`LEGAL`: whether a throw would fail tells what others hold."""
        verdict = self._judge(self._pending_for(seat), tuple(action))
        return LEGAL if verdict.legal else Verdict(False, verdict.reason)

    def fallback(self, seat: int) -> Action:
        """The deterministic legal answer the referee plays on a timeout or fault."""
        return self.fallback_basis(seat).answer()

    def fallback_basis(self, seat: int) -> FallbackBasis:
        """What ``seat``'s fallback depends on, frozen now: it holds nothing of the
        machine, so it can travel with a request and never goes stale."""
        decision = self._pending_for(seat)
        return FallbackBasis(decision, self.position if decision.kind is not Kind.BID else None)

    def penalize(self, team: int, points: int, reason: str) -> list[Event]:
        """Charge ``points`` against ``team`` (a referee penalty, settled at deal end)."""
        if self._phase is Phase.OVER:
            raise StateError("the deal is over: penalties apply to the next deal")
        self._team_penalties[team] += points
        return [self._emit(PenaltyApplied(team, points, reason))]

    # -- the machinery -------------------------------------------------------------------

    def _fire(self, what: Kind | Step | None, answer: Answer | None = None) -> None:
        """Feed ``what`` through :data:`TRANSITIONS`, then any step its handler returns."""
        while what is not None:
            row = TRANSITIONS.get((self._phase, what))
            if row is None:
                raise StateError(f"no {what.value} is allowed in phase {self._phase.value}")
            handler, after = row
            what = handler(self, answer)
            self._phase, answer, self._snapshot = after, None, None

    def _pending_for(self, seat: int) -> Decision:
        decision = self._window.get(seat)
        if decision is None or seat in self._answers:
            asked = ", ".join(str(d.seat) for d in self.pending()) or "nobody"
            raise StateError(f"seat {seat} has no pending decision (waiting for {asked})")
        return decision

    def _judge(self, decision: Decision, action: Action) -> Verdict:
        """One verdict per answer, from the legality API (a lead's is a LeadVerdict)."""
        if decision.kind is Kind.BID:
            return check_bid(self.position, decision.seat, action)
        if decision.kind is Kind.BURY:
            return check_bury(self.position, action)
        return check_play(self.position, action)

    def _emit(self, event: Event) -> Event:
        self.events.append(event)
        self._snapshot = None
        return event

    def _freeze(self) -> DealSnapshot:
        h, r = self._hands, self._revealed
        hands = (tuple(h[0]), tuple(h[1]), tuple(h[2]), tuple(h[3]))
        plays = tuple(self._plays)
        bidding = self._phase is Phase.BIDDING
        position = Position(
            hands, self._level, self._trump, self._dealer, None if bidding else tuple(self._kitty),
            self._leader, tuple(cards for _, cards in plays), self._trick_points,
            self._winning, self.rules, self._lead_units if plays else None,
        )  # fmt: skip
        s, t = self._points_by_seat, self._team_penalties
        ended, won = self._ended or (None, False)
        return DealSnapshot(
            self.rules, self.deal, self._attempt, self._phase, self._dealer, self._level,
            self._levels, self._first_seat, self._deck, self._dealt, hands, tuple(self._kitty),
            tuple(self._bids), self._winning, self._trump, self._order, self._trick,
            self._leader, plays, self._winning_seat() if plays else None, self._lead_units,
            self._previous, tuple(self._played), (tuple(r[0]), tuple(r[1]), tuple(r[2]),
            tuple(r[3])), self._trick_points, (s[0], s[1], s[2], s[3]),
            self._throw_penalties, (t[0], t[1]), ended, won, self._redeal,
            position,
        )  # fmt: skip

    # -- dealing and bidding (RULES.md §5) -----------------------------------------------

    def _deal_on(self) -> Step | None:
        """Deal rounds until a bid window opens, then the closing windows."""
        rounds = self.rules.hand_size
        while self._dealt < rounds:
            self._dealt += 1
            base = (self._dealt - 1) * 4
            for i in range(4):
                seat = (self._first_seat + i) & 3
                card = self._deck[base + i]
                self._hands[seat].append(card)
                self._emit(CardDealt(seat, card))
            if self._open_window(closing=False):
                return None
        self._kitty = list(self._deck[4 * rounds :])
        return None if self._open_window(closing=True) else self._close_bidding()

    def _open_window(self, closing: bool) -> bool:
        self._closing = closing
        self._window = bid_window(self.position, self._seen, closing)
        self._answers = {}
        return bool(self._window)

    def _on_bid(self, answer: Answer | None) -> Step | None:
        assert answer is not None
        seat = answer.decision.seat
        self._answers[seat] = answer.action
        self._seen[seat] = frozenset(answer.decision.options)
        if len(self._answers) < len(self._window):
            return None
        start = self._dealer if self._dealer is not None else self._first_seat
        made = apply_window(self._answers, start, self.position)
        for bid in made:
            self._winning = bid
            self._bids.append(bid)
            self._emit(BidMade(bid.seat, bid.cards))
        self._window, self._answers = {}, {}
        if not self._closing:
            return self._deal_on()
        if made and self._open_window(closing=True):
            return None
        return self._close_bidding()

    def _close_bidding(self) -> Step:
        self._window, self._answers = {}, {}
        if self._winning is None and self._dealer is None and not self._redeal_fallback:
            return Step.NO_BID
        return Step.TRUMP_SET

    def _on_no_bid(self, _: Answer | None) -> None:
        self._redeal = True
        self._emit(Redealt(self._attempt + 1, "no bid in the first deal"))

    def _on_trump(self, _: Answer | None) -> None:
        revealed: tuple[Card, ...] = ()
        if self._winning is not None:
            suit, source = self._winning.suit, "bid"
            if self._dealer is None:
                self._dealer = self._winning.seat
        else:
            source = "kitty" if self._dealer is not None else "redeal_fallback"
            if self._dealer is None:
                self._dealer = self._first_seat
            suit, revealed = trump_from_kitty(self._kitty, self._level, self.rules.no_bid)
        self._trump = Trump(self._level, suit)
        self._order = card_order(self._trump, self.rules)
        bidder = self._winning.seat if self._winning else None
        dealer = self._dealer
        self._emit(TrumpDeclared(
            self._level, suit.value if suit else None, dealer, source, bidder, revealed
        ))  # fmt: skip
        self._hands[dealer].extend(self._kitty)
        self._emit(KittyTaken(dealer, tuple(self._kitty)))
        self._window = {dealer: Decision(dealer, Kind.BURY, count=self.rules.kitty_size)}

    # -- the kitty (RULES.md §6) ---------------------------------------------------------

    def _on_bury(self, answer: Answer | None) -> None:
        assert answer is not None
        dealer = answer.decision.seat
        hand = self._hands[dealer]
        for card in answer.action:
            hand.remove(card)
        self._kitty = list(answer.action)
        self._emit(KittyBuried(dealer, answer.action))
        self._leader = dealer
        self._window = {dealer: Decision(dealer, Kind.PLAY)}

    # -- tricks (RULES.md §7) ------------------------------------------------------------

    def _on_play(self, answer: Answer | None) -> Step | None:
        assert answer is not None and self._order is not None
        decision, action, lead = answer
        seat, order, landed = decision.seat, self._order, action
        if isinstance(lead, LeadVerdict):  # judged once, in answer(): what lands, what it costs
            landed = lead.played
            self._lead_units = lead.units
            if lead.failed:
                self._throw_penalties += lead.penalty
                # shown cards stay shown: a second failed throw shows only what is new
                union = Counter(self._revealed[seat]) | Counter(lead.returned)
                self._revealed[seat] = list(union.elements())
                self._emit(ThrowFailed(
                    seat, action, landed, lead.returned, lead.blocker or 0, lead.penalty
                ))  # fmt: skip
        hand, shown = self._hands[seat], self._revealed[seat]
        for card in landed:
            hand.remove(card)
            if card in shown:
                shown.remove(card)
        plays = self._plays
        if plays:  # who leads the trick now (RULES.md §7, Winning a trick)
            led = order.lane[plays[0][1][0].index]
            self._leading = next_leading(self._leading, len(plays), landed, self._lead_units,
                                         led, order)  # fmt: skip
        else:
            self._leading = first_leading(landed, self._lead_units, order)
        plays.append((seat, landed))
        self._emit(CardsPlayed(seat, self._trick, landed))
        if len(plays) < 4:
            nxt = (seat + 1) & 3
            self._window = {nxt: Decision(nxt, Kind.PLAY, count=len(landed), lead=plays[0][1])}
            return None
        winner = self._winning_seat()
        won = sum(card.points for _, cards in plays for card in cards)
        self._points_by_seat[winner] += won
        if self._dealer is None or SEATS[winner].team != SEATS[self._dealer].team:
            self._trick_points += won
        self._emit(TrickWon(self._trick, winner, won, self._trick_points))
        self._previous = PastTrick(self._leader, tuple(plays), winner)
        for _, cards in plays:
            self._played.extend(cards)
        self._trick += 1
        self._plays = []
        self._leader = winner
        if self._hands[winner]:
            self._lead_units = ()
            self._window = {winner: Decision(winner, Kind.PLAY)}
            return None
        return Step.LAST_TRICK

    def _winning_seat(self) -> int:
        """The seat winning the trick in progress so far (the leader before any follow)."""
        return (self._leader + self._leading.place) & 3 if self._plays else self._leader

    # -- the end of the deal (RULES.md §8) ----------------------------------------------

    def _on_end(self, _: Answer | None) -> None:
        self._window = {}
        assert self._previous is not None and self._dealer is not None
        dealer = self._dealer
        team = SEATS[dealer].team
        faults = self._team_penalties[team] - self._team_penalties[1 - team]
        self._ended = settle_deal(
            self.rules, self.deal, dealer, self._levels, self._trick_points, self._kitty,
            self._previous.winner, self._lead_units, self._throw_penalties, faults,
        )  # fmt: skip
        self._emit(self._ended[0])


Handler = Callable[[DealMachine, Answer | None], Step | None]

TRANSITIONS: Final[dict[tuple[Phase, Kind | Step], tuple[Handler, Phase]]] = {
    # phase           input             handler                  next phase
    (Phase.BIDDING, Kind.BID): (DealMachine._on_bid, Phase.BIDDING),
    (Phase.BIDDING, Step.NO_BID): (DealMachine._on_no_bid, Phase.OVER),
    (Phase.BIDDING, Step.TRUMP_SET): (DealMachine._on_trump, Phase.BURYING),
    (Phase.BURYING, Kind.BURY): (DealMachine._on_bury, Phase.PLAYING),
    (Phase.PLAYING, Kind.PLAY): (DealMachine._on_play, Phase.PLAYING),
    (Phase.PLAYING, Step.LAST_TRICK): (DealMachine._on_end, Phase.OVER),
}
"""Every move of a deal: (phase, input) → (handler, the phase after it). An answer's
input is its decision's kind; a handler returns the step that follows, if any. Anything
not in the table is a StateError."""

__all__ = ["TRANSITIONS", "Answer", "DealMachine", "Phase", "Step"]
