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

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Final

from arena.errors import IllegalPlay, StateError
from arena.game.bidding import apply_window, bid_window, trump_from_kitty
from arena.game.deal_state import Answer, DealState, Step
from arena.game.events import (
    Action,
    BidMade,
    CardDealt,
    CardsPlayed,
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
from arena.game.fallback import FallbackBasis, Handouts
from arena.game.settle import settle_deal
from arena.game.snapshot import DealSnapshot, PastTrick, Phase
from arena.rules import (
    LEGAL,
    SEATS,
    Card,
    LeadVerdict,
    Position,
    Rank,
    RuleSet,
    Seat,
    Side,
    Trump,
    Verdict,
    card_order,
    check_bid,
    check_bury,
    check_play,
    first_leading,
    next_leading,
    other_team,
)


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
        level = levels[Seat(dealer).team] if dealer is not None else rules.start_level
        self._s = DealState(
            rules, deal, attempt, dealer, levels, level, first_seat, redeal_fallback, tuple(cards)
        )
        self.events: Final[list[Event]] = []
        self._snapshot: DealSnapshot | None = None  # caches, dropped at every change
        self._position: Position | None = None
        self._handouts = Handouts()  # the fallback bases handed out: they judge for it
        expected = 4 * rules.hand_size + rules.kitty_size
        if len(self._s.deck) != expected:
            raise StateError(
                f"a deck for this deal needs {expected} cards, not {len(self._s.deck)}"
            )
        self._emit(DealStarted(deal, attempt, dealer, self._s.level, first_seat, levels))
        self._fire(self._deal_on())

    # -- the public verbs ----------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self._s.phase

    @property
    def trick(self) -> int:
        """The number of the trick in progress (from 1)."""
        return self._s.trick

    def snapshot(self) -> DealSnapshot:
        """The deal as of now, frozen (made once per change)."""
        if self._snapshot is None:
            self._snapshot = self._s.freeze()
        return self._snapshot

    @property
    def position(self) -> Position:
        """The rules' view of the deal now (what the legality API judges against)."""
        if self._position is None:
            self._position = self._s.position(self._snapshot)
        return self._position

    def __repr__(self) -> str:
        return f"<DealMachine deal {self.deal} {self._s.phase.value}: {self.position}>"

    def pending(self) -> tuple[Decision, ...]:
        """The decisions waiting for an answer (several only in a bid window)."""
        window, answers = self._s.window, self._s.answers
        if not answers:  # (a play, a burial, a fresh bid window: nobody has answered)
            return tuple(window.values())
        return tuple(d for s, d in window.items() if s not in answers)

    def answer(self, seat: int, action: Sequence[Card]) -> list[Event]:
        """Apply ``seat``'s answer; return the events it caused (none until a bid window
        has every answer).

        Raises:
            IllegalPlay: the answer breaks a rule; the machine is unchanged.
            StateError: ``seat`` has no pending decision.
        """
        decision = self._pending_for(seat)
        cards = tuple(action)
        basis = self._handouts.valid(decision, self._snapshot)
        verdict = basis.judge(cards) if basis is not None else None
        if verdict is None:
            verdict = self._judge(decision, cards)
        if not verdict.legal:
            raise IllegalPlay(verdict.reason)
        start = len(self.events)
        judged = tuple.__new__(Answer, (decision, cards, verdict))  # (without its __new__)
        self._fire(decision.kind, judged)
        return self.events[start:]

    def check(self, seat: int, action: Sequence[Card]) -> Verdict:
        """Judge an answer without applying it (the ``Check`` dry run). A legal lead is
        plain :data:`LEGAL`: whether a throw would fail tells what others hold."""
        verdict = self._judge(self._pending_for(seat), tuple(action))
        return LEGAL if verdict.legal else Verdict(False, verdict.reason)

    def fallback(self, seat: int) -> Action:
        """The deterministic legal answer the referee plays on a timeout or fault
        (the one the seat's request computed, if it did and nothing changed since)."""
        decision, handouts = self._pending_for(seat), self._handouts
        basis = handouts.valid(decision, self._snapshot)
        return (basis or handouts.give(decision, self.snapshot())).answer()

    def fallback_basis(self, seat: int) -> FallbackBasis:
        """What ``seat``'s fallback depends on, frozen now: it holds nothing of the
        machine, so it can travel with a request and never goes stale. The machine
        keeps it too, to judge with it while nothing changes (:meth:`FallbackBasis.judge`)."""
        return self._handouts.give(self._pending_for(seat), self.snapshot())  # the view's

    def penalize(self, team: int, points: int, reason: str) -> list[Event]:
        """Charge ``points`` against ``team`` (a referee penalty, settled at deal end)."""
        if self._s.phase is Phase.OVER:
            raise StateError("the deal is over: penalties apply to the next deal")
        self._s.team_penalties[team] += points
        return [self._emit(PenaltyApplied(team, points, reason))]

    # -- the machinery -------------------------------------------------------------------

    def _fire(self, what: Kind | Step | None, answer: Answer | None = None) -> None:
        """Feed ``what`` through :data:`TRANSITIONS`, then any step its handler returns."""
        while what is not None:
            row = TRANSITIONS.get((self._s.phase, what))
            if row is None:
                raise StateError(f"no {what.value} is allowed in phase {self._s.phase.value}")
            handler, after = row
            what = handler(self, answer)
            self._s.phase, answer = after, None
            self._snapshot = self._position = None

    def _pending_for(self, seat: int) -> Decision:
        decision = self._s.window.get(seat)
        if decision is None or seat in self._s.answers:
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
        self._snapshot = self._position = None
        return event

    # -- dealing and bidding (RULES.md §5) -----------------------------------------------

    def _deal_on(self) -> Step | None:
        """Deal rounds until a bid window opens, then the closing windows."""
        rounds = self.rules.hand_size
        while self._s.dealt < rounds:
            self._s.dealt += 1
            base = (self._s.dealt - 1) * 4
            for i in range(4):
                seat = SEATS[(self._s.first_seat + i) & 3]  # Seat(first).after(i), at once
                card = self._s.deck[base + i]
                self._s.hands[seat] += (card,)
                self._emit(CardDealt(seat, card))
            if self._open_window(closing=False):
                return None
        self._s.kitty = self._s.deck[4 * rounds :]
        return None if self._open_window(closing=True) else self._close_bidding()

    def _open_window(self, closing: bool) -> bool:
        self._s.closing = closing
        self._s.window = bid_window(self.position, self._s.seen, closing)
        self._s.answers = {}
        return bool(self._s.window)

    def _on_bid(self, answer: Answer | None) -> Step | None:
        assert answer is not None
        seat = answer.decision.seat
        self._s.answers[seat] = answer.action
        self._s.seen[seat] = frozenset(answer.decision.options)
        if len(self._s.answers) < len(self._s.window):
            return None
        start = self._s.dealer if self._s.dealer is not None else self._s.first_seat
        made = apply_window(self._s.answers, start, self.position)
        for bid in made:
            self._s.winning = bid
            self._s.bids += (bid,)
            self._emit(BidMade(bid.seat, bid.cards))
        self._s.window, self._s.answers = {}, {}
        if not self._s.closing:
            return self._deal_on()
        if made and self._open_window(closing=True):
            return None
        return self._close_bidding()

    def _close_bidding(self) -> Step:
        self._s.window, self._s.answers = {}, {}
        if self._s.winning is None and self._s.dealer is None and not self._s.redeal_fallback:
            return Step.NO_BID
        return Step.TRUMP_SET

    def _on_no_bid(self, _: Answer | None) -> None:
        self._s.redeal = True
        self._emit(Redealt(self._s.attempt + 1, "no bid in the first deal"))

    def _on_trump(self, _: Answer | None) -> None:
        revealed: tuple[Card, ...] = ()
        if self._s.winning is not None:
            suit, source = self._s.winning.suit, "bid"
            if self._s.dealer is None:
                self._s.dealer = self._s.winning.seat
        else:
            source = "kitty" if self._s.dealer is not None else "redeal_fallback"
            if self._s.dealer is None:
                self._s.dealer = self._s.first_seat
            suit, revealed = trump_from_kitty(self._s.kitty, self._s.level, self.rules.no_bid)
        self._s.trump = Trump(self._s.level, suit)
        order = self._s.order = card_order(self._s.trump, self.rules)
        bidder = self._s.winning.seat if self._s.winning else None
        dealer = self._s.dealer
        self._emit(TrumpDeclared(
            self._s.level, suit, dealer, source, bidder, revealed
        ))  # fmt: skip
        hands = self._s.hands
        hands[dealer] += self._s.kitty
        # the hands as held from now on, sorted once per deal (then kept, card by card)
        self._s.held = [tuple(order.sort(list(hand))) for hand in hands]
        self._emit(KittyTaken(dealer, self._s.kitty))
        self._s.window = {dealer: Decision(dealer, Kind.BURY, count=self.rules.kitty_size)}

    # -- the kitty (RULES.md §6) ---------------------------------------------------------

    def _on_bury(self, answer: Answer | None) -> None:
        assert answer is not None
        dealer = answer.decision.seat
        self._s.take_out(dealer, answer.action)
        self._s.kitty = answer.action
        self._emit(KittyBuried(dealer, answer.action))
        self._s.leader = dealer
        self._s.window = {dealer: Decision(dealer, Kind.PLAY)}

    # -- tricks (RULES.md §7) ------------------------------------------------------------

    def _on_play(self, answer: Answer | None) -> Step | None:
        s = self._s
        assert answer is not None and s.order is not None
        decision, action, lead = answer
        seat, order, landed = decision.seat, s.order, action
        if type(lead) is LeadVerdict:  # judged once, in answer(): what lands, what it costs
            landed = lead.played
            s.lead_units = lead.units
            if lead.failed:
                s.throw_penalties += lead.penalty
                # shown cards stay shown: a second failed throw shows only what is new
                union = Counter(s.revealed[seat]) | Counter(lead.returned)
                s.revealed[seat] = tuple(union.elements())
                self._emit(ThrowFailed(
                    seat, action, landed, lead.returned, lead.blocker or 0, lead.penalty
                ))  # fmt: skip
        s.take_out(seat, landed)
        plays = s.plays
        if plays:  # who leads the trick now (RULES.md §7, Winning a trick)
            led = order.lane[plays[0][1][0].index]
            s.leading = next_leading(s.leading, len(plays), landed, s.lead_units, led, order)
        else:
            s.leading = first_leading(landed, s.lead_units, order)
        plays.append((seat, landed))
        self.events.append(CardsPlayed(seat, s.trick, landed))  # (_fire drops the caches)
        if len(plays) < 4:
            nxt = SEATS[(seat + 1) & 3]
            s.window = {nxt: Decision(nxt, Kind.PLAY, len(landed), (), plays[0][1])}
            return None
        winner = self._s.winning_seat()
        won = sum(card.points for _, cards in plays for card in cards)
        self._s.points_by_seat[winner] += won
        if self._s.dealer is None or Seat(winner).side(self._s.dealer) is Side.ATTACKERS:
            self._s.trick_points += won
        self._emit(TrickWon(self._s.trick, winner, won, self._s.trick_points))
        self._s.previous = PastTrick(self._s.leader, tuple(plays), winner)
        self._s.played += tuple(c for _, cards in plays for c in cards)
        self._s.trick += 1
        self._s.plays = []
        self._s.leader = winner
        if self._s.hands[winner]:
            self._s.lead_units = ()
            self._s.window = {winner: Decision(winner, Kind.PLAY)}
            return None
        return Step.LAST_TRICK

    # -- the end of the deal (RULES.md §8) ----------------------------------------------

    def _on_end(self, _: Answer | None) -> None:
        self._s.window = {}
        assert self._s.previous is not None and self._s.dealer is not None
        dealer = self._s.dealer
        team = Seat(dealer).team
        faults = self._s.team_penalties[team] - self._s.team_penalties[other_team(team)]
        self._s.ended = settle_deal(
            self.rules, self.deal, dealer, self._s.levels, self._s.trick_points, self._s.kitty,
            self._s.previous.winner, self._s.lead_units, self._s.throw_penalties, faults,
        )  # fmt: skip
        self._emit(self._s.ended[0])


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
