"""``arena batch``: many matches headless, in parallel, with records and a summary.

Bots are built-in (``builtin:NAME``: in-process, no network) or commands (subprocesses
over gRPC on a server embedded in each worker). One worker process per core by default.
``--duplicate`` plays every deal sequence twice, the second time with the partnerships
moved one seat on, so both partnerships are dealt the same cards (as in duplicate
bridge) and card luck cancels out.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from arena.batch import (
    BotSpec,
    MatchJob,
    MatchSummary,
    default_parallel,
    duplicate_seating,
    render,
    run_jobs,
    summarize,
)
from arena.batch.sandbox import SandboxUnavailable
from arena.cli.convention import UsageError, new_folder
from arena.cli.logs import configure_logging
from arena.cli.options import (
    add_clock,
    add_policy,
    add_rules,
    add_sandbox,
    add_workers,
    clock_of,
    policy_of,
    rules_of,
    sandbox_of,
    sandboxed_bots,
    whole,
)
from arena.cli.progress import Progress
from arena.errors import ArenaError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "batch",
        help="run many matches headless (parallel, duplicate deals, records, summary)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  arena batch --bot builtin:greedy --bot builtin:random "
        "--bot builtin:greedy --bot builtin:random --matches 200 --duplicate",
    )
    p.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="[NAME=]CMD",
        help="a bot for the next seat (4 in all): builtin:NAME or a command "
        "(sandbox:CMD runs that one in the sandbox)",
    )
    p.add_argument(
        "--matches",
        type=whole(1, "a number of matches, at least 1"),
        default=10,
        help="matches (deal sequences with --duplicate, each played twice; default 10)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the first match (default 0)")
    add_rules(p)
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="folder for the records (default records/batch-<time>)",
    )
    p.add_argument(
        "--duplicate",
        action="store_true",
        help="play each deal sequence twice with the partnerships swapped",
    )
    add_clock(p)
    add_policy(p)
    add_workers(p)
    add_sandbox(p)
    p.set_defaults(func=run)


def build_jobs(args: argparse.Namespace, out: Path) -> list[MatchJob]:
    bots_list = [BotSpec.parse(b) for b in args.bot]
    if len(bots_list) != 4:
        raise ArenaError(f"give exactly four --bot (got {len(bots_list)})")
    for bot in bots_list:
        bot.check()
    bots_list = sandboxed_bots(bots_list, args)
    limits = sandbox_of(args)
    bots = (bots_list[0], bots_list[1], bots_list[2], bots_list[3])
    rules = rules_of(args)
    tc = clock_of(args)
    policy = policy_of(args)
    jobs: list[MatchJob] = []
    pairings = (0, 1) if args.duplicate else (0,)
    for i in range(args.matches):
        for pairing in pairings:
            seating = bots if pairing == 0 else duplicate_seating(bots)
            record = out / f"match-{i:05d}{'-b' if pairing else ''}.jsonl"
            jobs.append(
                MatchJob(
                    i,
                    args.seed + i,
                    seating,
                    rules.to_mapping(),
                    tc,
                    policy,
                    str(record),
                    pairing,
                    sandbox=limits,
                )
            )
    return jobs


def quiet_logging() -> None:
    """Worker processes log only errors (to stderr): the summary tells the rest."""
    configure_logging("error")


def run(args: argparse.Namespace) -> int:
    quiet_logging()
    try:
        build_jobs(args, Path())  # the command line is checked before a folder is made
    except (ArenaError, ValueError, SandboxUnavailable) as exc:
        raise UsageError(str(exc)) from None
    out = new_folder(args.out, "batch")
    jobs = build_jobs(args, out)
    parallel = args.parallel or default_parallel()
    started = time.perf_counter()
    with Progress(len(jobs), "matches", "batch") as bar:
        faults = failed = 0

        def on_result(summary: MatchSummary) -> None:
            nonlocal faults, failed
            faults += len(summary.faults)
            failed += summary.state != "finished"
            bar.advance(note=f"failed {failed}" if failed else "", faults=faults)

        results = run_jobs(jobs, parallel, on_result, args.ray, quiet_logging)
    summary = summarize(results, time.perf_counter() - started)
    summary["parallel"] = parallel
    summary["out"] = str(out)
    sandboxed = sorted({b.name for j in jobs for b in j.bots if b.sandboxed and not b.builtin})
    if sandboxed:  # which limits applied (docs/sandbox.md)
        summary["sandbox"] = {"bots": sandboxed, "limits": sandbox_of(args).describe()}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "matches.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in results))
    if args.json:
        print(json.dumps(summary))
    else:
        print(render(summary))
        if sandboxed:
            print(f"\nsandboxed: {', '.join(sandboxed)}: {summary['sandbox']['limits']}")
        print(f"\nrecords and summary.json in {out}/")
    failed_bots = [r for r in results if r.error]
    for r in failed_bots[:5]:
        print(f"match {r.index}: {r.error}", file=sys.stderr)
    if len(failed_bots) > 5:
        print(f"… and {len(failed_bots) - 5} more matches with errors", file=sys.stderr)
    return 0 if summary["completed"] == summary["matches"] and not failed_bots else 1
