"""Running many match jobs: one worker process per core, or one Ray task per match.

Results arrive as they finish (``on_result`` is called in the calling process), so the
caller can draw a progress bar. A job that crashes its worker is reported as a failed
match, never as a lost one.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import logging
import multiprocessing
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
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
    each worker process first, or before each Ray task (the CLI passes its logging
    set-up). With ``ray_address``, ``parallel`` is the CPU count of a ``local`` instance."""
    if ray_address is not None:
        results = _run_ray(jobs, ray_address, on_result, parallel, initializer)
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


def _run_ray(
    jobs: Sequence[MatchJob],
    address: str,
    on_result: OnResult,
    parallel: int,
    initializer: Callable[[], None] | None,
) -> list[MatchSummary]:
    """One Ray task per match on the cluster at ``address``: ``local`` starts a private
    Ray instance here with ``parallel`` CPUs; ``auto`` (which honours ``RAY_ADDRESS``),
    ``HOST:PORT`` or ``ray://HOST:10001`` connect to a running cluster. The driver writes
    each record (and command bots' logs) where the job asked for it: the task plays in a
    temporary folder on its node and sends the files back with its summary."""
    try:
        import ray  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise SystemExit("arena: --ray needs Ray: pip install 'arena[ray]'") from None
    local = address == "local"
    logging.getLogger("ray").setLevel(logging.ERROR)  # ray.init's own start-up chatter
    try:
        ray.init(
            address=address,
            ignore_reinit_error=True,
            include_dashboard=False,
            log_to_driver=False,  # workers' output stays in the cluster's log files
            logging_level=logging.ERROR,
            num_cpus=max(1, parallel) if local else None,
        )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise SystemExit(f"arena: could not reach the Ray cluster at {address!r}: {exc}") from None
    task: Any = ray.remote(play_on_ray)  # Ray retries a task whose node died
    pending = {task.remote(job, initializer): job for job in jobs}
    results: list[MatchSummary] = []
    try:
        while pending:
            # all that finished within 0.2 s: one list per wake-up, not one per match
            done, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.2)
            for ref in done:
                job = pending.pop(ref)
                try:
                    summary, files = ray.get(ref)
                    _land(job, files)
                except Exception as exc:  # the task or its worker died, or a write failed
                    summary = _lost(job, f"ray task failed: {type(exc).__name__}: {exc}")
                on_result(summary)
                results.append(summary)
    finally:
        for ref in pending:  # interrupted: do not leave matches running on the cluster
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        ray.shutdown()  # stops a local instance; only disconnects from a cluster
    return results


def play_on_ray(
    job: MatchJob, initializer: Callable[[], None] | None = None
) -> tuple[MatchSummary, dict[str, bytes]]:
    """The Ray task: play ``job`` with its record in a temporary folder on this node and
    return the summary with the folder's files (the record, command bots' logs)."""
    if initializer is not None:
        initializer()
    if job.record is None:
        return run_job(job), {}
    with tempfile.TemporaryDirectory(prefix="arena-ray-") as tmp:
        here = Path(tmp) / Path(job.record).name
        summary = run_job(dataclasses.replace(job, record=str(here)))
        files = {p.name: p.read_bytes() for p in sorted(Path(tmp).iterdir()) if p.is_file()}
    return dataclasses.replace(summary, record=job.record), files


def _land(job: MatchJob, files: dict[str, bytes]) -> None:
    """Write a Ray task's files next to where the job wanted its record."""
    if job.record is None or not files:
        return
    folder = Path(job.record).parent
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / Path(name).name).write_bytes(data)


def _lost(job: MatchJob, error: str) -> MatchSummary:
    return MatchSummary.unfinished(job, "failed", error)
