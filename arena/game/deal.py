"""The deal state machine: dealing with bid windows, the kitty, 25 tricks, the result.

Sans-IO in the style of h11: the machine says which decisions are pending
(:meth:`DealMachine.pending`), takes answers (:meth:`DealMachine.answer`) and returns
the events they caused. It never waits, reads no clock and draws no random number.

Blame lives in the type (STYLE.md habit 5): an answer that breaks a rule raises
:class:`~arena.errors.IllegalPlay` and leaves the machine unchanged; driving the
machine wrongly (answering for a seat that was not asked) raises
:class:`~arena.errors.StateError`.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Final

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
from arena.rules import (
    LEGAL,
    Bid,
    Card,
    CardOrder,
    Leading,
    Rank,
    RuleSet,
    Seat,
    Side,
    Trump,
    Unit,
    Verdict,
    card_order,
    check_bid,
    check_follow,
    check_lead,
    first_leading,
    format_cards,
    missing_from,
    next_leading,
    other_team,
)


class Phase(enum.Enum):
    BIDDING = "bidding"
    BURYING = "burying"
    PLAYING = "playing"
    OVER = "over"


class DealMachine:
    """One deal, from the first card dealt to the result (RULES.md §5–§8).

    ``cards`` is the shuffled deck in dealing order. ``dealer`` is ``None`` in the first
    deal of a match, where the bidding decides it; then ``redeal_fallback`` says whether
    a deal without any bid falls back to the first seat (after three redeals) instead of
    ending in a redeal (``self.redeal`` is then true).
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
        self.rules = rules
        self.deal = deal
        self.attempt = attempt
        self.dealer = dealer
        self.levels = levels
        self.level = levels[Seat(dealer).team] if dealer is not None else rules.start_level
        self.first_seat = first_seat
        self.redeal_fallback = redeal_fallback
        self.deck = tuple(cards)
        self.hands: list[list[Card]] = [[], [], [], []]
        self.kitty: list[Card] = []
        self.phase = Phase.BIDDING
        self.events: list[Event] = []
        self.redeal = False
        # bidding
        self.bids: list[Bid] = []
        self.winning: Bid | None = None
        self.dealt = 0
        self._seen: list[frozenset[Action]] = [frozenset()] * 4
        self._closing = False
        self._window: dict[int, Decision] = {}
        self._answers: dict[int, Action] = {}
        # play
        self.trump: Trump | None = None
        self.order: CardOrder | None = None
        self.trick = 1  # numbered from 1 within the deal
        self.leader = 0
        self.plays: list[tuple[int, Action]] = []
        self.played: list[Card] = []  # the cards of finished tricks
        self.leading = Leading(0, 0, (), 0)  # the play winning the trick in progress
        self.lead_units: list[Unit] = []
        self.previous: tuple[int, list[tuple[int, Action]], int] | None = None
        self.revealed: list[list[Card]] = [[], [], [], []]
        self.trick_points = 0
        self.points_by_seat = [0, 0, 0, 0]  # card points won in tricks, per seat
        self.throw_penalties = 0
        self.team_penalties = [0, 0]
        self.result: DealEnded | None = None
        self.match_won = False
        expected = 4 * rules.hand_size + rules.kitty_size
        if len(self.deck) != expected:
            raise StateError(f"a deck for this deal needs {expected} cards, not {len(self.deck)}")
        self._emit(DealStarted(deal, attempt, dealer, self.level, first_seat, levels))
        self._deal_on()

    # -- the public verbs ----------------------------------------------------------------

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
        handler = _MOVES.get((self.phase, decision.kind))
        if handler is None:
            raise StateError(f"no {decision.kind.value} is allowed in phase {self.phase.value}")
        verdict = self._judge(decision, tuple(action))
        if not verdict.legal:
            raise IllegalPlay(verdict.reason)
        start = len(self.events)
        handler(self, decision, tuple(action))
        return self.events[start:]

    def check(self, seat: int, action: Sequence[Card]) -> Verdict:
        """Judge an answer without applying it (the ``Check`` dry run)."""
        return self._judge(self._pending_for(seat), tuple(action))

    def fallback(self, seat: int) -> Action:
        """The deterministic legal answer the referee plays on a timeout or fault."""
        return self.fallback_basis(seat).answer()

    def fallback_basis(self, seat: int) -> FallbackBasis:
        """What ``seat``'s fallback depends on, frozen now: it holds nothing of the
        machine, so it can travel with a request and never goes stale."""
        decision = self._pending_for(seat)
        order = self._order() if decision.kind is not Kind.BID else None
        return FallbackBasis(decision, tuple(self.hands[seat]), order, tuple(self.lead_units))

    def penalize(self, team: int, points: int, reason: str) -> list[Event]:
        """Charge ``points`` against ``team`` (a referee penalty, settled at deal end)."""
        if self.phase is Phase.OVER:
            raise StateError("the deal is over: penalties apply to the next deal")
        self.team_penalties[team] += points
        return [self._emit(PenaltyApplied(team, points, reason))]

    # -- judging -------------------------------------------------------------------------

    def _pending_for(self, seat: int) -> Decision:
        decision = self._window.get(seat)
        if decision is None or seat in self._answers:
            asked = ", ".join(str(d.seat) for d in self.pending()) or "nobody"
            raise StateError(f"seat {seat} has no pending decision (waiting for {asked})")
        return decision

    def _judge(self, decision: Decision, action: Action) -> Verdict:
        seat = decision.seat
        hand = self.hands[seat]
        if decision.kind is Kind.BID:
            return check_bid(self.level, seat, hand, self.winning, action, self.rules)
        if decision.kind is Kind.BURY:
            if len(action) != decision.count:
                return Verdict(False, f"bury exactly {decision.count} cards, not {len(action)}")
            missing = missing_from(hand, action)
            return Verdict(False, f"not in hand: {format_cards(missing)}") if missing else LEGAL
        order = self._order()
        if not decision.lead:
            lead = check_lead(seat, self.hands, action, order, self._dealer())
            return Verdict(lead.legal, lead.reason) if not lead.legal else LEGAL
        return check_follow(decision.lead, hand, action, order, self.lead_units)

    def _order(self) -> CardOrder:
        if self.order is None:
            raise StateError("no trump has been declared yet")
        return self.order

    def _dealer(self) -> int:
        if self.dealer is None:
            raise StateError("no dealer yet")
        return self.dealer

    def _emit(self, event: Event) -> Event:
        self.events.append(event)
        return event

    # -- dealing and bidding (RULES.md §5) -----------------------------------------------

    def _deal_on(self) -> None:
        """Deal rounds until a bid window opens, then the closing windows."""
        rounds = self.rules.hand_size
        while self.dealt < rounds:
            self.dealt += 1
            base = (self.dealt - 1) * 4
            for i in range(4):
                seat = Seat(self.first_seat).after(i)
                card = self.deck[base + i]
                self.hands[seat].append(card)
                self._emit(CardDealt(seat, card))
            if self._open_window(closing=False):
                return
        self.kitty = list(self.deck[4 * rounds :])
        if not self._open_window(closing=True):
            self._finish_bidding()

    def _open_window(self, closing: bool) -> bool:
        self._closing = closing
        self._window = bid_window(
            self.hands, self.level, self.winning, self.rules, self._seen, closing
        )
        self._answers = {}
        return bool(self._window)

    def _on_bid(self, decision: Decision, action: Action) -> None:
        self._answers[decision.seat] = action
        self._seen[decision.seat] = frozenset(decision.options)
        if len(self._answers) < len(self._window):
            return
        start = self.dealer if self.dealer is not None else self.first_seat
        made = apply_window(self._answers, start, self.hands, self.level, self.winning, self.rules)
        for bid in made:
            self.winning = bid
            self.bids.append(bid)
            self._emit(BidMade(bid.seat, bid.cards))
        self._window, self._answers = {}, {}
        if not self._closing:
            self._deal_on()
        elif not (made and self._open_window(closing=True)):
            self._finish_bidding()

    def _finish_bidding(self) -> None:
        self._window, self._answers = {}, {}
        revealed: tuple[Card, ...] = ()
        if self.winning is not None:
            suit, source = self.winning.suit, "bid"
            if self.dealer is None:
                self.dealer = self.winning.seat
        elif self.dealer is None and not self.redeal_fallback:
            self.redeal = True
            self.phase = Phase.OVER
            self._emit(Redealt(self.attempt + 1, "no bid in the first deal"))
            return
        else:
            source = "kitty" if self.dealer is not None else "redeal_fallback"
            if self.dealer is None:
                self.dealer = self.first_seat
            suit, revealed = trump_from_kitty(self.kitty, self.level, self.rules.no_bid)
        self.trump = Trump(self.level, suit)
        self.order = card_order(self.trump, self.rules)
        bidder = self.winning.seat if self.winning else None
        self._emit(TrumpDeclared(self.level, suit, self.dealer, source, bidder, revealed))
        dealer = self.dealer
        self.hands[dealer].extend(self.kitty)
        self._emit(KittyTaken(dealer, tuple(self.kitty)))
        self.phase = Phase.BURYING
        self._window = {dealer: Decision(dealer, Kind.BURY, count=self.rules.kitty_size)}

    # -- the kitty (RULES.md §6) ---------------------------------------------------------

    def _on_bury(self, decision: Decision, action: Action) -> None:
        dealer = decision.seat
        hand = self.hands[dealer]
        for card in action:
            hand.remove(card)
        self.kitty = list(action)
        self._emit(KittyBuried(dealer, action))
        self.phase = Phase.PLAYING
        self.leader = dealer
        self._window = {dealer: Decision(dealer, Kind.PLAY)}

    # -- tricks (RULES.md §7) ------------------------------------------------------------

    def _on_play(self, decision: Decision, action: Action) -> None:
        seat = decision.seat
        order = self._order()
        landed = action
        if not decision.lead:
            lead = check_lead(seat, self.hands, action, order, self._dealer())
            landed = lead.played
            self.lead_units = list(lead.units)
            if lead.failed:
                self.throw_penalties += lead.penalty
                # shown cards stay shown: a second failed throw shows only what is new
                union = Counter(self.revealed[seat]) | Counter(lead.returned)
                self.revealed[seat] = list(union.elements())
                self._emit(
                    ThrowFailed(
                        seat, action, landed, lead.returned, lead.blocker or 0, lead.penalty
                    )
                )
        hand = self.hands[seat]
        shown = self.revealed[seat]
        for card in landed:
            hand.remove(card)
            if card in shown:
                shown.remove(card)
        if self.plays:  # who leads the trick now (RULES.md §7, Winning a trick)
            led = order.lane[self.plays[0][1][0].index]
            self.leading = next_leading(self.leading, len(self.plays), landed, self.lead_units,
                                        led, order)  # fmt: skip
        else:
            self.leading = first_leading(landed, self.lead_units, order)
        self.plays.append((seat, landed))
        self._emit(CardsPlayed(seat, self.trick, landed))
        if len(self.plays) < 4:
            nxt = Seat(seat).next
            self._window = {nxt: Decision(nxt, Kind.PLAY, count=len(landed), lead=self.plays[0][1])}
            return
        winner = self.winning_seat
        won = sum(card.points for _, cards in self.plays for card in cards)
        self.points_by_seat[winner] += won
        if Seat(winner).side(self._dealer()) is Side.ATTACKERS:
            self.trick_points += won
        self._emit(TrickWon(self.trick, winner, won, self.trick_points))
        self.previous = (self.leader, self.plays, winner)
        for _, cards in self.plays:
            self.played.extend(cards)
        last_units = self.lead_units
        self.trick += 1
        self.plays = []
        self.leader = winner
        if self.hands[winner]:
            self._window = {winner: Decision(winner, Kind.PLAY)}
        else:
            self._end(winner, last_units)

    @property
    def winning_seat(self) -> int:
        """The seat winning the trick in progress so far (the leader before any follow)."""
        return Seat(self.leader).after(self.leading.place) if self.plays else self.leader

    # -- the end of the deal (RULES.md §8) ----------------------------------------------

    def _end(self, last_winner: int, last_units: Sequence[Unit]) -> None:
        self._window = {}
        self.phase = Phase.OVER
        dealer = self._dealer()
        team = Seat(dealer).team
        faults = self.team_penalties[team] - self.team_penalties[other_team(team)]
        self.result, self.match_won = settle_deal(
            self.rules, self.deal, dealer, self.levels, self.trick_points, self.kitty,
            last_winner, last_units, self.throw_penalties, faults,
        )  # fmt: skip
        self._emit(self.result)


_MOVES: Final[dict[tuple[Phase, Kind], Callable[[DealMachine, Decision, Action], None]]] = {
    (Phase.BIDDING, Kind.BID): DealMachine._on_bid,
    (Phase.BURYING, Kind.BURY): DealMachine._on_bury,
    (Phase.PLAYING, Kind.PLAY): DealMachine._on_play,
}
"""The allowed moves: (phase, decision kind) → handler. Anything else is a StateError."""
