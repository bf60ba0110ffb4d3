"""What a spectator may see of a match, and when: the delay, and the public record.

Nothing here decides what is hidden: the events are redacted by the one redaction path,
:func:`arena.game.views.indexed_seat_events` with the spectator's seat (-1), exactly as
``Watch`` and the bots' event feeds are. This module only *delays* what that path lets
through (:class:`DelayedFeed`) and writes it out as record lines
(:func:`spectator_record`) for ``FetchRecord`` of a running match.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import Any

from arena.errors import ArenaError
from arena.game import DealEnded, Event, MatchEnded, TrickWon
from arena.game.views import indexed_seat_events
from arena.records import EventLine, parse_record
from arena.records.format import dump_line

SPECTATOR = -1  # the "seat" that holds no card (arena.referee.referee.SPECTATOR)


class InvalidDelay(ArenaError, ValueError):
    """A ``--spectator-delay`` that is not a number of tricks or deals."""


_DELAY = re.compile(r"^\s*(\d+)\s*(tricks?|deals?)?\s*$")


@dataclasses.dataclass(frozen=True, slots=True)
class SpectatorDelay:
    """How far behind the match spectators are kept: ``amount`` whole tricks or deals.

    An event is shown once ``amount`` more tricks (deals) have ended after the trick
    (deal) it belongs to; 0 shows everything at once. The match's end shows the rest.
    """

    amount: int = 0
    unit: str = "tricks"  # "tricks" or "deals"

    @classmethod
    def parse(cls, text: str) -> SpectatorDelay:
        """``"0"``, ``"3 tricks"``, ``"2tricks"``, ``"1 deal"`` …

        Raises:
            InvalidDelay: anything else, naming the accepted forms.
        """
        found = _DELAY.match(text)
        if found is None:
            raise InvalidDelay(
                f"spectator delay {text!r}: give a number of tricks or deals, "
                "e.g. '3 tricks', '1 deal' or 0"
            )
        amount, unit = int(found.group(1)), found.group(2) or "tricks"
        return cls(amount, "deals" if unit.startswith("deal") else "tricks")

    def ends_a_step(self, event: Event) -> bool:
        return isinstance(event, DealEnded if self.unit == "deals" else TrickWon)

    def __str__(self) -> str:
        return "none" if not self.amount else f"{self.amount} {self.unit}"


class DelayedFeed:
    """Holds back an (already redacted) event stream by a :class:`SpectatorDelay`."""

    def __init__(self, delay: SpectatorDelay) -> None:
        self.delay = delay
        self._held: list[tuple[int, Event]] = []
        self._steps_held = 0  # step-ending events among the held ones

    def push(self, batch: Iterable[tuple[int, Event]]) -> list[tuple[int, Event]]:
        """Take new events; return those that may now be shown, in order."""
        ended = False
        for item in batch:
            self._held.append(item)
            if self.delay.ends_a_step(item[1]):
                self._steps_held += 1
            ended = ended or isinstance(item[1], MatchEnded)
        if ended or not self.delay.amount:
            return self.close()
        released = 0
        while self._steps_held > self.delay.amount:
            while not self.delay.ends_a_step(self._held[released][1]):
                released += 1
            released += 1
            self._steps_held -= 1
        out, self._held = self._held[:released], self._held[released:]
        return out

    def close(self) -> list[tuple[int, Event]]:
        """The match is over: everything held may be shown."""
        out, self._held, self._steps_held = self._held, [], 0
        return out


def spectator_record(data: bytes, delay: SpectatorDelay) -> list[tuple[int, str]]:
    """The spectator's copy of a running match's record: ``(n, JSON line)`` pairs.

    The header without what would tell the deals in advance (``seed`` and ``stacked``
    are blanked, and ``"view": "spectator"`` is added), then the public events as
    ``event`` lines, redacted by the one redaction path and held back by ``delay``.
    Deck and answer lines are left out (a deck holds every hand; a bury answer, the
    kitty). Each line keeps its number ``n`` in the full record.
    """
    record = parse_record(data)
    out: list[tuple[int, str]] = []
    if record.lines and record.lines[0].type == "header":
        header: dict[str, Any] = dict(record.lines[0].data)
        header.update(seed=None, stacked={}, view="spectator")
        out.append((0, dump_line(header).decode("utf-8").rstrip("\n")))
    numbered = [(ln.n, ln.item.event) for ln in record.lines if isinstance(ln.item, EventLine)]
    feed = DelayedFeed(delay)
    public = indexed_seat_events((event for _, event in numbered), SPECTATOR)
    for index, event in feed.push(public):
        n = numbered[index][0]
        line = {"n": n, "type": "event", "event": event.to_dict()}
        out.append((n, dump_line(line).decode("utf-8").rstrip("\n")))
    return out
