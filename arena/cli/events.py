"""``arena events``: schedule a competition's events and read their standings.

``arena events create NAME --bots a,b,c,d`` stores a round robin of partnerships (every
two partnerships without a bot in common meet; with duplicate deals, the default, each
meeting is played twice on one seed with the partnerships swapped), or with ``--format
swiss --rounds N`` N Swiss rounds, each paired by the standings so far, or a ``--format
ladder --matches N`` (free bots seated by rating and uncertainty). A running
``arena serve`` with the same database seats the bots from its lobby as they are free;
the schedule and every result are in the database, so the event survives a restart.
``arena events standings NAME`` prints OpenSkill ratings, W/L/D per bot and per
partnership, fault rates and latency (``--json`` to export). docs/competition.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from arena.cli.competition_options import add_database_options, store_of
from arena.cli.options import add_rules, rules_of
from arena.competition.schedule import FORMATS, check_seating, round_robin, swiss_round
from arena.competition.standings import render, standings
from arena.errors import ArenaError
from arena.referee import FaultPolicy, TimeControl
from arena.rules import RuleSet


def register(sub: Any) -> None:
    p = sub.add_parser(
        "events",
        help="create competition events (round robin, Swiss) and show their standings",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    c = verbs.add_parser("create", help="schedule an event")
    c.add_argument("name", help="the event's name")
    c.add_argument("--bots", required=True, help="registered bots, comma-separated")
    c.add_argument("--format", choices=FORMATS, default="round-robin")
    c.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="round robin: times each meeting is played; Swiss: the number of rounds",
    )
    c.add_argument(
        "--matches", type=int, default=20, metavar="N", help="ladder: matches to play in all"
    )
    c.add_argument("--no-duplicate", action="store_true", help="no swapped replay of a deal")
    add_rules(c)
    c.add_argument("--decision-ms", type=int, default=TimeControl().decision_ms)
    c.add_argument("--bank-ms", type=int, default=TimeControl().bank_ms)
    c.add_argument("--grace-ms", type=int, default=TimeControl().grace_ms)
    c.add_argument("--policy", choices=("lenient", "strict"), default="lenient")
    c.add_argument(
        "--max-faults",
        type=int,
        default=FaultPolicy().max_faults,
        metavar="N",
        help="lenient policy: faults per team before it is disqualified",
    )
    c.add_argument("--seed", type=int, default=0, help="seed of the event's deals")
    c.add_argument(
        "--self-play", action="store_true", help="a bot may take several seats of a match"
    )
    c.add_argument(
        "--connect-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds a seated bot has to connect before the match starts without it",
    )
    listing = verbs.add_parser("list", help="the events and how far they are")
    s = verbs.add_parser("standings", help="ratings and tables of an event")
    s.add_argument("name")
    s.add_argument("--json", action="store_true", help="export as JSON")
    for v in (c, listing, s):
        add_database_options(v)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        store = store_of(args)
        try:
            if args.verb == "create":
                _create(store, args)
            elif args.verb == "list":
                for event in store.events():
                    matches = store.matches(event.name)
                    done = sum(1 for m in matches if m.state not in ("pending", "running"))
                    print(
                        f"{event.name:<24} {event.format:<12} {event.state:<9} "
                        f"{done}/{len(matches)} matches"
                    )
            else:
                store.event(args.name)
                data = standings(store.matches(args.name))
                print(json.dumps(data, indent=2) if args.json else render(data))
        finally:
            store.close()
    except ArenaError as exc:
        print(f"arena events: {exc}", file=sys.stderr)
        return 2
    return 0


def _create(store: Any, args: argparse.Namespace) -> None:
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    check_seating(bots, args.self_play)
    # refused now if bad, not at the first match; stored as the variants that differ
    chosen = rules_of(args).to_mapping()
    defaults = RuleSet().to_mapping()
    rules: dict[str, Any] = {k: v for k, v in chosen.items() if defaults.get(k) != v}
    time_control = TimeControl(args.decision_ms, args.bank_ms, args.grace_ms).to_dict()
    FaultPolicy.parse(args.policy, max_faults=args.max_faults)
    known = {b.name for b in store.bots()}
    if set(bots) - known:
        raise ArenaError(f"not registered: {', '.join(sorted(set(bots) - known))}")
    if args.format == "ladder":
        if len(set(bots)) < 4:
            raise ArenaError("a ladder needs at least 4 bots")
        matches = []
    elif args.format == "swiss":
        matches = swiss_round(bots, 1, not args.no_duplicate, args.seed)
    else:
        matches = round_robin(bots, args.rounds, not args.no_duplicate, args.seed)
    settings = {
        "bots": bots,
        "rules": rules,
        "time_control": time_control,
        "policy": args.policy,
        "max_faults": args.max_faults,
        "format": args.format,
        "matches": args.matches,
        "round": 1,
        "seed": args.seed,
        "self_play": args.self_play,
        "connect_timeout": args.connect_timeout,
        "duplicate": not args.no_duplicate,
        "rounds": args.rounds,
    }
    store.create_event(args.name, args.format, settings, matches)
    if args.format == "ladder":
        print(f"event {args.name}: a ladder of {len(bots)} bots, {args.matches} matches")
        return
    what = f"round 1 of {args.rounds}: " if args.format == "swiss" else ""
    print(f"event {args.name}: {what}{len(matches)} matches scheduled for {len(bots)} bots")
