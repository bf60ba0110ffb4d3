"""The one family of errors, each carrying its blame (STYLE.md habit 5).

- :class:`InvalidCards` — text that is not cards, or more copies than the decks hold.
- :class:`InvalidRules` — an unknown variant or a value a variant does not take.
- :class:`IllegalPlay` — well-formed, but against the rules here; a seat's fault.
- :class:`ProtocolError` — a malformed or out-of-sequence wire message; the peer's fault.
- :class:`StateError` — the machine was driven wrongly; our own bug.
"""

from __future__ import annotations


class ArenaError(Exception):
    """Base of every error arena raises on purpose."""


class InvalidCards(ArenaError, ValueError):
    """Card text that does not parse, or a card count the decks cannot hold."""


class InvalidRules(ArenaError, ValueError):
    """An unknown rule variant, or a value the variant does not take."""


class IllegalPlay(ArenaError, ValueError):
    """A well-formed action that the rules forbid here.

    ``reason`` is written for the bot's author and names what should have been played.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ProtocolError(ArenaError):
    """A malformed, unknown or out-of-sequence message from a peer."""


class StateError(ArenaError, RuntimeError):
    """A machine was asked for something its state does not allow: a bug in the caller."""
