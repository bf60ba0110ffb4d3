"""A Botzone bot in an arena seat: a gRPC client on one side, the bot's stdin/stdout on
the other (``arena botzone-seat``, and ``botzone:CMD`` wherever a bot command goes).

The seat is a client like any other bot (DESIGN.md): the referee never learns that a
Botzone bot sits behind it. For each arena request it runs the Botzone turns the
:class:`~arena.botzone.table.BotzoneTable` lists through the
:class:`~arena.botzone.process.BotProcess`, within the request's own time (its deadline
plus the seat's remaining bank, less a margin for the way back), and answers with the
cards — or, when the bot failed in a way Botzone has a name for, with an Action that
reports the fault (``Action.fault``/``reason``): the referee records it with that name
in the reason and plays its fallback, without waiting out the clock.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from arena.botzone.client import SeatClient
from arena.botzone.process import BotProcess, TurnFailed
from arena.botzone.table import BotzoneError, BotzoneTable, IdClash
from arena.v1 import arena_pb2 as pb

# Kept back from each decision's time for the request's and the answer's way (the
# referee's clock starts before the request reaches us): 60 ms plus 5% of the time, at
# most 500 ms, so the seat's own TLE report, with Botzone's name, beats arena's deadline.
MARGIN_MS = 60
MARGIN_SHARE = 0.05
MARGIN_MAX_MS = 500
_KINDS = {pb.BID: "bid", pb.BURY: "bury", pb.PLAY: "play"}


@dataclasses.dataclass
class SeatOptions:
    """How to run the bot: its command, input format, globaldata file, name."""

    argv: Sequence[str]
    simple: bool = False
    globaldata: Path | None = None
    name: str = ""
    verbose: bool = False
    reconnect_for: float = 30.0


class BotzoneSeat:
    """One seat's bridge: answers arena requests by asking the Botzone bot."""

    def __init__(self, options: SeatOptions, log: IO[str] = sys.stderr) -> None:
        self.options = options
        self.log = log
        self.table = BotzoneTable()
        self.process = BotProcess(options.argv, simple=options.simple, log=log)
        if options.globaldata is not None and options.globaldata.exists():
            self.process.globaldata = options.globaldata.read_text(encoding="utf-8")
        self._saved = self.process.globaldata
        self.turns = 0
        self._last: pb.Action | None = None  # the last answer, for a re-sent request
        self.turn_seconds: list[tuple[bool, float]] = []  # (fresh process, seconds) per turn

    def say(self, text: str) -> None:
        self.log.write(f"botzone-seat[{self.table.seat}]: {text}\n")
        self.log.flush()

    def decide(self, request: pb.Request) -> pb.Action:
        """The answer to one arena request (never raises for anything the bot does).

        A request the referee sends again (after a reconnection) gets the same answer:
        its events are already absorbed, its turns already asked.
        """
        if self._last is not None and self._last.seq == request.seq:
            return self._last
        try:
            self._last = self._decide(request)
        except IdClash as exc:  # arena's events contradict themselves: never the bot's fault
            self.say(f"card ids out of step ({exc}); answering with the referee's fallback")
            self._last = pb.Action(seq=request.seq, cards=request.fallback.cards)
        return self._last

    def _decide(self, request: pb.Request) -> pb.Action:
        started = time.perf_counter()
        available = request.deadline_ms + request.time_bank_ms
        margin = min(MARGIN_MAX_MS, MARGIN_MS + MARGIN_SHARE * available)
        until = started + max(0.0, available - margin) / 1000
        table = self.table
        table.absorb(request.events)
        error: TurnFailed | BotzoneError | None = None
        while (turn := table.next_turn(request)) is not None:
            try:
                left = until - time.perf_counter()
                if left <= 0:
                    raise TurnFailed("TLE", "no time left for this decision", pb.TIMEOUT)
                reply = self.process.ask(table.game, turn.index, left)
                self.turns += 1
                self.turn_seconds.append((reply.fresh, reply.seconds))
                self._save_globaldata()
                table.answer(turn, reply.response)
            except (TurnFailed, BotzoneError) as exc:
                self.say(f"{turn.stage} turn {turn.index + 1}: {exc}")
                error = error or exc
                if isinstance(exc, TurnFailed) and exc.name == "TLE":
                    break  # out of time: the rest waits for the next request
        for note in table.notes:
            self.say(note)
        table.notes.clear()
        if self.options.verbose:
            took = time.perf_counter() - started
            self.say(f"seq {request.seq} {_KINDS.get(request.kind, '?')}: {took:.3f}s")
        if error is not None:
            return table.fault(request, BotzoneError(error.name, error.reason, error.kind))
        return table.action(request)

    def _save_globaldata(self) -> None:
        """Write the bot's globaldata to the user's file whenever it changes (atomically)."""
        path = self.options.globaldata
        if path is None or self.process.globaldata == self._saved:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            part = path.with_name(path.name + ".part")
            part.write_text(self.process.globaldata, encoding="utf-8")
            os.replace(part, path)
        except OSError as exc:  # a full disk must not cost the match: say so, go on
            self.say(f"could not save globaldata to {path}: {exc}")
        self._saved = self.process.globaldata

    # -- the gRPC side: arena's one seat-client loop -----------------------------------

    def run(self, server: str, token: str) -> int:
        """Play one match; 0 when it ended normally (reconnecting if the stream drops)."""

        def welcome(message: pb.Welcome) -> None:
            self.table.seat = message.seat

        client = SeatClient(
            server, token, self.options.name or "botzone", "botzone-seat", self.decide,
            self.say, self.options.reconnect_for, welcome,
        )  # fmt: skip
        try:
            return client.play()
        finally:
            self.process.close()


__all__ = ["BotzoneSeat", "SeatOptions"]
