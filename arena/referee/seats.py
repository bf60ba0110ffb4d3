"""The seat interface the referee talks to, and its in-process implementation.

A :class:`Seat` answers requests; :class:`LocalSeat` wraps an in-process bot and
``arena.server.RemoteSeat`` a gRPC stream. The referee runs the same code either way
(DESIGN.md, "Data flow of one decision").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

import trio

from arena.game import Action, Bot, Event, MatchEnded, Request
from arena.referee.faults import Fault, SeatVerdict


class Seat(Protocol):
    """One player's connection, whatever carries it."""

    name: str
    version: str

    async def ask(self, seq: int, request: Request, deadline_ms: int, bank_ms: int) -> Action:
        """Return the seat's answer to ``request``.

        Raises:
            BotError: the seat sent something malformed or out of sequence.
            BotGone: the seat is disconnected and its grace period is over.
        """
        ...

    def tell_verdict(self, verdict: SeatVerdict) -> None:
        """Report the judgement of an answer (never blocks)."""
        ...

    def tell_events(self, events: Sequence[tuple[int, Event]]) -> None:
        """Pass on events (with their indices) that cannot wait for a request: the last
        deal's end at the end of the match (never blocks)."""
        ...

    async def finish(self, result: MatchEnded, faults: Sequence[Fault], record: str) -> None:
        """The match is over: say so and let go."""
        ...


Think = Callable[[Request], Awaitable[None]]


class LocalSeat:
    """An in-process bot. ``think``, if given, is awaited before each answer — tests use
    it to make a bot "think" in virtual time (``trio.sleep`` under ``autojump_clock``).

    A bot that computes synchronously never reaches a checkpoint, so the referee judges
    its lateness by elapsed time, not only by cancellation (STYLE.md, trio).
    """

    def __init__(self, bot: Bot, think: Think | None = None, version: str = "builtin") -> None:
        self.bot = bot
        self.name = bot.name
        self.version = version
        self.think = think
        self.verdicts: list[SeatVerdict] = []

    async def ask(self, seq: int, request: Request, deadline_ms: int, bank_ms: int) -> Action:
        if self.think is not None:
            await self.think(request)
        else:
            await trio.lowlevel.checkpoint()
        return tuple(self.bot.decide(request))

    def tell_verdict(self, verdict: SeatVerdict) -> None:
        if not verdict.accepted:
            self.verdicts.append(verdict)

    def tell_events(self, events: Sequence[tuple[int, Event]]) -> None:
        return None

    async def finish(self, result: MatchEnded, faults: Sequence[Fault], record: str) -> None:
        await trio.lowlevel.checkpoint()
