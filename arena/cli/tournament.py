"""``arena tournament``: every partnership of the given bots, duplicate deals, ratings.

Two or more bots (``--bot NAME=CMD``; CMD is ``builtin:NAME`` or a command). Every split
of the bots into two teams of two that share no bot is played (with two or three bots a
bot may also partner a copy of itself, so that every bot meets every other), each for
``--rounds`` rounds of a duplicate pair of matches (the teams swap seats on the same
deals) unless ``--no-duplicate``. The ranking is by team-aware openskill (Plackett-Luce)
ratings, ordinal = mu - 3 sigma; the pairwise table counts each bot's wins and losses
against each other bot when they sat on opposing teams. See docs/batch.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from functools import partial
from pathlib import Path
from typing import Any

from arena.batch import BotSpec, MatchSummary, default_parallel, run_jobs, summarize
from arena.batch.sandbox import SandboxUnavailable
from arena.batch.tournament import build_jobs, render_tournament, report
from arena.cli.batch import quiet_logging
from arena.cli.convention import UsageError, new_folder
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
        "tournament",
        help="every partnership of two or more bots, duplicate deals, openskill ratings",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  arena tournament --bot greedy=builtin:greedy "
        "--bot random=builtin:random --bot mine='python my_bot.py' --rounds 20",
    )
    p.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="NAME=CMD",
        help="a bot (two or more, distinct names): builtin:NAME or a command "
        "(sandbox:CMD runs that one in the sandbox)",
    )
    p.add_argument(
        "--rounds",
        type=whole(1, "a number of rounds, at least 1"),
        default=10,
        help="rounds per pairing (default 10)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the first round (default 0)")
    add_rules(p)
    p.add_argument(
        "--no-duplicate",
        dest="duplicate",
        action="store_false",
        help="play each round once (by default twice, the teams swapping seats)",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="folder for tournament.json and the records (default records/tournament-<time>)",
    )
    add_clock(p)
    add_policy(p)
    add_workers(p)
    add_sandbox(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    quiet_logging()
    try:
        bots = [BotSpec.parse(b) for b in args.bot]
        for bot in bots:
            bot.check()
        bots = sandboxed_bots(bots, args)
        limits = sandbox_of(args)
        rules = rules_of(args)
        plan_jobs = partial(
            build_jobs,
            bots,
            args.rounds,
            seed=args.seed,
            rules=rules.to_mapping(),
            duplicate=args.duplicate,
            time_control=clock_of(args),
            policy=policy_of(args),
        )
        plan_jobs(out=Path())  # the command line is checked before a folder is made
    except (ArenaError, ValueError, SandboxUnavailable) as exc:
        raise UsageError(str(exc)) from None
    out = new_folder(args.out, "tournament")
    plan, jobs = plan_jobs(out=out)
    jobs = [dataclasses.replace(job, sandbox=limits) for job in jobs]
    parallel = args.parallel or default_parallel()
    started = time.perf_counter()
    with Progress(len(jobs), "matches", "tournament") as bar:
        faults = failed = 0

        def on_result(summary: MatchSummary) -> None:
            nonlocal faults, failed
            faults += len(summary.faults)
            failed += summary.state != "finished"
            bar.advance(note=f"failed {failed}" if failed else "", faults=faults)

        results = run_jobs(jobs, parallel, on_result, args.ray, quiet_logging)
    elapsed = time.perf_counter() - started
    settings = {
        "rounds": args.rounds,
        "seed": args.seed,
        "deals": args.deals,
        "duplicate": args.duplicate,
        "rules": rules.to_mapping(),
        "time_limit_ms": args.time_limit,
        "time_bank_ms": args.time_bank,
        "policy": args.policy,
        "parallel": parallel,
        "ray": args.ray,
    }
    sandboxed = sorted(b.name for b in bots if b.sandboxed and not b.builtin)
    if sandboxed:  # which limits applied (docs/sandbox.md)
        settings["sandbox"] = {"bots": sandboxed, "limits": limits.describe()}
    data = report(bots, plan, results, args.rounds, settings)
    data["seconds"] = round(elapsed, 3)
    data["summary"] = summarize(results, elapsed)  # what `arena batch` reports
    data["out"] = str(out)
    (out / "tournament.json").write_text(json.dumps(data, indent=2) + "\n")
    (out / "matches.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in results))
    if args.json:
        print(json.dumps(data))
    else:
        print(render_tournament(data))
        print(
            f"\n{data['completed']}/{data['matches']} matches in {elapsed:.1f}s; "
            f"tournament.json and records in {out}/"
        )
        if sandboxed:
            print(f"sandboxed: {', '.join(sandboxed)}: {limits.describe()}")
    return 0 if data["completed"] == data["matches"] else 1
