"""The Botzone side of one seat, sans-IO: arena's requests in, Botzone's requests out.

:class:`BotzoneTable` reads the events arena sends a seat and keeps what a Botzone judge
would tell that seat's bot: the card ids (:class:`~arena.botzone.cards.DealIds`), the
``banking`` block, the last two tricks. For every arena :class:`~arena.v1.arena_pb2.Request`
it lists the Botzone turns to put to the bot (:meth:`BotzoneTable.next_turn`): a ``deal``
request for every card dealt to the seat since the last one (Botzone asks on every card,
arena only when a new bid is possible), then the ``cover`` or ``play`` request of the
decision itself. It judges each answer as a Botzone judge would (``INVALID_POKERID``,
``NOT_YOUR_POKER``) and builds the arena :class:`~arena.v1.arena_pb2.Action`.

Each arena deal is one Botzone game (a Botzone match is one deal): the requests,
responses, ``data`` and card ids start afresh at every ``DealStarted``.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from arena.botzone.cards import DealIds, IdClash, face_of, level_code
from arena.rules import Card, Rank, format_cards
from arena.server import cards_from_pb, cards_to_pb
from arena.v1 import arena_pb2 as pb

_SUIT_LETTERS = {pb.SPADES: "s", pb.HEARTS: "h", pb.CLUBS: "c", pb.DIAMONDS: "d"}
_games = itertools.count(1)


class BotzoneError(Exception):
    """A bot's answer a Botzone judge would reject: ``name`` is Botzone's verdict
    (``NJ``, ``INVALID_POKERID``, …) and ``kind`` the arena fault it becomes."""

    def __init__(self, name: str, reason: str, kind: pb.FaultKind.ValueType = pb.MALFORMED) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason
        self.kind = kind


@dataclasses.dataclass
class Game:
    """One Botzone game (one arena deal) as the bot sees it: what the process driver
    sends in default mode. ``id`` changes with every game, so a keep-running process of
    an earlier game is never fed a later one."""

    id: int = dataclasses.field(default_factory=lambda: next(_games))
    requests: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    responses: list[Any] = dataclasses.field(default_factory=list)
    data: str = ""


@dataclasses.dataclass
class Turn:
    """One Botzone request to put to the bot (its index in ``Game.requests``)."""

    stage: str  # "deal", "cover" or "play"
    request: dict[str, Any]
    index: int
    decision: bool  # the turn that answers the arena request itself (cover, play)


class BotzoneTable:
    """What one seat's Botzone bot has been told, and what it wants (see the module doc)."""

    def __init__(self, seat: int = -1) -> None:
        self.seat = seat
        self.notes: list[str] = []  # things worth a line in the seat log
        self._new_game(Rank.TWO, -1)

    def _new_game(self, level: Rank, dealer: int) -> None:
        self.game = Game()
        self.ids = DealIds()
        self.level = level
        self.first_round = dealer < 0
        self.banking: dict[str, Any] = {"called": -1, "snatched": -1, "major": "", "banker": dealer}
        self.queue: list[Turn] = []
        self.wish: tuple[Card, ...] = ()  # the bid the bot asked for, not yet made
        self.answered: dict[int, list[int]] = {}  # turn index -> ids the bot named
        self._decision_turn: Turn | None = None
        self._own_turn_at: int | None = None  # the turn whose cards are to leave the hand next
        self._failed_throw = False
        self.prev_trick: list[list[int]] = []
        self.trick: list[list[int]] = []
        self.prev_leader = max(dealer, 0)
        self.leader = max(dealer, 0)

    # -- arena's side ---------------------------------------------------------------------

    def absorb(self, events: Iterable[pb.Event]) -> None:
        """Follow the deal through arena's events (in order); queue ``deal`` turns."""
        for event in events:
            kind = event.WhichOneof("kind")
            if kind is None:
                continue
            handler = getattr(self, f"_on_{kind}", None)
            if handler is not None:
                handler(getattr(event, kind))

    def _on_deal_started(self, e: pb.DealStarted) -> None:
        self._new_game(Rank(e.level), e.dealer)

    def _on_card_dealt(self, e: pb.CardDealt) -> None:
        if e.seat == self.seat:
            ids = self.ids.receive(cards_from_pb([e.card]))
            self._queue("deal", {"stage": "deal", "deliver": ids, "global": self._global()})

    def _on_bid_made(self, e: pb.BidMade) -> None:
        if self.banking["called"] < 0:
            self.banking["called"] = e.seat
        else:
            self.banking["snatched"] = e.seat
        card = e.cards[0]
        self.banking["major"] = "n" if card.suit == pb.JOKER else _SUIT_LETTERS[card.suit]
        if e.seat == self.seat:
            self.wish = ()

    def _on_trump_declared(self, e: pb.TrumpDeclared) -> None:
        self.banking["banker"] = e.dealer
        self.banking["major"] = "n" if e.no_trump else _SUIT_LETTERS.get(e.suit, "n")
        self.prev_leader = self.leader = e.dealer

    def _on_kitty_taken(self, e: pb.KittyTaken) -> None:
        if e.seat == self.seat and e.cards:
            ids = self.ids.receive(cards_from_pb(e.cards))
            self._queue(
                "cover", {"stage": "cover", "deliver": ids, "global": self._global()}, decision=True
            )

    def _on_kitty_buried(self, e: pb.KittyBuried) -> None:
        if e.seat == self.seat and e.cards:
            self._leave(cards_from_pb(e.cards))

    def _on_throw_failed(self, e: pb.ThrowFailed) -> None:
        self._failed_throw = e.seat == self.seat

    def _on_cards_played(self, e: pb.CardsPlayed) -> None:
        cards = cards_from_pb(e.cards)
        if not self.trick:
            self.leader = e.seat
        ids = self._leave(cards) if e.seat == self.seat else self.ids.seen(cards)
        self.trick.append(ids)

    def _on_trick_won(self, e: pb.TrickWon) -> None:
        self.prev_trick, self.trick = self.trick, []
        self.prev_leader, self.leader = self.leader, e.winner

    def _leave(self, cards: tuple[Card, ...]) -> list[int]:
        """The seat's own cards left its hand: by the ids the bot named when it can. The
        bot's answer in the history becomes what really left when arena played something
        else for it (a fault's fallback), so a bot that replays its answers stays right;
        a failed throw keeps the bot's answer, as on Botzone."""
        at = self._own_turn_at
        named = self.answered.get(at, []) if at is not None else []
        ids = self.ids.release(cards, named)
        if at is not None and sorted(ids) != sorted(named) and not self._failed_throw:
            self.game.responses[at] = ids
        self._own_turn_at = None
        self._failed_throw = False
        return ids

    def _global(self) -> dict[str, Any]:
        return {
            "first_round": self.first_round,
            "level": level_code(self.level),
            "banking": dict(self.banking),
        }

    def _queue(self, stage: str, request: dict[str, Any], decision: bool = False) -> Turn:
        if not self.game.requests:
            request["playerpos"] = self.seat
        turn = Turn(stage, request, len(self.game.requests), decision)
        self.game.requests.append(request)
        self.game.responses.append([])  # until answered: what a pass or a fault leaves
        self.queue.append(turn)
        return turn

    # -- the bot's side -------------------------------------------------------------------

    def next_turn(self, request: pb.Request) -> Turn | None:
        """The next Botzone turn for arena's ``request`` (after :meth:`absorb` of its
        events), or ``None`` when the bot has been asked all it needs."""
        if not self.queue and request.kind == pb.PLAY and self._decision_turn is None:
            history = [
                [list(p) for p in self.prev_trick],
                [list(p) for p in self.trick],
                self.prev_leader,
                self.leader,
            ]  # copies: these lists grow on
            glob = {**self._global(), "total_score": request.view.attacker_points}
            self._queue(
                "play", {"stage": "play", "history": history, "global": glob}, decision=True
            )
        if not self.queue:
            return None
        turn = self.queue.pop(0)
        if turn.decision:
            self._decision_turn = turn
            self._own_turn_at = turn.index  # its cards leave the hand in the next events
        return turn

    def answer(self, turn: Turn, response: Any) -> None:
        """Take the bot's ``response`` to ``turn``.

        Raises:
            BotzoneError: the answer names an impossible id or a card the seat lacks.
        """
        self.game.responses[turn.index] = response
        try:
            ids = self._ids(response, turn.stage)
        except BotzoneError:
            if turn.stage == "deal":
                self.game.responses[turn.index] = []  # arena passed for it
            raise
        self.answered[turn.index] = ids
        if turn.stage == "deal" and ids:
            self.wish = tuple(face_of(i) for i in ids)

    def _ids(self, response: Any, stage: str) -> list[int]:
        if not isinstance(response, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in response
        ):
            raise BotzoneError(
                "INVALID_POKERID", f"{stage}: expected a list of card ids, got {_short(response)}"
            )
        bad = [i for i in response if not 0 <= i < 108]
        if bad:
            raise BotzoneError("INVALID_POKERID", f"{stage}: no card has the id {bad[0]}")
        twice = [i for i, n in Counter(response).items() if n > 1]
        missing = [i for i in response if i not in self.ids.hand]
        if twice or missing:
            i = (twice or missing)[0]
            held = [str(h) for h in sorted(self.ids.hand) if face_of(h) is face_of(i)]
            why = (
                "named twice"
                if twice
                else "not in your hand" + (f" (your {face_of(i)} is id {held[0]})" if held else "")
            )
            raise BotzoneError(
                "NOT_YOUR_POKER", f"{stage}: card id {i} ({face_of(i)}) {why}", pb.ILLEGAL_ACTION
            )
        return list(response)

    def action(self, request: pb.Request) -> pb.Action:
        """arena's Action for ``request`` once the bot answered every turn."""
        if request.kind == pb.BID:
            return pb.Action(seq=request.seq, cards=cards_to_pb(self._bid(request)))
        turn, self._decision_turn = self._decision_turn, None
        ids = self.answered.get(turn.index, []) if turn is not None else []
        return pb.Action(seq=request.seq, cards=cards_to_pb(face_of(i) for i in ids))

    def _bid(self, request: pb.Request) -> tuple[Card, ...]:
        """The bid the bot wished for, if arena allows it now; otherwise a pass (noted)."""
        wish, self.wish = self.wish, ()
        if not wish:
            return ()
        legal = [cards_from_pb(b.cards) for b in request.legal_bids]
        if sorted(wish, key=lambda c: c.index) in (sorted(b, key=lambda c: c.index) for b in legal):
            return wish
        shown = "; ".join(format_cards(b) for b in legal) or "none"
        self.notes.append(
            f"bid {format_cards(wish)} is not legal in arena now (legal: {shown}): passing"
        )
        return ()

    def fault(self, request: pb.Request, error: BotzoneError) -> pb.Action:
        """The Action that reports ``error`` to the referee (a fault with Botzone's name)."""
        self._decision_turn = None
        self.wish = ()
        return pb.Action(seq=request.seq, fault=error.kind, reason=f"botzone {error}"[:500])


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["BotzoneError", "BotzoneTable", "Game", "IdClash", "Turn"]
