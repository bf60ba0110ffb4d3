"""The server's Prometheus metrics (``/metrics``): one registry per server, no globals.

Counters and histograms are fed as things happen: decisions, faults, latency and the
referee's overhead by a wrapper around each match's record writer (every settled decision
passes through ``Recorder.answer`` with its kind, request time, latency and fault — the
referee's own clock, so nothing is added to the referee), record write times by the same
wrapper, bytes by the seat streams. Gauges that describe the present (matches by state, connected
seats, open pages) are read from the match host when Prometheus scrapes, so they cost
nothing in between. docs/operations.md ("Metrics") says what each one means.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, cast

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from arena.game import Recorder
from arena.server import HostedMatch, MatchHost, MatchState, RecorderFactory

# no *_created series: they say nothing a dashboard needs
disable_created_metrics()  # type: ignore[no-untyped-call]

# Seconds: from well under a millisecond (an in-process seat) to a whole time bank.
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 30)
OVERHEAD_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25)
WRITE_BUCKETS = (0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.005, 0.025, 0.1, 1)


class ArenaMetrics:
    """Every metric of one ``arena serve``."""

    def __init__(self, host: MatchHost) -> None:
        self.host = host
        self.open_streams = 0  # HTTP event streams (pages) open now
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.decisions = Counter(
            "arena_decisions", "Decisions answered or played by fallback", ["kind"], registry=r
        )
        self.faults = Counter("arena_faults", "Faulted decisions, by kind", ["kind"], registry=r)
        self.latency = Histogram(
            "arena_decision_latency_seconds",
            "Request sent to answer read, per answered decision (bot time plus network)",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.overhead = Histogram(
            "arena_referee_overhead_seconds",
            "The referee's own time per decision: previous answer read to next request sent",
            buckets=OVERHEAD_BUCKETS,
            registry=r,
        )
        self.record_write = Histogram(
            "arena_record_write_seconds",
            "Time of one call into a match record writer (lines written and flushed)",
            buckets=WRITE_BUCKETS,
            registry=r,
        )
        self.bytes_in = Counter(
            "arena_grpc_received_bytes", "Protobuf bytes read from bots' Play streams", registry=r
        )
        self.bytes_out = Counter(
            "arena_grpc_sent_bytes", "Protobuf bytes written to bots' Play streams", registry=r
        )
        for kind in ("bid", "bury", "play"):
            self.decisions.labels(kind)
        for fault in ("timeout", "illegal_action", "malformed", "unknown_sequence", "disconnected"):
            self.faults.labels(fault)
        r.register(_PresentState(self))

    def decision(self, kind: str, latency: float, fault: str | None) -> None:
        """A decision settled: answered in ``latency`` seconds, or ``fault``."""
        self.decisions.labels(kind).inc()
        if fault is None:
            self.latency.observe(latency)
        else:
            self.faults.labels(fault).inc()

    # -- other feeds ----------------------------------------------------------------------

    def traffic(self, received: int, sent: int) -> None:
        """Bytes of the seat streams (called on the gRPC thread; the counters lock)."""
        if received:
            self.bytes_in.inc(received)
        if sent:
            self.bytes_out.inc(sent)

    def timed_records(self, factory: RecorderFactory | None) -> RecorderFactory | None:
        """``factory`` whose record writers are metered (:class:`_MeteredRecorder`)."""
        if factory is None:
            return None

        def open_record(hosted: HostedMatch) -> tuple[Recorder | None, str]:
            recorder, path = factory(hosted)
            if recorder is None:
                return None, path
            return cast(Recorder, _MeteredRecorder(recorder, self)), path

        return open_record

    def exposition(self) -> bytes:
        """The Prometheus text format."""
        return generate_latest(self.registry)


class _MeteredRecorder:
    """Passes every call to a match's recorder, timing it; reads each answer's figures.

    The referee's overhead per decision is the gap on its own clock between an answer's
    arrival (``requested_at_ms + latency_ms``) and the next request (the next answer's
    ``requested_at_ms``): judging, applying, recording, telling watchers, building the
    request. Answers asked together (a bid window) overlap and are skipped.
    """

    def __init__(self, inner: Recorder, metrics: ArenaMetrics) -> None:
        self._inner = inner
        self._metrics = metrics
        self._answered_at: float | None = None  # ms on the match clock

    def answer(self, **fields: Any) -> None:
        requested, latency = fields["requested_at_ms"], fields["latency_ms"]
        if self._answered_at is not None and requested >= self._answered_at:
            self._metrics.overhead.observe((requested - self._answered_at) / 1000)
        self._answered_at = requested + latency
        fault = fields["fault"]
        self._metrics.decision(fields["kind"], latency / 1000, str(fault.kind) if fault else None)
        self._timed(self._inner.answer, **fields)

    def _timed(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            self._metrics.record_write.observe(time.perf_counter() - start)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        if not callable(attribute):
            return attribute
        return lambda *args, **kwargs: self._timed(attribute, *args, **kwargs)


class _PresentState(Collector):
    """Gauges read from the host at scrape time (runs on the trio thread, like the app)."""

    def __init__(self, metrics: ArenaMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        host = self.metrics.host
        states = GaugeMetricFamily(
            "arena_matches", "Matches on this server, by state", labels=["state"]
        )
        counts = dict.fromkeys(MatchState, 0)
        connected = 0
        for hosted in list(host.matches.values()):
            counts[hosted.state] += 1
            if hosted.state in (MatchState.WAITING, MatchState.RUNNING):
                connected += sum(
                    1
                    for s in range(4)
                    if (r := hosted.remote(s)) is not None and r.conn is not None
                )
        for state, n in counts.items():
            states.add_metric([state.value], n)
        yield states
        yield GaugeMetricFamily(
            "arena_connected_seats", "Bots connected to a waiting or running match", value=connected
        )
        yield GaugeMetricFamily(
            "arena_http_event_streams",
            "Live pages following a match (open event streams)",
            value=self.metrics.open_streams,
        )
