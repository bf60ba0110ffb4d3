"""Deterministic shuffling from a match seed, reproducible in any language.

The algorithm (version 1), so that a program elsewhere can rebuild every deck:

1. Start from the unshuffled deck: each of the 54 faces in index order (♠ 2…A, ♥ 2…A,
   ♣ 2…A, ♦ 2…A, SJ, BJ), each repeated ``decks`` times in a row
   (``2S 2S 3S 3S … BJ BJ`` for two decks).
2. A stream of 64-bit words: word *i* is the first 8 bytes, big-endian, of
   ``SHA-256("arena-shuffle-v1:{seed}:{deal}:{attempt}:{i}")`` (ASCII, decimal numbers;
   ``deal`` counts from 1, ``attempt`` (redeals of the first deal) and *i* from 0).
3. Fisher–Yates from the top: for *k* = n−1 down to 1, draw words until one is below
   ``2**64 - (2**64 % (k+1))`` (rejection, so every index is equally likely), let
   ``j = word % (k+1)``, and swap positions *k* and *j*.
4. The first deal's first seat is the first 8 bytes of ``SHA-256("arena-first-seat-v1:{seed}")``
   modulo 4.

Cards are then dealt from position 0 upwards, one to each seat in turn; the last
cards are the kitty.
"""

from __future__ import annotations

import hashlib

from arena.rules import Card, Seat, deck

_WORDS = 2**64


def _word(prefix: bytes, i: int) -> int:
    return int.from_bytes(hashlib.sha256(prefix + str(i).encode()).digest()[:8], "big")


def shuffled_deck(seed: int, deal: int, attempt: int = 0, decks: int = 2) -> list[Card]:
    """The deck for deal number ``deal`` (from 1) and redeal ``attempt`` (from 0)."""
    cards = deck(decks)
    prefix = f"arena-shuffle-v1:{seed}:{deal}:{attempt}:".encode()
    i = 0
    for k in range(len(cards) - 1, 0, -1):
        bound = k + 1
        limit = _WORDS - _WORDS % bound
        while True:
            word = _word(prefix, i)
            i += 1
            if word < limit:
                break
        j = word % bound
        cards[k], cards[j] = cards[j], cards[k]
    return cards


def first_seat(seed: int) -> Seat:
    """The seat dealt to first in the match's first deal."""
    digest = hashlib.sha256(f"arena-first-seat-v1:{seed}".encode()).digest()
    return Seat(int.from_bytes(digest[:8], "big") % 4)
