"""``arena events``: schedule a competition's events and read their standings.

``arena events create NAME --bots a,b,c,d`` stores a round robin of partnerships (every
two partnerships without a bot in common meet; with duplicate deals, the default, each
meeting is played twice on one seed with the partnerships swapped), or with ``--format
swiss --rounds N`` N Swiss rounds, each paired by the standings so far, or a ``--format
ladder --matches N`` (free bots seated by rating and uncertainty; ``--matches 0``: a
continuous ladder, until ``arena events finish NAME``). A running ``arena serve`` with
the same database seats the bots from its lobby as they are free; the schedule and
every result are in the database, so the event survives a restart. ``arena events
standings NAME`` prints OpenSkill ratings, W/L/D per bot and per partnership, fault
rates and latency (``--json`` to export). Every verb works on the database itself, or
with ``--server HOST:PORT`` through the server's Competition service (the organiser's
token). docs/competition.md.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from arena.cli.competition_options import add_competition_target, organiser_of
from arena.cli.options import add_rules, rules_of
from arena.competition.schedule import FORMATS
from arena.referee import FaultPolicy, TimeControl
from arena.rules import RuleSet

if TYPE_CHECKING:  # SQLAlchemy is loaded only by the command that runs
    from arena.competition.plan import EventPlan


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
        "--matches",
        type=int,
        default=20,
        metavar="N",
        help="ladder: matches to play in all (default 20; 0 = a continuous ladder, until "
        "arena events finish)",
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
    f = verbs.add_parser("finish", help="end an event now (a continuous ladder)")
    f.add_argument("name")
    for v in (c, listing, s, f):
        add_competition_target(v)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    organiser = organiser_of(args)
    try:
        if args.verb == "create":
            print(organiser.create_event(_plan(args))[0])
        elif args.verb == "list":
            for e in organiser.events():
                print(f"{e.name:<24} {e.format:<12} {e.state:<9} {e.played}/{e.matches} matches")
        elif args.verb == "finish":
            e = organiser.finish_event(args.name)
            print(f"event {e.name} finished ({e.played}/{e.matches} matches played)")
        else:
            from arena.competition.standings import render

            data = organiser.standings(args.name).data
            print(json.dumps(data, indent=2) if args.json else render(data))
    finally:
        organiser.close()
    return 0


def _plan(args: argparse.Namespace) -> EventPlan:
    """The event the options describe (checked by :func:`arena.competition.plan.create_event`,
    wherever it runs)."""
    from arena.competition.plan import EventPlan

    chosen = rules_of(args).to_mapping()
    defaults = RuleSet().to_mapping()
    return EventPlan(
        name=args.name,
        bots=tuple(b.strip() for b in args.bots.split(",") if b.strip()),
        format=args.format,
        rules={k: v for k, v in chosen.items() if defaults.get(k) != v},
        rounds=args.rounds,
        matches=args.matches,
        duplicate=not args.no_duplicate,
        time_control=TimeControl(args.decision_ms, args.bank_ms, args.grace_ms),
        policy=args.policy,
        max_faults=args.max_faults,
        seed=args.seed,
        self_play=args.self_play,
        connect_timeout=args.connect_timeout,
    )
