"""Command-line options that several commands share, and what they build."""

from __future__ import annotations

import argparse
from typing import Any

from arena.batch import default_parallel
from arena.botzone.preset import split_presets
from arena.referee import FaultPolicy, TimeControl
from arena.rules import RuleSet


def add_rules(
    p: Any, deals_help: str = "deals per match (default: play until a team wins at A)"
) -> None:
    p.add_argument("--deals", type=int, default=None, metavar="K", help=deals_help)
    p.add_argument(
        "--rules",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="rule variants, e.g. throw_penalty=none (see shared/RULES.md §9), or a preset: "
        "botzone (docs/botzone.md)",
    )


def rules_of(args: argparse.Namespace) -> RuleSet:
    """The rule set of ``--rules`` and ``--deals``. Raises ``InvalidRules``."""
    base, pairs = split_presets(args.rules)  # a preset name: --rules botzone
    rules = RuleSet.from_pairs(pairs, base)
    if args.deals is not None:
        rules = RuleSet.from_mapping({"deals": args.deals}, rules)
    return rules


def add_clock(
    p: Any, bank: int = 30_000, bank_help: str | None = None, grace: int | None = None
) -> None:
    """``--time-limit``, ``--time-bank`` and, given its default, ``--grace`` (all ms)."""
    p.add_argument(
        "--time-limit",
        type=int,
        default=1000,
        metavar="MS",
        help="per-decision limit in ms (default 1000)",
    )
    p.add_argument(
        "--time-bank",
        type=int,
        default=bank,
        metavar="MS",
        help=bank_help or f"per-seat time bank in ms (default {bank})",
    )
    if grace is not None:
        p.add_argument(
            "--grace",
            type=int,
            default=grace,
            metavar="MS",
            help=f"how long a disconnected bot may take to come back (default {grace})",
        )


def clock_of(args: argparse.Namespace) -> TimeControl:
    grace = getattr(args, "grace", None)
    if grace is None:
        return TimeControl(args.time_limit, args.time_bank)
    return TimeControl(args.time_limit, args.time_bank, grace)


def add_policy(p: Any, details: bool = False) -> None:
    p.add_argument(
        "--policy",
        choices=["lenient", "strict"],
        default="lenient",
        help="fault policy: lenient (penalty points, forfeit after --max-faults) or "
        "strict (the first fault forfeits); default lenient",
    )
    if details:
        p.add_argument(
            "--max-faults",
            type=int,
            default=10,
            help="lenient: a team's faults before it forfeits (default 10)",
        )
        p.add_argument(
            "--penalty", type=int, default=10, help="lenient: points charged per fault (default 10)"
        )


def policy_of(args: argparse.Namespace) -> FaultPolicy:
    defaults = FaultPolicy()
    return FaultPolicy.parse(
        args.policy,
        getattr(args, "penalty", defaults.penalty_points),
        getattr(args, "max_faults", defaults.max_faults),
    )


def add_workers(p: Any) -> None:
    p.add_argument(
        "--parallel",
        type=int,
        default=None,
        help=f"worker processes (default: one per core, here {default_parallel()})",
    )
    p.add_argument(
        "--ray",
        default=None,
        metavar="ADDRESS",
        help="run each match as a Ray task: 'local' (starts one here), 'auto' "
        "(RAY_ADDRESS or this node's cluster), HOST:6379 or ray://HOST:10001; "
        "see docs/batch.md",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object, nothing else")
