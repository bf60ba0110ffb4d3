"""``arena selfplay``: matches in-process between built-in bots, with invariant checks."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from arena.bots import BUILTIN, make_bot
from arena.cli.convention import UsageError
from arena.cli.options import add_rules, rules_of, whole
from arena.cli.progress import Progress
from arena.errors import InvalidRules
from arena.game import MatchSetup, SelfplayStats
from arena.referee import play_match


def register(sub: Any) -> None:
    p = sub.add_parser(
        "selfplay",
        help="play matches in-process between built-in bots (no network)",
        description="Plays matches in-process between built-in bots, checking the invariants "
        "(108 cards accounted for, 200 points per deal) after every play, and prints a summary.",
    )
    p.add_argument(
        "--matches",
        type=whole(1, "a number of matches, at least 1"),
        default=10,
        help="matches to play (default 10)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the first match (default 0)")
    add_rules(p)
    p.add_argument(
        "--bots",
        default="random,greedy,random,greedy",
        help=f"four built-in bots for seats 0-3, comma separated ({', '.join(BUILTIN)})",
    )
    p.add_argument("--no-check", action="store_true", help="skip the invariant checks")
    p.add_argument("--json", action="store_true", help="print one JSON object, nothing else")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    names = [n.strip() for n in args.bots.split(",")]
    if len(names) != 4 or any(n not in BUILTIN for n in names):
        raise UsageError(
            f"--bots {args.bots!r}: give four of {', '.join(BUILTIN)}, comma separated"
        )
    try:
        rules = rules_of(args)
    except InvalidRules as exc:
        raise UsageError(str(exc)) from None
    stats = SelfplayStats()
    started = time.perf_counter()
    with Progress(args.matches, "matches", "selfplay") as bar:
        for i in range(args.matches):
            seed = args.seed + i
            bots = [make_bot(n, seed=seed * 4 + s) for s, n in enumerate(names)]
            play_match(MatchSetup(rules, seed), bots, stats=stats, check=not args.no_check)
            rate = stats.decisions / (time.perf_counter() - started)
            bar.advance(note=f"{rate:,.0f} decisions/s", faults=stats.faults)
    elapsed = time.perf_counter() - started
    summary = _summary(stats, names, elapsed)
    if args.json:
        print(json.dumps(summary))
    else:
        _print(summary)
    return 0 if not stats.violations else 1


def _summary(stats: SelfplayStats, names: list[str], elapsed: float) -> dict[str, Any]:
    return {
        "matches": stats.matches,
        "deals": stats.deals,
        "decisions": stats.decisions,
        "decisions_per_s": round(stats.decisions / elapsed, 1) if elapsed else 0.0,
        "seconds": round(elapsed, 3),
        "violations": len(stats.violations),
        "violation_examples": stats.violations[:5],
        "faults": stats.faults,
        "wins": {"team0": stats.team_wins[0], "team1": stats.team_wins[1], "draws": stats.draws},
        "bots": names,
        "mean_attacker_points": round(stats.attacker_points / stats.deals, 1) if stats.deals else 0,
    }


def _print(s: dict[str, Any]) -> None:
    bots = s["bots"]
    print(
        f"{s['matches']} matches, {s['deals']} deals, {s['decisions']:,} decisions "
        f"in {s['seconds']:.2f}s ({s['decisions_per_s']:,.0f} decisions/s)"
    )
    print(f"  team 0 (seats 0+2: {bots[0]}, {bots[2]}): {s['wins']['team0']} wins")
    print(f"  team 1 (seats 1+3: {bots[1]}, {bots[3]}): {s['wins']['team1']} wins")
    if s["wins"]["draws"]:
        print(f"  draws: {s['wins']['draws']}")
    print(f"  mean attacker points per deal: {s['mean_attacker_points']}")
    print(f"  faults (illegal bot answers): {s['faults']}")
    print(f"  invariant violations: {s['violations']}")
    for v in s["violation_examples"]:
        print(f"    {v}")
