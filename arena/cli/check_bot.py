"""``arena check-bot CMD``: the CI check for a bot — does it play without faults?

Runs the bot command (as ``arena match`` does: a subprocess with ``ARENA_SERVER`` and
``ARENA_TOKEN``) against built-in opponents over real gRPC, in stacked-deck positions
that exercise the hard cases (bid windows, burying 8 of 33 cards, being void and
trumping, following tractors and throws, leading after a failed throw, the last trick)
and in random matches. Prints PASS/FAIL per scenario, every fault with the position
that caused it (deal, trick, hand, the trick so far, what the bot sent) and the bot's
latency percentiles. Exit status: 0 when every scenario completed without a fault,
1 on any fault, 2 on a usage error. See docs/check-bot.md.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from arena.batch import default_parallel
from arena.batch.checkbot import (
    CheckOptions,
    ScenarioResult,
    check_bot,
    junit_xml,
    random_scenarios,
    render,
    scenario_table,
    stacked_scenarios,
)
from arena.batch.sandbox import SandboxUnavailable, require
from arena.cli.convention import new_folder
from arena.cli.logs import configure_logging
from arena.cli.options import add_clock, add_sandbox, sandbox_of, seconds, whole
from arena.cli.progress import Progress


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check-bot",
        help="CI check: play a bot in hard positions and random matches, report its faults",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
        "  arena check-bot 'python my_bot.py'\n"
        "  arena check-bot 'python my_bot.py' --matches 10 --junit report.xml\n"
        "  arena check-bot 'node bot.js' --scenario follow-tractor --scenario failed-throw",
    )
    p.add_argument(
        "command", metavar="CMD", nargs="?", default="", help="the bot's command line (quote it)"
    )
    p.add_argument(
        "--matches",
        type=whole(0, "a number of random matches, 0 or more"),
        default=4,
        metavar="M",
        help="random matches besides the stacked positions (default 4)",
    )
    p.add_argument(
        "--deals",
        type=whole(1, "a number of deals per random match, at least 1"),
        default=2,
        metavar="K",
        help="deals per random match (default 2)",
    )
    p.add_argument("--seed", type=int, default=1, help="seed of the first random match (default 1)")
    p.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="NAME",
        help="play only this scenario (repeatable; see --list)",
    )
    p.add_argument(
        "--no-stacked", action="store_true", help="skip the stacked positions (random only)"
    )
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    add_clock(
        p,
        bank=0,
        bank_help="time bank in ms on top of the limit (default 0: the limit is strict)",
        grace=1000,
    )
    p.add_argument(
        "--connect-timeout",
        type=seconds,
        default=15.0,
        metavar="S",
        help="how long the bot may take to start and connect (default 15)",
    )
    p.add_argument(
        "--max-faults",
        type=whole(1, "a number of faults, at least 1"),
        default=5,
        metavar="N",
        help="stop a scenario after the bot's N-th fault (default 5)",
    )
    p.add_argument(
        "--parallel",
        type=whole(1, "a number of processes, at least 1"),
        default=None,
        metavar="N",
        help="scenarios played at the same time, each in its own process "
        "(default: the number of cores, at most 4)",
    )
    p.add_argument("--fail-fast", action="store_true", help="stop after the first failure")
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="folder for the records and bot logs (default records/check-bot-<time>)",
    )
    p.add_argument("--junit", default=None, metavar="PATH", help="write JUnit XML to PATH")
    p.add_argument(
        "--json", action="store_true", help="print the summary as one JSON object, nothing else"
    )
    add_sandbox(p)
    p.set_defaults(func=run)


def quiet_logging() -> None:
    """Worker processes log only errors: the report tells the rest."""
    configure_logging("error")


def _usage(message: str) -> int:
    print(f"arena check-bot: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    quiet_logging()
    if args.command.startswith("builtin:"):
        from arena.bots import BUILTIN

        if args.command.removeprefix("builtin:") not in BUILTIN:
            return _usage(f"unknown built-in bot {args.command!r}; known: {', '.join(BUILTIN)}")
    scenarios = [] if args.no_stacked else stacked_scenarios()
    scenarios += random_scenarios(args.matches, args.seed, args.deals)
    if args.list:
        print(scenario_table(scenarios))
        return 0
    try:
        words = shlex.split(args.command)
    except ValueError as exc:
        return _usage(f"cannot read the bot's command {args.command!r}: {exc}")
    if not words:
        return _usage("give the bot's command (e.g. arena check-bot 'python my_bot.py')")
    if args.scenario:
        known = {s.name for s in scenarios}
        unknown = [n for n in args.scenario if n not in known]
        if unknown:
            return _usage(
                f"no scenario {', '.join(map(repr, unknown))}; known: {', '.join(sorted(known))}"
            )
        scenarios = [s for s in scenarios if s.name in args.scenario]
    if not scenarios:
        return _usage("no scenario to play (--no-stacked with --matches 0)")
    sandboxed = args.sandbox or args.command.startswith("sandbox:")
    command = args.command.removeprefix("sandbox:").strip()
    try:
        limits = sandbox_of(args) if sandboxed and not command.startswith("builtin:") else None
        if limits is not None:
            require()
    except (ValueError, SandboxUnavailable) as exc:
        return _usage(str(exc))
    out = new_folder(args.out, "check-bot")
    parallel = args.parallel or min(4, default_parallel())
    options = CheckOptions(
        time_limit_ms=args.time_limit,
        time_bank_ms=args.time_bank,
        grace_ms=args.grace,
        connect_timeout=args.connect_timeout,
        max_faults=args.max_faults,
        parallel=parallel,
        out=out,
        fail_fast=args.fail_fast,
        sandbox=limits,
    )
    with Progress(len(scenarios), "scenarios", "check-bot") as bar:
        failed = faults = 0

        def on_result(result: ScenarioResult) -> None:
            nonlocal failed, faults
            failed += result.status != "pass"
            faults += len(result.faults)
            bar.advance(
                note=f"last: {result.scenario.name} {result.status}; not passed {failed}",
                faults=faults,
            )

        report = check_bot(command, scenarios, options, on_result, quiet_logging)
    if args.junit:
        path = Path(args.junit)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(junit_xml(report), encoding="utf-8")
    summary = report.to_dict()
    (out / "check-bot.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(summary))
    else:
        print(render(report))
        if args.junit:
            print(f"JUnit XML: {args.junit}")
    return report.exit_code
