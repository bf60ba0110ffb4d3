"""``arena bots``: register the bots of a competition and manage their keys.

The organiser registers each bot once (``arena bots add NAME --owner WHO``) and gives
its author the bot key printed then — it is shown once and stored only as a hash. The
bot joins the server's lobby with it (``botkit --bot-key``) and is seated in the
events' matches. ``disable`` keeps a bot out of the lobby and out of new matches;
``rotate`` replaces a leaked key (the old one stops working at once).

Locally these commands write the competition database (the organiser's power is the
file's permission, 0600, or the PostgreSQL role's grants); a running ``arena serve``
sees the changes within a second. With ``--server HOST:PORT`` they call the server's
``Competition`` service with the organiser token instead, from any machine.
docs/competition.md walks through a competition.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from arena.cli.competition_options import add_competition_target, organiser_of


def register(sub: Any) -> None:
    p = sub.add_parser(
        "bots",
        help="register competition bots, list them, disable them, rotate their keys",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    add = verbs.add_parser("add", help="register a bot; prints its key once")
    add.add_argument("name", help="the bot's name (letters, digits, - _ .)")
    add.add_argument("--owner", required=True, help="who runs the bot (for the organiser)")
    listing = verbs.add_parser("list", help="the registered bots")
    listing.add_argument("--json", action="store_true", help="JSON instead of a table")
    for verb, text in (
        ("disable", "keep a bot out of the lobby and new matches"),
        ("enable", "let a disabled bot back in"),
        ("rotate", "replace a bot's key; prints the new key once"),
    ):
        v = verbs.add_parser(verb, help=text)
        v.add_argument("name")
        add_competition_target(v)
    add_competition_target(add)
    add_competition_target(listing)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = organiser_of(args)
    try:
        if args.verb == "add":
            key = store.add_bot(args.name, args.owner)
            print(f"registered {args.name} (owner {args.owner})")
            print(f"bot key (shown once; give it to the bot's author): {key}")
        elif args.verb == "rotate":
            key = store.rotate_key(args.name)
            print(f"new key for {args.name} (the old one no longer works): {key}")
        elif args.verb in ("disable", "enable"):
            store.set_disabled(args.name, args.verb == "disable")
            print(f"{args.name} {args.verb}d")
        else:
            _list(store.bots(), args.json)
    finally:
        store.close()
    return 0


def _list(bots: Any, as_json: bool) -> None:
    rows = [
        {
            "name": b.name,
            "owner": b.owner,
            "disabled": b.disabled,
            "created": b.created,
            "key_rotated": b.rotated,
        }
        for b in bots
    ]
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'bot':<20} {'owner':<20} {'state':<9} registered")
    for r in rows:
        state = "disabled" if r["disabled"] else "enabled"
        print(f"{r['name']:<20} {r['owner']:<20} {state:<9} {r['created']}")
