"""What a referee tells an observer about each decision (metrics), off the game path.

A :class:`Referee` calls its ``observer`` (if one is set) twice per decision: when a
request goes out, with the referee's own time since the previous answer arrived, and when
the answer has been judged. ``arena serve --http`` plugs its Prometheus metrics in here
(:mod:`arena.http.metrics`); without an observer nothing is measured or called.
"""

from __future__ import annotations

from typing import Protocol


class RefereeObserver(Protocol):
    def request_sent(self, overhead: float) -> None:
        """A request went out ``overhead`` seconds after the previous answer arrived: the
        referee's time to judge, apply, record, tell the spectators and build the request."""

    def decision_made(self, kind: str, latency: float, fault: str | None) -> None:
        """A decision was answered in ``latency`` seconds (request sent → answer read),
        or faulted (``fault``: ``timeout``, ``illegal_action`` …) and its fallback played."""
