"""``arena match``: one match between four bots over gRPC on an embedded server.

Starts the server on a free loopback port, launches each ``--bot`` command as a
subprocess with ``ARENA_SERVER`` and ``ARENA_TOKEN`` in its environment (``builtin:NAME``
seats an in-process bot instead), plays the match, prints a result table and writes
the record. Exits 0 when the match completed, faults included; 1 when it did not, or
when a bot could not start, exited before the end or never connected (reported at
once with its exit status and last output lines; its team forfeits).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
from functools import partial
from pathlib import Path
from typing import Any

import trio

from arena.batch.runner import BotSpec, bot_name, local_bots, play_hosted, seat_log
from arena.batch.sandbox import SandboxUnavailable
from arena.batch.startup import BotFailure
from arena.batch.table import table
from arena.cli.logs import add_logging_options, configure_logging
from arena.cli.options import (
    add_clock,
    add_policy,
    add_rules,
    add_sandbox,
    clock_of,
    policy_of,
    rules_of,
    sandbox_of,
    sandboxed_bots,
    seconds,
)
from arena.cli.progress import Progress
from arena.errors import ArenaError
from arena.rules import team_of
from arena.server import HostedMatch, MatchSpec, MatchState


def register(sub: Any) -> None:
    p = sub.add_parser(
        "match",
        help="play one match between four bots over gRPC",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  arena match --bot 'python sample_bots/random_bot.py' "
        "--bot builtin:greedy --bot 'python sample_bots/random_bot.py' --bot builtin:greedy",
    )
    p.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="CMD",
        help="a bot command for the next seat (4 in all), or builtin:random|greedy; "
        "sandbox:CMD runs that one in the sandbox",
    )
    p.add_argument("--seed", type=int, default=None, help="match seed (default: random)")
    add_rules(p, deals_help="stop after K deals (default: play until a team wins at A)")
    add_clock(p, grace=10_000)
    add_policy(p, details=True)
    p.add_argument(
        "--record",
        default=None,
        metavar="PATH",
        help="where to write the record (default records/<match id>.jsonl)",
    )
    p.add_argument(
        "--connect-timeout",
        type=seconds,
        default=30.0,
        metavar="S",
        help="how long to wait for the bots to connect (default 30)",
    )
    add_sandbox(p)
    add_logging_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    configure_logging(args.log_level, args.log_json)
    if len(args.bot) != 4:
        print(f"arena match: give exactly four --bot (got {len(args.bot)})", file=sys.stderr)
        return 2
    try:
        bots = [BotSpec.sandbox_prefixed(bot_name(cmd), cmd) for cmd in args.bot]
        for bot in bots:
            bot.check()
        bots = sandboxed_bots(bots, args)
        limits = sandbox_of(args)
        spec = MatchSpec(
            rules=rules_of(args),
            seed=args.seed,
            time_control=clock_of(args),
            policy=policy_of(args),
            local=local_bots(bots, args.seed or 0),
            seat_names=tuple(b.name for b in bots),
            connect_timeout=args.connect_timeout,
        )
    except (ArenaError, ValueError, SandboxUnavailable) as exc:
        print(f"arena match: {exc}", file=sys.stderr)
        return 2
    if args.record:  # a record that cannot be written is said now, not after the match
        writable(Path(args.record).parent)
    watch = MatchWatch()
    failures: list[BotFailure] = []
    sandboxed = {i: limits for i, b in enumerate(bots) if b.sandboxed and not b.builtin}
    commands = [b.command for b in bots]
    play = partial(
        play_hosted, failures=failures, on_created=watch.created, sandboxed=sandboxed
    )
    with Progress(spec.rules.deals, "deals", "match", describe=watch.describe):
        hosted = trio.run(play, spec, commands, args.record)
    _print_result(hosted)
    for failure in failures:
        print(f"bot failure: {failure.short()} (log: {failure.log})")
    if sandboxed:
        seats = ", ".join(map(str, sorted(sandboxed)))
        print(f"sandboxed seats {seats}: {limits.describe()}")
    logs = [
        str(seat_log(args.record, hosted.id, seat))
        for seat, bot in enumerate(bots)
        if bot.builtin is None
    ]
    if logs:
        print(f"bot output (seat logs): {', '.join(logs)}")
    for seat, bot in enumerate(bots):
        if bot.builtin is None:
            why = missing_module(seat_log(args.record, hosted.id, seat))
            if why:
                print(f"arena match: seat {seat} ({bot.name}): {why}", file=sys.stderr)
    return 0 if hosted.state is MatchState.FINISHED and not failures else 1


def writable(folder: Path) -> None:
    """Create ``folder`` if needed; raise ``ArenaError`` if it cannot take files."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArenaError(f"cannot write the record in {folder}: {exc.strerror or exc}") from None
    if not os.access(folder, os.W_OK):
        raise ArenaError(f"cannot write the record in {folder}: permission denied")


_MISSING = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


def missing_module(log: Path) -> str:
    """Why a bot died at ``import``, from its seat log: the usual first stumble is a
    bot run by a Python without grpcio (not arena's own)."""
    try:
        found = _MISSING.search(log.read_text(errors="replace"))
    except OSError:
        return ""
    if found is None:
        return ""
    module = found[1].split(".")[0]
    fix = {
        "grpc": "pip install grpcio protobuf for that Python",
        "arena": "arena is installed only in its own .venv",
    }.get(module, f"install {module} for that Python")
    return (
        f"the bot could not import {found[1]} ({log}): its Python lacks it; start the "
        f"command with a bare python (arena's own) or {fix}"
    )


class MatchWatch:
    """What ``arena match`` is doing, in words, for the progress line: which seats it is
    still waiting for, then the deal, the decisions and the faults so far. Read from the
    progress thread while trio plays the match: it only reads."""

    def __init__(self) -> None:
        self.hosted: HostedMatch | None = None

    def created(self, hosted: HostedMatch) -> None:
        self.hosted = hosted

    def describe(self) -> str:
        hosted = self.hosted
        if hosted is None:
            return "starting the server"
        names = hosted.spec.seat_names
        away = [
            f"seat {seat} ({names[seat] if seat < len(names) else '?'})"
            for seat in range(4)
            if (remote := hosted.remote(seat)) is not None and remote.conn is None
        ]
        referee = hosted.referee
        if referee is None:
            return f"waiting for {', '.join(away)} to connect" if away else "starting"
        deals = referee.match.rules.deals
        deal = min(referee.match.deals_played + 1, deals or 10**9)
        text = (
            f"deal {deal}{f'/{deals}' if deals else ''}, {referee.decisions} decisions, "
            f"faults {len(referee.faults)}"
        )
        return text + (f", not connected: {', '.join(away)}" if away else "")


def _print_result(hosted: HostedMatch) -> None:
    report = hosted.report
    referee = hosted.referee
    print(f"match {hosted.id}  seed {hosted.seed}  {hosted.state.value}")
    if hosted.error:
        print(f"  error: {hosted.error}")
    if referee is None:
        return
    result = referee.match.result
    faults = referee.faults
    rows = []
    for seat, s in enumerate(hosted.seats):
        lat = sorted(referee.latencies[seat])
        p50 = statistics.median(lat) * 1000 if lat else 0.0
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000 if lat else 0.0
        n = sum(1 for f in faults if f.seat == seat)
        name = hosted.spec.seat_names[seat] if hosted.spec.seat_names else s.name
        rows.append([seat, team_of(seat), name, n, f"{p50:.2f}", f"{p99:.2f}"])
    print("seats (p50 / p99 ms: the median and 99th-percentile answer times):")
    for line in table(["seat", "team", "bot", "faults", "p50 ms", "p99 ms"], rows, left=3):
        print(line)
    if result is not None:
        levels = " / ".join(r.code for r in result.levels)
        winner = "draw" if result.winner is None else f"team {result.winner}"
        why = f"{result.reason}: {result.detail}" if result.detail else result.reason
        print(f"result: {winner} ({why}) after {result.deals} deals; levels {levels}")
    if report is not None:
        print(f"decisions: {report.decisions}")
    for f in faults[:10]:
        print(f"  fault: seat {f.seat} {f.kind.value} (deal {f.deal}, trick {f.trick}): {f.reason}")
    if len(faults) > 10:
        print(f"  … and {len(faults) - 10} more faults")
    if hosted.record:
        print(f"record: {hosted.record}")
