"""The server's Prometheus metrics (``/metrics``): one registry per server, no globals.

Decisions, faults, latency and the referee's overhead are read by a wrapper around each
match's record writer (every settled decision passes through ``Recorder.answer`` with its
kind, request time, latency and fault — the referee's own clock), record write times by
the same wrapper, bytes by the seat streams. The wrapper runs inside the referee's step,
so it only adds to plain tallies (:class:`Tally`: a list index and an add, under a
microsecond; ``prometheus_client``'s own histograms take a lock per call, ~10 µs a
decision); :class:`_Exposed` turns them into Prometheus families when Prometheus scrapes,
on the same trio thread. Gauges that describe the present (matches by state, connected
seats, open pages) are read from the match host then too. docs/operations.md ("Metrics")
says what each one means.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

from prometheus_client import CollectorRegistry, Counter, disable_created_metrics, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from arena.game import Recorder
from arena.server import HostedMatch, MatchHost, MatchState, RecorderFactory

# no *_created series: they say nothing a dashboard needs
disable_created_metrics()  # type: ignore[no-untyped-call]

# Seconds: from well under a millisecond (an in-process seat) to a whole time bank.
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 30)
OVERHEAD_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25)
WRITE_BUCKETS = (0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.005, 0.025, 0.1, 1)


class Tally:
    """A histogram kept as plain counts (trio thread only: no lock): ``add`` is a
    bisect and two additions, cheap enough for the referee's step."""

    def __init__(self, name: str, text: str, buckets: Sequence[float]) -> None:
        self.name, self.text = name, text
        self.bounds = list(buckets)
        self.counts = [0] * (len(self.bounds) + 1)  # the last: above every bound
        self.sum = 0.0

    def add(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    def family(self) -> HistogramMetricFamily:
        cumulative, buckets = 0, []
        bounds = [*map(floatToGoString, self.bounds), "+Inf"]
        for bound, count in zip(bounds, self.counts, strict=True):
            cumulative += count
            buckets.append((bound, cumulative))
        return HistogramMetricFamily(self.name, self.text, buckets=buckets, sum_value=self.sum)


class ArenaMetrics:
    """Every metric of one ``arena serve``."""

    def __init__(self, host: MatchHost) -> None:
        self.host = host
        self.open_streams = 0  # HTTP event streams (pages) open now
        self.refused_streams = 0  # HTTP event streams refused (503: too many on a match)
        self.decisions = dict.fromkeys(("bid", "bury", "play"), 0)
        self.faults = dict.fromkeys(
            ("timeout", "illegal_action", "malformed", "unknown_sequence", "disconnected"), 0
        )
        self.latency = Tally(
            "arena_decision_latency_seconds",
            "Request sent to answer read, per answered decision (bot time plus network)",
            LATENCY_BUCKETS,
        )
        self.overhead = Tally(
            "arena_referee_overhead_seconds",
            "The referee's own time per decision: previous answer read to next request sent",
            OVERHEAD_BUCKETS,
        )
        self.record_write = Tally(
            "arena_record_write_seconds",
            "Time of one call into a match record writer (lines written and flushed)",
            WRITE_BUCKETS,
        )
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        # fed by the gRPC thread: prometheus_client's counters lock, which is what they need
        self.bytes_in = Counter(
            "arena_grpc_received_bytes", "Protobuf bytes read from bots' Play streams", registry=r
        )
        self.bytes_out = Counter(
            "arena_grpc_sent_bytes", "Protobuf bytes written to bots' Play streams", registry=r
        )
        r.register(_Exposed(self))

    def decision(self, kind: str, latency: float, fault: str | None) -> None:
        """A decision settled: answered in ``latency`` seconds, or ``fault``."""
        self.decisions[kind] = self.decisions.get(kind, 0) + 1
        if fault is None:
            self.latency.add(latency)
        else:
            self.faults[fault] = self.faults.get(fault, 0) + 1

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
            self._metrics.overhead.add((requested - self._answered_at) / 1000)
        self._answered_at = requested + latency
        fault = fields["fault"]
        self._metrics.decision(fields["kind"], latency / 1000, str(fault.kind) if fault else None)
        self._timed(self._inner.answer, **fields)

    def _timed(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            self._metrics.record_write.add(time.perf_counter() - start)

    def deck(self, *args: Any) -> None:
        self._timed(self._inner.deck, *args)

    def events(self, *args: Any) -> None:
        self._timed(self._inner.events, *args)

    def __getattr__(self, name: str) -> Any:  # the rarer calls (penalty, close …)
        attribute = getattr(self._inner, name)
        if not callable(attribute):
            return attribute
        return lambda *args, **kwargs: self._timed(attribute, *args, **kwargs)


class _Exposed(Collector):
    """The tallies, and gauges read from the host, at scrape time (on the trio thread,
    like the app and every feed of the tallies)."""

    def __init__(self, metrics: ArenaMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        metrics = self.metrics
        for name, text, tallied in (
            ("arena_decisions", "Decisions answered or played by fallback", metrics.decisions),
            ("arena_faults", "Faulted decisions, by kind", metrics.faults),
        ):
            family = CounterMetricFamily(name, text, labels=["kind"])
            for kind, n in tallied.items():
                family.add_metric([kind], n)
            yield family
        for tally in (metrics.latency, metrics.overhead, metrics.record_write):
            yield tally.family()
        host = metrics.host
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
        yield CounterMetricFamily(
            "arena_http_event_streams_refused",
            "Live pages turned away (503) because their match had --pages-per-match already",
            value=self.metrics.refused_streams,
        )
