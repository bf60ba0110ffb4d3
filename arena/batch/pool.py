"""Running many match jobs: one worker process per core, or one Ray task per match.

Results arrive as they finish (``on_result`` is called in the calling process), so the
caller can draw a progress bar. A job that crashes its worker is reported as a failed
match, never as a lost one.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import Any

from arena.batch.runner import MatchJob, MatchSummary, run_job

OnResult = Callable[[MatchSummary], None]


def default_parallel() -> int:
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def run_jobs(
    jobs: Sequence[MatchJob],
    parallel: int,
    on_result: OnResult,
    ray_address: str | None = None,
    initializer: Callable[[], None] | None = None,
) -> list[MatchSummary]:
    """Play every job; returns the summaries in job order. ``initializer`` runs once in
    each worker process first (the CLI passes its logging set-up)."""
    if ray_address is not None:
        results = _run_ray(jobs, ray_address, on_result)
    elif parallel <= 1 or len(jobs) <= 1:
        results = []
        for job in jobs:
            summary = run_job(job)
            on_result(summary)
            results.append(summary)
    else:
        results = _run_processes(jobs, parallel, on_result, initializer)
    return sorted(results, key=lambda s: (s.index, s.pairing))


def _run_processes(
    jobs: Sequence[MatchJob],
    parallel: int,
    on_result: OnResult,
    initializer: Callable[[], None] | None,
) -> list[MatchSummary]:
    context = multiprocessing.get_context("spawn")  # no forked gRPC or trio state
    results: list[MatchSummary] = []
    with concurrent.futures.ProcessPoolExecutor(
        parallel, mp_context=context, initializer=initializer
    ) as pool:
        futures = {pool.submit(run_job, job): job for job in jobs}
        for future in concurrent.futures.as_completed(futures):
            job = futures[future]
            try:
                summary = future.result()
            except Exception as exc:  # the worker died (killed, out of memory)
                summary = _lost(job, f"worker failed: {type(exc).__name__}: {exc}")
            on_result(summary)
            results.append(summary)
    return results


def _run_ray(jobs: Sequence[MatchJob], address: str, on_result: OnResult) -> list[MatchSummary]:
    """One Ray task per match on the cluster at ``address`` (``local`` starts one here)."""
    try:
        import ray  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise SystemExit("arena batch --ray needs Ray: pip install 'arena[ray]'") from None
    ray.init(
        address=None if address == "local" else address,
        ignore_reinit_error=True,
        include_dashboard=False,
        log_to_driver=False,
    )
    remote: Any = ray.remote(run_job)
    pending = {remote.remote(job): job for job in jobs}
    results: list[MatchSummary] = []
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                job = pending.pop(ref)
                try:
                    summary = ray.get(ref)
                except Exception as exc:
                    summary = _lost(job, f"ray task failed: {type(exc).__name__}: {exc}")
                on_result(summary)
                results.append(summary)
    finally:
        if address == "local":
            ray.shutdown()
    return results


def _lost(job: MatchJob, error: str) -> MatchSummary:
    return MatchSummary(
        job.index,
        job.seed,
        job.pairing,
        tuple(b.name for b in job.bots),
        "failed",
        None,
        "",
        0,
        ("", ""),
        (),
        (),
        (),
        0,
        0.0,
        job.record,
        error,
    )
