"""Seat tokens → (match, seat): the one piece both threads read.

Written only by the host on the trio thread, read by the gRPC servicers on theirs; a
token is kept only as its SHA-256 (a restored match knows no more than that).
"""

from __future__ import annotations

import hashlib
import threading
from typing import Generic, TypeVar

M = TypeVar("M")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class TokenBook(Generic[M]):
    """Seat tokens → (match, seat). Written on the trio thread, read from the gRPC one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seats: dict[str, tuple[M, int]] = {}  # by SHA-256 of the token

    def add(self, token: str, match: M, seat: int) -> None:
        self.add_hash(token_hash(token), match, seat)

    def add_hash(self, digest: str, match: M, seat: int) -> None:
        """Admit a token known only by its hash (a match restored from its record)."""
        with self._lock:
            self._seats[digest] = (match, seat)

    def remove(self, token: str) -> None:
        self.remove_hash(token_hash(token))

    def remove_hash(self, digest: str) -> None:
        with self._lock:
            self._seats.pop(digest, None)

    def lookup(self, token: str) -> tuple[M, int] | None:
        with self._lock:
            return self._seats.get(token_hash(token))


__all__ = ["TokenBook", "token_hash"]
