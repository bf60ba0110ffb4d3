"""A Botzone Tractor bot, written here from the protocol (../shared/botzone-tractor.md).

It knows nothing of arena's Botzone bridge: it decodes card ids itself, rebuilds its
hand from the requests (dealt cards, the kitty, the history of tricks) and **fails
loudly** — exit status 3 and a line on stderr — the moment the ids contradict each
other (a card dealt twice, a card it played that it does not hold, another seat
playing one of its cards, a card shown twice). Its moves are arena's own legal
fallbacks (``arena.rules``, imported only when a card must be chosen, since a default-
mode bot starts afresh every turn), under the ``--rules botzone`` variants.

The scripts next to this file run it in each process mode and input format.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# arena's rules library from this checkout: the tests run these bots with `python -S`
# (no site-packages), which starts several times faster — it adds up when a default-mode
# bot starts once per turn.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

RANKS = "A234567890JQK"  # Botzone's rank order within a suit; 0 is the ten
SUITS = "shcd"
PRESET = {"level_tractors": False, "throw_penalty": "per_card", "bid_strength": "count_only"}


def face(card_id: int) -> str:
    """An id as arena's two-letter code (its own decoding, not the bridge's)."""
    n = card_id % 54
    if n >= 52:
        return "SJ" if n == 52 else "BJ"
    rank = RANKS[n // 4]
    return ("T" if rank == "0" else rank) + SUITS[n % 4].upper()


def fail(why: str) -> None:
    print(f"bzkit: INCONSISTENT: {why}", file=sys.stderr, flush=True)
    sys.exit(3)


class Player:
    """One seat's knowledge of one game, fed request by request."""

    def __init__(self) -> None:
        self.pos = -1
        self.hand: set[int] = set()
        self.gone: set[int] = set()  # ids seen leaving any hand in a finished trick
        self.level = "2"
        self.banking: dict[str, Any] = {}
        self.played = 0  # own cards played
        self.dealt = 0
        self.turns = 0

    def feed(self, request: dict[str, Any], response: Any) -> None:
        """Learn from one request and, for a cover, the bot's own answer to it."""
        self.turns += 1
        if "playerpos" in request:
            self.pos = request["playerpos"]
        glob = request.get("global", {})
        self.level = glob.get("level", self.level)
        self.banking = glob.get("banking", self.banking)
        stage = request["stage"]
        if stage in ("deal", "cover"):
            for i in request["deliver"]:
                if i in self.hand or i in self.gone or not 0 <= i < 108:
                    fail(f"card id {i} delivered twice")
                self.hand.add(i)
            self.dealt += len(request["deliver"]) if stage == "deal" else 0
            if stage == "cover":
                if not isinstance(response, list) or len(response) != 8:
                    return  # not ours to judge: the bridge says what happened in the history
                self.hand.difference_update(i for i in response if i in self.hand)
        elif stage == "play":
            self._history(request["history"])

    def _history(self, history: list[Any]) -> None:
        previous, current, prev_leader, leader = history
        for k, play in enumerate(previous):
            seat = (prev_leader + k) % 4
            for i in play:
                if i in self.gone:
                    fail(f"card id {i} ({face(i)}) played twice")
                self.gone.add(i)
                if seat == self.pos:
                    if i not in self.hand:
                        fail(f"I played {i} ({face(i)}) but do not hold it")
                    self.hand.discard(i)
                    self.played += 1
                elif i in self.hand:
                    fail(f"seat {seat} played {i} ({face(i)}), which I hold")
        for play in current:
            for i in play:
                if i in self.hand or i in self.gone:
                    fail(f"card id {i} ({face(i)}) in the current trick is mine or gone")
        if (leader + len(current)) % 4 != self.pos:
            fail(f"asked to play, but it is seat {(leader + len(current)) % 4}'s turn")

    # -- choosing ----------------------------------------------------------------------

    def decide(self, request: dict[str, Any]) -> Any:
        stage = request["stage"]
        if stage == "deal":
            return self._bid()
        if stage == "cover":
            if len(self.hand) != 25 + 8:
                fail(f"{len(self.hand)} cards with the kitty, not 33")
            from arena.rules import fallback_bury

            return self._ids(fallback_bury(self._faces(), 8, self._order()))
        if len(self.hand) + self.played != 25:
            fail(f"hand of {len(self.hand)} after playing {self.played}: not 25")
        from arena.rules import Card, fallback_lead, legal_follow

        current = request["history"][1]
        if not current:
            return self._ids(fallback_lead(self._faces(), self._order()))
        lead = [Card.parse(face(i)) for i in current[0]]
        return self._ids(legal_follow(lead, self._faces(), self._order()))

    def _bid(self) -> list[int]:
        """Declare once, with a level card, from the fifth card on (so the bridge must
        sometimes hold the wish until arena's next bid window)."""
        if self.banking.get("called", -1) != -1 or self.dealt < 5:
            return []
        level = [i for i in sorted(self.hand) if i % 54 < 52 and RANKS[(i % 54) // 4] == self.level]
        return level[:1]

    def _faces(self) -> list[Any]:
        from arena.rules import Card

        return [Card.parse(face(i)) for i in sorted(self.hand)]

    def _ids(self, cards: list[Any]) -> list[int]:
        free = sorted(self.hand)
        out = []
        for card in cards:
            i = next(i for i in free if face(i) == str(card) and i not in out)
            out.append(i)
        return out

    def _order(self) -> Any:
        from arena.rules import Rank, RuleSet, Suit, Trump, card_order

        major = self.banking.get("major", "")
        level = Rank.parse("T" if self.level == "0" else self.level)
        suit = Suit.parse(major.upper()) if major and major != "n" else None
        return card_order(Trump(level, suit), RuleSet.from_mapping(PRESET))


def replay(requests: list[Any], responses: list[Any]) -> Player:
    """A player that has seen every request but the last (and its own answers)."""
    player = Player()
    for request, response in zip(requests, responses, strict=False):
        player.feed(request, response)
    player.feed(requests[-1], None)
    return player


def reply(response: Any, **extra: Any) -> None:
    print(json.dumps({"response": response, **extra}), flush=True)
