"""docs/shuffle.md's reference values: the documented algorithm is the one that runs."""

from __future__ import annotations

import hashlib

from arena.game import first_seat, shuffled_deck
from arena.rules import format_cards


def test_the_documented_reference_values_hold() -> None:
    word = hashlib.sha256(b"arena-shuffle-v1:1:1:0:0").hexdigest()[:16]
    assert word == "90f1641c3aae2b8a"
    deck = shuffled_deck(seed=1, deal=1, attempt=0, decks=2)
    assert format_cards(deck[:12]) == "4D 6D QH JS JD 9D 9H 8D 8S SJ QH 6H"
    assert format_cards(deck[-8:]) == "BJ 4C TS QS 8D TC 9C 8H"
    assert (first_seat(1), first_seat(7)) == (0, 1)


def test_an_independent_implementation_of_the_doc_gives_the_same_deck() -> None:
    """Re-implemented from docs/shuffle.md alone, as another language would."""
    faces = [r + s for s in "SHCD" for r in "23456789TJQKA"] + ["SJ", "BJ"]
    cards = [f for f in faces for _ in range(2)]
    i = 0
    for k in range(len(cards) - 1, 0, -1):
        bound = k + 1
        while True:
            text = f"arena-shuffle-v1:5:3:0:{i}".encode()
            word = int.from_bytes(hashlib.sha256(text).digest()[:8], "big")
            i += 1
            if word < 2**64 - 2**64 % bound:
                break
        j = word % bound
        cards[k], cards[j] = cards[j], cards[k]
    assert cards == [c.code for c in shuffled_deck(seed=5, deal=3, attempt=0, decks=2)]
